//! [`Shape`]: the geometry of some elements of one allocation (rows of
//! elements at a pitch; a linear buffer is one row), and the rules the engine
//! checks with it: ranges, regions and casts, whether a copy between two
//! shapes is linear or row by row, which overlaps are refused, and how many
//! host elements rows at a host pitch span. Pure arithmetic: every rule is
//! tested without a GPU.

use std::ops::{Bound, RangeBounds};

use crate::error::{Error, Result};

/// The geometry of some elements of one allocation: `rows` rows of `width`
/// elements of `size` bytes, `pitch` bytes apart, the first at byte `offset`.
/// A linear buffer or view is one row (`pitch` its byte size); a pitched
/// buffer and its regions have their allocation's pitch. Pure arithmetic,
/// so every range, region and cast rule is tested without a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub(crate) offset: usize,
    pub(crate) width: usize,
    pub(crate) rows: usize,
    pub(crate) pitch: usize,
    pub(crate) size: usize,
}

impl Shape {
    /// `len` contiguous elements of `size` bytes at byte `offset`: one row.
    pub(crate) fn linear(offset: usize, len: usize, size: usize) -> Self {
        Self {
            offset,
            width: len,
            rows: 1,
            pitch: len * size,
            size,
        }
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.width * self.rows
    }

    /// Bytes of one row's elements.
    pub(crate) fn row_bytes(&self) -> usize {
        self.width * self.size
    }

    /// Bytes of all elements (without padding).
    pub(crate) fn byte_size(&self) -> usize {
        self.len() * self.size
    }

    /// Whether the elements are one contiguous block (one row, rows without
    /// padding between them, or none at all).
    pub(crate) fn is_contiguous(&self) -> bool {
        self.rows <= 1 || self.len() == 0 || self.pitch == self.row_bytes()
    }

    /// Bytes from the first element to the end of the last one (padding
    /// between rows included).
    pub(crate) fn span_bytes(&self) -> usize {
        if self.len() == 0 {
            0
        } else {
            (self.rows - 1) * self.pitch + self.row_bytes()
        }
    }

    /// The elements `range` (in row-major order). One row: any range.
    /// Several rows (padded or not, so that what works does not depend on
    /// the pitch the driver chose): a range within one row (linear) or of
    /// whole rows (those rows).
    pub(crate) fn sub(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, end) = resolve_range(range, self.len())?;
        if self.rows <= 1 || self.width == 0 {
            return Ok(Self::linear(
                self.offset + start * self.size,
                end - start,
                self.size,
            ));
        }
        let w = self.width;
        let at = |i: usize| self.offset + (i / w) * self.pitch + (i % w) * self.size;
        if start == end {
            return Ok(Self::linear(self.offset, 0, self.size));
        }
        if start / w == (end - 1) / w {
            return Ok(Self::linear(at(start), end - start, self.size));
        }
        if start.is_multiple_of(w) && end.is_multiple_of(w) {
            return Ok(Self {
                offset: at(start),
                rows: (end - start) / w,
                ..self
            });
        }
        Err(Error::InvalidArgument(
            "a range of 2D memory must lie within one row or cover whole rows; use region / region_mut for a sub-rectangle",
        ))
    }

    /// The rectangle of columns `cols` and rows `rows`, or `Err(OutOfRange)`.
    /// One row (or none) is linear memory, like any other single row.
    pub(crate) fn region(
        self,
        cols: impl RangeBounds<usize>,
        rows: impl RangeBounds<usize>,
    ) -> Result<Self> {
        let (c0, c1) = resolve_range(cols, self.width)?;
        let (r0, r1) = resolve_range(rows, self.rows)?;
        let offset = self.offset + r0 * self.pitch + c0 * self.size;
        if r1 - r0 <= 1 {
            let width = if r1 > r0 { c1 - c0 } else { 0 };
            return Ok(Self::linear(offset, width, self.size));
        }
        Ok(Self {
            offset,
            width: c1 - c0,
            rows: r1 - r0,
            ..self
        })
    }

    /// The same bytes as elements of `to_size` bytes and alignment
    /// `to_align`, the first element being at address `addr` (0 for no
    /// memory). Several rows are cast row by row: each row's bytes must be
    /// whole new elements and the pitch a multiple of the new alignment.
    pub(crate) fn cast(self, addr: u64, to_size: usize, to_align: usize) -> Result<Self> {
        if to_size == 0 {
            return Err(Error::InvalidArgument(
                "cast to a zero-sized type; cast to a type with a size",
            ));
        }
        let contiguous = self.rows <= 1;
        let bytes = if contiguous {
            self.byte_size()
        } else {
            self.row_bytes()
        };
        if !bytes.is_multiple_of(to_size) {
            return Err(Error::InvalidArgument(
                "cast: the byte size (of a row, for 2D memory) is not a multiple of the new element size; cast a slice of whole elements",
            ));
        }
        if !addr.is_multiple_of(to_align as u64) {
            return Err(Error::InvalidArgument(
                "cast: the address is not aligned for the new element type; cast a slice that starts at an aligned element",
            ));
        }
        if contiguous {
            return Ok(Self::linear(self.offset, bytes / to_size, to_size));
        }
        if !self.pitch.is_multiple_of(to_align) {
            return Err(Error::InvalidArgument(
                "cast: the pitch is not a multiple of the new element type's alignment, so later rows would be misaligned; cast to a type of smaller alignment",
            ));
        }
        Ok(Self {
            width: bytes / to_size,
            size: to_size,
            ..self
        })
    }
}

