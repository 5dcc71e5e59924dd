//! The engine of the differential tester (`tests/tests/differential.rs`).
//!
//! - [`generate`]: a seeded generator of random operation sequences over every
//!   buffer kind (device, pinned, unified, pool, pool from a `MemPool`,
//!   pitched, and the growable `DeviceVec` with its growth and shrinking),
//!   element sizes 1, 4, 12, 100 and 300, whole buffers and views at
//!   random (unaligned) offsets, the synchronous calls and two streams.
//! - [`Model`]: a plain host model, the bytes of every buffer (and which of
//!   them are defined: fresh device and pool memory is not).
//! - [`run`]: executes a sequence on a [`Backend`], applies it to the model,
//!   and compares every byte read back at every check and sync point.
//! - [`shrink`]: replays prefixes on fresh backends to find the shortest one
//!   after which the contents diverge, then drops the operations the failure
//!   does not need.
//!
//! All of this is host code. The GPU backend is in the test file;
//! [`FakeBackend`] (the model itself, optionally with an injected fault) lets
//! CPU tests check the generator, the runner and the shrinker.
//!
//! Operations are plain data and name buffers by slot. An operation that is
//! not valid in the current state (a slot not allocated, a range past the
//! end, two buffers of different element types) is skipped by the runner, so
//! any subsequence of a generated sequence can be replayed: that is what lets
//! the shrinker delete operations.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use crate::Rng;

/// Number of buffer slots.
pub const SLOTS: usize = 8;

/// Largest buffer, in bytes (logical), the generator asks for.
pub const MAX_BYTES: usize = 96 * 1024;

/// The kind of memory of a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `DeviceBuffer`.
    Device,
    /// `PinnedBuffer`.
    Pinned,
    /// `UnifiedBuffer`.
    Unified,
    /// `PoolBuffer::new(len, &stream)` (the device's current pool).
    Pool,
    /// `PoolBuffer::from_pool(&pool, len, &stream)` (a `MemPool` of the backend).
    MemPool,
    /// `PitchedBuffer` (`width` x `height`).
    Pitched,
    /// `DeviceVec` (grows and shrinks in place: [`Op::Grow`], [`Op::Shrink`]).
    Vec,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 7] = [
        Kind::Device,
        Kind::Pinned,
        Kind::Unified,
        Kind::Pool,
        Kind::MemPool,
        Kind::Pitched,
        Kind::Vec,
    ];

    /// Pinned and unified memory: the host reads and writes it, and it is the
    /// source and target of the asynchronous host copies.
    pub fn host_accessible(self) -> bool {
        matches!(self, Kind::Pinned | Kind::Unified)
    }

    /// Stream-ordered pool memory (`free_on_stream`).
    pub fn is_pool(self) -> bool {
        matches!(self, Kind::Pool | Kind::MemPool)
    }

    /// Whether the memory starts zeroed (a guarantee of the library).
    pub fn starts_zeroed(self) -> bool {
        self.host_accessible()
    }
}

/// The element type of a slot (the GPU backend maps each to a Rust type of
/// that size).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Elem {
    /// `u8`.
    U8,
    /// `u32`.
    U32,
    /// A 12-byte `#[derive(DeviceCopy)]` struct.
    E12,
    /// A 100-byte `#[derive(DeviceCopy)]` struct.
    E100,
    /// A 300-byte `#[derive(DeviceCopy)]` struct (beyond the fill kernel's
    /// 256-byte parameter path).
    E300,
}

impl Elem {
    /// Every element type.
    pub const ALL: [Elem; 5] = [Elem::U8, Elem::U32, Elem::E12, Elem::E100, Elem::E300];

    /// `size_of` the element.
    pub fn size(self) -> usize {
        match self {
            Elem::U8 => 1,
            Elem::U32 => 4,
            Elem::E12 => 12,
            Elem::E100 => 100,
            Elem::E300 => 300,
        }
    }
}

/// The stream of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strm {
    /// For operations with a synchronous form (`fill`, `memset`, `copy_from`),
    /// that form (it queues on the context's legacy default stream); for
    /// operations that take a stream, a third stream (cuda-mem refuses the
    /// legacy default stream passed by handle).
    Default,
    /// The first of two streams from `ctx.new_stream()`.
    S1,
    /// The second.
    S2,
}

const STREAMS: [Strm; 3] = [Strm::Default, Strm::S1, Strm::S2];

