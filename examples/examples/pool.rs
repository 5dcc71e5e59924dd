//! Pool: an iterative workload that allocates its scratch memory anew in
//! every step, from a `MemPool`, and what that costs.
//!
//!     cargo run --release --example pool
//!
//! Each step allocates a scratch `PoolBuffer` of a different size with
//! `PoolBuffer::from_pool` (stream-ordered, `cuMemAllocFromPoolAsync`),
//! fills it, keeps its last elements in a result buffer, and frees it with
//! `free_on_stream`. The example prints, per step, what the allocation cost
//! on the host and the pool's statistics (`MemPool::usage`: reserved and used
//! bytes, current and high-water). Only steps that need more memory than the
//! pool holds reach the driver; the others reuse the pool's memory in about
//! a microsecond.
//!
//! Then it shows the two knobs that decide when the pool gives memory back:
//! `trim_to(bytes)` (now, down to `bytes`) and the release threshold (at
//! every synchronisation, down to the threshold). cuda-mem sets the threshold
//! to `u64::MAX` (keep everything); the example measures an
//! allocate/free/synchronise cycle with that and with CUDA's default, 0.

use cuda_mem::prelude::*;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::{CudaStream, DeviceBuffer, DeviceCopy, MemPool, PoolBuffer, PoolUsage};
use cuda_mem_examples::{gpu_or_exit, Checks};

/// One sample of the workload: 12 bytes, a value whose bytes do not repeat
/// with period 1, 2 or 4, so `fill` runs cuda-mem's fill kernel.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Sample {
    step: u32,
    value: f32,
    weight: f32,
}

const MIB: usize = 1 << 20;
/// Scratch size of each step, in MiB.
const STEP_MIB: [usize; 12] = [64, 256, 16, 512, 128, 512, 32, 256, 64, 512, 16, 128];
/// Samples of each step kept in the result buffer (the last ones of its scratch).
const KEPT: usize = 4096;
/// Bytes `trim_to` keeps in the first demonstration.
const TRIM_KEEP: usize = 64 * MIB;
/// Allocate/free/synchronise cycles per measurement.
const CYCLES: u32 = 200;

fn sample_of_step(step: usize) -> Sample {
    Sample {
        step: step as u32,
        value: step as f32 * 0.5 + 0.25,
        weight: 1.0 / (step as f32 + 3.0),
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB as f64)
}

fn print_usage(label: &str, u: PoolUsage) {
    println!(
        "{label:<34} reserved {:>11} (high {:>11}), used {:>11} (high {:>11})",
        mib(u.reserved_current),
        mib(u.reserved_high),
        mib(u.used_current),
        mib(u.used_high)
    );
}

