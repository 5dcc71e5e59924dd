//! GPU tests of the synchronous copies from and to *pageable* host memory
//! that are large enough (2 MiB and up to the device, 1 MiB to the host) to
//! be staged through a ring of pinned chunks, and of every staging plan (the
//! threshold lowered, from one thread and one slot up):
//! odd element sizes, odd lengths, unaligned views, every byte checked, the
//! bytes around a view untouched, and interleaving with stream work and with
//! copies from other threads (each staged through its own cached block).

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::{Buffer, DeviceBuffer, MemoryKind, PinnedBuffer, PoolBuffer, UnifiedBuffer};
use cuda_mem_tests::{gpu, Rng};

/// A 12-byte element: chunk (2 MiB) and lane boundaries fall inside elements.
type Elem = [u8; 12];

/// Staged sizes: the first chunks (a ramp) and a few full ones, many
/// (70 MiB, the ring of slots wrapping), partial chunks.
fn staged_len(rng: &mut Rng) -> usize {
    const MIB: usize = 1 << 20;
    let bytes =
        [4 * MIB, 8 * MIB + 4, 21 * MIB, 32 * MIB + 7, 70 * MIB + 5][rng.below(5)] + rng.below(MIB);
    bytes / size_of::<Elem>()
}

/// Copies random data in and out of `buf` (whole, then an unaligned view),
/// checking every element and the elements around the view.
fn round_trip<K: MemoryKind>(rng: &mut Rng, buf: &mut Buffer<Elem, K>) {
    let len = buf.len();
    let data: Vec<Elem> = rng.values(len);
    buf.copy_from_host(&data).unwrap();
    let mut out = vec![[0xa5; 12]; len];
    buf.copy_to_host(&mut out).unwrap();
    assert!(out == data, "{}: whole-buffer round trip", K::NAME);

    let start = 1 + rng.below(1000);
    let end = len - rng.below(1000);
    let part: Vec<Elem> = rng.values(end - start);
    buf.slice_mut(start..end)
        .unwrap()
        .copy_from_host(&part)
        .unwrap();
    let mut back = vec![[0x3c; 12]; end - start];
    buf.slice(start..end)
        .unwrap()
        .copy_to_host(&mut back)
        .unwrap();
    assert!(back == part, "{}: view round trip", K::NAME);
    let all = buf.to_vec().unwrap();
    assert!(
        all[..start] == data[..start],
        "{}: before the view",
        K::NAME
    );
    assert!(all[start..end] == part[..], "{}: the view", K::NAME);
    assert!(all[end..] == data[end..], "{}: after the view", K::NAME);
}