/// How a new buffer is initialised.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Init {
    /// `new` (device and pool memory: unspecified contents; pinned and
    /// unified: zeroed; pitched: the backend sets every byte, padding
    /// included, to the allocation's `pad` so that the padding can be checked).
    Uninit,
    /// `zeroed` (or `new` and a memset to 0 where there is no `zeroed`).
    Zeroed,
    /// `from_slice` (or `new` and `copy_from_host`) of [`data_bytes`] of this seed.
    FromSlice(u64),
}

/// The elements an operation works on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The whole buffer, through the buffer's own methods.
    Whole,
    /// Elements `a..b` of a 1D buffer, through `slice` / `slice_mut`.
    Range(usize, usize),
    /// Elements `a..b` of row `r` of a pitched buffer, through `row` /
    /// `row_mut` and then `slice` / `slice_mut`.
    Row(usize, usize, usize),
}

/// How a check reads a buffer back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReadWay {
    /// `to_vec`.
    ToVec,
    /// `copy_to_host` into a poisoned `Vec`.
    CopyToHost,
    /// `as_slice` (pinned and unified only).
    HostSlice,
    /// `copy_to_host_async` into a poisoned `PinnedBuffer`, then its `as_slice`.
    ViaPinned(Strm),
    /// The whole allocation of a pitched buffer, padding included (the padding
    /// must still hold the allocation's `pad` byte).
    RawPadded,
}

/// One operation. Slots are `0..SLOTS`; random contents are given as seeds
/// (see [`data_bytes`] and [`fill_value`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Allocates a buffer in an empty slot (`height` is 1 except for pitched).
    Alloc {
        /// Slot.
        slot: usize,
        /// Memory kind.
        kind: Kind,
        /// Element type.
        elem: Elem,
        /// Elements per row (1D: the length).
        width: usize,
        /// Rows (1D: 1).
        height: usize,
        /// Initial contents.
        init: Init,
        /// The stream of a pool allocation.
        stream: Strm,
        /// Pitched: the byte the whole allocation is set to first.
        pad: u8,
    },
    /// Drops the buffer.
    Drop {
        /// Slot.
        slot: usize,
    },
    /// `free_on_stream` of a pool buffer.
    FreeOnStream {
        /// Slot.
        slot: usize,
        /// Stream.
        stream: Strm,
    },
    /// `fill` / `fill_async` with [`fill_value`] of `value`.
    Fill {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// Stream.
        stream: Strm,
        /// Seed of the value.
        value: u64,
    },
    /// `memset` / `memset_async`.
    Memset {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// Stream.
        stream: Strm,
        /// The byte.
        byte: u8,
    },
    /// `copy_from_host` of [`data_bytes`] of `data` (synchronous).
    Upload {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// Seed of the data.
        data: u64,
    },
    /// Writes [`data_bytes`] of `data` through `as_mut_slice` (pinned, unified).
    HostWrite {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// Seed of the data.
        data: u64,
    },
    /// `copy_from_host_async` of the whole host-accessible buffer `src` into
    /// `target` of `dst`.
    UploadAsync {
        /// Destination slot.
        dst: usize,
        /// Destination elements (as many as `src` has).
        target: Target,
        /// Source slot (pinned or unified).
        src: usize,
        /// Stream.
        stream: Strm,
    },
    /// `copy_to_host_async` of `target` of `src` into the whole
    /// host-accessible buffer `dst`.
    DownloadAsync {
        /// Source slot.
        src: usize,
        /// Source elements (as many as `dst` has).
        target: Target,
        /// Destination slot (pinned or unified).
        dst: usize,
        /// Stream.
        stream: Strm,
    },
    /// `copy_from` / `copy_from_async` between any two kinds (the same slot:
    /// two disjoint views from `split_at_mut`; two pitched buffers of the same
    /// shape: the 2D copy).
    Copy {
        /// Destination slot.
        dst: usize,
        /// Destination elements.
        dst_target: Target,
        /// Source slot.
        src: usize,
        /// Source elements (as many).
        src_target: Target,
        /// Stream.
        stream: Strm,
    },
    /// `prefetch_to_device` / `prefetch_to_host` of a unified buffer.
    Prefetch {
        /// Slot.
        slot: usize,
        /// To the device, else to the host.
        to_device: bool,
        /// Stream.
        stream: Strm,
    },
    /// `advise` on a unified buffer (advice number `advice % 6`).
    Advise {
        /// Slot.
        slot: usize,
        /// Which advice.
        advice: u8,
    },
    /// Appends `n` elements of [`data_bytes`] of `data` to a `DeviceVec`:
    /// `via % 3` picks `extend_from_host`, `extend_from_device` (from an
    /// unaligned view of a temporary device buffer, on `stream`) or the
    /// batched `pusher`.
    Grow {
        /// Slot.
        slot: usize,
        /// Elements appended.
        n: usize,
        /// Seed of the data.
        data: u64,
        /// How.
        via: u8,
        /// Stream (of `extend_from_device`).
        stream: Strm,
    },
    /// `truncate(len)` of a `DeviceVec`, then `shrink_to_fit` if `fit`.
    Shrink {
        /// Slot.
        slot: usize,
        /// New length (at most the old).
        len: usize,
        /// Also `shrink_to_fit`.
        fit: bool,
    },
    /// Reads `target` back and compares it with the model.
    Check {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// How.
        way: ReadWay,
    },
    /// Synchronises both streams and the context, then checks every buffer.
    SyncAll,
}