/// Host time of one allocate, free, synchronise cycle of `bytes` (mean of
/// [`CYCLES`], after one untimed cycle).
fn cycle_time(
    pool: &MemPool,
    stream: &Arc<CudaStream>,
    bytes: usize,
) -> cuda_mem::Result<Duration> {
    let cycle = || -> cuda_mem::Result<()> {
        let buffer = PoolBuffer::<u8>::from_pool(pool, bytes, stream)?;
        buffer.free_on_stream(stream)?;
        stream.synchronize()?;
        Ok(())
    };
    cycle()?;
    let start = Instant::now();
    for _ in 0..CYCLES {
        cycle()?;
    }
    Ok(start.elapsed() / CYCLES)
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("pool");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;
    let pool = MemPool::new(&ctx)?;
    let mut checks = Checks::new("pool");

    let threshold = pool.release_threshold()?;
    checks.check(
        threshold == u64::MAX,
        format_args!("a new MemPool keeps its memory: release threshold {threshold:#x}"),
    );

    let steps = STEP_MIB.len();
    let mut results = DeviceBuffer::<Sample>::new(&ctx, steps * KEPT)?;
    let mut largest = 0;
    println!("step  scratch   alloc (host)  pool after the allocation");
    for (step, &size_mib) in STEP_MIB.iter().enumerate() {
        let len = size_mib * MIB / size_of::<Sample>();
        let reserved_before = pool.usage()?.reserved_current;

        let start = Instant::now();
        let mut scratch = PoolBuffer::<Sample>::from_pool(&pool, len, &stream)?;
        let alloc_time = start.elapsed();

        let usage = pool.usage()?;
        largest = largest.max(scratch.byte_size() as u64);
        let grew = if usage.reserved_current > reserved_before {
            "  (pool grew)"
        } else {
            ""
        };
        println!(
            "{step:>4}  {size_mib:>3} MiB  {:>9.1} µs  reserved {:>11}, used {:>11}{grew}",
            alloc_time.as_secs_f64() * 1e6,
            mib(usage.reserved_current),
            mib(usage.used_current),
        );

        // The step's work, all queued on `stream` in order: fill the scratch,
        // keep its tail, free it (stream-ordered: after the copy).
        scratch.fill_async(sample_of_step(step), &stream)?;
        results
            .slice_mut(step * KEPT..(step + 1) * KEPT)?
            .copy_from_async(&scratch.slice(len - KEPT..)?, &stream)?;
        scratch.free_on_stream(&stream)?;
    }
    stream.synchronize()?;

    let kept = results.to_vec()?;
    let wrong = kept
        .chunks(KEPT)
        .enumerate()
        .map(|(step, samples)| {
            samples
                .iter()
                .filter(|&&s| s != sample_of_step(step))
                .count()
        })
        .sum::<usize>();
    checks.check(
        wrong == 0,
        format_args!("every step filled its whole scratch buffer ({wrong} wrong samples kept)"),
    );

    let after_work = pool.usage()?;
    print_usage("after the work (synchronised):", after_work);
    checks.check(
        after_work.used_current == 0,
        "every scratch buffer went back to the pool",
    );
    checks.check(
        after_work.used_high >= largest,
        format_args!(
            "the used high-water mark covers the largest step ({} >= {})",
            mib(after_work.used_high),
            mib(largest)
        ),
    );
    checks.check(
        after_work.reserved_current >= largest,
        "the pool kept its memory through the synchronisation (threshold u64::MAX)",
    );

    pool.trim_to(TRIM_KEEP)?;
    let trimmed = pool.usage()?;
    print_usage(
        &format!("after trim_to({}):", mib(TRIM_KEEP as u64)),
        trimmed,
    );
    checks.check(
        trimmed.reserved_current <= TRIM_KEEP as u64,
        format_args!(
            "trim_to gave back all but at most {}",
            mib(TRIM_KEEP as u64)
        ),
    );
    pool.trim_to(0)?;
    let empty = pool.usage()?;
    print_usage("after trim_to(0):", empty);
    checks.check(
        empty.reserved_current == 0,
        "trim_to(0) gave everything back",
    );
    pool.reset_high_water()?;
    let reset = pool.usage()?;
    print_usage("after reset_high_water():", reset);
    checks.check(
        reset.used_high == 0 && reset.reserved_high == 0,
        "reset_high_water() reset both high-water marks",
    );

    // The release threshold: what one allocate/free/synchronise cycle costs.
    let bytes = 64 * MIB;
    let kept_time = cycle_time(&pool, &stream, bytes)?;
    pool.set_release_threshold(0)?;
    let released_time = cycle_time(&pool, &stream, bytes)?;
    let after_release = pool.usage()?;
    pool.set_release_threshold(u64::MAX)?;
    println!(
        "allocate + free + synchronise {}: {:.1} µs with threshold u64::MAX, {:.1} µs with threshold 0 ({:.0}x)",
        mib(bytes as u64),
        kept_time.as_secs_f64() * 1e6,
        released_time.as_secs_f64() * 1e6,
        released_time.as_secs_f64() / kept_time.as_secs_f64()
    );
    print_usage("threshold 0, after a synchronise:", after_release);
    checks.check(
        pool.release_threshold()? == u64::MAX,
        "the release threshold is back at u64::MAX",
    );
    checks.finish();
    Ok(())
}
