//! The pageable-copy rows: `copy_from_host` / `copy_to_host` of a `Vec`
//! (staged through the pinned cache from 2 MiB to the device and 1 MiB to
//! the host) at 64 MiB, 256 MiB and 1 GiB against a pinned DMA of the same
//! size, against the raw pageable call, against the host's own memcpy
//! between the `Vec` and pinned memory on as many threads (the ceiling of
//! staging's host side), and against the slower of that memcpy and the
//! pinned DMA (the staging ceiling: every byte passes both), and
//! (`--copy-sweep`) the first two from 4 KiB to 1 GiB.
//!
//! Every figure is host wall-clock time of a synchronous copy followed by
//! `cuCtxSynchronize` (the driver's pageable copy to the device, like ours,
//! may return before its last DMA ends), median of the repetitions, ours and
//! the raw calls alternating. The host `Vec`s are allocated once and written
//! before the first copy, so no row pays first-touch page faults (a fresh
//! `vec![0; n]` would: its pages are mapped on the first write).

use std::ffi::c_void;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::prelude::*;
use cuda_mem::{CudaContext, DeviceBuffer, PinnedBuffer};

use crate::harness::{median, Bench};

/// Human-readable size.
pub fn size_name(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b >> 10),
    }
}

/// Median host microseconds of `op` then a context synchronisation, for
/// each of `ops` in turn, `rounds` times alternating; `calls` per batch.
pub fn alternating_us(
    ctx: &Arc<CudaContext>,
    rounds: usize,
    calls: usize,
    ops: &mut [&mut dyn FnMut()],
) -> Vec<f64> {
    let mut times = vec![Vec::new(); ops.len()];
    for round in 0..=rounds {
        for (i, op) in ops.iter_mut().enumerate() {
            let t = std::time::Instant::now();
            for _ in 0..calls {
                op();
                ctx.synchronize().unwrap();
            }
            // The first round warms up (the pinned cache, the workers).
            if round > 0 {
                times[i].push(t.elapsed().as_secs_f64() * 1e6 / calls as f64);
            }
        }
    }
    times.into_iter().map(median).collect()
}

/// Bandwidth in GB/s of `bytes` in `us` microseconds.
pub fn gbps(bytes: usize, us: f64) -> f64 {
    bytes as f64 / us / 1e3
}

