//! Several devices and several contexts: buffers of every kind on every
//! device, peer copies between every pair of contexts for every pair of
//! kinds (whole buffers and unaligned views, synchronous and on either
//! side's stream), their ordering against work on both sides, peer access
//! and its fall-back through the host, and NCCL over cuda-mem buffers.
//!
//! Every test runs on any number of GPUs. The contexts under test are the
//! primary context of every device plus a second, non-primary context on
//! device 0, so on one GPU the peer-copy paths still run (two contexts of one
//! device); on two or more, they also run between devices.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::nccl::{Comm, Id, ReduceOp};
use cuda_mem::{
    can_access_peer, disable_peer_access, enable_peer_access, peer_path, AsView, CudaContext,
    CudaStream, DeviceBuffer, DeviceCopy, MemPool, PeerPath, PinnedBuffer, PitchedBuffer,
    PoolBuffer, UnifiedBuffer, View, ViewMut,
};
use cuda_mem_tests::{bytes, expect_err, gpu, under_sanitizer, Rng};

/// A 24-byte struct with mixed fields (compared as bytes: random bits make NaNs).
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
struct Sample {
    pos: [f32; 3],
    id: u32,
    weight: f64,
}

/// The primary context of every device, then a non-primary one on device 0.
fn contexts() -> Vec<Arc<CudaContext>> {
    let n = cuda_mem::device_count().expect("this test needs a CUDA device");
    assert!(n > 0, "this test needs a CUDA device");
    let mut all: Vec<_> = (0..n)
        .map(|i| cuda_mem::context(i).expect("primary context"))
        .collect();
    all.push(CudaContext::new_non_primary(0, 0).expect("a non-primary context on device 0"));
    eprintln!("{n} device(s), {} contexts", all.len());
    all
}

/// Every ordered pair of two different contexts, with their indices.
fn pairs(
    contexts: &[Arc<CudaContext>],
) -> impl Iterator<Item = (usize, &Arc<CudaContext>, usize, &Arc<CudaContext>)> {
    let all = || contexts.iter().enumerate();
    all().flat_map(move |(i, a)| {
        all()
            .filter(move |&(j, _)| j != i)
            .map(move |(j, b)| (i, a, j, b))
    })
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Device,
    Pinned,
    Unified,
    Pool,
}

const KINDS: [Kind; 4] = [Kind::Device, Kind::Pinned, Kind::Unified, Kind::Pool];

/// A buffer of any kind, so that one test body covers every pair of kinds.
enum AnyBuffer<T: DeviceCopy> {
    Device(DeviceBuffer<T>),
    Pinned(PinnedBuffer<T>),
    Unified(UnifiedBuffer<T>),
    Pool(PoolBuffer<T>),
}

impl<T: DeviceCopy> AnyBuffer<T> {
    /// A buffer of `kind` in `stream`'s context holding `data`.
    fn new(kind: Kind, stream: &Arc<CudaStream>, data: &[T]) -> Self {
        let ctx = stream.context();
        let mut b = match kind {
            Kind::Device => Self::Device(DeviceBuffer::new(ctx, data.len()).unwrap()),
            Kind::Pinned => Self::Pinned(PinnedBuffer::new(ctx, data.len()).unwrap()),
            Kind::Unified => Self::Unified(UnifiedBuffer::new(ctx, data.len()).unwrap()),
            Kind::Pool => Self::Pool(PoolBuffer::new(data.len(), stream).unwrap()),
        };
        b.view_mut().copy_from_host(data).unwrap();
        b
    }

    fn view(&self) -> View<'_, T> {
        match self {
            Self::Device(b) => b.as_view(),
            Self::Pinned(b) => b.as_view(),
            Self::Unified(b) => b.as_view(),
            Self::Pool(b) => b.as_view(),
        }
    }

    fn view_mut(&mut self) -> ViewMut<'_, T> {
        match self {
            Self::Device(b) => b.slice_mut(..),
            Self::Pinned(b) => b.slice_mut(..),
            Self::Unified(b) => b.slice_mut(..),
            Self::Pool(b) => b.slice_mut(..),
        }
        .unwrap()
    }

    fn context(&self) -> &Arc<CudaContext> {
        match self {
            Self::Device(b) => b.context(),
            Self::Pinned(b) => b.context(),
            Self::Unified(b) => b.context(),
            Self::Pool(b) => b.context(),
        }
    }
}

