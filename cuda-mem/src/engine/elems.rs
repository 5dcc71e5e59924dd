//! The one engine behind every buffer kind and view: [`Elems`], a typed
//! rectangle of one allocation (a linear buffer is one row), and the one
//! implementation of every operation on it (shape, range checks, ordering,
//! memset, fill, copies between any two kinds, contexts and shapes, host
//! copies staged or direct), plus the typed views ([`View`], [`ViewMut`]) and
//! kernel arguments that carry it.

use std::cell::Cell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Bound, Range, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::copy::device_copy::{bytes_of, bytes_of_slice, bytes_of_slice_mut, DeviceCopy};
use crate::copy::device_ptr::DevicePtr;
use crate::engine::{fill, peer, staging};
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::raw::RawMemory;
use crate::order::StreamOrder;

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

/// `T`s of one allocation, laid out as `shape` (whose element size is
/// `size_of::<T>()`): what every buffer, view and pitched buffer hands the
/// engine.
///
/// `pub` inside a private module only so that the sealed supertrait of the
/// public operation traits (`ops::sealed::Engine`) can name it; nothing
/// outside the crate can name or use it.
pub struct Elems<'a, T> {
    pub(crate) mem: &'a RawMemory,
    pub(crate) shape: Shape,
    _t: PhantomData<T>,
}

impl<T> Clone for Elems<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Elems<'_, T> {}

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

/// One side of a 2D copy.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Side {
    /// Device memory (device, pool or pitched) at this address.
    Device(u64),
    /// Memory the driver reaches through unified addressing (pinned, managed).
    Unified(u64),
    /// Pageable (or pinned) host memory, read from.
    HostSrc(*const c_void),
    /// Pageable (or pinned) host memory, written to.
    HostDst(*mut c_void),
}

impl Side {
    /// `addr` of `mem` as a copy side.
    fn of(mem: &RawMemory, addr: u64) -> Self {
        if mem.is_device_resident() {
            Side::Device(addr)
        } else {
            Side::Unified(addr)
        }
    }
}

/// The `CUDA_MEMCPY2D` of a copy of `height` rows of `width_bytes` bytes.
///
/// Built as a struct literal rather than `mem::zeroed()`: `CUmemorytype` is a
/// Rust enum without a zero variant, so an all-zero `CUDA_MEMCPY2D` is not a
/// valid value even for an instant.
pub(crate) fn memcpy2d(
    dst: Side,
    dst_pitch: usize,
    src: Side,
    src_pitch: usize,
    width_bytes: usize,
    height: usize,
) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED};
    let parts = |side: Side| match side {
        Side::Device(a) => (CU_MEMORYTYPE_DEVICE, a, std::ptr::null_mut::<c_void>()),
        Side::Unified(a) => (CU_MEMORYTYPE_UNIFIED, a, std::ptr::null_mut()),
        Side::HostSrc(p) => (CU_MEMORYTYPE_HOST, 0, p.cast_mut()),
        Side::HostDst(p) => (CU_MEMORYTYPE_HOST, 0, p),
    };
    let (src_type, src_device, src_host) = parts(src);
    let (dst_type, dst_device, dst_host) = parts(dst);
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host.cast_const(),
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width_bytes,
        Height: height,
    }
}

/// The `CUDA_MEMCPY3D_PEER` of a copy of `rows` rows of `row_bytes` bytes
/// between device memory of two contexts, one slice deep.
fn memcpy3d_peer(
    (dst, dst_ctx, dst_pitch): (u64, sys::CUcontext, usize),
    (src, src_ctx, src_pitch): (u64, sys::CUcontext, usize),
    row_bytes: usize,
    rows: usize,
) -> sys::CUDA_MEMCPY3D_PEER {
    use sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
    sys::CUDA_MEMCPY3D_PEER {
        srcXInBytes: 0,
        srcY: 0,
        srcZ: 0,
        srcLOD: 0,
        srcMemoryType: CU_MEMORYTYPE_DEVICE,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcContext: src_ctx,
        srcPitch: src_pitch,
        srcHeight: rows,
        dstXInBytes: 0,
        dstY: 0,
        dstZ: 0,
        dstLOD: 0,
        dstMemoryType: CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstContext: dst_ctx,
        dstPitch: dst_pitch,
        dstHeight: rows,
        WidthInBytes: row_bytes,
        Height: rows,
        Depth: 1,
    }
}

