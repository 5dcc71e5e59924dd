//! Pipeline: overlap host-to-device copies, a kernel and device-to-host
//! copies by splitting the work into chunks and spreading the chunks over two
//! streams.
//!
//!     cargo run --release --example pipeline
//!
//! 256 MiB of `f32` go through the GPU in 16 chunks: each chunk is a view of
//! one input `PinnedBuffer`, copied to the device (`copy_from_async` from the
//! view), multiplied by a factor by the Rust kernel `scale_f32` (a `#[kernel]`
//! fn of `examples/particles-shared`, built by `examples/build.rs` and
//! launched with its typed launcher), and copied back into its view of one
//! output `PinnedBuffer`. No `unsafe` anywhere. Only pinned memory makes
//! these copies truly asynchronous, which is why the async copies of cuda-mem
//! take pinned (or unified) memory and not a `&[T]`.
//!
//! Run on one stream, every step waits for the one before. Run on two
//! streams, each with its own part of one device buffer, the upload of one
//! chunk overlaps the download of the previous one (the GPU has separate copy
//! engines for the two directions). The example prints both times and their
//! ratio, and checks every output float bit for bit against the CPU (a single
//! IEEE multiplication, rounded the same way on both) after every run.
//!
//! One buffer per direction is enough: cuda-mem orders the work on each
//! allocation per byte range, so chunk views of one buffer on different
//! streams do not wait for each other, while work on overlapping views stays
//! in order (it keeps up to 32 ranges per allocation apart; beyond that it
//! joins the ranges of each stream, which would make the streams wait for
//! each other, so keep chunks per buffer well below that).
#![forbid(unsafe_code)]

use cuda_mem::prelude::*;
use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::{AsView, CudaStream, DeviceBuffer, LaunchConfig, Module, PinnedBuffer};
use cuda_mem_examples::{gb_per_s, gpu_or_exit, unit_f32, Checks};
use particles_shared::scale_f32;

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Number of chunks the data is split into.
const CHUNKS: usize = 16;
/// Floats per chunk (16 MiB).
const CHUNK_LEN: usize = 4 << 20;
/// Streams of the pipelined run.
const PIPELINE_STREAMS: usize = 2;
/// Timed runs of each kind; the fastest counts.
const RUNS: usize = 3;
/// What the kernel multiplies by: not a power of two, so results are rounded.
const FACTOR: f32 = 1.7;
/// Threads per block of the kernel launch.
const BLOCK: u32 = 256;

/// Input float `i`: varied, reproducible, finite.
fn input_value(i: usize) -> f32 {
    unit_f32(i as u64) * 2000.0 - 1000.0
}

/// Everything one pipeline run uses.
struct Pipeline {
    /// Every chunk's input, chunk `c` at `c * CHUNK_LEN`.
    input: PinnedBuffer<f32>,
    /// Every chunk's output, likewise.
    output: PinnedBuffer<f32>,
    /// The device's working memory: `CHUNK_LEN` floats per stream.
    device: DeviceBuffer<f32>,
}

