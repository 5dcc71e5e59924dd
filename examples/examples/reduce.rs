//! Reduce: sums, minima and maxima of the fields of a derived struct over
//! 10⁸ elements (1.6 GB) in one pass, with a safe Rust kernel that uses warp
//! shuffles, shared-memory atomics and global atomics.
//!
//!     cargo run --release --example reduce [-- --blocks-per-sm N]
//!
//! The kernel `reduce_samples` (`examples/particles-shared/src/reduce.rs`, a
//! `#[kernel]` fn) folds each thread's samples in registers, combines a
//! warp's partials with shuffles, a block's in shared memory (atomics), and
//! the grid's in global memory (atomics). It is launched with its typed
//! launcher: the samples as `&DeviceBuffer<Sample>` (a `DeviceSlice`), the
//! three result buffers as `&mut` (`DeviceAtomicSlice`s). No `unsafe`.
//!
//! What it checks, against a CPU pass over the same data:
//!
//! - the integer results (Σ count as `u64`, Σ delta as `i64`, min and max of
//!   count and delta) and the float extremes (min and max of value) exactly:
//!   they do not depend on the order of the operations;
//! - the float sums (Σ value, Σ weight, accumulated in `f64` from the exact
//!   `f32` values) within `2·γ(n)·Σ|x|`, `γ(n) = n·u / (1 − n·u)`,
//!   `u = 2⁻⁵³`: any order of `n − 1` floating-point additions of `n` exact
//!   terms is within `γ(n−1)·Σ|x|` of the exact sum (Higham, *Accuracy and
//!   Stability of Numerical Algorithms*, §4.2), and the GPU's order (per
//!   thread, then warp trees, then atomics in whatever order the blocks
//!   arrive) and the CPU's (per chunk, then across chunks) are two such
//!   orders. For 10⁸ terms that is about `2.2·10⁻⁸·Σ|x|`;
//! - that every timed run gives those results.
//!
//! It prints the reduction's read rate next to the read rate of a
//! device-to-device copy of the same buffer measured in the same run (the
//! aim is at least 0.85 of it). Exits with status 1 if a check fails.
#![forbid(unsafe_code)]

use cuda_mem::prelude::*;
use std::error::Error;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys::{CUdevice_attribute, CUevent_flags};
use cuda_mem::{CudaContext, CudaStream, DeviceBuffer, LaunchConfig, Module};
use cuda_mem_examples::{gb_per_s, gpu_or_exit, unit_f32, Checks};
use particles_shared::reduce::{
    f32_from_key, i32_from_key, reduce_samples, slot, Sample, EXTREMES_EMPTY,
};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Number of samples (not a multiple of anything in particular).
const N: usize = 100_000_003;
/// Threads per block.
const BLOCK: u32 = 256;
/// Timed runs of the reduction and of the copy; the fastest counts.
const RUNS: usize = 5;

/// Sample `i`: varied, reproducible; values of both signs and many
/// magnitudes, so that the float sums round.
fn sample(i: usize) -> Sample {
    let u = |k: u64| unit_f32(i as u64 * 4 + k);
    let scale = [1e-3f32, 1.0, 1e3][i % 3];
    Sample {
        value: (u(0) - 0.5) * 2.0 * scale,
        weight: u(1),
        count: (u(2) * 1_000_000.0) as u32,
        delta: (u(3) * 2_000_001.0) as i32 - 1_000_000,
    }
}

/// The CPU's results, and Σ|value|, Σ|weight| for the error bound.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Expected {
    sums: [f64; slot::SUMS],
    abs_sums: [f64; slot::SUMS],
    count_sum: u64,
    delta_sum: i64,
    value_min: f32,
    value_max: f32,
    count_min: u32,
    count_max: u32,
    delta_min: i32,
    delta_max: i32,
}

impl Expected {
    fn of(samples: &[Sample]) -> Self {
        Self {
            sums: [
                samples.iter().map(|s| f64::from(s.value)).sum(),
                samples.iter().map(|s| f64::from(s.weight)).sum(),
            ],
            abs_sums: [
                samples.iter().map(|s| f64::from(s.value).abs()).sum(),
                samples.iter().map(|s| f64::from(s.weight).abs()).sum(),
            ],
            count_sum: samples.iter().map(|s| u64::from(s.count)).sum(),
            delta_sum: samples.iter().map(|s| i64::from(s.delta)).sum(),
            value_min: samples
                .iter()
                .map(|s| s.value)
                .fold(f32::INFINITY, f32::min),
            value_max: samples
                .iter()
                .map(|s| s.value)
                .fold(f32::NEG_INFINITY, f32::max),
            count_min: samples.iter().map(|s| s.count).min().unwrap_or(u32::MAX),
            count_max: samples.iter().map(|s| s.count).max().unwrap_or(0),
            delta_min: samples.iter().map(|s| s.delta).min().unwrap_or(i32::MAX),
            delta_max: samples.iter().map(|s| s.delta).max().unwrap_or(i32::MIN),
        }
    }