/// `host`, or the registered mapping of the same pinned pages (see
/// `pinned_pages::registered_or_self`).
fn host_dma_or_self(host: *mut c_void, bytes: usize) -> *mut c_void {
    crate::memory::pinned_pages::registered_or_self(host.cast(), bytes).cast()
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

thread_local! {
    /// Set when this thread asked a padded 2D value for its length at the
    /// cudarc boundary (`DeviceSlice::len`, see [`Elems::len_for_cudarc`]):
    /// such a value will get address 0 from `DevicePtr`, and
    /// `cuda_mem::nccl` refuses it with this reason before NCCL runs (NCCL
    /// does not check its pointers, so it must never see address 0).
    static PADDED_SEEN: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Takes the reason recorded by [`Elems::len_for_cudarc`] on this thread
/// since the last call, if any.
#[cfg_attr(not(feature = "nccl"), allow(dead_code))]
pub(crate) fn take_cudarc_refusal() -> Option<&'static str> {
    PADDED_SEEN.with(Cell::take)
}

/// The message of a padded 2D view given to a cudarc call.
pub(crate) const PADDED_FOR_CUDARC: &str =
    "padded 2D memory (a PitchedBuffer whose pitch exceeds its row, or a region of one) is not one contiguous block, which cudarc calls and NCCL need; copy it into a packed buffer first (DeviceBuffer::copy_from)";

impl<'a, T: DeviceCopy> Elems<'a, T> {
    /// Every way to type memory as `T`s ends here, so `T` is checked as an
    /// element type (`__CHECK`: a size, an alignment of at most 256, and a
    /// derived generic struct's real layout) whatever path made the
    /// elements: a buffer's, a view's, or [`Elems::cast`]'s.
    fn new(mem: &'a RawMemory, shape: Shape) -> Self {
        const { crate::copy::private::check_element::<T>() };
        Self {
            mem,
            shape,
            _t: PhantomData,
        }
    }

    pub(crate) fn whole(mem: &'a RawMemory, len: usize) -> Self {
        Self::at(mem, 0, len)
    }

    /// `len` contiguous elements at byte `offset`: one row.
    pub(crate) fn at(mem: &'a RawMemory, offset: usize, len: usize) -> Self {
        Self::new(mem, Shape::linear(offset, len, size_of::<T>()))
    }

    /// `rows` rows of `width` elements, `pitch` bytes apart, at byte
    /// `offset`; the caller has checked that they lie inside `mem` and that
    /// `pitch >= width * size_of::<T>()` (for more than one row).
    pub(crate) fn rect(
        mem: &'a RawMemory,
        offset: usize,
        width: usize,
        rows: usize,
        pitch: usize,
    ) -> Self {
        let size = size_of::<T>();
        Self::new(
            mem,
            Shape {
                offset,
                width,
                rows,
                pitch,
                size,
            },
        )
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.shape.len()
    }

    pub(crate) fn byte_size(&self) -> usize {
        // Cannot overflow: the elements lie inside one allocation.
        self.shape.byte_size()
    }

    /// Whether the elements are one contiguous block.
    pub(crate) fn is_contiguous(&self) -> bool {
        self.shape.is_contiguous()
    }

    pub(crate) fn addr(&self) -> u64 {
        if self.mem.addr == 0 {
            0
        } else {
            self.mem.addr + self.shape.offset as u64
        }
    }

    /// The bytes of the allocation these elements occupy, row padding
    /// between them included (for `order`).
    pub(crate) fn span(&self) -> Range<usize> {
        self.shape.offset..self.shape.offset + self.shape.span_bytes()
    }

    /// The allocation's order and [`Elems::span`], for a copy.
    fn ordered(&self) -> (&'a StreamOrder, Range<usize>) {
        (&self.mem.order, self.span())
    }

    pub(crate) fn context(&self) -> &'a Arc<CudaContext> {
        &self.mem.state.ctx
    }

    /// The elements `range` (row-major; see [`Shape::sub`]).
    pub(crate) fn sub(self, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(Self::new(self.mem, self.shape.sub(range)?))
    }

    /// The sub-rectangle of columns `cols` and rows `rows` (a linear view is
    /// one row), or `Err(OutOfRange)`.
    pub(crate) fn region(
        self,
        cols: impl RangeBounds<usize>,
        rows: impl RangeBounds<usize>,
    ) -> Result<Self> {
        Ok(Self::new(self.mem, self.shape.region(cols, rows)?))
    }

    /// The same bytes as elements of `U`: sound because both types are
    /// `DeviceCopy` (no padding, every bit pattern valid), once the sizes,
    /// the address and the pitch fit `U` (see [`Shape::cast`]). `U` is
    /// checked as an element type like every buffer's (`__CHECK`, in
    /// [`Elems::new`]): a derived generic struct whose real layout has
    /// padding at this instantiation fails the build here, not only at the
    /// byte paths behind it.
    ///
    /// ```compile_fail,E0080
    /// use cuda_mem::prelude::*;
    /// #[derive(Clone, Copy)]
    /// #[repr(C, align(8))] // not `transparent`: `W<u8>` has 7 bytes of padding
    /// struct W<T>(T);
    /// cuda_mem::__derive_device_copy! {
    ///     @__cuda_mem_derive_device_copy
    ///     struct W
    ///     generics {
    ///         lifetimes [] types [T] consts [] args [T] outlives [] bounds [] device_copy [T]
    ///     }
    ///     plan transparent
    ///     fields [0 => __field0: field]
    /// }
    /// let ctx = cuda_mem::context(0)?;
    /// let x = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 4)?;
    /// let padded = x.cast::<W<u8>>()?; // error: `W<u8>` is not an element type
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub(crate) fn cast<U: DeviceCopy>(self) -> Result<Elems<'a, U>> {
        let shape = self
            .shape
            .cast(self.addr(), size_of::<U>(), align_of::<U>())?;
        Ok(Elems::new(self.mem, shape))
    }

    pub(crate) fn default_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.default_stream
    }

    /// Runs `enqueue` on `stream` after earlier work on this memory.
    fn run<R>(&self, stream: &Arc<CudaStream>, enqueue: impl FnOnce() -> Result<R>) -> Result<R> {
        self.mem.state.check_stream(stream)?;
        self.mem.order.run(self.span(), stream, enqueue)
    }

    /// Sets every byte of every element to `byte`: `cuMemsetD8Async` over
    /// contiguous memory, `cuMemsetD2D8Async` over padded rows (the padding
    /// and everything outside the rectangle stay untouched).
    pub(crate) fn memset(self, byte: u8, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len() == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        let addr = self.addr();
        let (contiguous, bytes) = (self.is_contiguous(), self.byte_size());
        let (pitch, row_bytes, rows) = (self.shape.pitch, self.shape.row_bytes(), self.shape.rows);
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: the elements (`bytes` contiguous bytes, or `rows` rows of
            // `row_bytes <= pitch` bytes `pitch` apart) lie inside the
            // allocation; any bytes are a valid `T` (DeviceCopy); `run`
            // ordered `stream` after earlier work on the memory.
            unsafe {
                if contiguous {
                    sys::cuMemsetD8Async(addr, byte, bytes, stream.cu_stream())
                        .result()
                        .op("cuMemsetD8Async")
                } else {
                    sys::cuMemsetD2D8Async(addr, pitch, byte, row_bytes, rows, stream.cu_stream())
                        .result()
                        .op("cuMemsetD2D8Async")
                }
            }
        })
    }

    /// The bytes of the elements as a fill region.
    fn fill_region(&self) -> fill::Region {
        if self.is_contiguous() {
            fill::Region::linear(self.addr(), self.byte_size() as u64)
        } else {
            fill::Region {
                addr: self.addr(),
                pitch: self.shape.pitch as u64,
                row_bytes: self.shape.row_bytes() as u64,
                rows: self.shape.rows as u64,
            }
        }
    }

    /// How [`Elems::fill`] would write `value` here.
    pub(crate) fn fill_plan(&self, value: &T) -> fill::FillPlan {
        fill::plan(bytes_of(value), &self.fill_region())
    }

    /// Sets every element to `value` (only the elements: never row padding).
    pub(crate) fn fill(self, value: &T, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len() == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        let region = self.fill_region();
        self.run(stream, || {
            fill::enqueue(&self.mem.state, stream, bytes_of(value), region)
        })
    }

    /// Synchronous copy from host memory (returns once `src` may be reused).
    /// `src_pitch: None`: `src` is exactly `len` packed elements. `Some(p)`:
    /// `src` holds the rows `p` elements apart (`p >= width`), at least
    /// `(rows - 1) * p + width` elements.
    pub(crate) fn copy_from_host(self, src: &[T], src_pitch: Option<usize>) -> Result<()> {
        let packed = src_pitch.is_none();
        let src_pitch = src_pitch.unwrap_or(self.shape.width);
        let need = host_span(self.shape.width, self.shape.rows, src_pitch)?;
        if (packed && src.len() != self.len()) || src.len() < need {
            return Err(Error::LengthMismatch {
                expected: if packed { self.len() } else { need },
                actual: src.len(),
            });
        }
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        if self.is_contiguous() && (src_pitch == self.shape.width || self.shape.rows <= 1) {
            return self.run(stream, || {
                self.mem.state.bind()?;
                // The destination lies inside the allocation and `run` ordered
                // the legacy default stream after earlier work on it.
                staging::copy_from_host(
                    &self.mem.state,
                    stream,
                    self.addr(),
                    bytes_of_slice(&src[..self.len()]),
                )
            });
        }
        let size = size_of::<T>();
        let host = &src[..need];
        let p = memcpy2d(
            Side::of(self.mem, self.addr()),
            self.shape.pitch,
            Side::HostSrc(
                host_dma_or_self(host.as_ptr().cast_mut().cast(), size_of_val(host)).cast_const(),
            ),
            src_pitch * size,
            self.shape.row_bytes(),
            self.shape.rows,
        );
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: the source is `host`, a live borrowed slice spanning the
            // rows at `src_pitch` (or the registered mapping of the same pinned
            // pages), read completely when the synchronous copy returns; the
            // destination rows lie inside the allocation; `run` ordered the
            // legacy default stream after earlier work on it.
            unsafe { sys::cuMemcpy2D_v2(&p).result() }.op("cuMemcpy2D")
        })
    }

    /// Synchronous copy to host memory (returns once the data is there), the
    /// mirror of [`Elems::copy_from_host`]; host bytes between rows (when
    /// `dst_pitch > width`) are left as they were.
    pub(crate) fn copy_to_host(self, dst: &mut [T], dst_pitch: Option<usize>) -> Result<()> {
        let packed = dst_pitch.is_none();
        let dst_pitch = dst_pitch.unwrap_or(self.shape.width);
        let need = host_span(self.shape.width, self.shape.rows, dst_pitch)?;
        if (packed && dst.len() != self.len()) || dst.len() < need {
            return Err(Error::LengthMismatch {
                expected: if packed { dst.len() } else { need },
                actual: if packed { self.len() } else { dst.len() },
            });
        }
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        if self.is_contiguous() && (dst_pitch == self.shape.width || self.shape.rows <= 1) {
            return self.run(stream, || {
                self.mem.state.bind()?;
                // The source lies inside the allocation and `run` ordered the
                // legacy default stream after earlier work on it; any bytes
                // written into `dst` make valid `T`s (DeviceCopy).
                staging::copy_to_host(
                    &self.mem.state,
                    stream,
                    bytes_of_slice_mut(&mut dst[..self.len()]),
                    self.addr(),
                )
            });
        }
        let size = size_of::<T>();
        let host = &mut dst[..need];
        let p = memcpy2d(
            Side::HostDst(host_dma_or_self(
                host.as_mut_ptr().cast(),
                size_of_val(host),
            )),
            dst_pitch * size,
            Side::of(self.mem, self.addr()),
            self.shape.pitch,
            self.shape.row_bytes(),
            self.shape.rows,
        );
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: the destination is `host`, a live exclusive slice
            // spanning the rows at `dst_pitch` (or the registered mapping of
            // the same pinned pages), complete when the synchronous copy
            // returns, and any bytes are a valid `T`; only the elements of
            // each device row are read (never the padding); `run` ordered the
            // legacy default stream after earlier work on the memory.
            unsafe { sys::cuMemcpy2D_v2(&p).result() }.op("cuMemcpy2D")
        })
    }

    pub(crate) fn to_vec(self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len());
        // SAFETY: the capacity holds `len` elements (`T` is not zero-sized:
        // buffers refuse those); they are zeroed through the raw pointer
        // before any reference to them exists, and all-zero bytes are a valid
        // `T` (DeviceCopy), so `set_len` exposes initialised values only.
        unsafe {
            std::ptr::write_bytes(out.as_mut_ptr(), 0, self.len());
            out.set_len(self.len());
        }
        self.copy_to_host(&mut out, None)?;
        Ok(out)
    }

    /// Copies `src` into `self` (any kinds, any contexts, any shapes of the
    /// same length: see [`copy_shape`]) on `stream`, which must belong to the
    /// destination's or the source's context. The one place that picks the
    /// driver call: `cuMemcpyAsync` / `cuMemcpyPeerAsync` for contiguous
    /// memory, `cuMemcpy2DAsync` / `cuMemcpy3DPeerAsync` when a side has
    /// padded rows; the peer forms between device memory of two contexts.
    pub(crate) fn copy_from(self, src: Elems<'_, T>, stream: &Arc<CudaStream>) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: src.len(),
            });
        }
        let shape = copy_shape(&self.shape, &src.shape)?;
        peer::check_copy_stream(self.mem, src.mem, stream)?;
        let (dst_state, src_state) = (&self.mem.state, &src.mem.state);
        let same_context = dst_state.ctx.cu_ctx() == src_state.ctx.cu_ctx();
        if self.len() == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let (dst_addr, src_addr) = (self.addr(), src.addr());
        if self.mem.addr == src.mem.addr && partially_overlap(&self.shape, &src.shape) {
            return Err(Error::InvalidArgument(
                "source and destination overlap; copy through a temporary buffer",
            ));
        }
        // Device memory of two contexts: a peer copy. Anything else (one
        // context, or pinned / unified memory, which every context addresses)
        // is a unified-addressing copy.
        let _peer_copy = if same_context {
            None
        } else {
            Some(peer::prepare_copy(self.mem, src.mem)?)
        };
        let peer = !same_context && self.mem.is_device_resident() && src.mem.is_device_resident();
        let (dst_ctx, src_ctx) = (dst_state.ctx.cu_ctx(), src_state.ctx.cu_ctx());
        // Unified addressing on both sides, as `cuMemcpyAsync` does for the
        // linear form: the driver resolves each address to its own memory
        // (device, pool, pinned or managed, of either context).
        let (dst_side, src_side) = (Side::Unified(dst_addr), Side::Unified(src_addr));
        StreamOrder::run_pair(self.ordered(), src.ordered(), stream, || {
            stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
            let s = stream.cu_stream();
            // SAFETY: both sides' elements (contiguous, or `rows` rows of
            // `row_bytes` at their pitches, never touching row padding) lie
            // inside live allocations and do not partially overlap; both are
            // ordered after earlier work on them and recorded on `stream`, so
            // host access and frees wait for the copy. A peer copy names each
            // side's own context.
            unsafe {
                match shape {
                    CopyShape::Linear { bytes } if peer => {
                        sys::cuMemcpyPeerAsync(dst_addr, dst_ctx, src_addr, src_ctx, bytes, s)
                            .result()
                            .op("cuMemcpyPeerAsync")
                    }
                    CopyShape::Linear { bytes } => sys::cuMemcpyAsync(dst_addr, src_addr, bytes, s)
                        .result()
                        .op("cuMemcpyAsync"),
                    CopyShape::Rect {
                        row_bytes,
                        rows,
                        dst_pitch,
                        src_pitch,
                    } if peer => {
                        let p = memcpy3d_peer(
                            (dst_addr, dst_ctx, dst_pitch),
                            (src_addr, src_ctx, src_pitch),
                            row_bytes,
                            rows,
                        );
                        sys::cuMemcpy3DPeerAsync(&p, s)
                            .result()
                            .op("cuMemcpy3DPeerAsync")
                    }
                    CopyShape::Rect {
                        row_bytes,
                        rows,
                        dst_pitch,
                        src_pitch,
                    } => {
                        let p = memcpy2d(dst_side, dst_pitch, src_side, src_pitch, row_bytes, rows);
                        sys::cuMemcpy2DAsync_v2(&p, s)
                            .result()
                            .op("cuMemcpy2DAsync")
                    }
                }
            }
        })
    }

    /// The address to give a cudarc call (`DevicePtr` / `DevicePtrMut`,
    /// which cannot fail) that uses the memory on `stream` and synchronises
    /// `stream` before it returns: `stream` first waits for earlier work on
    /// the memory (or, if that fails, the host does).
    ///
    /// Returns address 0, so that the driver rejects the cudarc call with an
    /// error, when the use cannot be ordered or described:
    /// - the memory is padded 2D: cudarc sees `len` contiguous elements,
    ///   which would read or write the row padding and miss the last rows
    ///   (`cuda_mem::nccl` refuses such memory before it gets here);
    /// - `stream` is the stream buffers report to cudarc
    ///   (`DeviceSlice::stream`): cudarc passes it back only when the work runs
    ///   on a stream it does not name (`memcpy_dtod` between two contexts
    ///   queues on the destination's stream, then synchronises the source's),
    ///   so the copy could still read the memory when cudarc returns;
    /// - `stream` is capturing a CUDA graph: the work would replay later,
    ///   untracked;
    /// - the earlier work cannot be waited for (a stream that used the memory
    ///   is now capturing, or the context is broken; the error is recorded in
    ///   the context, where cudarc's next call reports it).
    pub(crate) fn address_for_cudarc(self, stream: &CudaStream) -> u64 {
        if !self.is_contiguous() {
            return 0;
        }
        let state = &self.mem.state;
        if std::ptr::eq(stream, &*state.cudarc_stream)
            || crate::context::is_capturing(stream).unwrap_or(true)
        {
            return 0;
        }
        if self.mem.order.wait_on(self.span(), stream).is_err() {
            let waited = self.mem.order.wait(crate::order::Access::Shared);
            if waited.is_err() {
                crate::error::record_in(&state.ctx, waited);
                return 0;
            }
        }
        self.addr()
    }

    /// `DeviceSlice::len`: the number of elements; for padded 2D memory
    /// also records, for this thread, that it is no contiguous block (see
    /// [`take_cudarc_refusal`]).
    pub(crate) fn len_for_cudarc(&self) -> usize {
        if !self.is_contiguous() {
            PADDED_SEEN.with(|r| r.set(Some(PADDED_FOR_CUDARC)));
        }
        self.len()
    }

    /// The stream buffers report to cudarc (`DeviceSlice::stream`); see
    /// [`Elems::address_for_cudarc`].
    pub(crate) fn cudarc_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.cudarc_stream
    }

    /// Orders `stream` after earlier work on this memory and records it as a
    /// deferred user, for work the caller queues on `stream` later (see
    /// `order`). Returns the first element's address.
    pub(crate) fn claim(self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.state.check_stream(stream)?;
        self.mem.order.run_deferred(self.span(), stream, || {
            Ok(DevicePtr::from_addr(self.addr()))
        })
    }

    /// Waits for every queued operation on the allocation.
    pub(crate) fn synchronize(self) -> Result<()> {
        self.mem.order.wait(crate::order::Access::Shared)
    }
}