impl Pipeline {
    /// Queues every chunk on `streams` (chunk `c` on stream `c % streams.len()`)
    /// and waits for all of them; returns the wall time from the first queued
    /// copy to the end of the last one.
    fn run(&mut self, streams: &[Arc<CudaStream>]) -> Result<Duration, Box<dyn Error>> {
        // Poison the output, so that a chunk that was never written is noticed.
        // (`as_mut_slice` also waits for the buffer's earlier work.)
        self.output.as_mut_slice()?.fill(f32::NAN);
        // Start from an idle input too, so that the time is this run's alone.
        self.input.synchronize()?;
        let start = Instant::now();
        for chunk in 0..CHUNKS {
            let lane = chunk % streams.len();
            let stream = &streams[lane];
            let part = chunk * CHUNK_LEN..(chunk + 1) * CHUNK_LEN;
            let mut device = self
                .device
                .slice_mut(lane * CHUNK_LEN..(lane + 1) * CHUNK_LEN)?;
            device.copy_from_async(&self.input.slice(part.clone())?, stream)?;
            let config = LaunchConfig {
                grid_dim: ((device.len() as u32).div_ceil(BLOCK), 1, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            // Ordered on `stream` after the upload; the download waits for it.
            scale_f32.launch(&KERNELS, stream, config, (&mut device, FACTOR))?;
            self.output
                .slice_mut(part)?
                .copy_from_async(&device.as_view(), stream)?;
        }
        for stream in streams {
            stream.synchronize()?;
        }
        Ok(start.elapsed())
    }

    /// Number of output floats that are not exactly `input * FACTOR`.
    fn wrong_outputs(&self) -> Result<usize, Box<dyn Error>> {
        let wrong = self
            .input
            .as_slice()?
            .iter()
            .zip(self.output.as_slice()?)
            .filter(|&(x, y)| (x * FACTOR).to_bits() != y.to_bits())
            .count();
        Ok(wrong)
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("pipeline");
    println!("device: {}", ctx.name()?);
    scale_f32.check(&KERNELS, &ctx)?;

    let mut input = PinnedBuffer::<f32>::new(&ctx, CHUNKS * CHUNK_LEN)?;
    for (i, x) in input.as_mut_slice()?.iter_mut().enumerate() {
        *x = input_value(i);
    }
    let mut pipeline = Pipeline {
        input,
        output: PinnedBuffer::<f32>::new(&ctx, CHUNKS * CHUNK_LEN)?,
        device: DeviceBuffer::<f32>::new(&ctx, PIPELINE_STREAMS * CHUNK_LEN)?,
    };
    let streams = (0..PIPELINE_STREAMS)
        .map(|_| ctx.new_stream())
        .collect::<Result<Vec<_>, _>>()?;
    let serial_streams = &streams[..1];

    let total_bytes = CHUNKS * CHUNK_LEN * size_of::<f32>();
    println!(
        "{} MiB in {CHUNKS} chunks of {} MiB: upload, scale by {FACTOR}, download",
        total_bytes >> 20,
        (CHUNK_LEN * size_of::<f32>()) >> 20
    );

    let mut checks = Checks::new("pipeline");
    // A first, untimed run.
    pipeline.run(&streams)?;
    let wrong = pipeline.wrong_outputs()?;
    checks.check(
        wrong == 0,
        format_args!(
            "warm-up run, {PIPELINE_STREAMS} streams: every output float exact ({wrong} wrong)"
        ),
    );

    let (mut serial, mut pipelined) = (Duration::MAX, Duration::MAX);
    for run in 1..=RUNS {
        for (name, lanes, best) in [
            ("1 stream", serial_streams, &mut serial),
            ("2 streams", &streams[..], &mut pipelined),
        ] {
            let time = pipeline.run(lanes)?;
            *best = (*best).min(time);
            let wrong = pipeline.wrong_outputs()?;
            checks.check(
                wrong == 0,
                format_args!(
                    "run {run}, {name}: {:.2} ms, every output float exact ({wrong} wrong)",
                    time.as_secs_f64() * 1e3
                ),
            );
        }
    }

    let (serial_s, pipelined_s) = (serial.as_secs_f64(), pipelined.as_secs_f64());
    println!(
        "serial    (1 stream):  {:7.2} ms, {:5.1} GB/s each way",
        serial_s * 1e3,
        gb_per_s(total_bytes, serial_s)
    );
    println!(
        "pipelined ({PIPELINE_STREAMS} streams): {:7.2} ms, {:5.1} GB/s each way",
        pipelined_s * 1e3,
        gb_per_s(total_bytes, pipelined_s)
    );
    println!(
        "overlap: the pipelined run is {:.2}x faster (fully overlapped uploads and downloads approach 2x)",
        serial_s / pipelined_s
    );
    checks.finish();
    Ok(())
}