#[test]
#[ignore = "needs a CUDA device"]
fn large_pageable_copies_on_every_kind() {
    let mut rng = Rng::from_env("large_pageable_copies_on_every_kind");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    for _ in 0..2 {
        let len = staged_len(&mut rng);
        round_trip(&mut rng, &mut DeviceBuffer::<Elem>::new(&ctx, len).unwrap());
        round_trip(&mut rng, &mut PinnedBuffer::<Elem>::new(&ctx, len).unwrap());
        round_trip(
            &mut rng,
            &mut UnifiedBuffer::<Elem>::new(&ctx, len).unwrap(),
        );
        let mut pool = PoolBuffer::<Elem>::new(len, &stream).unwrap();
        round_trip(&mut rng, &mut pool);
        pool.free_on_stream(&stream).unwrap();
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn staged_copies_are_ordered_with_stream_work() {
    let mut rng = Rng::from_env("staged_copies_are_ordered_with_stream_work");
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let len = staged_len(&mut rng);
    let mut buf = DeviceBuffer::<Elem>::new(&ctx, len).unwrap();
    for _ in 0..3 {
        // A fill queued on a stream, then a staged copy over half of it, then
        // a staged read: the copy must land after the fill, the read after both.
        let v: Elem = rng.value();
        buf.fill_async(v, &stream).unwrap();
        let half = len / 2 + rng.below(len / 4);
        let data: Vec<Elem> = rng.values(half);
        buf.slice_mut(..half)
            .unwrap()
            .copy_from_host(&data)
            .unwrap();
        let v2: Elem = rng.value();
        buf.slice_mut(half..)
            .unwrap()
            .fill_async(v2, &stream)
            .unwrap();
        let all = buf.to_vec().unwrap();
        assert!(all[..half] == data[..], "copy after fill");
        assert!(all[half..].iter().all(|x| *x == v2), "fill after copy");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_sources_go_direct_and_concurrent_threads_stage_apart() {
    let mut rng = Rng::from_env("pinned_sources_go_direct_and_concurrent_threads_stage_apart");
    let ctx = gpu();
    let len = staged_len(&mut rng);
    // A host slice that is already pinned goes straight to the driver.
    let src: Vec<Elem> = rng.values(len);
    let pinned = PinnedBuffer::from_slice(&ctx, &src).unwrap();
    let mut dev = DeviceBuffer::<Elem>::new(&ctx, len).unwrap();
    dev.copy_from_host(pinned.as_slice().unwrap()).unwrap();
    assert!(dev.to_vec().unwrap() == src);

    // Four threads stage at once, each through its own block of the cache.
    let seeds: Vec<u64> = (0..4).map(|_| rng.next_u64()).collect();
    let ctx = Arc::clone(&ctx);
    std::thread::scope(|scope| {
        for seed in seeds {
            let ctx = &ctx;
            scope.spawn(move || {
                let mut rng = Rng::new(seed);
                let len = staged_len(&mut rng);
                let mut buf = DeviceBuffer::<Elem>::new(ctx, len).unwrap();
                for _ in 0..3 {
                    round_trip(&mut rng, &mut buf);
                }
            });
        }
    });
}

/// Restores the staging defaults when dropped (also after a failed check).
struct DefaultStaging;

impl Drop for DefaultStaging {
    fn drop(&mut self) {
        cuda_mem::__set_staging(0, 0, 0, 0, 0);
        cuda_mem::__set_staging_demote(0);
    }
}

/// Every staging plan copies every byte, with the threshold lowered so that
/// every size is staged: one thread and one slot (each piece waits for the
/// previous chunk's DMA), few slots of small chunks (the ring wraps many
/// times), more lanes than the host has cores, and the defaults; sizes from
/// a part of the first chunk to several full chunks; the slots written with
/// streaming stores, ordinary ones, or ordinary ones demoted to the shared
/// cache, at random.
#[test]
#[ignore = "needs a CUDA device"]
fn every_staging_plan_copies_every_byte() {
    let mut rng = Rng::from_env("every_staging_plan_copies_every_byte");
    let ctx = gpu();
    let _restore = DefaultStaging;
    for (lanes, chunk_kib, slots) in [(1, 64, 1), (1, 0, 0), (3, 128, 2), (40, 256, 3), (0, 0, 0)] {
        // Slots kept out of the cores' caches up to 1 GiB (every copy
        // here), or up to 1 byte (none: ordinary stores).
        let streaming_max = if rng.below(2) == 0 { 1 << 30 } else { 1 };
        cuda_mem::__set_staging(lanes, chunk_kib << 10, 1, slots, streaming_max);
        // 0: the default (demoted where the CPU can, up to the threshold),
        // 1: never demoted, 2: demoted at every size.
        cuda_mem::__set_staging_demote(rng.below(3));
        for _ in 0..3 {
            // 24 KiB to 9 MiB, in 12-byte elements (pieces end inside them).
            let len = 2001 + rng.below((9 << 20) / size_of::<Elem>());
            let mut buf = DeviceBuffer::<Elem>::new(&ctx, len).unwrap();
            round_trip(&mut rng, &mut buf);
        }
    }
}

/// A thread that asks for its staged copies' timelines gets one per copy,
/// each way: every piece copied once by one of the plan's lanes, the
/// chunks covering the copy, their DMAs one after another on the stream
/// (in whatever order the lanes queued them) and each after its queueing
/// (the GPU's clock reads early by at most the host's wait for the origin
/// event); the data copied as without recording. A copy another thread
/// makes meanwhile is not recorded, for either thread.
#[test]
#[ignore = "needs a CUDA device"]
fn recorded_staged_copies_have_a_timeline() {
    use cuda_mem::__staging_timeline::StagingTimeline;
    let mut rng = Rng::from_env("recorded_staged_copies_have_a_timeline");
    let ctx = gpu();
    // 20 to 90 MiB and an odd length: the ring wraps, the last piece is short.
    let len = (20 << 20) + rng.below(70 << 20);
    let data: Vec<u8> = rng.values(len);
    let mut dev = DeviceBuffer::<u8>::new(&ctx, len + 3).unwrap();
    let mut out = vec![0x5a_u8; len];
    cuda_mem::__record_staging(true);
    // A staged copy on another thread while this one records: neither
    // thread gets a timeline of it.
    let other: Vec<u32> = rng.values(8 << 20);
    let other_thread = {
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let mut b = DeviceBuffer::<u32>::new(&ctx, other.len()).unwrap();
            b.copy_from_host(&other).unwrap();
            assert!(b.to_vec().unwrap() == other);
            cuda_mem::__take_staging_timelines().len()
        })
    };
    let mut view = dev.slice_mut(3..len + 3).unwrap();
    view.copy_from_host(&data).unwrap();
    view.copy_to_host(&mut out).unwrap();
    cuda_mem::__record_staging(false);
    assert_eq!(
        other_thread.join().unwrap(),
        0,
        "a thread not recording got timelines"
    );
    assert!(out == data, "the recorded round trip changed the data");
    let timelines = cuda_mem::__take_staging_timelines();
    assert_eq!(
        timelines.len(),
        2,
        "one timeline per staged copy of this thread"
    );
    assert!(cuda_mem::__take_staging_timelines().is_empty());
    let check = |t: &StagingTimeline, to_device: bool| {
        let way = if to_device {
            "to the device"
        } else {
            "to the host"
        };
        assert_eq!((t.to_device, t.bytes), (to_device, len), "{way}");
        assert!(
            t.lanes >= 1 && t.slots >= 1,
            "{way}: {} lanes, {} slots",
            t.lanes,
            t.slots
        );
        // Every chunk queued (none left out), covering the bytes.
        let bytes: usize = t.chunks.iter().map(|c| c.bytes).sum();
        assert_eq!(bytes, len, "{way}: the chunks' bytes");
        assert!(
            t.chunks
                .iter()
                .enumerate()
                .all(|(i, c)| c.chunk == i && c.bytes > 0),
            "{way}: a chunk missing or empty"
        );
        // The DMAs one after another, each after its queueing.
        let mut dmas = t.chunks.clone();
        dmas.sort_by(|a, b| a.dma_start_us.total_cmp(&b.dma_start_us));
        for (k, c) in dmas.iter().enumerate() {
            assert!(c.dma_end_us >= c.dma_start_us, "{way}: {c:?}");
            assert!(
                c.dma_start_us >= c.queued_us - 50.0,
                "{way}: before its queueing: {c:?}"
            );
            if k > 0 {
                let before = &dmas[k - 1];
                assert!(
                    c.dma_start_us >= before.dma_end_us - 1.0,
                    "{way}: {before:?} and {c:?}"
                );
            }
        }
        // Every piece once, by one of the lanes, within the lanes' time.
        let mut pieces: Vec<usize> = t.pieces.iter().map(|p| p.piece).collect();
        pieces.sort_unstable();
        assert!(
            pieces.iter().copied().eq(0..len.div_ceil(t.piece_bytes)),
            "{way}: not every piece recorded once"
        );
        for p in &t.pieces {
            assert!(p.lane < t.lanes, "{way}: {p:?} of {} lanes", t.lanes);
            assert!(0.0 <= p.start_us && p.start_us <= p.end_us, "{way}: {p:?}");
            assert!(
                p.end_us <= t.lanes_done_us,
                "{way}: {p:?} after the lanes were done"
            );
        }
        for w in &t.waits {
            assert!(
                w.chunk < t.chunks.len() && w.start_us <= w.end_us,
                "{way}: {w:?}"
            );
        }
    };
    check(&timelines[0], true);
    check(&timelines[1], false);
}