/// A shared view of `len` elements of a buffer: `buffer.slice(2..10)?`, or
/// of a rectangle of 2D memory: `pitched.region(3..9, 1..4)?`.
///
/// It borrows the buffer, has the read operations of a buffer
/// ([`Memory`](crate::Memory): copies out, `to_vec`, use as a source) and can
/// be narrowed further. A view of 2D memory has `height()` rows of `width()`
/// elements, `pitch()` bytes apart; its `len()` is `width() * height()` and
/// host data copied in or out of it is packed row after row.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::DeviceBuffer;
/// let ctx = cuda_mem::context(0)?;
/// let buf = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4, 5])?;
/// assert_eq!(buf.slice(1..4)?.to_vec()?, [2, 3, 4]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct View<'a, T> {
    pub(crate) elems: Elems<'a, T>,
}

impl<T> Clone for View<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<'_, T> {}

/// An exclusive view of `len` elements of a buffer: `buffer.slice_mut(2..10)?`,
/// or of a rectangle of 2D memory: `pitched.region_mut(3..9, 1..4)?`.
///
/// It borrows the buffer mutably and has every operation of a buffer
/// ([`Memory`](crate::Memory), [`MemoryMut`](crate::MemoryMut): memset, fill,
/// copies in and out); on 2D memory they touch only the rectangle.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::DeviceBuffer;
/// let ctx = cuda_mem::context(0)?;
/// let mut buf = DeviceBuffer::<u16>::zeroed(&ctx, 8)?;
/// buf.slice_mut(2..5)?.fill(7)?;
/// assert_eq!(buf.to_vec()?, [0, 0, 7, 7, 7, 0, 0, 0]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct ViewMut<'a, T> {
    pub(crate) elems: Elems<'a, T>,
    pub(crate) _exclusive: PhantomData<&'a mut T>,
}

