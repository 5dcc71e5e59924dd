//! GPU tests of the pinned-memory cache (`PinnedCache`): a block that a
//! running kernel or DMA still uses is never handed out again, a finished
//! one is (zeroed by `new`), buffers freed and re-allocated while large
//! copies run on several streams keep every byte, and the cap, trim,
//! statistics and opt-outs do what they say.
//!
//! The tests of this file share the process's primary context, so its one
//! cache: they run one at a time (`SERIAL`), so that block addresses and
//! counters are theirs alone.

use cuda_mem::prelude::*;
use std::sync::{Arc, Mutex, MutexGuard};

use cuda_mem::{CudaStream, DeviceBuffer, PinnedBuffer, PinnedCache, PinnedFlags};
use cuda_mem_tests::spin::{launch, spin_copy, SLOW};
use cuda_mem_tests::{gpu, under_sanitizer, Rng};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn addr<T: DeviceCopy>(b: &PinnedBuffer<T>) -> u64 {
    b.as_device_ptr().addr()
}

/// Cycles the spin kernel waits: long enough that the host is far ahead
/// (shorter under compute-sanitizer, which slows every instruction).
fn spin() -> u64 {
    if under_sanitizer() {
        SLOW / 20
    } else {
        SLOW
    }
}

/// An event recorded on `s` now: while it has not fired, the work queued
/// before it is still running. The checks that a busy block is not handed
/// out hold only while it runs (under compute-sanitizer, which slows the
/// host too, the shortened spin may end first, and then reuse is right).
fn mark(s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::cudarc::driver::CudaEvent {
    let event = s.context().new_event(None).unwrap();
    event.record(s).unwrap();
    event
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_block_a_running_kernel_reads_is_not_handed_out() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("a_block_a_running_kernel_reads_is_not_handed_out");
    let s = ctx.new_stream().unwrap();
    let f = spin_copy(&ctx);
    let n = 1 + rng.below(300_000);
    let data: Vec<u32> = rng.values(n);
    // Nothing cached: the source's block will be the only one of its class.
    let cache = PinnedCache::of(&ctx).unwrap();
    cache.trim_to(0).unwrap();
    let source = PinnedBuffer::from_slice(&ctx, &data).unwrap();
    let mut dst = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    dst.fill(0xa5a5_a5a5).unwrap();
    let before = cache.usage();
    let old = addr(&source);
    {
        let src = source.kernel_arg(&s).unwrap();
        let out = dst.kernel_arg_mut(&s).unwrap();
        launch(&f, &s, &src, &out, n, spin());
    }
    let spun = mark(&s);
    // Dropped while the kernel spins before reading it: no wait here.
    drop(source);
    let mut next = PinnedBuffer::<u32>::new_unspecified(&ctx, n).unwrap();
    if !spun.is_complete() {
        assert_ne!(
            addr(&next),
            old,
            "the cache handed out a block a running kernel still reads"
        );
        let after = cache.usage();
        assert_eq!(
            after.hits, before.hits,
            "the only block of that class is in use"
        );
        assert_eq!(after.misses, before.misses + 1);
    } else {
        eprintln!("the kernel ended before the allocation: reuse was allowed");
    }
    let other: Vec<u32> = rng.values(n);
    next.as_mut_slice().unwrap().copy_from_slice(&other);
    assert!(
        dst.to_vec().unwrap() == data,
        "the kernel read changed data"
    );
    assert!(next.as_slice().unwrap() == &other[..]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_block_a_running_kernel_writes_is_not_handed_out() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("a_block_a_running_kernel_writes_is_not_handed_out");
    let s = ctx.new_stream().unwrap();
    let f = spin_copy(&ctx);
    let n = 1 + rng.below(300_000);
    let data: Vec<u32> = rng.values(n);
    let src = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut target = PinnedBuffer::<u32>::new_unspecified(&ctx, n).unwrap();
    target.as_mut_slice().unwrap().fill(0x5a5a_5a5a);
    let old = addr(&target);
    {
        let a = src.kernel_arg(&s).unwrap();
        let out = target.kernel_arg_mut(&s).unwrap();
        launch(&f, &s, &a, &out, n, spin());
    }
    let spun = mark(&s);
    drop(target);
    // Poisoned, then checked after the kernel has finished: a reused block
    // would have been overwritten by it.
    let mut next = PinnedBuffer::<u32>::new_unspecified(&ctx, n).unwrap();
    if !spun.is_complete() {
        assert_ne!(
            addr(&next),
            old,
            "the cache handed out a block a running kernel writes"
        );
    }
    let poison: Vec<u32> = rng.values(n);
    next.as_mut_slice().unwrap().copy_from_slice(&poison);
    s.synchronize().unwrap();
    assert!(
        next.as_slice().unwrap() == &poison[..],
        "the kernel wrote into a new buffer"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn finished_blocks_are_reused_and_new_zeroes_them() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("finished_blocks_are_reused_and_new_zeroes_them");
    let cache = PinnedCache::of(&ctx).unwrap();
    let s = ctx.new_stream().unwrap();
    for _ in 0..20 {
        // The cache hands out the oldest finished block of a class: emptied,
        // so that `a`'s block is the only one `b` can get.
        cache.trim_to(0).unwrap();
        let n = 1 + rng.below(3 << 20);
        let mut a = PinnedBuffer::<u8>::new(&ctx, n).unwrap();
        assert!(
            a.as_slice().unwrap().iter().all(|&x| x == 0),
            "new is zeroed"
        );
        a.as_mut_slice().unwrap().fill(0xa5 | 1);
        // Used by a DMA that has finished before the drop.
        let dev = DeviceBuffer::<u8>::from_slice(&ctx, &rng.bytes(n)).unwrap();
        dev.copy_to_host_async(&mut a, &s).unwrap();
        s.synchronize().unwrap();
        let old = addr(&a);
        drop(a);
        let hits = cache.usage().hits;
        let b = PinnedBuffer::<u8>::new(&ctx, n).unwrap();
        assert_eq!(
            addr(&b),
            old,
            "a finished block of the same class is reused"
        );
        assert_eq!(cache.usage().hits, hits + 1);
        assert!(
            b.as_slice().unwrap().iter().all(|&x| x == 0),
            "new zeroes a reused block"
        );
        drop(b);
        // from_slice overwrites every element of the reused block.
        let data = rng.bytes(n);
        let c = PinnedBuffer::from_slice(&ctx, &data).unwrap();
        assert_eq!(addr(&c), old);
        assert!(c.as_slice().unwrap() == &data[..]);
        // A view's DMA of a dropped buffer (event-guarded) then a reuse.
        let mut d = DeviceBuffer::<u8>::new(&ctx, n).unwrap();
        d.copy_from_host_async(&c, &s).unwrap();
        drop(c);
        let e = PinnedBuffer::<u8>::new(&ctx, n).unwrap();
        assert!(e.as_slice().unwrap().iter().all(|&x| x == 0));
        assert!(
            d.to_vec().unwrap() == data,
            "the upload of the dropped buffer"
        );
    }
}

/// One stream's round of `dmas_in_flight_...`: what it checks once synchronised.
struct Round {
    stream: Arc<CudaStream>,
    download: DeviceBuffer<u32>,
    download_data: Vec<u32>,
    upload: DeviceBuffer<u32>,
    upload_data: Vec<u32>,
    reused: PinnedBuffer<u32>,
    reused_data: Vec<u32>,
    zeroed: PinnedBuffer<u32>,
}

#[test]
#[ignore = "needs a CUDA device"]
fn buffers_freed_and_reallocated_while_dmas_run_keep_every_byte() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("buffers_freed_and_reallocated_while_dmas_run_keep_every_byte");
    let streams: Vec<_> = (0..3).map(|_| ctx.new_stream().unwrap()).collect();
    // Up to 24 MiB per buffer (2 MiB granules and every power of two below).
    // With 96 MiB buffers and 12 rounds the binary did not finish within
    // 100 s on the H200; the debug build's host work (random data, compares)
    // on such buffers is the likely cause.
    let max = if under_sanitizer() { 1 << 18 } else { 6 << 20 }; // u32 elements
    let rounds = if under_sanitizer() { 3 } else { 8 };
    for _ in 0..rounds {
        let mut live = Vec::new();
        for stream in &streams {
            // A large download into a pinned buffer and a large upload from
            // one, both dropped while their DMAs may still run...
            let n = 1 + rng.below(max);
            let download_data: Vec<u32> = rng.values(n);
            let download = DeviceBuffer::from_slice(&ctx, &download_data).unwrap();
            let mut target = PinnedBuffer::<u32>::new_unspecified(&ctx, n).unwrap();
            target.as_mut_slice().unwrap().fill(0xa5a5_a5a5);
            download.copy_to_host_async(&mut target, stream).unwrap();
            let m = 1 + rng.below(max);
            let upload_data: Vec<u32> = rng.values(m);
            let source = PinnedBuffer::from_slice(&ctx, &upload_data).unwrap();
            let mut upload = DeviceBuffer::<u32>::new(&ctx, m).unwrap();
            upload.fill(0x3c3c_3c3c).unwrap();
            upload.copy_from_host_async(&source, stream).unwrap();
            drop(target);
            drop(source);
            // ...then buffers of the same sizes (the same classes), written
            // at once: a reused block still under a DMA would show it.
            let mut reused = PinnedBuffer::<u32>::new_unspecified(&ctx, n).unwrap();
            let reused_data: Vec<u32> = rng.values(n);
            reused.as_mut_slice().unwrap().copy_from_slice(&reused_data);
            let zeroed = PinnedBuffer::<u32>::new(&ctx, m).unwrap();
            live.push(Round {
                stream: stream.clone(),
                download,
                download_data,
                upload,
                upload_data,
                reused,
                reused_data,
                zeroed,
            });
        }
        for r in &mut live {
            r.stream.synchronize().unwrap();
            assert!(
                r.reused.as_slice().unwrap() == &r.reused_data[..],
                "a new buffer's bytes changed under it (a late download into its block)"
            );
            assert!(
                r.zeroed.as_slice().unwrap().iter().all(|&x| x == 0),
                "a new zeroed buffer is not all zero"
            );
            assert!(
                r.upload.to_vec().unwrap() == r.upload_data,
                "an upload from a dropped buffer read other bytes (its block was reused)"
            );
            // Both ways through the new buffer, every element checked.
            r.download
                .copy_to_host_async(&mut r.reused, &r.stream)
                .unwrap();
            assert!(r.reused.as_slice().unwrap() == &r.download_data[..]);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_cap_trim_statistics_and_opt_outs() {
    let _serial = serial();
    let ctx = gpu();
    let cache = PinnedCache::of(&ctx).unwrap();
    let threshold = cache.release_threshold();
    cache.trim_to(0).unwrap();
    assert_eq!(cache.usage().cached_current, 0);
    assert_eq!(cache.usage().cached_blocks, 0);

    // A block of 3 MiB + 1 byte is a 4 MiB class; returned, it is cached.
    let a = PinnedBuffer::<u8>::new(&ctx, (3 << 20) + 1).unwrap();
    let used = cache.usage().used_current;
    assert!(used >= 4 << 20);
    drop(a);
    let u = cache.usage();
    assert_eq!(u.cached_current, 4 << 20);
    assert_eq!(u.used_current, used - (4 << 20));
    cache.reset_high_water();
    assert_eq!(cache.usage().cached_high, 4 << 20);

    // Under a lower cap it is freed, and the cache keeps nothing larger.
    cache.set_release_threshold(1 << 20).unwrap();
    assert_eq!(cache.usage().cached_current, 0);
    drop(PinnedBuffer::<u8>::new(&ctx, 2 << 20).unwrap());
    assert_eq!(
        cache.usage().cached_current,
        0,
        "a block above the cap is freed"
    );
    drop(PinnedBuffer::<u8>::new(&ctx, 1 << 20).unwrap());
    assert_eq!(cache.usage().cached_current, 1 << 20);
    cache.set_release_threshold(threshold).unwrap();

    // Opt-outs: an uncached buffer and a switched-off cache leave it alone.
    let before = cache.usage();
    drop(PinnedBuffer::<u8>::uncached(&ctx, 1 << 20, PinnedFlags::default()).unwrap());
    let wc = PinnedFlags {
        write_combined: true,
        ..Default::default()
    };
    drop(PinnedBuffer::<u8>::with_flags(&ctx, 1 << 20, wc).unwrap());
    assert_eq!(
        cache.usage(),
        before,
        "uncached and write-combined bypass the cache"
    );
    cache.set_enabled(false).unwrap();
    assert!(!cache.is_enabled());
    assert_eq!(
        cache.usage().cached_current,
        0,
        "switching off frees the unused blocks"
    );
    let off = cache.usage();
    let b = PinnedBuffer::<u16>::new(&ctx, 1000).unwrap();
    assert!(b.as_slice().unwrap().iter().all(|&x| x == 0));
    drop(b);
    assert_eq!(cache.usage(), off);
    cache.set_enabled(true).unwrap();
    cache.trim_to(0).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_staged_uploads_block_is_not_handed_out_while_its_dmas_wait() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("a_staged_uploads_block_is_not_handed_out_while_its_dmas_wait");
    let cache = PinnedCache::of(&ctx).unwrap();
    cache.trim_to(0).unwrap();
    let s = ctx.new_stream().unwrap();
    let f = spin_copy(&ctx);
    // Just over the 32 MiB staging threshold of uploads: every lane fills at
    // most its two chunks, so the copy returns without waiting for its own
    // DMAs.
    let n = (8 << 20) + rng.below(1 << 18);
    let old: Vec<u32> = rng.values(n);
    let data: Vec<u32> = rng.values(n);
    let mut dst = DeviceBuffer::from_slice(&ctx, &old).unwrap();
    let mut out = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    out.fill(0xa5a5_a5a5).unwrap();
    {
        // The kernel reads `dst` after spinning; the staged upload into
        // `dst` is queued behind it, so its DMAs wait while the host runs on.
        let a = dst.kernel_arg(&s).unwrap();
        let b = out.kernel_arg_mut(&s).unwrap();
        launch(&f, &s, &a, &b, n, spin());
    }
    dst.copy_from_host(&data).unwrap();
    let spun = mark(&s);
    let staged = cache.usage();
    assert!(
        staged.cached_blocks == 1 && staged.cached_current > 0,
        "the staging block went back to the cache: {staged:?}"
    );
    // A buffer of exactly the staging block's class: that block's DMAs have
    // not run yet, so it must be a fresh one.
    let mut next =
        PinnedBuffer::<u32>::new_unspecified(&ctx, staged.cached_current as usize / 4).unwrap();
    if !spun.is_complete() {
        assert_eq!(
            cache.usage().hits,
            staged.hits,
            "the cache handed out a staging block whose DMAs are still queued"
        );
    }
    let poison: Vec<u32> = rng.values(next.len());
    next.as_mut_slice().unwrap().copy_from_slice(&poison);
    assert!(out.to_vec().unwrap() == old, "the kernel read the upload");
    assert!(
        dst.to_vec().unwrap() == data,
        "the staged upload read bytes written into a reused block"
    );
    assert!(next.as_slice().unwrap() == &poison[..]);
    cache.trim_to(0).unwrap();
}