/// Two rows for one measurement of ours: against pinned and against pageable.
fn push_both(
    b: &mut Bench,
    group: &'static str,
    row: String,
    ours: f64,
    pinned: (f64, &'static str),
    pageable: (f64, &'static str),
) {
    for (versus, (raw, call)) in [("pinned", pinned), ("pageable", pageable)] {
        let name = format!("{row} vs {versus}");
        b.push(group, name, "GB/s", ours, raw, call, true, None);
    }
}

/// Rows for one size: ours against pinned and against pageable, each way.
/// `sweep` rows go to their own group.
fn rows_for(b: &mut Bench, ctx: &Arc<CudaContext>, len: usize, sweep: bool) {
    let mut dev = DeviceBuffer::<u8>::new(ctx, len).unwrap();
    let pinned = PinnedBuffer::<u8>::new_unspecified(ctx, len).unwrap();
    let d = dev.as_device_ptr().addr();
    // The registered (DMA) mapping of the pinned buffer.
    let p = pinned.as_device_ptr().addr() as usize as *mut c_void;
    let mut host: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    let out = vec![0xa5u8; len]; // written: its pages are mapped
    let s = b.stream.clone();
    let rounds = b.reps.clamp(5, 15);
    let calls = ((64 << 20) / len).clamp(1, 500);
    let group = if sweep { "sweep" } else { "copy" };
    let name = size_name(len);

    let h = host.as_ptr();
    let times = alternating_us(
        ctx,
        rounds,
        calls,
        &mut [
            &mut || dev.copy_from_host(&host).unwrap(),
            // SAFETY: live buffers of `len` bytes.
            &mut || unsafe { sys::cuMemcpyHtoD_v2(d, h.cast(), len).result().unwrap() },
            // SAFETY: live buffers of `len` bytes; synchronised after.
            &mut || unsafe {
                sys::cuMemcpyHtoDAsync_v2(d, p, len, s.cu_stream())
                    .result()
                    .unwrap()
            },
        ],
    );
    let (ours, pageable, pin) = (
        gbps(len, times[0]),
        gbps(len, times[1]),
        gbps(len, times[2]),
    );
    dev.copy_from_host(&host).unwrap();
    assert!(dev.to_vec().unwrap() == host, "copy_from_host result wrong");
    push_both(
        b,
        group,
        format!("copy_from_host(Vec) {name}"),
        ours,
        (pin, "pinned cuMemcpyHtoDAsync"),
        (pageable, "cuMemcpyHtoD (pageable)"),
    );
    let (ours_up, pin_up) = (ours, pin);

    host.iter_mut().for_each(|x| *x = x.wrapping_mul(13) ^ 0x5a);
    dev.copy_from_host(&host).unwrap();
    let out = std::cell::RefCell::new(out);
    let times = alternating_us(
        ctx,
        rounds,
        calls,
        &mut [
            &mut || dev.copy_to_host(&mut out.borrow_mut()).unwrap(),
            // SAFETY: live buffers of `len` bytes.
            &mut || unsafe {
                sys::cuMemcpyDtoH_v2(out.borrow_mut().as_mut_ptr().cast(), d, len)
                    .result()
                    .unwrap()
            },
            // SAFETY: live buffers of `len` bytes; synchronised after.
            &mut || unsafe {
                sys::cuMemcpyDtoHAsync_v2(p, d, len, s.cu_stream())
                    .result()
                    .unwrap()
            },
        ],
    );
    let mut out = out.into_inner();
    let (ours, pageable, pin) = (
        gbps(len, times[0]),
        gbps(len, times[1]),
        gbps(len, times[2]),
    );
    out.fill(0xa5);
    dev.copy_to_host(&mut out).unwrap();
    assert!(out == host, "copy_to_host result wrong");
    push_both(
        b,
        group,
        format!("copy_to_host(Vec) {name}"),
        ours,
        (pin, "pinned cuMemcpyDtoHAsync"),
        (pageable, "cuMemcpyDtoH (pageable)"),
    );
    if !sweep {
        // What the host side of staging can reach at best: the same bytes
        // copied between the Vec and pinned memory by as many threads as
        // staging has lanes, with no DMA at all.
        let mut pinned = pinned;
        let up = host_memcpy_gbps(pinned.as_mut_slice().unwrap(), &host, rounds);
        let down = host_memcpy_gbps(&mut out, pinned.as_slice().unwrap(), rounds);
        let ways = [
            (
                "copy_from_host",
                ours_up,
                up,
                pin_up,
                "Vec -> pinned memcpy, 16 threads",
            ),
            (
                "copy_to_host",
                ours,
                down,
                pin,
                "pinned -> Vec memcpy, 16 threads",
            ),
        ];
        for (way, ours, memcpy, _, memcpy_name) in ways {
            let row = format!("{way}(Vec) {name} vs host memcpy ceiling");
            b.push(group, row, "GB/s", ours, memcpy, memcpy_name, true, None);
        }
        // Every byte of a staged copy passes both stages, the host's memcpy
        // and the pinned DMA, so the slower of the two bounds it: where the
        // memcpy outruns the DMA (a Vec the host's caches still hold), the
        // row above asks for more than any staged copy can reach.
        for (way, ours, memcpy, dma, _) in ways {
            let row = format!("{way}(Vec) {name} vs staging ceiling");
            let raw_name = "slower of that memcpy and the pinned DMA";
            b.push(
                group,
                row,
                "GB/s",
                ours,
                memcpy.min(dma),
                raw_name,
                true,
                None,
            );
        }
    }
}

/// Median GB/s of copying `src` into `dst` on as many threads as staged
/// copies use (the host's parallelism, at most 16), each copying its share
/// in 2 MiB pieces; each thread times its own share, so thread start-up is
/// not counted.
fn host_memcpy_gbps(dst: &mut [u8], src: &[u8], rounds: usize) -> f64 {
    let lanes = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(16);
    let share = dst.len().div_ceil(lanes).next_multiple_of(4096);
    let mut rates = Vec::new();
    for _ in 0..=rounds {
        let slowest = std::thread::scope(|scope| {
            let handles: Vec<_> = dst
                .chunks_mut(share)
                .zip(src.chunks(share))
                .map(|(d, s)| {
                    scope.spawn(move || {
                        let t = std::time::Instant::now();
                        for (d, s) in d.chunks_mut(2 << 20).zip(s.chunks(2 << 20)) {
                            d.copy_from_slice(s);
                        }
                        t.elapsed().as_secs_f64()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold(0.0, f64::max)
        });
        rates.push(src.len() as f64 / slowest / 1e9);
    }
    median(rates)
}

/// `copy_from_host` / `copy_to_host` of a `Vec` at 64 MiB, 256 MiB and
/// 1 GiB (goal: at least 0.8 of pinned, never below pageable).
pub fn vec_copies(b: &mut Bench, ctx: &Arc<CudaContext>) {
    for len in [64 << 20, 256 << 20, 1 << 30] {
        rows_for(b, ctx, len, false);
    }
}

/// The same rows from 4 KiB to 1 GiB: where staging starts to pay, and that
/// no size is slower than the raw pageable call.
pub fn sweep(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let mut len = 4 << 10;
    while len <= 1 << 30 {
        rows_for(b, ctx, len, true);
        // 4 KiB ... 1 GiB in steps of 4x, and every power of two from 1 to 32 MiB.
        len = match len {
            l if (1 << 20..32 << 20).contains(&l) => l * 2,
            l => l * 4,
        };
    }
}

/// `--staging LANES,CHUNK_KIB,MIN_KIB[,SLOTS[,STREAM_MIB[,DEMOTE]]]`: the
/// staging knobs (0 = default; SLOTS: pinned chunks in flight; STREAM_MIB:
/// the largest copy to the device whose slots bypass the cores' caches;
/// DEMOTE: 1 never demotes slot lines to the shared cache, 2 demotes them
/// at every size).
pub fn set_staging(v: [usize; 6]) {
    cuda_mem::__set_staging(v[0], v[1] << 10, v[2] << 10, v[3], v[4] << 20);
    cuda_mem::__set_staging_demote(v[5]);
    println!(
        "staging: lanes {} chunk {} KiB threshold {} KiB slots {} streaming to {} MiB demote {} (0 = default)",
        v[0], v[1], v[2], v[3], v[4], v[5]
    );
}

/// The cached pinned allocation rows: alloc+free after warm-up of the
/// cache, against `cuMemHostAlloc` + `cuMemFreeHost` of the same size.
/// `new_unspecified` is the cache's own cost (no memset); `new` adds the
/// memset of a reused block (O(size)); `uncached` is the old path.
pub fn pinned_alloc(b: &mut Bench, ctx: &Arc<CudaContext>) {
    use cuda_mem::cudarc::driver::result;
    let sizes = [
        (200, 4usize << 10),
        (100, 64 << 10),
        (20, 1 << 20),
        (5, 16 << 20),
        (3, 64 << 20),
    ];
    for (calls, bytes) in sizes {
        let name = size_name(bytes);
        let raw_once = || unsafe {
            // SAFETY: allocate and free `bytes` of pinned memory.
            let p = result::malloc_host(bytes, 0).unwrap();
            result::free_host(p).unwrap();
        };
        type Alloc = fn(&Arc<CudaContext>, usize) -> cuda_mem::Result<PinnedBuffer<u8>>;
        let ways: [(&str, Alloc); 2] = [
            ("new_unspecified", PinnedBuffer::<u8>::new_unspecified),
            ("new: zeroed", PinnedBuffer::<u8>::new),
        ];
        for (way, alloc) in ways {
            let ours = || drop(alloc(ctx, bytes).unwrap());
            let (ours, raw) = b.host_pair_us(calls, ours, raw_once, || {});
            let row = format!("PinnedBuffer {name} alloc+free (cached, {way})");
            let raw_call = "cuMemHostAlloc+FreeHost";
            b.push("alloc", row, "us", ours, raw, raw_call, false, None);
        }
    }
    let cache = cuda_mem::PinnedCache::of(ctx).unwrap();
    println!("pinned cache after the rows: {:?}", cache.usage());
}