/// Asserts that `got` and `want` have the same bytes, naming the first
/// element that differs.
#[track_caller]
fn same<T: DeviceCopy + std::fmt::Debug>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if bytes(got) != bytes(want) {
        let i = (0..got.len())
            .find(|&i| bytes(&got[i..=i]) != bytes(&want[i..=i]))
            .unwrap();
        panic!(
            "{what}: element {i} of {} is {:?}, expected {:?}",
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// A length for a peer copy: odd sizes, sometimes several MiB.
fn length(rng: &mut Rng) -> usize {
    match rng.below(4) {
        0 => 1 + rng.below(16),
        1 | 2 => 1 + rng.below(100_000),
        _ => (3 << 20) / size_of::<Sample>() + rng.below(1000),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffers_of_every_kind_on_every_device() {
    let mut rng = Rng::from_env("every_device");
    let n = cuda_mem::device_count().unwrap();
    for ordinal in 0..n {
        let ctx = cuda_mem::context(ordinal).unwrap();
        assert_eq!(ctx.ordinal(), ordinal);
        let stream = ctx.new_stream().unwrap();
        for kind in KINDS {
            let len = length(&mut rng);
            let data: Vec<Sample> = rng.values(len);
            let mut buf = AnyBuffer::new(kind, &stream, &data);
            assert_eq!(buf.context().ordinal(), ordinal, "{kind:?}");
            same(&buf.view().to_vec().unwrap(), &data, "upload");
            // Fill an unaligned view on the device's own stream.
            let (a, b) = (rng.below(len), rng.below(len + 1));
            let (a, b) = (a.min(b), a.max(b));
            let v: Sample = rng.value();
            buf.view_mut()
                .slice_mut(a..b)
                .unwrap()
                .fill_async(v, &stream)
                .unwrap();
            let mut want = data.clone();
            want[a..b].fill(v);
            same(
                &buf.view().to_vec().unwrap(),
                &want,
                &format!("device {ordinal}, {kind:?}, fill of {a}..{b} of {len}"),
            );
        }
        // A pool of this device, a prefetch to it, and a pitched buffer.
        let pool = MemPool::new(&ctx).unwrap();
        let count = 1 + rng.below(5000);
        let data: Vec<Sample> = rng.values(count);
        let mut from_pool = PoolBuffer::from_pool(&pool, data.len(), &stream).unwrap();
        from_pool.copy_from_host(&data).unwrap();
        same(&from_pool.to_vec().unwrap(), &data, "MemPool buffer");
        from_pool.free_on_stream(&stream).unwrap();
        let unified = UnifiedBuffer::from_slice(&ctx, &data).unwrap();
        unified.prefetch_to_device(&stream).unwrap();
        same(unified.as_slice().unwrap(), &data, "prefetched");
        let (w, h) = (1 + rng.below(300), 1 + rng.below(40));
        let pixels: Vec<Sample> = rng.values(w * h);
        let mut p = PitchedBuffer::from_slice(&ctx, &pixels, w, h).unwrap();
        assert_eq!(p.context().ordinal(), ordinal);
        let v: Sample = rng.value();
        p.fill_async(v, &stream).unwrap();
        same(&p.to_vec().unwrap(), &vec![v; w * h], "pitched fill");
        eprintln!("device {ordinal}: every kind allocated, filled and read back");
    }
}

/// For every pair of contexts (devices, or two contexts of device 0): a
/// buffer of one used with a stream of the other is an `Err` that says so,
/// and a copy between the two queued on a stream of a third context too; the
/// rejected calls change nothing.
#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_of_another_context_or_device_is_refused() {
    let mut rng = Rng::from_env("stream_of_another_device");
    let contexts = contexts();
    let third = CudaContext::new_non_primary(0, 0).unwrap();
    let alien = third.new_stream().unwrap();
    let words = [
        "context mismatch",
        "the stream belongs to another CUDA context",
    ];
    let peer_words = [
        "context mismatch",
        "the stream of a copy between two contexts",
    ];
    for (ai, a, bi, b) in pairs(&contexts) {
        let (own, foreign) = (a.new_stream().unwrap(), b.new_stream().unwrap());
        for kind in KINDS {
            let what = format!("{kind:?} of context {ai}, stream of context {bi}");
            let len = 1 + rng.below(10_000);
            let data: Vec<Sample> = rng.values(len);
            let mut buf = AnyBuffer::new(kind, &own, &data);
            let other = AnyBuffer::new(Kind::Device, &foreign, &data);
            let v: Sample = rng.value();
            expect_err(buf.view_mut().fill_async(v, &foreign), &words, &what);
            expect_err(buf.view_mut().memset_async(7, &foreign), &words, &what);
            expect_err(buf.view().kernel_arg(&foreign).map(|_| ()), &words, &what);
            expect_err(
                buf.view_mut().kernel_arg_mut(&foreign).map(|_| ()),
                &words,
                &what,
            );
            let same_side = DeviceBuffer::from_slice(a, &data).unwrap();
            expect_err(
                buf.view_mut().copy_from_async(&same_side, &foreign),
                &words,
                &what,
            );
            expect_err(
                buf.view_mut().copy_from_async(&other.view(), &alien),
                &peer_words,
                &what,
            );
            same(
                &buf.view().to_vec().unwrap(),
                &data,
                &format!("{what}: unchanged"),
            );
        }
        expect_err(
            PoolBuffer::<Sample>::from_pool(&MemPool::new(a).unwrap(), 4, &foreign),
            &["context mismatch", "the memory pool"],
            "from_pool",
        );
        let pooled = PoolBuffer::<Sample>::new(4, &own).unwrap();
        expect_err(pooled.free_on_stream(&foreign), &words, "free_on_stream");
        let mut p = PitchedBuffer::<Sample>::new(a, 1 + rng.below(100), 1 + rng.below(10)).unwrap();
        expect_err(p.fill_async(rng.value(), &foreign), &words, "pitched fill");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn peer_copies_between_every_pair_of_contexts_and_kinds() {
    let mut rng = Rng::from_env("peer_copies");
    let contexts = contexts();
    let poison = Sample {
        pos: [f32::from_bits(0xa5a5_a5a5); 3],
        id: 0xa5a5_a5a5,
        weight: f64::from_bits(0xa5a5_a5a5_a5a5_a5a5),
    };
    let mut copies = 0;
    for (di, dst_ctx, si, src_ctx) in pairs(&contexts) {
        let (dst_stream, src_stream) =
            (dst_ctx.new_stream().unwrap(), src_ctx.new_stream().unwrap());
        for dst_kind in KINDS {
            for src_kind in KINDS {
                let what = format!("{src_kind:?} of context {si} -> {dst_kind:?} of context {di}");
                let len = length(&mut rng);
                let data: Vec<Sample> = rng.values(len);
                let src = AnyBuffer::new(src_kind, &src_stream, &data);
                let mut dst = AnyBuffer::new(dst_kind, &dst_stream, &vec![poison; len]);
                // The whole buffer: synchronous, or on either side's stream.
                match rng.below(3) {
                    0 => dst.view_mut().copy_from(&src.view()).unwrap(),
                    1 => dst
                        .view_mut()
                        .copy_from_async(&src.view(), &dst_stream)
                        .unwrap(),
                    _ => dst
                        .view_mut()
                        .copy_from_async(&src.view(), &src_stream)
                        .unwrap(),
                }
                same(&dst.view().to_vec().unwrap(), &data, &what);
                // Unaligned views at different offsets, after a fresh poison.
                dst.view_mut().fill(poison).unwrap();
                let m = rng.below(len);
                let (a, b) = (rng.below(len - m + 1), rng.below(len - m + 1));
                let stream = if rng.below(2) == 0 {
                    &dst_stream
                } else {
                    &src_stream
                };
                dst.view_mut()
                    .slice_mut(b..b + m)
                    .unwrap()
                    .copy_from_async(&src.view().slice(a..a + m).unwrap(), stream)
                    .unwrap();
                let mut want = vec![poison; len];
                want[b..b + m].copy_from_slice(&data[a..a + m]);
                same(
                    &dst.view().to_vec().unwrap(),
                    &want,
                    &format!("{what}: {a}..{} into {b}..{}", a + m, b + m),
                );
                copies += 2;
            }
        }
        // Pitched buffers: 2D peer copies, and to and from the other
        // context's pinned memory.
        let (w, h) = (1 + rng.below(500), 1 + rng.below(50));
        let pixels: Vec<Sample> = rng.values(w * h);
        let src = PitchedBuffer::from_slice(src_ctx, &pixels, w, h).unwrap();
        let mut dst = PitchedBuffer::<Sample>::new(dst_ctx, w, h).unwrap();
        dst.fill(poison).unwrap();
        let stream = if rng.below(2) == 0 {
            &dst_stream
        } else {
            &src_stream
        };
        dst.copy_from_async(&src, stream).unwrap();
        same(&dst.to_vec().unwrap(), &pixels, "pitched peer copy");
        let mut pinned = PinnedBuffer::<Sample>::new(src_ctx, w * h).unwrap();
        pinned.as_mut_slice().unwrap().fill(poison);
        dst.copy_to_host_async(&mut pinned, &dst_stream).unwrap();
        same(
            pinned.as_slice().unwrap(),
            &pixels,
            "pitched to the other's pinned",
        );
        let again: Vec<Sample> = rng.values(w * h);
        pinned.as_mut_slice().unwrap().copy_from_slice(&again);
        dst.copy_from_host_async(&pinned, &src_stream).unwrap();
        same(
            &dst.to_vec().unwrap(),
            &again,
            "the other's pinned to pitched",
        );
        copies += 3;
        eprintln!(
            "context {si} -> {di}: {:?}, every kind pair, views and pitched: correct",
            peer_path(dst_ctx, src_ctx).unwrap()
        );
    }
    eprintln!("peer copies: {copies} checked element by element");
}

/// Memory of a fresh `MemPool` (no access granted to any other device yet)
/// whose first cross-device use is a copy from or to pinned or unified
/// memory of another context, on that context's stream, and then a device
/// buffer of that context.
#[test]
#[ignore = "needs a CUDA device"]
fn fresh_pool_memory_with_host_memory_of_another_context() {
    let mut rng = Rng::from_env("fresh_pool");
    let contexts = contexts();
    for (ai, a, bi, b) in pairs(&contexts) {
        let what = format!("pool of context {bi}, memory of context {ai}");
        let (sa, sb) = (a.new_stream().unwrap(), b.new_stream().unwrap());
        let pool = MemPool::new(b).unwrap();
        let n = 1 + rng.below(500_000);
        let data: Vec<Sample> = rng.values(n);
        let mut pooled = PoolBuffer::<Sample>::from_pool(&pool, n, &sb).unwrap();
        pooled.memset_async(0xa5, &sb).unwrap();
        let pinned = PinnedBuffer::from_slice(a, &data).unwrap();
        pooled.copy_from_host_async(&pinned, &sa).unwrap();
        same(
            &pooled.to_vec().unwrap(),
            &data,
            &format!("{what}: pinned in"),
        );
        let mut unified = UnifiedBuffer::<Sample>::new(a, n).unwrap();
        pooled.copy_to_host_async(&mut unified, &sa).unwrap();
        same(
            unified.as_slice().unwrap(),
            &data,
            &format!("{what}: unified out"),
        );
        let mut device = DeviceBuffer::<Sample>::zeroed(a, n).unwrap();
        device.copy_from_async(&pooled, &sa).unwrap();
        same(
            &device.to_vec().unwrap(),
            &data,
            &format!("{what}: device out"),
        );
        pooled.free_on_stream(&sb).unwrap();
    }
}

/// Work on both sides of a peer copy is ordered: the copy waits for a fill
/// of its source queued on the source context's stream, and a later fill of
/// the source waits for the copy to read it (and the same for the
/// destination). Large buffers, so that a missing wait shows.
#[test]
#[ignore = "needs a CUDA device"]
fn peer_copies_are_ordered_with_work_on_both_contexts() {
    let mut rng = Rng::from_env("peer_order");
    let contexts = contexts();
    let n = (64 << 20) / 4 + 1 + rng.below(1000);
    for (di, dst_ctx, si, src_ctx) in pairs(&contexts) {
        let (sd, ss) = (dst_ctx.new_stream().unwrap(), src_ctx.new_stream().unwrap());
        let mut src = DeviceBuffer::<u32>::new(src_ctx, n).unwrap();
        let mut dst = PoolBuffer::<u32>::new(n, &sd).unwrap();
        for round in 0..3 {
            let (v1, v2, v3) = (
                rng.next_u64() as u32,
                rng.next_u64() as u32,
                rng.next_u64() as u32,
            );
            src.fill_async(v1, &ss).unwrap();
            let copy_stream = if round % 2 == 0 { &sd } else { &ss };
            dst.copy_from_async(&src, copy_stream).unwrap();
            src.fill_async(v2, &ss).unwrap();
            dst.slice_mut(n - 1..).unwrap().fill_async(v3, &sd).unwrap();
            let got = dst.to_vec().unwrap();
            let wrong = got[..n - 1].iter().filter(|&&x| x != v1).count();
            assert_eq!(wrong, 0, "context {si} -> {di}, round {round}: {wrong} elements missed the fill before the copy, or saw the one after");
            assert_eq!(got[n - 1], v3, "the destination's own later fill");
            assert!(src.to_vec().unwrap().iter().all(|&x| x == v2));
        }
        dst.free_on_stream(&sd).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn peer_access_is_enabled_reported_and_can_fall_back_through_the_host() {
    let mut rng = Rng::from_env("peer_access");
    let contexts = contexts();
    let devices = contexts.len() - 1;
    let (primary0, second0) = (&contexts[0], &contexts[devices]);
    assert_eq!(
        peer_path(primary0, primary0).unwrap(),
        PeerPath::SameContext
    );
    assert_eq!(peer_path(primary0, second0).unwrap(), PeerPath::SameDevice);
    assert_eq!(
        enable_peer_access(primary0, second0).unwrap(),
        PeerPath::SameDevice
    );
    assert!(!can_access_peer(primary0, second0).unwrap());
    disable_peer_access(primary0, second0).unwrap();
    for i in 0..devices {
        for j in i + 1..devices {
            let (a, b) = (&contexts[i], &contexts[j]);
            let can = can_access_peer(a, b).unwrap();
            let best = if can {
                PeerPath::Direct
            } else {
                PeerPath::ThroughHost
            };
            eprintln!("devices {i} and {j}: can access peer: {can}");
            let check = |rng: &mut Rng, expected: PeerPath| {
                assert_eq!(peer_path(a, b).unwrap(), expected, "devices {i}, {j}");
                assert_eq!(peer_path(b, a).unwrap(), expected, "devices {j}, {i}");
                let count = 1 + rng.below(1 << 20);
                let data: Vec<Sample> = rng.values(count);
                let x = DeviceBuffer::from_slice(a, &data).unwrap();
                let sb = b.new_stream().unwrap();
                let mut y = PoolBuffer::<Sample>::new(data.len(), &sb).unwrap();
                y.copy_from_async(&x, &sb).unwrap();
                let mut z = DeviceBuffer::<Sample>::zeroed(a, data.len()).unwrap();
                z.copy_from(&y).unwrap();
                same(
                    &z.to_vec().unwrap(),
                    &data,
                    &format!("{expected:?} round trip"),
                );
                y.free_on_stream(&sb).unwrap();
            };
            assert_eq!(enable_peer_access(a, b).unwrap(), best);
            check(&mut rng, best);
            disable_peer_access(a, b).unwrap();
            check(&mut rng, PeerPath::ThroughHost);
            assert_eq!(enable_peer_access(b, a).unwrap(), best);
            check(&mut rng, best);
        }
    }
}

/// Peer access turned off and on again by one thread while another copies
/// between the two devices: every copy is right, whichever path it took
/// (a disable waits for the copies queued before it, and none is queued
/// while it runs). One GPU: the same copies between two contexts of it.
#[test]
#[ignore = "needs a CUDA device"]
fn peer_access_toggled_while_copies_run() {
    let mut rng = Rng::from_env("peer_toggle");
    let contexts = contexts();
    // Device 0 and device 1, or (one GPU) device 0's two contexts.
    let (a, b) = (&contexts[0], &contexts[1]);
    let seed = rng.next_u64();
    let done = std::sync::atomic::AtomicBool::new(false);
    let toggles = std::thread::scope(|s| {
        let copier = s.spawn(|| {
            let mut rng = Rng::new(seed);
            let (sa, sb) = (a.new_stream().unwrap(), b.new_stream().unwrap());
            for round in 0..60 {
                let n = 1 + rng.below(1 << 18);
                let data: Vec<Sample> = rng.values(n);
                let src = DeviceBuffer::from_slice(a, &data).unwrap();
                let mut dst = PoolBuffer::<Sample>::new(n, &sb).unwrap();
                dst.copy_from_async(&src, if round % 2 == 0 { &sa } else { &sb })
                    .unwrap();
                let mut back = DeviceBuffer::<Sample>::zeroed(a, n).unwrap();
                back.copy_from(&dst).unwrap();
                same(&back.to_vec().unwrap(), &data, &format!("round {round}"));
                dst.free_on_stream(&sb).unwrap();
            }
            done.store(true, std::sync::atomic::Ordering::Release);
        });
        let mut toggles = 0;
        while !done.load(std::sync::atomic::Ordering::Acquire) {
            disable_peer_access(a, b).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(300));
            enable_peer_access(a, b).unwrap();
            std::thread::sleep(std::time::Duration::from_micros(300));
            toggles += 1;
        }
        copier.join().unwrap();
        toggles
    });
    eprintln!(
        "peer_toggle: 60 copy round trips, peer access toggled {toggles} times ({:?} now)",
        peer_path(a, b).unwrap()
    );
}

/// NCCL through cudarc over cuda-mem buffers, one thread per GPU: an
/// all-reduce of a derived struct (its `f64` fields, through `cast_mut`), an
/// out-of-place all-reduce from an unaligned view, a broadcast of structs as
/// bytes, and (with two GPUs or more) a ring of sends and receives.
#[test]
#[ignore = "needs a CUDA device"]
fn nccl_collectives_over_cuda_mem_buffers() {
    if under_sanitizer() {
        eprintln!("nccl: skipped under compute-sanitizer (NCCL's own kernels and proxy threads)");
        gpu();
        return;
    }
    assert!(
        cuda_mem::nccl::is_available(),
        "NCCL (libnccl.so) is not loadable: install libnccl2 or add it to LD_LIBRARY_PATH"
    );
    #[derive(Clone, Copy, Debug, DeviceCopy)]
    #[repr(C)]
    struct Moments {
        count: f64,
        sum: f64,
        sum_sq: f64,
    }
    let mut rng = Rng::from_env("nccl");
    let ranks = cuda_mem::device_count().unwrap();
    let len = 1 + rng.below(300_000);
    // Small integers: every sum is exact, whatever order NCCL adds in.
    let per_rank: Vec<Vec<Moments>> = (0..ranks)
        .map(|_| {
            (0..len)
                .map(|_| Moments {
                    count: rng.below(1 << 20) as f64,
                    sum: rng.below(1 << 20) as f64 - (1 << 19) as f64,
                    sum_sq: rng.below(1 << 20) as f64,
                })
                .collect()
        })
        .collect();
    let total: Vec<Moments> = (0..len)
        .map(|i| {
            let mut m = Moments {
                count: 0.0,
                sum: 0.0,
                sum_sq: 0.0,
            };
            for r in &per_rank {
                m.count += r[i].count;
                m.sum += r[i].sum;
                m.sum_sq += r[i].sum_sq;
            }
            m
        })
        .collect();
    let count = 1 + rng.below(1000);
    let header: Vec<Sample> = rng.values(count);
    let id = Id::new().expect("ncclGetUniqueId");
    std::thread::scope(|s| {
        for (rank, mine) in per_rank.iter().enumerate() {
            let (total, header) = (&total, &header);
            s.spawn(move || {
                let ctx = cuda_mem::context(rank).unwrap();
                ctx.bind_to_thread().unwrap();
                let stream = ctx.new_stream().unwrap();
                let comm =
                    Comm::from_rank(stream.clone(), rank, ranks, id).expect("ncclCommInitRank");
                // In place, through the struct's f64 fields; the buffer was
                // written on another stream just before.
                let mut stats = DeviceBuffer::<Moments>::new(&ctx, len).unwrap();
                stats.copy_from_host(mine).unwrap();
                cuda_mem::nccl::all_reduce_in_place(
                    &comm,
                    &mut stats.cast_mut::<f64>().unwrap(),
                    &ReduceOp::Sum,
                )
                .expect("all_reduce_in_place");
                same(
                    &stats.to_vec().unwrap(),
                    total,
                    &format!("rank {rank}: in-place all-reduce"),
                );
                // Out of place, from a view that starts one struct in.
                let mut out = DeviceBuffer::<f64>::new(&ctx, (len - 1) * 3).unwrap();
                out.fill(f64::NAN).unwrap();
                let send = DeviceBuffer::from_slice(&ctx, mine).unwrap();
                cuda_mem::nccl::all_reduce(
                    &comm,
                    &send.slice(1..).unwrap().cast::<f64>().unwrap(),
                    &mut out,
                    &ReduceOp::Sum,
                )
                .expect("all_reduce");
                let got = out.to_vec().unwrap();
                let want: Vec<f64> = total[1..]
                    .iter()
                    .flat_map(|m| [m.count, m.sum, m.sum_sq])
                    .collect();
                same(&got, &want, &format!("rank {rank}: all-reduce from a view"));
                // Broadcast structs as bytes from rank 0.
                let mut got = DeviceBuffer::<Sample>::new(&ctx, header.len()).unwrap();
                got.memset(0x5a).unwrap();
                let root = DeviceBuffer::from_slice(&ctx, header).unwrap();
                let root_bytes = root.cast::<u8>().unwrap();
                cuda_mem::nccl::broadcast(
                    &comm,
                    (rank == 0).then_some(&root_bytes),
                    &mut got.cast_mut::<u8>().unwrap(),
                    0,
                )
                .expect("broadcast");
                same(
                    &got.to_vec().unwrap(),
                    header,
                    &format!("rank {rank}: broadcast"),
                );
                // A ring: each rank sends its rank-stamped structs to the next.
                if ranks > 1 {
                    let stamp = |r: usize| -> Vec<Sample> {
                        header
                            .iter()
                            .map(|s| Sample { id: r as u32, ..*s })
                            .collect()
                    };
                    let outgoing = DeviceBuffer::from_slice(&ctx, &stamp(rank)).unwrap();
                    let mut incoming = DeviceBuffer::<Sample>::zeroed(&ctx, header.len()).unwrap();
                    let (next, prev) = ((rank + 1) % ranks, (rank + ranks - 1) % ranks);
                    let send = || {
                        comm.send(&outgoing.cast::<u8>().unwrap(), next as i32)
                            .expect("send")
                    };
                    let mut recv = || {
                        comm.recv(&mut incoming.cast_mut::<u8>().unwrap(), prev as i32)
                            .expect("recv")
                    };
                    // Even ranks send first, odd ones receive first: no cycle of waits.
                    if rank % 2 == 0 {
                        send();
                        recv();
                    } else {
                        recv();
                        send();
                    }
                    same(
                        &incoming.to_vec().unwrap(),
                        &stamp(prev),
                        &format!("rank {rank}: ring"),
                    );
                }
                eprintln!(
                    "nccl rank {rank} of {ranks}: all-reduce, broadcast{} correct",
                    if ranks > 1 { ", ring" } else { "" }
                );
            });
        }
    });
}
