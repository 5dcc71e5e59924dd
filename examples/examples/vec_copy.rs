//! Vec copies: copying an ordinary (pageable) `Vec` to the GPU and back,
//! and what it costs against pinned memory.
//!
//!     cargo run --release --example vec_copy -- [--timeline] [MIB..]
//!
//! `copy_from_host` and `copy_to_host` take any host slice. The driver's
//! own copy of pageable memory runs on one CPU thread through its own small
//! pinned buffer (7-17 GB/s on an H200 host); cuda-mem stages large copies
//! itself, through a ring of pinned chunks from its pinned cache, copied
//! by several threads while the copy engine moves the chunks before them.
//! For each size given (default 16, 64 and 256 MiB) the example copies a
//! `Vec<f32>` to the device and back ten times, checks every element, and
//! prints the rates next to those of a `PinnedBuffer` of the same size.
//! With `--timeline` it then records one more copy each way
//! (`cuda_mem::__record_staging`, a benchmark hook) and prints where its
//! time went: when the first piece began and the first DMA started, when
//! each lane (the calling thread, then the workers as they woke) began
//! its first piece, how long the copy engine sat idle between chunks, how
//! long the threads waited for slots, and each chunk's DMA. (Nsight
//! Systems shows the same where it can write its report. A recorded copy
//! is not quite the plain one, so its total is not the plain copy's time:
//! see `cuda_mem::__record_staging`.) Copies below the staging thresholds
//! (2 MiB to the device, 1 MiB to the host) are the driver's, and have no
//! timeline.

use cuda_mem::prelude::*;
use std::error::Error;
use std::time::Instant;

use cuda_mem::__staging_timeline::StagingTimeline;
use cuda_mem::{DeviceBuffer, PinnedBuffer};
use cuda_mem_examples::{gpu_or_exit, Checks};

/// Median GB/s of `bytes` moved by `op` (then a synchronisation), 10 runs
/// after a warm-up.
fn rate(bytes: usize, ctx: &cuda_mem::CudaContext, mut op: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..11)
        .map(|_| {
            let t = Instant::now();
            op();
            ctx.synchronize().unwrap();
            t.elapsed().as_secs_f64()
        })
        .skip(1)
        .collect();
    times.sort_by(f64::total_cmp);
    bytes as f64 / times[times.len() / 2] / 1e9
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("vec_copy");
    let mut checks = Checks::new("vec_copy");
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timeline = args.iter().any(|a| a == "--timeline");
    let sizes: Vec<usize> = args
        .iter()
        .filter(|a| *a != "--timeline")
        .map(|a| a.parse().map_err(|e| format!("size {a:?} in MiB: {e}")))
        .collect::<Result<_, _>>()?;
    let sizes = if sizes.is_empty() {
        vec![16, 64, 256]
    } else {
        sizes
    };
    for mib in sizes {
        let len = (mib << 20) / 4;
        let bytes = len * 4;
        // Written once, so that no copy pays for first-touch page faults.
        let host: Vec<f32> = (0..len).map(|i| i as f32 * 0.5 - 3.0).collect();
        let mut back = vec![f32::NAN; len];
        let mut dev = DeviceBuffer::<f32>::new(&ctx, len)?;
        let up = rate(bytes, &ctx, || dev.copy_from_host(&host).unwrap());
        let down = rate(bytes, &ctx, || dev.copy_to_host(&mut back).unwrap());
        checks.check(back == host, format!("{mib} MiB: every element came back"));
        let mut pinned = PinnedBuffer::<f32>::new(&ctx, len)?;
        let pin_up = rate(bytes, &ctx, || {
            dev.copy_from_host(pinned.as_slice().unwrap()).unwrap()
        });
        let pin_down = rate(bytes, &ctx, || {
            dev.copy_to_host(pinned.as_mut_slice().unwrap()).unwrap()
        });
        println!(
            "{mib:>5} MiB  Vec: to the device {up:5.1} GB/s, to the host {down:5.1} GB/s   \
             pinned: {pin_up:5.1} / {pin_down:5.1} GB/s"
        );
        if timeline {
            back.fill(f32::NAN);
            cuda_mem::__record_staging(true);
            dev.copy_from_host(&host)?;
            dev.copy_to_host(&mut back)?;
            cuda_mem::__record_staging(false);
            checks.check(back == host, format!("{mib} MiB: the recorded copies"));
            let timelines = cuda_mem::__take_staging_timelines();
            if timelines.len() < 2 {
                println!(
                    "  {} of the 2 copies staged (the rest are the driver's)",
                    timelines.len()
                );
            }
            timelines.iter().for_each(print_timeline);
        }
    }
    checks.finish();
    Ok(())
}