/// A buffer or view's address, ordered for use by a kernel on one stream; pass
/// it to a cudarc launch with `.arg(&arg)` (it is a `DeviceRepr`, the layout
/// of a `T*`).
///
/// Made by `kernel_arg(&stream)` (the kernel may only read) or
/// `kernel_arg_mut(&stream)` (the kernel may write), which make `stream` wait
/// for earlier work on the memory and record it as the memory's latest user:
/// later host access, copies on other streams and the free wait for the
/// kernel. It borrows the buffer, so the buffer cannot be dropped or touched
/// from the host while the argument exists.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cudarc::driver::{LaunchConfig, PushKernelArg};
/// # fn f(func: &cudarc::driver::CudaFunction) -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut buf = cuda_mem::DeviceBuffer::<f32>::zeroed(&ctx, 1024)?;
/// let n = buf.len() as u32;
/// let out = buf.kernel_arg_mut(&stream)?;
/// unsafe { stream.launch_builder(func).arg(&out).arg(&n).launch(LaunchConfig::for_num_elems(n))? };
/// # Ok(()) }
/// ```
#[repr(transparent)]
pub struct KernelArg<'a, T> {
    ptr: DevicePtr<T>,
    _borrow: PhantomData<&'a T>,
}

impl<'a, T> KernelArg<'a, T> {
    pub(crate) fn new(ptr: DevicePtr<T>) -> Self {
        Self {
            ptr,
            _borrow: PhantomData,
        }
    }