impl Op {
    /// The operation's name, for statistics.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Alloc { .. } => "alloc",
            Op::Drop { .. } => "drop",
            Op::FreeOnStream { .. } => "free_on_stream",
            Op::Fill { .. } => "fill",
            Op::Memset { .. } => "memset",
            Op::Upload { .. } => "copy_from_host",
            Op::HostWrite { .. } => "host write",
            Op::UploadAsync { .. } => "copy_from_host_async",
            Op::DownloadAsync { .. } => "copy_to_host_async",
            Op::Copy { .. } => "copy_from",
            Op::Prefetch { .. } => "prefetch",
            Op::Advise { .. } => "advise",
            Op::Grow { .. } => "grow",
            Op::Shrink { .. } => "shrink",
            Op::Check { .. } => "check",
            Op::SyncAll => "sync all",
        }
    }

    /// The slot and elements the operation writes, if any.
    pub fn written(&self) -> Option<(usize, Target)> {
        match *self {
            Op::Alloc { slot, .. } | Op::Grow { slot, .. } | Op::Shrink { slot, .. } => {
                Some((slot, Target::Whole))
            }
            Op::Fill { slot, target, .. }
            | Op::Memset { slot, target, .. }
            | Op::Upload { slot, target, .. }
            | Op::HostWrite { slot, target, .. } => Some((slot, target)),
            Op::UploadAsync { dst, target, .. } => Some((dst, target)),
            Op::DownloadAsync { dst, .. } => Some((dst, Target::Whole)),
            Op::Copy {
                dst, dst_target, ..
            } => Some((dst, dst_target)),
            _ => None,
        }
    }
}

/// The shape of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Memory kind.
    pub kind: Kind,
    /// Element type.
    pub elem: Elem,
    /// Elements per row (1D: the length).
    pub width: usize,
    /// Rows (1D: 1).
    pub height: usize,
}

impl Shape {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// No elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn pitched(&self) -> bool {
        self.kind == Kind::Pitched
    }

    /// The elements of `t`, as a range of element indices of the tightly
    /// packed contents, or `None` if `t` is not valid for this shape.
    pub fn elements(&self, t: Target) -> Option<(usize, usize)> {
        match t {
            Target::Whole => Some((0, self.len())),
            Target::Range(a, b) if !self.pitched() && a <= b && b <= self.len() => Some((a, b)),
            Target::Row(r, a, b)
                if self.pitched() && r < self.height && a <= b && b <= self.width =>
            {
                Some((r * self.width + a, r * self.width + b))
            }
            _ => None,
        }
    }

    /// Like [`elements`](Self::elements), in bytes.
    pub fn span(&self, t: Target) -> Option<(usize, usize)> {
        let s = self.elem.size();
        self.elements(t).map(|(a, b)| (a * s, b * s))
    }

    /// Number of elements of `t` (0 if invalid).
    pub fn count(&self, t: Target) -> usize {
        self.elements(t).map_or(0, |(a, b)| b - a)
    }

    /// The ways a check can read this buffer (`whole`: the target is the whole buffer).
    pub fn read_ways(&self, whole: bool) -> Vec<ReadWay> {
        let mut ways = vec![
            ReadWay::ToVec,
            ReadWay::CopyToHost,
            ReadWay::ViaPinned(Strm::Default),
            ReadWay::ViaPinned(Strm::S1),
            ReadWay::ViaPinned(Strm::S2),
        ];
        if self.kind.host_accessible() {
            ways.push(ReadWay::HostSlice);
        }
        if self.pitched() && whole {
            ways.push(ReadWay::RawPadded);
        }
        ways
    }
}