/// Prints where a recorded copy's time went: a summary line, then a line
/// per chunk (µs from the copy's start).
fn print_timeline(t: &StagingTimeline) {
    let way = if t.to_device {
        "to the device"
    } else {
        "to the host"
    };
    let min = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::INFINITY, f64::min);
    let max = |v: &mut dyn Iterator<Item = f64>| v.fold(0.0, f64::max);
    // The DMAs in the order the stream ran them.
    let mut dmas = t.chunks.clone();
    dmas.sort_by(|a, b| a.dma_start_us.total_cmp(&b.dma_start_us));
    let last_dma = max(&mut dmas.iter().map(|c| c.dma_end_us));
    let end = last_dma.max(t.lanes_done_us);
    let busy: f64 = dmas.iter().map(|c| c.dma_end_us - c.dma_start_us).sum();
    let gaps: Vec<f64> = dmas
        .windows(2)
        .map(|w| w[1].dma_start_us - w[0].dma_end_us)
        .filter(|g| *g > 0.0)
        .collect();
    let waited: f64 = t.waits.iter().map(|w| w.end_us - w.start_us).sum();
    let copying = t.pieces.iter().map(|p| p.end_us - p.start_us).sum::<f64>() - waited;
    println!(
        "  timeline {way}, {} MiB: {} lanes, {} slots, {} chunks, {} pieces; done at {end:.0} µs \
         ({:.1} GB/s); first piece at {:.1} µs, first DMA queued at {:.1} and started at \
         {:.1}; copy engine busy {busy:.0} µs, idle {:.0} µs in {} gaps between chunks; lanes \
         done at {:.0} µs, the last DMA ended at {last_dma:.0}; the lanes copied {copying:.0} µs \
         ({:.1} GB/s a lane) and waited {waited:.0} µs in {} waits",
        t.bytes >> 20,
        t.lanes,
        t.slots,
        t.chunks.len(),
        t.pieces.len(),
        t.bytes as f64 / end / 1e3,
        min(&mut t.pieces.iter().map(|p| p.start_us)),
        min(&mut t.chunks.iter().map(|c| c.queued_us)),
        dmas.first().map_or(0.0, |c| c.dma_start_us),
        gaps.iter().sum::<f64>(),
        gaps.len(),
        t.lanes_done_us,
        t.bytes as f64 / copying.max(1e-9) / 1e3,
        t.waits.len(),
    );
    // When each lane began its first piece: how long the workers took to
    // wake and join the copy.
    let mut first = vec![f64::INFINITY; t.lanes];
    for p in &t.pieces {
        first[p.lane] = first[p.lane].min(p.start_us);
    }
    first.sort_by(f64::total_cmp);
    let joined: Vec<String> = first
        .iter()
        .filter(|s| s.is_finite())
        .map(|s| format!("{s:.1}"))
        .collect();
    println!(
        "    lanes began at (µs, in order): {} ({} of {} lanes copied)",
        joined.join(" "),
        joined.len(),
        t.lanes
    );
    for c in &dmas {
        println!(
            "    chunk {:>3} {:>5} KiB: queued {:>8.1}  DMA {:>8.1} .. {:>8.1} ({:>5.1} GB/s)",
            c.chunk,
            c.bytes >> 10,
            c.queued_us,
            c.dma_start_us,
            c.dma_end_us,
            c.bytes as f64 / (c.dma_end_us - c.dma_start_us).max(1e-9) / 1e3,
        );
    }
}