    /// The device address.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # let arg: cuda_mem::KernelArg<'_, u8> = unimplemented!();
    /// println!("{:?}", arg.device_ptr());
    /// ```
    pub fn device_ptr(&self) -> DevicePtr<T> {
        self.ptr
    }
}

// SAFETY: `#[repr(transparent)]` over `DevicePtr<T>`, itself a transparent u64:
// exactly the `CUdeviceptr` a kernel's `T*` parameter expects.
unsafe impl<T> cudarc::driver::DeviceRepr for KernelArg<'_, T> {}

/// Anything that can be read as a [`View`]: every buffer kind, views,
/// exclusive views and pitched buffers (every type with the
/// [`Memory`](crate::Memory) operations), and [`DeviceAlloc`](crate::DeviceAlloc).
/// Used by `copy_from`.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, PinnedBuffer};
/// let ctx = cuda_mem::context(0)?;
/// let pinned = PinnedBuffer::from_slice(&ctx, &[1u8, 2, 3])?;
/// let mut dev = DeviceBuffer::<u8>::zeroed(&ctx, 3)?;
/// dev.copy_from(&pinned)?;
/// assert_eq!(pinned.as_view().len(), 3);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait AsView<T> {
    /// A shared view of all elements.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceBuffer<u32>) {
    /// let whole: cuda_mem::View<'_, u32> = b.as_view();
    /// # }
    /// ```
    fn as_view(&self) -> View<'_, T>;
}

