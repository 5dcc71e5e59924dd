//! The host model: the bytes of every slot (and which are defined), whether
//! an operation is valid in a state, its effect, and the comparison of what a
//! backend read ([`Read`]) with the model.

use super::ops::{data_bytes, fill_value, Elem, Init, Kind, Op, Shape, Target, SLOTS};

/// One buffer of the model.
#[derive(Clone, Debug)]
pub struct ModelBuf {
    /// Its shape.
    pub shape: Shape,
    /// The tightly packed contents.
    pub bytes: Vec<u8>,
    /// Which bytes are defined (fresh device and pool memory is not).
    pub known: Vec<bool>,
    /// Pitched: the byte every padding byte must still hold.
    pub pad: u8,
}

/// The host model: what every slot must contain.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub(super) slots: Vec<Option<ModelBuf>>,
}

impl Model {
    /// Every slot empty.
    pub fn new() -> Self {
        Self {
            slots: vec![None; SLOTS],
        }
    }

    /// The buffer in `slot`.
    pub fn get(&self, slot: usize) -> Option<&ModelBuf> {
        self.slots.get(slot).and_then(Option::as_ref)
    }

    /// The shape of the buffer in `slot`.
    pub fn shape(&self, slot: usize) -> Option<Shape> {
        self.get(slot).map(|b| b.shape)
    }

    /// The occupied slots.
    pub fn live(&self) -> Vec<usize> {
        (0..SLOTS).filter(|&s| self.get(s).is_some()).collect()
    }

    /// Whether `op` can run in this state (else the runner skips it).
    pub fn valid(&self, op: &Op) -> bool {
        let shape = |s: usize| self.shape(s);
        let valid_target =
            |s: usize, t: Target| shape(s).is_some_and(|sh| sh.elements(t).is_some());
        match *op {
            Op::Alloc {
                slot, kind, height, ..
            } => slot < SLOTS && shape(slot).is_none() && (kind == Kind::Pitched || height == 1),
            Op::Drop { slot } => shape(slot).is_some(),
            Op::FreeOnStream { slot, .. } => shape(slot).is_some_and(|s| s.kind.is_pool()),
            Op::Fill { slot, target, .. }
            | Op::Memset { slot, target, .. }
            | Op::Upload { slot, target, .. } => valid_target(slot, target),
            Op::HostWrite { slot, target, .. } => {
                valid_target(slot, target) && shape(slot).is_some_and(|s| s.kind.host_accessible())
            }
            Op::UploadAsync {
                dst, target, src, ..
            }
            | Op::DownloadAsync {
                src: dst,
                target,
                dst: src,
                ..
            } => {
                // `dst` here is the device side, `src` the whole host buffer.
                let (Some(d), Some(h)) = (shape(dst), shape(src)) else {
                    return false;
                };
                dst != src
                    && h.kind.host_accessible()
                    && d.elem == h.elem
                    && d.elements(target).is_some()
                    && d.count(target) == h.len()
            }
            Op::Copy {
                dst,
                dst_target,
                src,
                src_target,
                ..
            } => {
                let (Some(d), Some(s)) = (shape(dst), shape(src)) else {
                    return false;
                };
                let (Some((da, db)), Some((sa, sb))) =
                    (d.elements(dst_target), s.elements(src_target))
                else {
                    return false;
                };
                if d.elem != s.elem || db - da != sb - sa {
                    return false;
                }
                let whole_2d = |sh: &Shape, t: Target| sh.pitched() && t == Target::Whole;
                if dst == src {
                    // Two disjoint views of one 1D buffer.
                    !d.pitched()
                        && matches!(dst_target, Target::Range(..))
                        && matches!(src_target, Target::Range(..))
                        && (db <= sa || sb <= da)
                } else if whole_2d(&d, dst_target) || whole_2d(&s, src_target) {
                    // The 2D copy: both whole pitched buffers of one shape.
                    whole_2d(&d, dst_target)
                        && whole_2d(&s, src_target)
                        && (d.width, d.height) == (s.width, s.height)
                } else {
                    true
                }
            }
            Op::Prefetch { slot, .. } | Op::Advise { slot, .. } => {
                shape(slot).is_some_and(|s| s.kind == Kind::Unified)
            }
            Op::Grow { slot, .. } => shape(slot).is_some_and(|s| s.kind == Kind::Vec),
            Op::Shrink { slot, len, .. } => {
                shape(slot).is_some_and(|s| s.kind == Kind::Vec && len <= s.width)
            }
            Op::Scan {
                dst,
                dst_target,
                src,
                src_target,
                ..
            } => {
                let (Some(d), Some(s)) = (shape(dst), shape(src)) else {
                    return false;
                };
                let (Some((da, db)), Some((sa, sb))) =
                    (d.elements(dst_target), s.elements(src_target))
                else {
                    return false;
                };
                d.elem == Elem::U32
                    && s.elem == Elem::U32
                    && contiguous(&d, dst_target)
                    && contiguous(&s, src_target)
                    && db - da == sb - sa
                    && (dst != src || dst_target == src_target)
            }
            Op::Reduce {
                src,
                src_target,
                dst,
                at,
                ..
            } => {
                let (Some(d), Some(s)) = (shape(dst), shape(src)) else {
                    return false;
                };
                d.elem == Elem::U32
                    && s.elem == Elem::U32
                    && dst != src
                    && !d.pitched()
                    && at < d.len()
                    && s.elements(src_target).is_some()
                    && contiguous(&s, src_target)
            }
            Op::Sort { slot, target, .. } => shape(slot).is_some_and(|s| {
                s.elem == Elem::U32 && s.elements(target).is_some() && contiguous(&s, target)
            }),
            Op::Check { slot, target, way } => shape(slot).is_some_and(|s| {
                s.elements(target).is_some() && s.read_ways(target == Target::Whole).contains(&way)
            }),
            Op::SyncAll => true,
        }
    }