/// `n` random bytes from `seed` (the contents of uploads and `from_slice`).
pub fn data_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        out.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    out.truncate(n);
    out
}

/// The bytes of a fill value of `size` bytes from `seed`: often random, and
/// sometimes with bytes that repeat with period 1, 2 or 4 (the memset paths).
pub fn fill_value(seed: u64, size: usize) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let period = [1, 2, 4, size, size, size][rng.below(6)].clamp(1, size.max(1));
    let base = rng.bytes(period);
    (0..size).map(|i| base[i % period]).collect()
}

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
    slots: Vec<Option<ModelBuf>>,
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
            Op::Prefetch { .. } | Op::Advise { .. } | Op::Check { .. } | Op::SyncAll => {}
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

/// What a backend read.
#[derive(Clone, Debug, Default)]
pub struct Read {
    /// The target's elements, tightly packed.
    pub logical: Vec<u8>,
    /// [`ReadWay::RawPadded`]: every padding byte, in order.
    pub padding: Option<Vec<u8>>,
}

/// Something that executes operations: the library on a GPU, or a fake.
pub trait Backend {
    /// Performs an operation that is not a check or a sync (the runner has
    /// checked it is valid). An `Err` is a divergence: the model says every
    /// valid operation succeeds.
    fn apply(&mut self, op: &Op) -> Result<(), String>;
    /// Waits for all queued work (both streams and the context).
    fn sync(&mut self) -> Result<(), String>;
    /// Reads `target` of `slot` the way `way` says.
    fn read(&mut self, slot: usize, target: Target, way: ReadWay) -> Result<Read, String>;
}

/// Where and how a run diverged from the model.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// Index of the operation in the sequence that was run (`ops.len()`: the
    /// final check).
    pub index: usize,
    /// The operation (`None`: the final check).
    pub op: Option<Op>,
    /// What differed.
    pub detail: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.op {
            Some(op) => write!(f, "op #{} {:?}: {}", self.index, op, self.detail),
            None => write!(f, "final check after {} ops: {}", self.index, self.detail),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Operations executed, by name.
    pub per_op: BTreeMap<&'static str, usize>,
    /// Operations skipped as invalid in the state they met.
    pub skipped: usize,
    /// Reads compared with the model.
    pub reads: usize,
    /// Defined bytes compared.
    pub bytes_checked: u64,
}

impl Stats {
    /// Operations executed.
    pub fn executed(&self) -> usize {
        self.per_op.values().sum()
    }
}

/// The read way a sync point uses for `slot` (rotating through every way the
/// kind has, deterministically).
fn sync_way(shape: &Shape, index: usize, slot: usize) -> ReadWay {
    let ways = shape.read_ways(true);
    ways[(index + slot) % ways.len()]
}

/// When [`run_with`] compares with the model, besides the check and sync
/// operations of the sequence.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checks {
    /// Sync and check every buffer after the last operation.
    pub at_end: bool,
    /// Read back what each operation wrote right after it (this changes the
    /// timing: it synchronises after every write).
    pub after_every_write: bool,
}

/// Runs `ops` on `backend`, checking against a fresh [`Model`] at every
/// check and sync point (and, with `final_check`, every buffer at the end).
pub fn run(ops: &[Op], backend: &mut dyn Backend, final_check: bool) -> Result<Stats, Divergence> {
    let checks = Checks {
        at_end: final_check,
        after_every_write: false,
    };
    run_with(ops, backend, checks)
}