/// Resolves `range` against `len`, or says why it does not fit.
pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        (s, e) => Err(Error::OutOfRange {
            start: s.unwrap_or(usize::MAX),
            end: e.unwrap_or(usize::MAX),
            len,
        }),
    }
}

/// How a copy between two [`Elems`] of equal length runs: one contiguous
/// block, or `rows` rows of `row_bytes` bytes at each side's own pitch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CopyShape {
    /// `bytes` contiguous bytes on both sides.
    Linear { bytes: usize },
    /// A 2D copy (`cuMemcpy2D*`, or `cuMemcpy3DPeer*` between contexts).
    Rect {
        row_bytes: usize,
        rows: usize,
        dst_pitch: usize,
        src_pitch: usize,
    },
}

/// The shape of a copy between `dst` and `src` (equal lengths, checked by
/// the caller). Two sides of several rows must have the same width and
/// height; a side of one row is read or written as the other's rows,
/// packed. Contiguous on both sides: one linear copy of the same bytes.
/// No elements: an empty linear copy, whatever the two shapes.
pub(crate) fn copy_shape(dst: &Shape, src: &Shape) -> Result<CopyShape> {
    if dst.len() == 0 && src.len() == 0 {
        return Ok(CopyShape::Linear { bytes: 0 });
    }
    if dst.rows > 1 && src.rows > 1 && (dst.width, dst.rows) != (src.width, src.rows) {
        return Err(Error::InvalidArgument(
            "2D copy between views of different width and height; take regions of the same shape (region / region_mut), or copy through a linear buffer",
        ));
    }
    if dst.is_contiguous() && src.is_contiguous() {
        return Ok(CopyShape::Linear {
            bytes: dst.byte_size(),
        });
    }
    let (width, rows) = if dst.rows > 1 {
        (dst.width, dst.rows)
    } else {
        (src.width, src.rows)
    };
    let row_bytes = width * dst.size;
    let pitch_of = |s: &Shape| if s.rows > 1 { s.pitch } else { row_bytes };
    Ok(CopyShape::Rect {
        row_bytes,
        rows,
        dst_pitch: pitch_of(dst),
        src_pitch: pitch_of(src),
    })
}

/// Whether a copy from `src` to `dst` (two shapes of one allocation, of
/// equal length, accepted by [`copy_shape`]) would read bytes it also
/// writes, other than each element onto itself: their spans intersect, they
/// are not the same elements (the same first byte and either both
/// contiguous, or the same rows at the same pitch), and, for two shapes of
/// padded rows at one pitch, their columns meet (the left and right halves
/// of an image are disjoint although their spans interleave).
pub(crate) fn partially_overlap(dst: &Shape, src: &Shape) -> bool {
    let (d, s) = (dst.offset, src.offset);
    let intersect = d < s + src.span_bytes() && s < d + dst.span_bytes();
    let same_elements = d == s
        && ((dst.is_contiguous() && src.is_contiguous())
            || (dst.rows == src.rows && dst.pitch == src.pitch));
    intersect && !same_elements && !disjoint_columns(dst, src)
}