    fn merge(self, other: Self) -> Self {
        Self {
            sums: [self.sums[0] + other.sums[0], self.sums[1] + other.sums[1]],
            abs_sums: [
                self.abs_sums[0] + other.abs_sums[0],
                self.abs_sums[1] + other.abs_sums[1],
            ],
            count_sum: self.count_sum + other.count_sum,
            delta_sum: self.delta_sum + other.delta_sum,
            value_min: self.value_min.min(other.value_min),
            value_max: self.value_max.max(other.value_max),
            count_min: self.count_min.min(other.count_min),
            count_max: self.count_max.max(other.count_max),
            delta_min: self.delta_min.min(other.delta_min),
            delta_max: self.delta_max.max(other.delta_max),
        }
    }
}

/// The samples and the CPU's results, on all cores.
fn make_samples() -> (Vec<Sample>, Expected) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = N.div_ceil(threads);
    let mut samples = vec![
        Sample {
            value: 0.0,
            weight: 0.0,
            count: 0,
            delta: 0
        };
        N
    ];
    let expected = std::thread::scope(|scope| {
        let workers: Vec<_> = samples
            .chunks_mut(per_thread)
            .enumerate()
            .map(|(c, chunk)| {
                scope.spawn(move || {
                    for (k, s) in chunk.iter_mut().enumerate() {
                        *s = sample(c * per_thread + k);
                    }
                    Expected::of(chunk)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a CPU worker panicked"))
            .reduce(Expected::merge)
            .expect("at least one chunk")
    });
    (samples, expected)
}

/// `γ(n) = n·u / (1 − n·u)` with `u = 2⁻⁵³`.
fn gamma(n: usize) -> f64 {
    let nu = n as f64 * f64::EPSILON / 2.0;
    nu / (1.0 - nu)
}

/// The results of one reduction, as the host reads them back.
struct Results {
    sums: Vec<f64>,
    totals: Vec<u64>,
    extremes: Vec<u32>,
}

/// Milliseconds between two events around `queue` on `stream`.
fn timed(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    queue: impl FnOnce() -> cuda_mem::Result<()>,
) -> Result<f64, Box<dyn Error>> {
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let (start, stop) = (ctx.new_event(flags)?, ctx.new_event(flags)?);
    start.record(stream)?;
    queue()?;
    stop.record(stream)?;
    stop.synchronize()?;
    Ok(f64::from(start.elapsed_ms(&stop)?))
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let blocks_per_sm: u32 = args
        .iter()
        .position(|a| a == "--blocks-per-sm")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let ctx = gpu_or_exit("reduce");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;
    reduce_samples.check(&KERNELS, &ctx)?;

    let (host, expected) = make_samples();
    let bytes = N * size_of::<Sample>();
    println!(
        "{N} samples of {} bytes ({:.2} GB): Σ, min and max of value (f32), Σ weight (f32), Σ, min and max of count (u32) and delta (i32)",
        size_of::<Sample>(),
        bytes as f64 / 1e9
    );
    let samples = DeviceBuffer::from_slice(&ctx, &host)?;
    drop(host);
    let mut sums = DeviceBuffer::<f64>::zeroed(&ctx, slot::SUMS)?;
    let mut totals = DeviceBuffer::<u64>::zeroed(&ctx, slot::TOTALS)?;
    let mut extremes = DeviceBuffer::from_slice(&ctx, &EXTREMES_EMPTY)?;

    let sms = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
    let config = LaunchConfig {
        grid_dim: (sms * blocks_per_sm, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    println!(
        "grid: {} blocks of {BLOCK} threads ({blocks_per_sm} per multiprocessor, {sms} multiprocessors)",
        config.grid_dim.0
    );

    let mut reduce_ms = Vec::new();
    let mut runs = Vec::new();
    for _ in 0..=RUNS {
        sums.fill_async(0.0, &stream)?;
        totals.fill_async(0, &stream)?;
        extremes.copy_from_host(&EXTREMES_EMPTY)?;
        let ms = timed(&ctx, &stream, || {
            reduce_samples.launch(
                &KERNELS,
                &stream,
                config,
                (&samples, &mut sums, &mut totals, &mut extremes),
            )
        })?;
        reduce_ms.push(ms);
        runs.push(Results {
            sums: sums.to_vec()?,
            totals: totals.to_vec()?,
            extremes: extremes.to_vec()?,
        });
    }
    // The first run warms up (clocks, caches); the rest are timed.
    reduce_ms.remove(0);

    let mut copy = DeviceBuffer::<Sample>::new(&ctx, N)?;
    let mut copy_ms = Vec::new();
    for _ in 0..=RUNS {
        copy_ms.push(timed(&ctx, &stream, || {
            copy.copy_from_async(&samples, &stream)
        })?);
    }
    copy_ms.remove(0);
    let copy_check = copy.slice(N - 1..)?.to_vec()?[0] == samples.slice(N - 1..)?.to_vec()?[0];

    let mut checks = Checks::new("reduce");
    let e = expected;
    println!(
        "CPU: Σ value {:.6}, Σ weight {:.6}, Σ count {}, Σ delta {}, value in [{}, {}], count in [{}, {}], delta in [{}, {}]",
        e.sums[0], e.sums[1], e.count_sum, e.delta_sum, e.value_min, e.value_max, e.count_min,
        e.count_max, e.delta_min, e.delta_max
    );
    let bounds = e.abs_sums.map(|abs| 2.0 * gamma(N) * abs);
    let mut worst = [0.0f64; slot::SUMS];
    let mut integers_exact = 0;
    let mut extremes_exact = 0;
    for run in &runs {
        for ((worst, gpu), cpu) in worst.iter_mut().zip(&run.sums).zip(e.sums) {
            *worst = worst.max((gpu - cpu).abs());
        }
        let ints = run.totals[slot::COUNT] == e.count_sum
            && run.totals[slot::DELTA] as i64 == e.delta_sum
            && run.extremes[slot::COUNT_MIN] == e.count_min
            && run.extremes[slot::COUNT_MAX] == e.count_max
            && i32_from_key(run.extremes[slot::DELTA_MIN]) == e.delta_min
            && i32_from_key(run.extremes[slot::DELTA_MAX]) == e.delta_max;
        let floats = f32_from_key(run.extremes[slot::VALUE_MIN]).to_bits() == e.value_min.to_bits()
            && f32_from_key(run.extremes[slot::VALUE_MAX]).to_bits() == e.value_max.to_bits();
        integers_exact += usize::from(ints);
        extremes_exact += usize::from(floats);
    }
    let last = runs.last().expect("runs");
    println!(
        "GPU: Σ value {:.6}, Σ weight {:.6}, Σ count {}, Σ delta {}, value in [{}, {}], count in [{}, {}], delta in [{}, {}]",
        last.sums[0],
        last.sums[1],
        last.totals[slot::COUNT],
        last.totals[slot::DELTA] as i64,
        f32_from_key(last.extremes[slot::VALUE_MIN]),
        f32_from_key(last.extremes[slot::VALUE_MAX]),
        last.extremes[slot::COUNT_MIN],
        last.extremes[slot::COUNT_MAX],
        i32_from_key(last.extremes[slot::DELTA_MIN]),
        i32_from_key(last.extremes[slot::DELTA_MAX]),
    );
    let total_runs = runs.len();
    checks.check(
        integers_exact == total_runs,
        format_args!(
            "Σ count, Σ delta and the min and max of count and delta exact in {integers_exact} of {total_runs} runs"
        ),
    );
    checks.check(
        extremes_exact == total_runs,
        format_args!(
            "min and max of value exact (bit for bit) in {extremes_exact} of {total_runs} runs"
        ),
    );
    for (k, name) in ["Σ value", "Σ weight"].into_iter().enumerate() {
        checks.check(
            worst[k] <= bounds[k],
            format_args!(
                "{name} within 2·γ(n)·Σ|x| = {:.3e} of the CPU's in every run (worst difference {:.3e})",
                bounds[k], worst[k]
            ),
        );
    }
    checks.check(copy_check, "the device-to-device copy copied");

    let best = |ms: &[f64]| ms.iter().copied().fold(f64::INFINITY, f64::min);
    let (reduce_best, copy_best) = (best(&reduce_ms), best(&copy_ms));
    let reduce_rate = gb_per_s(bytes, reduce_best / 1e3);
    let copy_read_rate = gb_per_s(bytes, copy_best / 1e3);
    println!(
        "reduction: {reduce_best:.3} ms, {reduce_rate:.0} GB/s read; device-to-device copy of the same buffer: {copy_best:.3} ms, {copy_read_rate:.0} GB/s read (and as much written)"
    );
    println!(
        "reduction / copy read rate: {:.2} (aim: at least 0.85)",
        reduce_rate / copy_read_rate
    );
    checks.finish();
    Ok(())
}