/// [`run`] with more checks.
pub fn run_with(
    ops: &[Op],
    backend: &mut dyn Backend,
    checks: Checks,
) -> Result<Stats, Divergence> {
    let mut model = Model::new();
    let mut stats = Stats::default();
    let fail = |index: usize, op: Option<Op>, detail: String| Divergence { index, op, detail };
    let check_all = |model: &Model,
                     backend: &mut dyn Backend,
                     stats: &mut Stats,
                     index: usize|
     -> Result<(), String> {
        backend.sync().map_err(|e| format!("synchronize: {e}"))?;
        for slot in model.live() {
            let shape = model.shape(slot).expect("live");
            let way = sync_way(&shape, index, slot);
            let read = backend
                .read(slot, Target::Whole, way)
                .map_err(|e| format!("reading slot {slot} with {way:?}: {e}"))?;
            stats.bytes_checked += model
                .verify(slot, Target::Whole, &read)
                .map_err(|e| format!("read with {way:?}: {e}"))?;
            stats.reads += 1;
        }
        Ok(())
    };
    for (index, op) in ops.iter().enumerate() {
        if !model.valid(op) {
            stats.skipped += 1;
            continue;
        }
        *stats.per_op.entry(op.name()).or_default() += 1;
        match *op {
            Op::Check { slot, target, way } => {
                let read = backend
                    .read(slot, target, way)
                    .map_err(|e| fail(index, Some(*op), format!("the read failed: {e}")))?;
                stats.bytes_checked += model
                    .verify(slot, target, &read)
                    .map_err(|e| fail(index, Some(*op), e))?;
                stats.reads += 1;
            }
            Op::SyncAll => {
                check_all(&model, backend, &mut stats, index)
                    .map_err(|e| fail(index, Some(*op), e))?;
            }
            _ => {
                backend
                    .apply(op)
                    .map_err(|e| fail(index, Some(*op), format!("the operation failed: {e}")))?;
                model.apply(op);
                if let Some((slot, target)) = op.written().filter(|_| checks.after_every_write) {
                    let detail = |e| format!("read right after the op: {e}");
                    let read = backend
                        .read(slot, target, ReadWay::ToVec)
                        .map_err(|e| fail(index, Some(*op), detail(e)))?;
                    stats.bytes_checked += model
                        .verify(slot, target, &read)
                        .map_err(|e| fail(index, Some(*op), detail(e)))?;
                    stats.reads += 1;
                }
            }
        }
    }
    if checks.at_end {
        check_all(&model, backend, &mut stats, ops.len()).map_err(|e| fail(ops.len(), None, e))?;
    }
    Ok(stats)
}

/// The result of [`shrink`].
#[derive(Clone, Debug)]
pub struct Shrunk {
    /// The length of a failing prefix of the original sequence (replayed
    /// with a final check of every buffer after it) whose last operation is
    /// the first one after which the contents differ, for a deterministic
    /// failure (see [`shrink`]).
    pub prefix_len: usize,
    /// A subsequence of that prefix that still fails: operations the failure
    /// does not need are dropped.
    pub ops: Vec<Op>,
    /// How the shortest sequence fails.
    pub divergence: Option<Divergence>,
    /// Replays used.
    pub replays: usize,
    /// The original failure did not reproduce (timing-dependent).
    pub flaky: bool,
}

/// Shrinks a failing sequence: `failed_at` is the index at which `run(ops)`
/// diverged; `fresh` makes a new backend (fresh buffers) for every replay.
///
/// 1. Binary search over prefixes, each replayed with a final check of every
///    buffer: finds a failing prefix one op longer than a passing one.
/// 2. A corruption seen only by a final check may be overwritten by later
///    ops, so failing prefixes need not be contiguous: one more replay of
///    that prefix reads back what every op wrote right after it, and if an
///    earlier op already diverges (and the prefix ending there fails on its
///    own), the prefix is cut there. For a deterministic failure its last op
///    is then the first one after which the contents differ.
/// 3. Removes chunks of operations (halving the chunk size down to single
///    operations) while the sequence still fails.
///
/// Stops after `max_replays` replays or at `deadline`.
pub fn shrink(
    ops: &[Op],
    failed_at: usize,
    fresh: &mut dyn FnMut() -> Box<dyn Backend>,
    max_replays: usize,
    deadline: Option<Instant>,
) -> Shrunk {
    let mut replays = 0;
    let mut attempt = |list: &[Op], replays: &mut usize, checks: Checks| -> Option<Divergence> {
        *replays += 1;
        let mut backend = fresh();
        run_with(list, backend.as_mut(), checks).err()
    };
    let normal = Checks {
        at_end: true,
        after_every_write: false,
    };
    let hi_start = (failed_at + 1).min(ops.len());
    let Some(mut last) = attempt(&ops[..hi_start], &mut replays, normal) else {
        return Shrunk {
            prefix_len: hi_start,
            ops: ops[..hi_start].to_vec(),
            divergence: None,
            replays,
            flaky: true,
        };
    };
    // ops[..lo] passes (the empty sequence trivially), ops[..hi] fails.
    let (mut lo, mut hi) = (0, hi_start);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match attempt(&ops[..mid], &mut replays, normal) {
            Some(d) => {
                hi = mid;
                last = d;
            }
            None => lo = mid,
        }
    }
    let mut prefix_len = hi;
    let paranoid = Checks {
        at_end: true,
        after_every_write: true,
    };
    if let Some(d) = attempt(&ops[..hi], &mut replays, paranoid) {
        if d.index + 1 < hi {
            if let Some(d2) = attempt(&ops[..d.index + 1], &mut replays, normal) {
                prefix_len = d.index + 1;
                last = d2;
            }
        }
    }
    let mut cur = ops[..prefix_len].to_vec();
    let out_of_budget =
        |replays: usize| replays >= max_replays || deadline.is_some_and(|d| Instant::now() >= d);
    let mut chunk = (cur.len() / 2).max(1);
    'outer: loop {
        let mut i = 0;
        while i < cur.len() {
            if out_of_budget(replays) {
                break 'outer;
            }
            let end = (i + chunk).min(cur.len());
            let candidate: Vec<Op> = cur[..i].iter().chain(&cur[end..]).copied().collect();
            match attempt(&candidate, &mut replays, normal) {
                Some(d) => {
                    cur = candidate;
                    last = d;
                }
                None => i = end,
            }
        }
        if chunk == 1 {
            break;
        }
        chunk /= 2;
    }
    Shrunk {
        prefix_len,
        ops: cur,
        divergence: Some(last),
        replays,
        flaky: false,
    }
}

