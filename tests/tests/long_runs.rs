//! Leaks and long runs.
//!
//! - 100,000 alloc/free cycles of each kind (device, pinned, unified, pool
//!   from the device's pool and from a `MemPool`, dropped or freed on a
//!   stream, pitched; small random sizes), with a fill checked element by
//!   element every 997th cycle. Afterwards (after a synchronize and a trim of
//!   the pools) the device's free memory is back to its value before the
//!   cycles (after a warm-up) within 1 MiB, and for pinned memory the
//!   process's resident set (`VmRSS`) within 8 MiB.
//! - 8 threads, each with its own stream and buffers, in a loop of
//!   fill / host copy / async copies through pool and unified memory, every
//!   element checked.
//! - 8 threads reading shared buffers (`Arc<DeviceBuffer<_>>`,
//!   `Arc<PinnedBuffer<_>>`) at the same time, into buffers of their own.
//!
//! Each prints its timings. `CUDA_MEM_LONG_CYCLES` sets the cycle count
//! (default 100,000; the thread loops run cycles / 500 rounds), e.g. 1,000
//! under compute-sanitizer. Under the sanitizer the memory numbers are
//! printed but not asserted: its own device and host allocations move them,
//! and memcheck's `--leak-check full` reports leaked device memory itself.
//!
//! The tests of this file take a lock, so that one test's allocations never
//! show up in another's memory numbers when the harness runs them in parallel.

use cuda_mem::prelude::*;
use std::sync::{Arc, Barrier, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cuda_mem::{
    Buffer, CudaContext, CudaStream, DeviceBuffer, HostAccessible, MemPool, PinnedBuffer,
    PitchedBuffer, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_tests::{env_count, gpu, seed_from_env, under_sanitizer, Rng};

const MIB: usize = 1 << 20;

/// A 12-byte element.
type E = [u32; 3];

/// One test of this file at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn cycles() -> usize {
    env_count("CUDA_MEM_LONG_CYCLES", 100_000)
}

/// The resident set size of this process (`VmRSS` in `/proc/self/status`).
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    kib * 1024
}

/// Free device memory and RSS once every queued free is done and the pools
/// have given back what they hold.
fn settle(ctx: &Arc<CudaContext>, pools: &[&MemPool]) -> (usize, usize) {
    ctx.synchronize().unwrap();
    MemPool::device_current(ctx).unwrap().trim_to(0).unwrap();
    for pool in pools {
        pool.trim_to(0).unwrap();
    }
    ctx.synchronize().unwrap();
    (ctx.mem_get_info().unwrap().0, rss())
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / MIB as f64
}

/// How far free device memory may move over the cycles.
const DEVICE_SLACK: usize = MIB;

/// Runs `cycle` (one allocation and its free) a warm-up number of times, then
/// `cycles()` times, and checks that free device memory is back where it was
/// within `device_slack` (and with `rss_slack`, the resident set too).
fn no_leaks(
    name: &str,
    ctx: &Arc<CudaContext>,
    pools: &[&MemPool],
    (device_slack, rss_slack): (usize, Option<usize>),
    mut cycle: impl FnMut(&mut Rng, usize),
) {
    let n = cycles();
    let mut rng = Rng::from_env(name);
    // The first allocations load modules, create events and pools, and grow
    // the driver's tables: not leaks.
    for i in 0..(n / 20).clamp(1, 2000) {
        cycle(&mut rng, i);
    }
    let (dev0, rss0) = settle(ctx, pools);
    let start = Instant::now();
    for i in 0..n {
        cycle(&mut rng, i);
    }
    let elapsed = start.elapsed();
    let (dev1, rss1) = settle(ctx, pools);
    eprintln!(
        "{name}: {n} alloc/free cycles in {elapsed:.2?} ({:.2} µs per cycle); \
         free device memory {:.1} -> {:.1} MiB ({:+.3} MiB); RSS {:.1} -> {:.1} MiB ({:+.3} MiB)",
        elapsed.as_secs_f64() * 1e6 / n as f64,
        mib(dev0),
        mib(dev1),
        (dev1 as f64 - dev0 as f64) / MIB as f64,
        mib(rss0),
        mib(rss1),
        (rss1 as f64 - rss0 as f64) / MIB as f64,
    );
    if under_sanitizer() {
        eprintln!("{name}: under compute-sanitizer: the memory numbers are not asserted");
        return;
    }
    assert!(
        dev0.abs_diff(dev1) <= device_slack,
        "{name}: free device memory moved by {:+.3} MiB over {n} cycles",
        (dev1 as f64 - dev0 as f64) / MIB as f64
    );
    if let Some(slack) = rss_slack {
        assert!(
            rss1 <= rss0 + slack,
            "{name}: the resident set grew by {:.3} MiB over {n} cycles",
            (rss1 as f64 - rss0 as f64) / MIB as f64
        );
    }
}

/// A small random length: 1 to 4096 elements (primes and odd sizes included).
fn small(rng: &mut Rng) -> usize {
    1 + rng.below(4096)
}

