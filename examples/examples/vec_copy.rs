//! Vec copies: copying an ordinary (pageable) `Vec` to the GPU and back,
//! and what it costs against pinned memory.
//!
//!     cargo run --release --example vec_copy -- [MIB..]
//!
//! `copy_from_host` and `copy_to_host` take any host slice. The driver's
//! own copy of pageable memory runs on one CPU thread through its own small
//! pinned buffer (7-17 GB/s on an H200 host); cuda-mem stages large copies
//! itself, through a ring of pinned chunks from its pinned cache, copied
//! by several threads while the copy engine moves the chunks before them.
//! For each size given (default 16, 64 and 256 MiB) the example copies a
//! `Vec<f32>` to the device and back ten times, checks every element, and
//! prints the rates next to those of a `PinnedBuffer` of the same size.
//! Run it under `nsys profile` to see the chunks' DMAs overlap the
//! threads' copies.

use cuda_mem::prelude::*;
use std::error::Error;
use std::time::Instant;

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
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
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
    }
    checks.finish();
    Ok(())
}