/// One operation per line, numbered, at most `max` lines.
pub fn describe(ops: &[Op], max: usize) -> String {
    let mut out = String::new();
    for (i, op) in ops.iter().enumerate().take(max) {
        let _ = writeln!(out, "  {i:5}: {op:?}");
    }
    if ops.len() > max {
        let _ = writeln!(out, "  ... {} more", ops.len() - max);
    }
    out
}

/// A random length up to `max`: often 0, 1, a prime or small, otherwise uniform.
fn length(rng: &mut Rng, max: usize) -> usize {
    const PRIMES: [usize; 10] = [2, 3, 5, 7, 13, 31, 127, 257, 1021, 4099];
    let n = match rng.below(12) {
        0 => 0,
        1 => 1,
        2..=4 => PRIMES[rng.below(PRIMES.len())],
        5..=7 => rng.below(65),
        _ => rng.below(max + 1),
    };
    n.min(max)
}

fn pick<T: Copy>(rng: &mut Rng, items: &[T]) -> Option<T> {
    (!items.is_empty()).then(|| items[rng.below(items.len())])
}

fn stream(rng: &mut Rng) -> Strm {
    STREAMS[rng.below(3)]
}

/// A random valid target of `shape`.
fn target(rng: &mut Rng, shape: &Shape) -> Target {
    if shape.pitched() {
        if shape.height == 0 || rng.below(3) == 0 {
            return Target::Whole;
        }
        let r = rng.below(shape.height);
        let a = rng.below(shape.width + 1);
        let b = a + rng.below(shape.width - a + 1);
        Target::Row(r, a, b)
    } else {
        if rng.below(4) == 0 {
            return Target::Whole;
        }
        let len = shape.len();
        let a = rng.below(len + 1);
        let b = a + rng.below(len - a + 1);
        Target::Range(a, b)
    }
}

/// A random target of exactly `n` elements, if `shape` has one
/// (`whole_2d`: a whole pitched buffer is acceptable).
fn target_of_len(rng: &mut Rng, shape: &Shape, n: usize, whole_2d: bool) -> Option<Target> {
    if shape.pitched() {
        let whole = whole_2d && shape.len() == n;
        let row = shape.height > 0 && shape.width >= n;
        if whole && (!row || rng.below(2) == 0) {
            return Some(Target::Whole);
        }
        if !row {
            return None;
        }
        let o = rng.below(shape.width - n + 1);
        Some(Target::Row(rng.below(shape.height), o, o + n))
    } else {
        let len = shape.len();
        if len < n {
            return None;
        }
        if len == n && rng.below(2) == 0 {
            return Some(Target::Whole);
        }
        let o = rng.below(len - n + 1);
        Some(Target::Range(o, o + n))
    }
}

/// A random allocation into `slot`.
fn alloc(rng: &mut Rng, slot: usize) -> Op {
    let kind = Kind::ALL[rng.below(Kind::ALL.len())];
    let elem = Elem::ALL[rng.below(Elem::ALL.len())];
    let max = MAX_BYTES / elem.size();
    let (width, height) = if kind == Kind::Pitched {
        let height = [0, 1, 2, 3, 5, 7, 12, 31][rng.below(8)];
        (length(rng, max / height.max(1)), height)
    } else {
        (length(rng, max), 1)
    };
    let init = match rng.below(3) {
        0 => Init::Uninit,
        1 => Init::Zeroed,
        _ => Init::FromSlice(rng.next_u64()),
    };
    Op::Alloc {
        slot,
        kind,
        elem,
        width,
        height,
        init,
        stream: stream(rng),
        pad: rng.next_u64() as u8,
    }
}

