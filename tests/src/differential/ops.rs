//! The operations of the differential tester: buffer kinds, element types,
//! streams, targets, read ways, [`Op`] itself, buffer shapes, and the random
//! contents that operations name by seed.

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
    /// A third, used only by the views generator (`generate_views`), which
    /// spreads views of one allocation over more streams.
    S3,
}

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
    /// `cuda_mem::algo::inclusive_scan` / `exclusive_scan` with `Sum` of
    /// `src_target` of the `u32` slot `src` into `dst_target` of `dst` (the
    /// same slot and target: the `_in_place` forms), on `stream`. Targets
    /// are contiguous: 1D ones, or one row of a pitched buffer.
    Scan {
        /// Destination slot.
        dst: usize,
        /// Destination elements (as many as the source's).
        dst_target: Target,
        /// Source slot.
        src: usize,
        /// Source elements.
        src_target: Target,
        /// Inclusive, else exclusive.
        inclusive: bool,
        /// Stream.
        stream: Strm,
    },
    /// `cuda_mem::algo::reduce_into` with `Sum` of `src_target` of the
    /// `u32` slot `src` into element `at` of the 1D `u32` slot `dst`
    /// (another buffer), on `stream`.
    Reduce {
        /// Source slot.
        src: usize,
        /// Source elements.
        src_target: Target,
        /// Destination slot.
        dst: usize,
        /// The destination element.
        at: usize,
        /// Stream.
        stream: Strm,
    },
    /// `cuda_mem::algo::sort` of `target` of the `u32` slot `slot` in
    /// place (a contiguous target), ascending or descending, on `stream`.
    Sort {
        /// Slot.
        slot: usize,
        /// Elements.
        target: Target,
        /// Descending, else ascending.
        descending: bool,
        /// Stream.
        stream: Strm,
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
            Op::Scan { .. } => "algo scan",
            Op::Reduce { .. } => "algo reduce_into",
            Op::Sort { .. } => "algo sort",
            Op::Check { .. } => "check",
            Op::SyncAll => "sync all",
        }
    }

    /// The stream the operation is queued on, if it takes one.
    pub fn stream(&self) -> Option<Strm> {
        match *self {
            Op::Alloc { stream, .. }
            | Op::FreeOnStream { stream, .. }
            | Op::Fill { stream, .. }
            | Op::Memset { stream, .. }
            | Op::UploadAsync { stream, .. }
            | Op::DownloadAsync { stream, .. }
            | Op::Copy { stream, .. }
            | Op::Scan { stream, .. }
            | Op::Reduce { stream, .. }
            | Op::Sort { stream, .. }
            | Op::Prefetch { stream, .. } => Some(stream),
            _ => None,
        }
    }

    /// The slot and elements the operation reads from a buffer, if any.
    pub fn read(&self) -> Option<(usize, Target)> {
        match *self {
            Op::UploadAsync { src, .. } => Some((src, Target::Whole)),
            Op::DownloadAsync { src, target, .. } => Some((src, target)),
            Op::Copy {
                src, src_target, ..
            }
            | Op::Scan {
                src, src_target, ..
            }
            | Op::Reduce {
                src, src_target, ..
            } => Some((src, src_target)),
            _ => None,
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
            }
            | Op::Scan {
                dst, dst_target, ..
            } => Some((dst, dst_target)),
            Op::Reduce { dst, at, .. } => Some((dst, Target::Range(at, at + 1))),
            Op::Sort { slot, target, .. } => Some((slot, target)),
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

    pub(super) fn pitched(&self) -> bool {
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