/// Whether two shapes of padded rows at one pitch lie in columns that never
/// meet: within a row (`pitch` bytes from a multiple of the pitch), each
/// shape's bytes are one range that does not wrap into the next row, and
/// the two ranges do not intersect. `false` whenever that cannot be said.
fn disjoint_columns(a: &Shape, b: &Shape) -> bool {
    if a.is_contiguous() || b.is_contiguous() || a.pitch != b.pitch || a.pitch == 0 {
        return false;
    }
    let p = a.pitch;
    let (ca, cb) = (a.offset % p, b.offset % p);
    let (wa, wb) = (a.row_bytes(), b.row_bytes());
    let fits = ca + wa <= p && cb + wb <= p;
    fits && (ca + wa <= cb || cb + wb <= ca)
}

/// The number of host elements rows of `width` elements `pitch` elements
/// apart span: `(rows - 1) * pitch + width` (0 for no elements), after
/// checking `pitch >= width`.
pub(crate) fn host_span(width: usize, rows: usize, pitch: usize) -> Result<usize> {
    if pitch < width {
        return Err(Error::InvalidArgument(
            "the host pitch is smaller than the row width; pass the number of elements from one host row to the next (at least the width)",
        ));
    }
    if width == 0 || rows == 0 {
        return Ok(0);
    }
    (rows - 1)
        .checked_mul(pitch)
        .and_then(|n| n.checked_add(width))
        .ok_or(Error::SizeOverflow {
            what: "(rows - 1) * host pitch + width",
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 7 x 5 array of 12-byte elements with a 96-byte pitch (12 bytes of
    /// padding per row), at byte 0.
    fn padded() -> Shape {
        Shape {
            offset: 0,
            width: 7,
            rows: 5,
            pitch: 96,
            size: 12,
        }
    }

    #[test]
    fn linear_shapes_are_one_contiguous_row() {
        let s = Shape::linear(40, 10, 4);
        assert_eq!((s.len(), s.rows, s.pitch, s.byte_size()), (10, 1, 40, 40));
        assert!(s.is_contiguous());
        assert_eq!(s.span_bytes(), 40);
        assert_eq!(Shape::linear(0, 0, 4).span_bytes(), 0);
        assert!(!padded().is_contiguous());
        assert_eq!(padded().span_bytes(), 4 * 96 + 84);
        // Rows without padding between them are contiguous too.
        assert!(Shape {
            pitch: 84,
            ..padded()
        }
        .is_contiguous());
        assert!(Shape {
            width: 0,
            ..padded()
        }
        .is_contiguous());
    }

    #[test]
    fn slices_of_padded_rows_lie_in_one_row_or_cover_whole_rows() {
        let s = padded();
        // Within row 2, columns 1..4.
        assert_eq!(s.sub(15..18).unwrap(), Shape::linear(2 * 96 + 12, 3, 12));
        // A whole row.
        assert_eq!(s.sub(7..14).unwrap(), Shape::linear(96, 7, 12));
        // Rows 1..4.
        assert_eq!(
            s.sub(7..28).unwrap(),
            Shape {
                offset: 96,
                rows: 3,
                ..s
            }
        );
        assert_eq!(s.sub(..).unwrap(), s);
        assert_eq!(s.sub(9..9).unwrap().len(), 0);
        assert_eq!(s.sub(35..).unwrap().len(), 0);
        // Across a row boundary, not whole rows.
        assert!(matches!(s.sub(5..9), Err(Error::InvalidArgument(_))));
        assert!(matches!(s.sub(7..15), Err(Error::InvalidArgument(_))));
        assert!(matches!(s.sub(0..36), Err(Error::OutOfRange { .. })));
        // Unpadded rows follow the same rules (they do not depend on the pitch).
        let unpadded = Shape { pitch: 84, ..s };
        assert!(matches!(unpadded.sub(5..9), Err(Error::InvalidArgument(_))));
        assert_eq!(unpadded.sub(7..14).unwrap(), Shape::linear(84, 7, 12));
        // Contiguous memory: any range.
        assert_eq!(
            Shape::linear(0, 35, 12).sub(5..9).unwrap(),
            Shape::linear(60, 4, 12)
        );
    }

    #[test]
    fn regions_keep_the_pitch_and_check_both_ranges() {
        let s = padded();
        let r = s.region(2..5, 1..4).unwrap();
        assert_eq!(
            r,
            Shape {
                offset: 96 + 24,
                width: 3,
                rows: 3,
                ..s
            }
        );
        assert_eq!(r.len(), 9);
        assert!(!r.is_contiguous());
        // A region of a region.
        let rr = r.region(1.., 2..).unwrap();
        assert_eq!(rr, Shape::linear(3 * 96 + 36, 2, 12));
        assert_eq!(s.region(1..3, 2..2).unwrap().len(), 0);
        assert!(matches!(s.region(0..8, ..), Err(Error::OutOfRange { .. })));
        assert!(matches!(s.region(.., 4..6), Err(Error::OutOfRange { .. })));
        // Linear memory is one row.
        let l = Shape::linear(0, 10, 4);
        assert_eq!(l.region(3..6, ..).unwrap(), Shape::linear(12, 3, 4));
        assert!(matches!(l.region(.., 0..2), Err(Error::OutOfRange { .. })));
    }

    #[test]
    fn casts_of_padded_rows_go_row_by_row() {
        let s = padded();
        let f = s.cast(0x1000, 4, 4).unwrap();
        assert_eq!((f.width, f.rows, f.pitch, f.size), (21, 5, 96, 4));
        let b = s.cast(0x1000, 1, 1).unwrap();
        assert_eq!(b.width, 84);
        // 84-byte rows are not whole 8-byte elements.
        assert!(matches!(
            s.cast(0x1000, 8, 8),
            Err(Error::InvalidArgument(_))
        ));
        // A pitch that would misalign later rows.
        let odd = Shape {
            pitch: 90,
            width: 7,
            size: 12,
            ..s
        };
        assert!(matches!(
            odd.cast(0x1000, 4, 4),
            Err(Error::InvalidArgument(_))
        ));
        // A misaligned first element.
        assert!(matches!(
            s.cast(0x1002, 4, 4),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            s.cast(0x1000, 0, 1),
            Err(Error::InvalidArgument(_))
        ));
        // Contiguous memory casts as a whole.
        assert_eq!(
            Shape::linear(8, 3, 8).cast(0x1008, 4, 4).unwrap(),
            Shape::linear(8, 6, 4)
        );
    }

    #[test]
    fn copy_shapes_pick_linear_or_rows() {
        let (p, l) = (padded(), Shape::linear(0, 35, 12));
        assert_eq!(
            copy_shape(&l, &l).unwrap(),
            CopyShape::Linear { bytes: 420 }
        );
        let packed_rows = CopyShape::Rect {
            row_bytes: 84,
            rows: 5,
            dst_pitch: 96,
            src_pitch: 84,
        };
        assert_eq!(copy_shape(&p, &l).unwrap(), packed_rows);
        assert_eq!(
            copy_shape(&l, &p).unwrap(),
            CopyShape::Rect {
                row_bytes: 84,
                rows: 5,
                dst_pitch: 84,
                src_pitch: 96,
            }
        );
        let other_pitch = Shape { pitch: 128, ..p };
        assert_eq!(
            copy_shape(&other_pitch, &p).unwrap(),
            CopyShape::Rect {
                row_bytes: 84,
                rows: 5,
                dst_pitch: 128,
                src_pitch: 96,
            }
        );
        // Same length, other rows: refused even when both are unpadded.
        let reshaped = Shape {
            width: 5,
            rows: 7,
            ..p
        };
        assert!(matches!(
            copy_shape(&reshaped, &p),
            Err(Error::InvalidArgument(_))
        ));
        let (a, b) = (
            Shape {
                pitch: 60,
                ..reshaped
            },
            Shape { pitch: 84, ..p },
        );
        assert!(matches!(copy_shape(&a, &b), Err(Error::InvalidArgument(_))));
        // Empty regions of different heights (no columns): nothing to copy.
        let (tall, short) = (
            Shape { width: 0, ..p },
            Shape {
                width: 0,
                rows: 3,
                ..p
            },
        );
        assert_eq!(
            copy_shape(&tall, &short).unwrap(),
            CopyShape::Linear { bytes: 0 }
        );
        // Unpadded rows of the same shape, or against linear memory: linear.
        assert_eq!(
            copy_shape(&b, &b).unwrap(),
            CopyShape::Linear { bytes: 420 }
        );
        assert_eq!(
            copy_shape(&l, &a).unwrap(),
            CopyShape::Linear { bytes: 420 }
        );
    }

    #[test]
    fn overlapping_copies_are_refused_unless_onto_the_same_elements() {
        let p = padded();
        // 35 packed elements at the start of the padded rows: row 1 of the
        // source (bytes 96..180) is read while rows 1 and 2 of the packed
        // destination (bytes 84..252) are written.
        let l = Shape::linear(0, 35, 12);
        assert!(partially_overlap(&l, &p));
        assert!(partially_overlap(&p, &l));
        // Each element onto itself.
        assert!(!partially_overlap(&p, &p));
        assert!(!partially_overlap(&l, &l));
        let unpadded = Shape { pitch: 84, ..p };
        assert!(!partially_overlap(&unpadded, &l));
        // Shifted by one element, or by one row.
        assert!(partially_overlap(&Shape::linear(12, 35, 12), &l));
        assert!(partially_overlap(&Shape { offset: 96, ..p }, &p));
        // Disjoint spans, or an empty side.
        assert!(!partially_overlap(&Shape::linear(420, 35, 12), &l));
        assert!(!partially_overlap(&Shape::linear(0, 0, 12), &l));
        // The left and right columns of one image at one pitch.
        let left = Shape { width: 2, ..p };
        let right = Shape {
            offset: 24,
            width: 2,
            ..p
        };
        assert!(!partially_overlap(&left, &right));
        assert!(partially_overlap(&Shape { offset: 12, ..left }, &right));
    }

    /// `partially_overlap` against the byte sets the two shapes cover, on
    /// random shapes of one padded allocation: every copy it allows reads no
    /// byte it writes (but a byte onto itself).
    #[test]
    fn allowed_copies_read_no_byte_they_write() {
        let mut rng = crate::test_rng::Rng::new(crate::test_rng::seed("ENGINE_SEED"));
        let bytes_of = |s: &Shape| -> Vec<usize> {
            (0..s.rows.max(1))
                .flat_map(|r| (0..s.row_bytes()).map(move |c| s.offset + r * s.pitch + c))
                .collect()
        };
        for _ in 0..20_000 {
            let size = 1 + rng.below(12);
            let pitch = size * (1 + rng.below(8)) + rng.below(3) * 4;
            let rows = 1 + rng.below(5);
            let width = 1 + rng.below((pitch / size).max(1));
            let shape = |rng: &mut crate::test_rng::Rng| {
                let col = rng.below(pitch - width * size + 1);
                let row = rng.below(3);
                Shape {
                    offset: row * pitch + col,
                    width,
                    rows,
                    pitch,
                    size,
                }
            };
            let (dst, src) = (shape(&mut rng), shape(&mut rng));
            if partially_overlap(&dst, &src) {
                continue;
            }
            let written = bytes_of(&dst);
            let read = bytes_of(&src);
            for (i, w) in written.iter().enumerate() {
                // The copy moves byte i of the source to byte i of the
                // destination, in row order.
                assert!(
                    !read.contains(w) || read[i] == *w,
                    "{dst:?} <- {src:?}: byte {w} written and read by another"
                );
            }
        }
    }

    #[test]
    fn host_spans_check_the_pitch() {
        assert_eq!(host_span(7, 5, 7).unwrap(), 35);
        assert_eq!(host_span(7, 5, 10).unwrap(), 47);
        assert_eq!(host_span(7, 1, 100).unwrap(), 7);
        assert_eq!(host_span(0, 5, 3).unwrap(), 0);
        assert_eq!(host_span(7, 0, 7).unwrap(), 0);
        assert!(matches!(host_span(7, 5, 6), Err(Error::InvalidArgument(_))));
        assert!(matches!(
            host_span(7, usize::MAX, 8),
            Err(Error::SizeOverflow { .. })
        ));
    }
}