/// Every 997th cycle checks that the memory works.
fn checked(i: usize) -> bool {
    i.is_multiple_of(997)
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_alloc_free_cycles_do_not_leak() {
    let _serial = serial();
    let ctx = gpu();
    no_leaks(
        "device cycles",
        &ctx,
        &[],
        (DEVICE_SLACK, None),
        |rng, i| {
            let mut b = DeviceBuffer::<u32>::new(&ctx, small(rng)).unwrap();
            if checked(i) {
                let v = rng.next_u64() as u32;
                b.fill(v).unwrap();
                assert!(b.to_vec().unwrap().iter().all(|&x| x == v), "cycle {i}");
            }
        },
    );
}

/// A cycle's check of host-accessible memory: a new buffer reads as zeros,
/// and a fill is seen through `as_slice`.
fn zeroed_then_filled<K: HostAccessible>(b: &mut Buffer<u32, K>, rng: &mut Rng, i: usize) {
    assert!(
        b.as_slice().unwrap().iter().all(|&x| x == 0),
        "cycle {i}: not zeroed"
    );
    let v = rng.next_u64() as u32;
    b.fill(v).unwrap();
    assert!(b.as_slice().unwrap().iter().all(|&x| x == v), "cycle {i}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn pinned_alloc_free_cycles_do_not_leak() {
    let _serial = serial();
    let ctx = gpu();
    no_leaks(
        "pinned cycles",
        &ctx,
        &[],
        (DEVICE_SLACK, Some(8 * MIB)),
        |rng, i| {
            let mut b = PinnedBuffer::<u32>::new(&ctx, small(rng)).unwrap();
            if checked(i) {
                zeroed_then_filled(&mut b, rng, i);
            }
        },
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn unified_alloc_free_cycles_do_not_leak() {
    let _serial = serial();
    let ctx = gpu();
    // The UVM driver keeps GPU pages it has freed in 2 MiB root chunks that it
    // reserves in batches: on the H200 free memory once ended exactly 64 MiB
    // lower after 100,000 cycles (a whole batch, not a per-cycle amount). Every
    // cycle's buffer is zeroed on the device, so it holds GPU pages (64 KiB or
    // more): one leaked buffer in 700 cycles would already exceed this slack.
    // memcheck's leak check (`--sanitize memcheck`) reports any unfreed
    // managed allocation outright.
    let uvm_batch = 64 * MIB;
    no_leaks(
        "unified cycles",
        &ctx,
        &[],
        (uvm_batch + DEVICE_SLACK, None),
        |rng, i| {
            let mut b = UnifiedBuffer::<u32>::new(&ctx, small(rng)).unwrap();
            if checked(i) {
                zeroed_then_filled(&mut b, rng, i);
            }
        },
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pool_alloc_free_cycles_do_not_leak() {
    let _serial = serial();
    let ctx = gpu();
    let stream = ctx.new_stream().unwrap();
    let pool = MemPool::new(&ctx).unwrap();
    no_leaks(
        "pool cycles",
        &ctx,
        &[&pool],
        (DEVICE_SLACK, None),
        |rng, i| {
            let len = small(rng);
            // The device's pool and our own, dropped (freed on the last stream
            // used) or freed on the stream explicitly.
            let mut b = if i % 2 == 0 {
                PoolBuffer::<u32>::new(len, &stream).unwrap()
            } else {
                PoolBuffer::<u32>::from_pool(&pool, len, &stream).unwrap()
            };
            if checked(i) {
                let v = rng.next_u64() as u32;
                b.fill_async(v, &stream).unwrap();
                assert!(b.to_vec().unwrap().iter().all(|&x| x == v), "cycle {i}");
            }
            if i % 4 < 2 {
                b.free_on_stream(&stream).unwrap();
            }
        },
    );
    assert_eq!(
        pool.usage().unwrap().used_current,
        0,
        "the MemPool still hands out memory"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn pitched_alloc_free_cycles_do_not_leak() {
    let _serial = serial();
    let ctx = gpu();
    no_leaks(
        "pitched cycles",
        &ctx,
        &[],
        (DEVICE_SLACK, None),
        |rng, i| {
            let (w, h) = (1 + rng.below(300), 1 + rng.below(8));
            let mut b = PitchedBuffer::<E>::new(&ctx, w, h).unwrap();
            if checked(i) {
                let v: E = rng.value();
                b.fill(v).unwrap();
                assert!(b.to_vec().unwrap().iter().all(|&x| x == v), "cycle {i}");
            }
        },
    );
}

/// Rounds of the thread tests.
fn rounds() -> usize {
    (cycles() / 500).max(2)
}

/// One round of a thread that owns everything it touches.
fn own_round(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>, rng: &mut Rng, what: &str) {
    let len = 1 + rng.below(50_000);
    let v: E = rng.value();
    let mut dev = DeviceBuffer::<E>::new(ctx, len).unwrap();
    dev.fill_async(v, stream).unwrap();
    let mut expect = vec![v; len];
    let a = rng.below(len);
    let b = a + rng.below(len - a + 1);
    let data: Vec<E> = rng.values(b - a);
    dev.slice_mut(a..b).unwrap().copy_from_host(&data).unwrap();
    expect[a..b].copy_from_slice(&data);
    let mut pinned = PinnedBuffer::<E>::new(ctx, len).unwrap();
    let poison: E = rng.value();
    pinned.as_mut_slice().unwrap().fill(poison);
    dev.copy_to_host_async(&mut pinned, stream).unwrap();
    assert!(
        pinned.as_slice().unwrap() == &expect[..],
        "{what}: device to pinned"
    );
    let mut pool = PoolBuffer::<E>::new(len, stream).unwrap();
    pool.copy_from_async(&dev, stream).unwrap();
    let mut unified = UnifiedBuffer::<E>::new(ctx, len).unwrap();
    unified.copy_from_async(&pool, stream).unwrap();
    pool.free_on_stream(stream).unwrap();
    assert!(
        unified.as_slice().unwrap() == &expect[..],
        "{what}: device to pool to unified"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn eight_threads_with_their_own_buffers_and_streams() {
    let _serial = serial();
    let ctx = gpu();
    let seed = seed_from_env("eight_threads_own");
    let rounds = rounds();
    let start = Instant::now();
    let workers: Vec<_> = (0..8u64)
        .map(|t| {
            let ctx = ctx.clone();
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed.wrapping_add(t));
                let stream = ctx.new_stream().unwrap();
                let begin = Instant::now();
                for i in 0..rounds {
                    own_round(&ctx, &stream, &mut rng, &format!("thread {t} round {i}"));
                }
                begin.elapsed()
            })
        })
        .collect();
    let times: Vec<Duration> = workers
        .into_iter()
        .map(|w| w.join().expect("a worker thread panicked"))
        .collect();
    eprintln!(
        "eight_threads_own: 8 threads x {rounds} rounds in {:.2?} (slowest thread {:.2?}, {:.1} ms per round)",
        start.elapsed(),
        times.iter().max().unwrap(),
        times.iter().max().unwrap().as_secs_f64() * 1e3 / rounds as f64
    );
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn eight_threads_read_shared_buffers_at_once() {
    let _serial = serial();
    let ctx = gpu();
    let mut rng = Rng::from_env("eight_threads_shared");
    let len = 1 + rng.below(1 << 16);
    let data: Arc<Vec<E>> = Arc::new(rng.values(len));
    let shared = Arc::new(DeviceBuffer::from_slice(&ctx, &data).unwrap());
    let shared_pinned = Arc::new(PinnedBuffer::from_slice(&ctx, &data).unwrap());
    let rounds = rounds();
    let barrier = Arc::new(Barrier::new(8));
    let start = Instant::now();
    let workers: Vec<_> = (0..8u64)
        .map(|t| {
            let (ctx, data, shared, shared_pinned, barrier) = (
                ctx.clone(),
                data.clone(),
                shared.clone(),
                shared_pinned.clone(),
                barrier.clone(),
            );
            let seed = rng.next_u64();
            std::thread::spawn(move || {
                let mut rng = Rng::new(seed);
                let stream = ctx.new_stream().unwrap();
                let mut mine = DeviceBuffer::<E>::new(&ctx, len).unwrap();
                let mut pinned = PinnedBuffer::<E>::new(&ctx, len).unwrap();
                barrier.wait();
                let begin = Instant::now();
                for i in 0..rounds {
                    let what = format!("thread {t} round {i}");
                    mine.fill(rng.value()).unwrap();
                    match i % 3 {
                        0 => mine.copy_from(&*shared).unwrap(),
                        1 => mine.copy_from_async(&*shared, &stream).unwrap(),
                        _ => mine.copy_from_async(&*shared_pinned, &stream).unwrap(),
                    }
                    assert!(mine.to_vec().unwrap() == *data, "{what}: copy_from");
                    pinned.as_mut_slice().unwrap().fill(rng.value());
                    shared.copy_to_host_async(&mut pinned, &stream).unwrap();
                    assert!(
                        pinned.as_slice().unwrap() == &data[..],
                        "{what}: copy_to_host_async"
                    );
                    let a = rng.below(len);
                    let b = a + rng.below(len - a + 1);
                    let mut part: Vec<E> = rng.values(b - a);
                    shared.slice(a..b).unwrap().copy_to_host(&mut part).unwrap();
                    assert!(part == data[a..b], "{what}: a view's copy_to_host");
                    assert!(shared.to_vec().unwrap() == *data, "{what}: to_vec");
                    assert!(
                        shared_pinned.as_slice().unwrap() == &data[..],
                        "{what}: as_slice"
                    );
                }
                begin.elapsed()
            })
        })
        .collect();
    let times: Vec<Duration> = workers
        .into_iter()
        .map(|w| w.join().expect("a worker thread panicked"))
        .collect();
    eprintln!(
        "eight_threads_shared: 8 threads x {rounds} rounds over {len} shared elements in {:.2?} (slowest thread {:.2?})",
        start.elapsed(),
        times.iter().max().unwrap()
    );
    assert!(
        shared.to_vec().unwrap() == *data,
        "the shared buffer changed"
    );
}