/// One random operation valid in `model`'s state, or `None` if the choice
/// did not fit (the caller draws again).
fn propose(rng: &mut Rng, model: &Model) -> Option<Op> {
    let live = model.live();
    let free: Vec<usize> = (0..SLOTS).filter(|s| !live.contains(s)).collect();
    let shape = |s: usize| model.shape(s).expect("live slot");
    let live_where = |f: &dyn Fn(&Shape) -> bool| -> Vec<usize> {
        live.iter().copied().filter(|&s| f(&shape(s))).collect()
    };
    let roll = if live.len() < 3 && rng.below(2) == 0 {
        0
    } else {
        rng.below(100)
    };
    let op = match roll {
        0..=6 => match pick(rng, &free) {
            Some(slot) => alloc(rng, slot),
            None => Op::Drop {
                slot: pick(rng, &live)?,
            },
        },
        7..=9 => Op::Drop {
            slot: pick(rng, &live)?,
        },
        10 => Op::FreeOnStream {
            slot: pick(rng, &live_where(&|s| s.kind.is_pool()))?,
            stream: stream(rng),
        },
        11..=24 => {
            let slot = pick(rng, &live)?;
            Op::Fill {
                slot,
                target: target(rng, &shape(slot)),
                stream: stream(rng),
                value: rng.next_u64(),
            }
        }
        25..=31 => {
            let slot = pick(rng, &live)?;
            Op::Memset {
                slot,
                target: target(rng, &shape(slot)),
                stream: stream(rng),
                byte: rng.next_u64() as u8,
            }
        }
        32..=39 => {
            let slot = pick(rng, &live)?;
            Op::Upload {
                slot,
                target: target(rng, &shape(slot)),
                data: rng.next_u64(),
            }
        }
        40..=43 => {
            let slot = pick(rng, &live_where(&|s| s.kind.host_accessible()))?;
            Op::HostWrite {
                slot,
                target: target(rng, &shape(slot)),
                data: rng.next_u64(),
            }
        }
        44..=55 => {
            // One whole host-accessible buffer and a same-sized target of another.
            let host = pick(rng, &live_where(&|s| s.kind.host_accessible()))?;
            let h = shape(host);
            let other = pick(
                rng,
                &live_where(&|s| s.elem == h.elem)
                    .into_iter()
                    .filter(|&s| s != host)
                    .collect::<Vec<_>>(),
            )?;
            let target = target_of_len(rng, &shape(other), h.len(), true)?;
            let stream = stream(rng);
            if roll < 50 {
                Op::UploadAsync {
                    dst: other,
                    target,
                    src: host,
                    stream,
                }
            } else {
                Op::DownloadAsync {
                    src: other,
                    target,
                    dst: host,
                    stream,
                }
            }
        }
        56..=69 => copy(rng, model, &live)?,
        70..=71 => {
            let slot = pick(rng, &live_where(&|s| s.kind == Kind::Unified))?;
            Op::Prefetch {
                slot,
                to_device: rng.below(2) == 0,
                stream: stream(rng),
            }
        }
        72 => Op::Advise {
            slot: pick(rng, &live_where(&|s| s.kind == Kind::Unified))?,
            advice: rng.below(6) as u8,
        },
        73..=75 => {
            let slot = pick(rng, &live_where(&|s| s.kind == Kind::Vec))?;
            let max = MAX_BYTES / shape(slot).elem.size();
            Op::Grow {
                slot,
                n: length(rng, max.saturating_sub(shape(slot).width).max(1)),
                data: rng.next_u64(),
                via: rng.below(3) as u8,
                stream: stream(rng),
            }
        }
        76 => {
            let slot = pick(rng, &live_where(&|s| s.kind == Kind::Vec))?;
            Op::Shrink {
                slot,
                len: rng.below(shape(slot).width + 1),
                fit: rng.below(2) == 0,
            }
        }
        77..=95 => {
            let slot = pick(rng, &live)?;
            let t = target(rng, &shape(slot));
            Op::Check {
                slot,
                target: t,
                way: pick(rng, &shape(slot).read_ways(t == Target::Whole))?,
            }
        }
        _ => Op::SyncAll,
    };
    Some(op)
}