    /// Applies a valid `op` to the model.
    pub fn apply(&mut self, op: &Op) {
        match *op {
            Op::Alloc {
                slot,
                kind,
                elem,
                width,
                height,
                init,
                pad,
                ..
            } => {
                let shape = Shape {
                    kind,
                    elem,
                    width,
                    height,
                };
                let n = shape.len() * elem.size();
                let (bytes, known) = match init {
                    Init::FromSlice(seed) => (data_bytes(seed, n), true),
                    Init::Zeroed => (vec![0; n], true),
                    Init::Uninit if kind == Kind::Pitched => (vec![pad; n], true),
                    Init::Uninit => (vec![0; n], kind.starts_zeroed()),
                };
                self.slots[slot] = Some(ModelBuf {
                    shape,
                    bytes,
                    known: vec![known; n],
                    pad,
                });
            }
            Op::Drop { slot } | Op::FreeOnStream { slot, .. } => self.slots[slot] = None,
            Op::Fill {
                slot,
                target,
                value,
                ..
            } => {
                let b = self.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(target).expect("valid op");
                let v = fill_value(value, b.shape.elem.size());
                for (i, byte) in b.bytes[x..y].iter_mut().enumerate() {
                    *byte = v[i % v.len()];
                }
                b.known[x..y].fill(true);
            }
            Op::Memset {
                slot, target, byte, ..
            } => {
                let b = self.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(target).expect("valid op");
                b.bytes[x..y].fill(byte);
                b.known[x..y].fill(true);
            }
            Op::Upload { slot, target, data } | Op::HostWrite { slot, target, data } => {
                let b = self.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(target).expect("valid op");
                b.bytes[x..y].copy_from_slice(&data_bytes(data, y - x));
                b.known[x..y].fill(true);
            }
            Op::UploadAsync {
                dst, target, src, ..
            } => self.copy_bytes(dst, target, src, Target::Whole),
            Op::DownloadAsync {
                src, target, dst, ..
            } => self.copy_bytes(dst, Target::Whole, src, target),
            Op::Copy {
                dst,
                dst_target,
                src,
                src_target,
                ..
            } => self.copy_bytes(dst, dst_target, src, src_target),
            Op::Grow { slot, n, data, .. } => {
                let b = self.slots[slot].as_mut().expect("valid op");
                b.bytes
                    .extend_from_slice(&data_bytes(data, n * b.shape.elem.size()));
                b.known.resize(b.bytes.len(), true);
                b.shape.width += n;
            }
            Op::Shrink { slot, len, .. } => {
                let b = self.slots[slot].as_mut().expect("valid op");
                let bytes = len * b.shape.elem.size();
                b.bytes.truncate(bytes);
                b.known.truncate(bytes);
                b.shape.width = len;
            }
            Op::Scan {
                dst,
                dst_target,
                src,
                src_target,
                inclusive,
                ..
            } => {
                let (values, known) = self.words(src, src_target);
                // Output `i` is defined when every input it combines is.
                let mut acc = 0u32;
                let mut all_known = true;
                let mut out = Vec::with_capacity(values.len());
                let mut out_known = Vec::with_capacity(values.len());
                for (&x, &k) in values.iter().zip(&known) {
                    let before = (acc, all_known);
                    acc = acc.wrapping_add(x);
                    all_known &= k;
                    let (v, k) = if inclusive { (acc, all_known) } else { before };
                    out.push(v);
                    out_known.push(k);
                }
                self.set_words(dst, dst_target, &out, &out_known);
            }
            Op::Reduce {
                src,
                src_target,
                dst,
                at,
                ..
            } => {
                let (values, known) = self.words(src, src_target);
                let total = values.iter().fold(0u32, |a, &b| a.wrapping_add(b));
                let known = known.iter().all(|&k| k);
                self.set_words(dst, Target::Range(at, at + 1), &[total], &[known]);
            }
            Op::Sort {
                slot,
                target,
                descending,
                ..
            } => {
                let (mut values, known) = self.words(slot, target);
                values.sort_unstable();
                if descending {
                    values.reverse();
                }
                // Where an undefined word lands is unknown: then none is.
                let all = known.iter().all(|&k| k);
                self.set_words(slot, target, &values, &vec![all; values.len()]);
            }
            Op::Prefetch { .. } | Op::Advise { .. } | Op::Check { .. } | Op::SyncAll => {}
        }
    }

