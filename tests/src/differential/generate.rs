//! The generators: seeded random operation sequences, each operation valid
//! in the state the earlier ones leave.

use super::model::Model;
use super::ops::{Elem, Init, Kind, Op, ReadWay, Shape, Strm, Target, MAX_BYTES, SLOTS};
use crate::Rng;

/// The streams of [`generate`]: the synchronous calls and two streams.
const STREAMS: [Strm; 3] = [Strm::Default, Strm::S1, Strm::S2];

/// The streams of [`generate_views`]: the synchronous calls and three streams.
const VIEW_STREAMS: [Strm; 4] = [Strm::Default, Strm::S1, Strm::S2, Strm::S3];

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
    pick_stream(rng, &STREAMS)
}

fn pick_stream(rng: &mut Rng, streams: &[Strm]) -> Strm {
    streams[rng.below(streams.len())]
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
/// How a new buffer starts: uninitialised, zeroed, or from random data.
fn init(rng: &mut Rng) -> Init {
    match rng.below(3) {
        0 => Init::Uninit,
        1 => Init::Zeroed,
        _ => Init::FromSlice(rng.next_u64()),
    }
}

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
    let init = init(rng);
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
        56..=69 => copy(rng, model, &live, &STREAMS)?,
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
        77..=80 => algo(rng, model, &live, &STREAMS)?,
        81..=95 => {
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

/// A random contiguous target of a `u32` buffer for `cuda_mem::algo`: a
/// 1D target, or part of one row of a pitched buffer.
fn algo_target(rng: &mut Rng, shape: &Shape) -> Option<Target> {
    if shape.pitched() {
        if shape.height == 0 {
            return None;
        }
        let a = rng.below(shape.width + 1);
        let b = a + rng.below(shape.width - a + 1);
        return Some(Target::Row(rng.below(shape.height), a, b));
    }
    Some(target(rng, shape))
}

/// A random `cuda_mem::algo` operation on live `u32` slots: a scan (into
/// another buffer or in place), a reduction into one element, or a sort in
/// place.
fn algo(rng: &mut Rng, model: &Model, live: &[usize], streams: &[Strm]) -> Option<Op> {
    let shape = |s: usize| model.shape(s).expect("live slot");
    let words: Vec<usize> = live
        .iter()
        .copied()
        .filter(|&s| shape(s).elem == Elem::U32)
        .collect();
    let src = pick(rng, &words)?;
    let src_target = algo_target(rng, &shape(src))?;
    let stream = pick_stream(rng, streams);
    let others: Vec<usize> = words.iter().copied().filter(|&s| s != src).collect();
    if rng.below(3) == 0 {
        let dst = pick(
            rng,
            &others
                .into_iter()
                .filter(|&s| !shape(s).pitched() && !shape(s).is_empty())
                .collect::<Vec<_>>(),
        )?;
        return Some(Op::Reduce {
            src,
            src_target,
            dst,
            at: rng.below(shape(dst).len()),
            stream,
        });
    }
    if rng.below(4) == 0 {
        return Some(Op::Sort {
            slot: src,
            target: src_target,
            descending: rng.below(2) == 0,
            stream,
        });
    }
    let inclusive = rng.below(2) == 0;
    if rng.below(3) == 0 {
        return Some(Op::Scan {
            dst: src,
            dst_target: src_target,
            src,
            src_target,
            inclusive,
            stream,
        });
    }
    let n = shape(src).count(src_target);
    let dst = pick(rng, &others)?;
    let dst_target = if shape(dst).pitched() {
        let d = shape(dst);
        if d.height == 0 || d.width < n {
            return None;
        }
        let o = rng.below(d.width - n + 1);
        Target::Row(rng.below(d.height), o, o + n)
    } else {
        target_of_len(rng, &shape(dst), n, false)?
    };
    Some(Op::Scan {
        dst,
        dst_target,
        src,
        src_target,
        inclusive,
        stream,
    })
}

/// A random `Copy` between two live slots of one element type, on one of `streams`.
fn copy(rng: &mut Rng, model: &Model, live: &[usize], streams: &[Strm]) -> Option<Op> {
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
    let stream = pick_stream(rng, streams);
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

/// The slots of [`generate_views`]: two large buffers whose views the
/// operations use, and two small host-accessible ones for asynchronous
/// copies to and from those views.
const VIEW_SLOTS: [usize; 4] = [0, 1, 2, 3];

/// A random allocation for slot `slot` of [`generate_views`] with elements
/// of `elem`: slots 0 and 1 large (of the next kind of `uncovered`, a
/// shuffled [`Kind::ALL`], while it lasts, so that every kind comes early
/// in every sequence; then any kind), 2 and 3 small and host-accessible.
fn view_alloc(rng: &mut Rng, slot: usize, elem: Elem, uncovered: &mut Vec<Kind>) -> Op {
    let max = MAX_BYTES / elem.size();
    let (kind, width, height) = if slot < 2 {
        let kind = match uncovered.pop() {
            Some(kind) => kind,
            None => Kind::ALL[rng.below(Kind::ALL.len())],
        };
        if kind == Kind::Pitched {
            let height = 2 + rng.below(30);
            (kind, max / 2 / height + rng.below(max / 2 / height), height)
        } else {
            (kind, max / 4 + rng.below(max * 3 / 4), 1)
        }
    } else {
        let kind = [Kind::Pinned, Kind::Unified][rng.below(2)];
        (kind, 1 + length(rng, max / 8), 1)
    };
    let init = init(rng);
    Op::Alloc {
        slot,
        kind,
        elem,
        width,
        height,
        init,
        stream: pick_stream(rng, &VIEW_STREAMS),
        pad: rng.next_u64() as u8,
    }
}

/// A random view of `shape` for [`generate_views`]: half the time one of
/// `parts` equal parts of a 1D buffer (so that many operations use the same
/// or disjoint parts), otherwise any target.
fn view_target(rng: &mut Rng, shape: &Shape, parts: usize) -> Target {
    if shape.pitched() || rng.below(2) == 0 {
        return target(rng, shape);
    }
    let part = shape.len() / parts;
    let i = rng.below(parts);
    let end = if i + 1 == parts {
        shape.len()
    } else {
        (i + 1) * part
    };
    Target::Range(i * part, end)
}

/// One random operation of [`generate_views`] valid in `model`'s state.
fn propose_view(
    rng: &mut Rng,
    model: &Model,
    elem: Elem,
    parts: usize,
    uncovered: &mut Vec<Kind>,
) -> Option<Op> {
    if let Some(&slot) = VIEW_SLOTS.iter().find(|&&s| model.get(s).is_none()) {
        return Some(view_alloc(rng, slot, elem, uncovered));
    }
    let shape = |s: usize| model.shape(s).expect("live slot");
    let stream = pick_stream(rng, &VIEW_STREAMS);
    let big = rng.below(2);
    let op = match rng.below(100) {
        0 => Op::Drop {
            slot: rng.below(VIEW_SLOTS.len()),
        },
        1..=22 => Op::Fill {
            slot: big,
            target: view_target(rng, &shape(big), parts),
            stream,
            value: rng.next_u64(),
        },
        23..=32 => Op::Memset {
            slot: big,
            target: view_target(rng, &shape(big), parts),
            stream,
            byte: rng.next_u64() as u8,
        },
        33..=52 => copy(rng, model, &[0, 1], &VIEW_STREAMS)?,
        53..=68 => {
            let host = 2 + rng.below(2);
            let n = shape(host).len();
            let target = target_of_len(rng, &shape(big), n, true)?;
            if rng.below(2) == 0 {
                Op::UploadAsync {
                    dst: big,
                    target,
                    src: host,
                    stream,
                }
            } else {
                Op::DownloadAsync {
                    src: big,
                    target,
                    dst: host,
                    stream,
                }
            }
        }
        69..=71 => {
            let slot = 2 + rng.below(2);
            Op::HostWrite {
                slot,
                target: target(rng, &shape(slot)),
                data: rng.next_u64(),
            }
        }
        72..=75 if elem == Elem::U32 => algo(rng, model, &VIEW_SLOTS, &VIEW_STREAMS)?,
        72..=98 => {
            let slot = if rng.below(5) == 0 {
                2 + rng.below(2)
            } else {
                big
            };
            let t = view_target(rng, &shape(slot), parts);
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

/// `n` random operations from `seed` that exercise per-range ordering: two
/// large buffers (random kinds, one small element type) and two small
/// host-accessible ones, and many fills, memsets, copies (within one buffer
/// through disjoint views, and between the two), asynchronous host copies and
/// checks over views of them (equal parts or random ranges, often
/// overlapping, often disjoint) on the synchronous calls and three streams.
/// A dropped buffer is allocated again (new kind) by the next operation.
pub fn generate_views(seed: u64, n: usize) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    let elem = [Elem::U8, Elem::U32, Elem::E12][rng.below(3)];
    let parts = 2 + rng.below(7);
    // Every kind for the large buffers early on: a random order of all of
    // them first (a sequence of ~50 random draws missed one now and then).
    let mut uncovered = Kind::ALL.to_vec();
    rng.shuffle(&mut uncovered);
    let mut model = Model::new();
    let mut ops = Vec::with_capacity(n);
    while ops.len() < n {
        if let Some(op) = propose_view(&mut rng, &model, elem, parts, &mut uncovered) {
            debug_assert!(model.valid(&op), "generated an invalid op {op:?}");
            if model.valid(&op) {
                model.apply(&op);
                ops.push(op);
            }
        }
    }
    ops
}

/// Slots of [`generate_pinned_reuse`]: device buffers in the first
/// `REUSE_DEVICE_SLOTS`, pinned buffers in the rest.
const REUSE_DEVICE_SLOTS: usize = 3;

/// Sequences for the pinned cache: asynchronous copies into and out of
/// pinned buffers on two streams, the pinned buffer dropped right after (its
/// DMA may still run) and a pinned buffer of the same size allocated at once
/// (the same size class: the cache would hand the dropped block out again if
/// it did not wait for its event), then written and checked. Device buffers
/// in slots `0..3`, pinned buffers in the rest, of a few lengths so that
/// sizes repeat; one element type per sequence.
pub fn generate_pinned_reuse(seed: u64, n: usize) -> Vec<Op> {
    let mut rng = Rng::new(seed);
    let elem = [Elem::U8, Elem::U32, Elem::E12][rng.below(3)];
    let max = MAX_BYTES / elem.size();
    let lens: Vec<usize> = (0..3).map(|_| 1 + rng.below(max)).collect();
    let mut model = Model::new();
    let mut ops = Vec::with_capacity(n);
    let alloc_op = |rng: &mut Rng, slot: usize, kind: Kind, width: usize| Op::Alloc {
        slot,
        kind,
        elem,
        width,
        height: 1,
        init: match rng.below(3) {
            0 => Init::Uninit,
            _ => Init::FromSlice(rng.next_u64()),
        },
        stream: Strm::Default,
        pad: 0,
    };
    while ops.len() < n {
        let len = lens[rng.below(lens.len())];
        let d = rng.below(REUSE_DEVICE_SLOTS);
        let p = REUSE_DEVICE_SLOTS + rng.below(SLOTS - REUSE_DEVICE_SLOTS);
        let s = [Strm::S1, Strm::S2][rng.below(2)];
        let mut batch = Vec::new();
        match rng.below(10) {
            // A copy in flight, the pinned buffer dropped and re-allocated
            // at the same length, then written by the host.
            0..=5 => {
                for (slot, kind) in [(d, Kind::Device), (p, Kind::Pinned)] {
                    if model.shape(slot).is_none_or(|sh| sh.len() != len) {
                        if model.shape(slot).is_some() {
                            batch.push(Op::Drop { slot });
                        }
                        batch.push(alloc_op(&mut rng, slot, kind, len));
                    }
                }
                batch.push(if rng.below(2) == 0 {
                    Op::DownloadAsync {
                        src: d,
                        target: Target::Whole,
                        dst: p,
                        stream: s,
                    }
                } else {
                    Op::UploadAsync {
                        dst: d,
                        target: Target::Whole,
                        src: p,
                        stream: s,
                    }
                });
                batch.push(Op::Drop { slot: p });
                batch.push(alloc_op(&mut rng, p, Kind::Pinned, len));
                if rng.below(2) == 0 {
                    batch.push(Op::HostWrite {
                        slot: p,
                        target: Target::Whole,
                        data: rng.next_u64(),
                    });
                }
                batch.push(Op::Check {
                    slot: p,
                    target: Target::Whole,
                    way: ReadWay::HostSlice,
                });
            }
            6 => batch.push(Op::Fill {
                slot: d,
                target: Target::Whole,
                stream: s,
                value: rng.next_u64(),
            }),
            7 => {
                let slot = rng.below(SLOTS);
                if let Some(shape) = model.shape(slot) {
                    let ways = shape.read_ways(true);
                    batch.push(Op::Check {
                        slot,
                        target: Target::Whole,
                        way: ways[rng.below(ways.len())],
                    });
                }
            }
            8 => batch.push(Op::SyncAll),
            _ => batch.push(Op::Drop {
                slot: rng.below(SLOTS),
            }),
        }
        for op in batch {
            if ops.len() < n && model.valid(&op) {
                model.apply(&op);
                ops.push(op);
            }
        }
    }
    ops
}