impl<T> std::fmt::Debug for View<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "View<{}>({:#x}, len {}, {} x {}, pitch {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.shape.offset as u64,
            self.elems.shape.len(),
            self.elems.shape.width,
            self.elems.shape.rows,
            self.elems.shape.pitch
        )
    }
}

impl<T> std::fmt::Debug for ViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ViewMut<{}>({:#x}, len {}, {} x {}, pitch {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.shape.offset as u64,
            self.elems.shape.len(),
            self.elems.shape.width,
            self.elems.shape.rows,
            self.elems.shape.pitch
        )
    }
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

    #[test]
    fn memcpy2d_sets_both_sides() {
        let host = [0u8; 8];
        let p = memcpy2d(
            Side::Device(0x1000),
            512,
            Side::HostSrc(host.as_ptr().cast()),
            8,
            8,
            1,
        );
        assert_eq!(p.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!(p.dstDevice, 0x1000);
        assert!(p.dstHost.is_null());
        assert_eq!(p.srcMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(p.srcHost, host.as_ptr().cast());
        assert_eq!(
            (p.srcPitch, p.dstPitch, p.WidthInBytes, p.Height),
            (8, 512, 8, 1)
        );
        let q = memcpy2d(Side::Unified(0x2000), 8, Side::Device(0x3000), 256, 8, 4);
        assert_eq!(q.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED);
        assert_eq!((q.dstDevice, q.srcDevice), (0x2000, 0x3000));
    }

    #[test]
    fn memcpy3d_peer_names_both_contexts() {
        let (a, b) = (0x10 as sys::CUcontext, 0x20 as sys::CUcontext);
        let p = memcpy3d_peer((0x1000, a, 512), (0x2000, b, 96), 84, 5);
        assert_eq!((p.dstDevice, p.dstContext, p.dstPitch), (0x1000, a, 512));
        assert_eq!((p.srcDevice, p.srcContext, p.srcPitch), (0x2000, b, 96));
        assert_eq!((p.WidthInBytes, p.Height, p.Depth), (84, 5, 1));
    }
}
