//! Graph: an iterative solver step (two Jacobi sweeps of the Laplace
//! equation over a pitched 2D grid, and a copy of the grid into pinned
//! memory) recorded once as a CUDA graph and replayed, checked bit for bit
//! against the same sweeps on the CPU.
//!
//!     cargo run --release --example graph
//!
//! `Graph::capture(&stream, buffers, |s, buffers| { ... })` records what the
//! closure queues on `s` (here two `#[kernel]` launches and a 2D copy)
//! without running it; `graph.launch(&stream)` then runs all of it with one
//! driver call. The graph holds the buffers it was given (`&mut` the ones it
//! writes), so none of them can be dropped or read from the host behind its
//! back; between launches `graph.buffers()` hands them out for host access,
//! which waits for the launches like any other.
//!
//! The grid's top edge is held at 100, the others at 0, and the interior
//! starts from random values in `0..100`; each launch does two sweeps
//! (`a -> b`, `b -> a`). Every 25 launches the pinned snapshot is compared
//! with the CPU's grid, every point exactly (see `particles_shared::jacobi`
//! for why the two agree bit for bit). The example also times the replay
//! against the same three operations issued one by one.

use cuda_mem::prelude::*;
use std::error::Error;
use std::time::Instant;

use cuda_mem::{Graph, LaunchConfig, Module, PinnedBuffer, PitchedBuffer};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::jacobi::{jacobi_sweep, relax};

static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

const WIDTH: usize = 517;
const HEIGHT: usize = 301;
const LAUNCHES: usize = 400;
const CHECK_EVERY: usize = 25;

/// One sweep of the whole grid on the CPU.
fn sweep(cur: &[f32], next: &mut [f32]) {
    for y in 0..HEIGHT {
        for x in 0..WIDTH {
            next[y * WIDTH + x] = relax(|i, j| cur[j * WIDTH + i], x, y, WIDTH, HEIGHT);
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("graph");
    let stream = ctx.new_stream()?;
    let mut checks = Checks::new("graph");

    let init: Vec<f32> = (0..WIDTH * HEIGHT)
        .map(|i| {
            let (x, y) = (i % WIDTH, i / WIDTH);
            if y == 0 {
                100.0
            } else if x == 0 || y + 1 == HEIGHT || x + 1 == WIDTH {
                0.0
            } else {
                (unit_f32(i as u64) * 100.0).floor()
            }
        })
        .collect();
    let mut a = PitchedBuffer::from_slice(&ctx, &init, WIDTH, HEIGHT)?;
    let mut b = PitchedBuffer::from_slice(&ctx, &init, WIDTH, HEIGHT)?;
    let mut snapshot = PinnedBuffer::<f32>::new(&ctx, WIDTH * HEIGHT)?;
    println!(
        "grid {WIDTH}x{HEIGHT} of f32, pitch {} bytes; {LAUNCHES} launches of 2 sweeps",
        a.pitch()
    );
    // Load and check the kernel now, outside the capture.
    jacobi_sweep.check(&KERNELS, &ctx)?;
    let config = LaunchConfig {
        grid_dim: (WIDTH.div_ceil(32) as u32, HEIGHT.div_ceil(8) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };

    let buffers = (&mut a, &mut b, &mut snapshot);
    let mut graph = Graph::capture(&stream, buffers, |s, (mut a, mut b, mut snapshot)| {
        jacobi_sweep.launch(&KERNELS, s, config, (&mut b, &a))?;
        jacobi_sweep.launch(&KERNELS, s, config, (&mut a, &b))?;
        snapshot.copy_from_async(&a, s)
    })?;

    let (mut cpu, mut tmp) = (init.clone(), init.clone());
    let started = Instant::now();
    let mut graph_host = 0.0;
    for launch in 1..=LAUNCHES {
        let t = Instant::now();
        graph.launch(&stream)?;
        graph_host += t.elapsed().as_secs_f64();
        sweep(&cpu, &mut tmp);
        sweep(&tmp, &mut cpu);
        if launch % CHECK_EVERY == 0 {
            let (_, _, snapshot) = graph.buffers();
            let gpu = snapshot.as_slice()?; // waits for the launch
            let differ = gpu
                .iter()
                .zip(&cpu)
                .filter(|(g, c)| g.to_bits() != c.to_bits())
                .count();
            checks.check(
                differ == 0,
                format!(
                    "after {:4} sweeps: all {} points equal the CPU's ({differ} differ)",
                    2 * launch,
                    gpu.len()
                ),
            );
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let centre = cpu[(HEIGHT / 2) * WIDTH + WIDTH / 2];
    println!(
        "{LAUNCHES} launches (CPU sweeps included) in {elapsed:.2} s; centre value {centre:.3}"
    );
    drop(graph);

    // The same three operations issued one by one, for the host cost.
    let t = Instant::now();
    for _ in 0..LAUNCHES {
        jacobi_sweep.launch(&KERNELS, &stream, config, (&mut b, &a))?;
        jacobi_sweep.launch(&KERNELS, &stream, config, (&mut a, &b))?;
        snapshot.copy_from_async(&a, &stream)?;
    }
    let direct_host = t.elapsed().as_secs_f64();
    stream.synchronize()?;
    println!(
        "host time per step: graph launch {:.2} us, the operations one by one {:.2} us",
        graph_host / LAUNCHES as f64 * 1e6,
        direct_host / LAUNCHES as f64 * 1e6
    );
    // Nothing left the grid's values: the boundary still holds.
    let top = a.row(0)?.to_vec()?;
    checks.check(
        top.iter().all(|&v| v == 100.0),
        "the top edge still holds 100 after every sweep",
    );
    checks.finish();
    Ok(())
}