    /// The `u32`s of `target` of `slot`, and whether each is defined.
    fn words(&self, slot: usize, target: Target) -> (Vec<u32>, Vec<bool>) {
        let b = self.slots[slot].as_ref().expect("valid op");
        let (x, y) = b.shape.span(target).expect("valid op");
        let values = b.bytes[x..y]
            .chunks_exact(4)
            .map(|w| u32::from_ne_bytes(w.try_into().expect("4 bytes")))
            .collect();
        let known = b.known[x..y]
            .chunks_exact(4)
            .map(|k| k.iter().all(|&k| k))
            .collect();
        (values, known)
    }

    /// Writes `values` (defined as `known` says) to `target` of `slot`.
    fn set_words(&mut self, slot: usize, target: Target, values: &[u32], known: &[bool]) {
        let b = self.slots[slot].as_mut().expect("valid op");
        let (x, _) = b.shape.span(target).expect("valid op");
        for (i, (v, &k)) in values.iter().zip(known).enumerate() {
            let at = x + 4 * i;
            b.bytes[at..at + 4].copy_from_slice(&v.to_ne_bytes());
            b.known[at..at + 4].fill(k);
        }
    }

    fn copy_bytes(&mut self, dst: usize, dt: Target, src: usize, st: Target) {
        let s = self.slots[src].as_ref().expect("valid op");
        let (sx, sy) = s.shape.span(st).expect("valid op");
        let (bytes, known) = (s.bytes[sx..sy].to_vec(), s.known[sx..sy].to_vec());
        let d = self.slots[dst].as_mut().expect("valid op");
        let (dx, dy) = d.shape.span(dt).expect("valid op");
        d.bytes[dx..dy].copy_from_slice(&bytes);
        d.known[dx..dy].copy_from_slice(&known);
    }

    /// Compares what a backend read for `target` of `slot` with the model:
    /// `Ok(bytes compared)` or a description of the first difference.
    pub fn verify(&self, slot: usize, target: Target, read: &Read) -> Result<u64, String> {
        let b = self.get(slot).ok_or("check of an empty slot")?;
        let (x, y) = b.shape.span(target).ok_or("check of an invalid target")?;
        let size = b.shape.elem.size();
        let (want, known) = (&b.bytes[x..y], &b.known[x..y]);
        if read.logical.len() != want.len() {
            return Err(format!(
                "read {} bytes, want {} ({:?} of {:?})",
                read.logical.len(),
                want.len(),
                target,
                b.shape
            ));
        }
        let bad: Vec<usize> = (0..want.len())
            .filter(|&i| known[i] && read.logical[i] != want[i])
            .collect();
        if let Some(&i) = bad.first() {
            let e = i / size;
            let show = |bytes: &[u8], known: Option<&[bool]>| {
                let (a, z) = (e * size, ((e + 1) * size).min(e * size + 24));
                (a..z)
                    .map(|j| match known {
                        Some(k) if !k[j] => "??".to_string(),
                        _ => format!("{:02x}", bytes[j]),
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            return Err(format!(
                "{} of {} bytes differ in {:?} of slot {slot} ({:?} {:?} {}x{}); first at byte {i} \
                 (element {e} of the target, {size}-byte elements): got [{}], want [{}]",
                bad.len(),
                want.len(),
                target,
                b.shape.kind,
                b.shape.elem,
                b.shape.width,
                b.shape.height,
                show(&read.logical, None),
                show(want, Some(known)),
            ));
        }
        if let Some(padding) = &read.padding {
            if let Some(i) = padding.iter().position(|&p| p != b.pad) {
                return Err(format!(
                    "padding byte {i} (counting only padding) of pitched slot {slot} is {:#04x}, want {:#04x}",
                    padding[i], b.pad
                ));
            }
        }
        Ok(known.iter().filter(|&&k| k).count() as u64)
    }
}

/// Whether `target` of a buffer of `shape` is one contiguous run of
/// elements, as `cuda_mem::algo` needs: any 1D target, or (part of) one row
/// of a pitched buffer.
fn contiguous(shape: &Shape, target: Target) -> bool {
    !shape.pitched() || matches!(target, Target::Row(..))
}

/// What a backend read.
#[derive(Clone, Debug, Default)]
pub struct Read {
    /// The target's elements, tightly packed.
    pub logical: Vec<u8>,
    /// [`ReadWay::RawPadded`](super::ops::ReadWay::RawPadded): every padding byte, in order.
    pub padding: Option<Vec<u8>>,
}