/// A random `Copy` between two live slots of one element type.
fn copy(rng: &mut Rng, model: &Model, live: &[usize]) -> Option<Op> {
    let shape = |s: usize| model.shape(s).expect("live slot");
    let dst = pick(rng, live)?;
    let d = shape(dst);
    let same: Vec<usize> = live
        .iter()
        .copied()
        .filter(|&s| shape(s).elem == d.elem)
        .collect();
    let src = pick(rng, &same)?;
    let s = shape(src);
    let stream = stream(rng);
    if src == dst {
        // Two disjoint views of one 1D buffer, either side the destination.
        let len = d.len();
        if d.pitched() || len < 2 {
            return None;
        }
        let mid = 1 + rng.below(len - 1);
        let n = rng.below(mid.min(len - mid) + 1);
        let left = rng.below(mid - n + 1);
        let right = mid + rng.below(len - mid - n + 1);
        let (l, r) = (
            Target::Range(left, left + n),
            Target::Range(right, right + n),
        );
        let (dst_target, src_target) = if rng.below(2) == 0 { (l, r) } else { (r, l) };
        return Some(Op::Copy {
            dst,
            dst_target,
            src,
            src_target,
            stream,
        });
    }
    if d.pitched() && s.pitched() && (d.width, d.height) == (s.width, s.height) && rng.below(3) == 0
    {
        return Some(Op::Copy {
            dst,
            dst_target: Target::Whole,
            src,
            src_target: Target::Whole,
            stream,
        });
    }
    let most = |sh: &Shape| {
        if !sh.pitched() {
            sh.len()
        } else if sh.height > 0 {
            sh.width
        } else {
            0
        }
    };
    let max = most(&d).min(most(&s));
    let n = if rng.below(3) == 0 {
        max
    } else {
        rng.below(max + 1)
    };
    Some(Op::Copy {
        dst,
        dst_target: target_of_len(rng, &d, n, false)?,
        src,
        src_target: target_of_len(rng, &s, n, false)?,
        stream,
    })
}

/// `n` random operations from `seed`, each valid in the state the earlier
/// ones leave (the same seed always gives the same sequence).
pub fn generate(seed: u64, n: usize) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    let mut model = Model::new();
    let mut ops = Vec::with_capacity(n);
    while ops.len() < n {
        if let Some(op) = propose(&mut rng, &model) {
            debug_assert!(model.valid(&op), "generated an invalid op {op:?}");
            if model.valid(&op) {
                // Only the shapes matter to the generator, but the model is cheap
                // enough at these sizes to keep whole.
                model.apply(&op);
                ops.push(op);
            }
        }
    }
    ops
}

/// The fault of a [`FakeBackend`]: which operations it corrupts.
pub type Fault = Box<dyn Fn(&Op) -> bool>;

/// A backend that is the model itself, with an optional injected fault: when
/// `fault(op)` is true, the last byte the operation writes is flipped after
/// it (for testing the runner and the shrinker without a GPU).
pub struct FakeBackend {
    model: Model,
    fault: Option<Fault>,
    /// How many times the fault fired.
    pub faults: usize,
}

impl FakeBackend {
    /// A backend without faults.
    pub fn correct() -> Self {
        Self {
            model: Model::new(),
            fault: None,
            faults: 0,
        }
    }

    /// A backend that corrupts the result of every operation `fault` selects.
    pub fn with_fault(fault: impl Fn(&Op) -> bool + 'static) -> Self {
        Self {
            fault: Some(Box::new(fault)),
            ..Self::correct()
        }
    }
}

impl Backend for FakeBackend {
    fn apply(&mut self, op: &Op) -> Result<(), String> {
        self.model.apply(op);
        if self.fault.as_ref().is_some_and(|f| f(op)) {
            if let Some((slot, t)) = op.written() {
                let b = self.model.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(t).expect("valid op");
                if y > x {
                    b.bytes[y - 1] ^= 0x5a;
                    b.known[y - 1] = true;
                    self.faults += 1;
                }
            }
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn read(&mut self, slot: usize, target: Target, way: ReadWay) -> Result<Read, String> {
        let b = self.model.get(slot).ok_or("empty slot")?;
        let (x, y) = b.shape.span(target).ok_or("invalid target")?;
        let logical = (x..y)
            .map(|i| if b.known[i] { b.bytes[i] } else { 0xa5 })
            .collect();
        let padding = (way == ReadWay::RawPadded).then(|| vec![b.pad; 3 * b.shape.height]);
        Ok(Read { logical, padding })
    }
}
