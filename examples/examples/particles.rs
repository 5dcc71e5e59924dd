//! Particles: one `#[repr(C)]` struct, one update function, used by a Rust
//! kernel on the GPU and by the CPU check, with the data in unified memory.
//!
//!     cargo run --release --example particles
//!
//! - `Particle`, `step` and the kernel `particles_step` (a `#[kernel]` fn)
//!   live in `examples/particles-shared`, a `#![no_std]` crate compiled for
//!   the host (this program's check) and, by `examples/build.rs` with
//!   `cuda_mem::build::KernelCrate`, for `nvptx64-nvidia-cuda`. This file
//!   embeds that PTX with `cuda_mem::include_kernels!`.
//! - The particles live in a `UnifiedBuffer`: the host writes them in place,
//!   `prefetch_to_device` moves them to the GPU before the kernel runs,
//!   `prefetch_to_host` brings them back, and `as_slice` waits for all of it.
//! - The kernel is launched with its typed launcher,
//!   `particles_step.launch(&KERNELS, &stream, config, (&mut particles, DT,
//!   STEPS))`: the argument types are checked at compile time, the PTX's
//!   signature at the first launch, and the buffer is ordered on the stream
//!   (host access waits for the kernel). No `unsafe` anywhere.
//!
//! The GPU's result is compared with the CPU's bit for bit: the time step is
//! a power of two, so contraction into fused multiply-adds cannot change a
//! result (see the docs of `particles-shared`). Exits with status 1 if any
//! particle differs.
#![forbid(unsafe_code)]

use std::error::Error;
use std::time::Instant;

use cuda_mem::{LaunchConfig, Module, UnifiedBuffer};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::{particles_step, step, Particle, DT, FLOOR};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Number of particles: not a multiple of the block size, so the last block is partial.
const PARTICLES: usize = 1_000_003;
/// Steps of `DT` seconds: about two seconds, a few bounces.
const STEPS: u32 = 512;
/// Threads per block of the launch.
const BLOCK: u32 = 256;

/// Particle `i` of the initial state: somewhere above the floor, moving a
/// little, of varied mass (deterministic, so every run checks the same data).
fn scattered(i: usize) -> Particle {
    let u = |k: u64| unit_f32(i as u64 * 8 + k);
    Particle {
        pos: [u(0) * 20.0 - 10.0, u(1) * 10.0, u(2) * 20.0 - 10.0],
        vel: [u(3) * 2.0 - 1.0, u(4) * 4.0 - 2.0, u(5) * 2.0 - 1.0],
        mass: 0.5 + u(6) * 1.5,
    }
}

/// The bits of every field, for an exact comparison (no tolerance, and a
/// `-0.0` or a NaN would not compare equal by accident).
fn bits(p: &Particle) -> [u32; 7] {
    let [x, y, z] = p.pos;
    let [u, v, w] = p.vel;
    [x, y, z, u, v, w, p.mass].map(f32::to_bits)
}

/// The same simulation on the CPU, with the same `step`, on all cores.
fn simulate_on_cpu(initial: &[Particle]) -> Vec<Particle> {
    let mut particles = initial.to_vec();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_thread = particles.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for chunk in particles.chunks_mut(per_thread) {
            scope.spawn(move || {
                for p in chunk {
                    for _ in 0..STEPS {
                        step(p, DT);
                    }
                }
            });
        }
    });
    particles
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("particles");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;

    // Initialise in place on the host: unified memory is host-accessible.
    let initial: Vec<Particle> = (0..PARTICLES).map(scattered).collect();
    let mut particles = UnifiedBuffer::<Particle>::new(&ctx, PARTICLES)?;
    particles.as_mut_slice()?.copy_from_slice(&initial);

    // Load the PTX and check the kernel's signature now, not in the timed part.
    particles_step.check(&KERNELS, &ctx)?;
    let gpu_start = Instant::now();
    particles.prefetch_to_device(&stream)?;
    let config = LaunchConfig {
        grid_dim: ((PARTICLES as u32).div_ceil(BLOCK), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    // Type-checked: `(DeviceSliceMut<Particle>, f32, u32)`.
    particles_step.launch(&KERNELS, &stream, config, (&mut particles, DT, STEPS))?;
    particles.prefetch_to_host(&stream)?;
    // Waits for the prefetch, the kernel and the prefetch back.
    let gpu = particles.as_slice()?;
    let gpu_ms = gpu_start.elapsed().as_secs_f64() * 1e3;

    let cpu_start = Instant::now();
    let cpu = simulate_on_cpu(&initial);
    let cpu_ms = cpu_start.elapsed().as_secs_f64() * 1e3;

    println!(
        "{PARTICLES} particles ({} bytes each), {STEPS} steps of {DT} s",
        size_of::<Particle>()
    );
    println!(
        "GPU (prefetch, kernel, prefetch back): {gpu_ms:.1} ms; CPU (all cores): {cpu_ms:.1} ms"
    );

    let mismatches: Vec<usize> = (0..PARTICLES)
        .filter(|&i| bits(&gpu[i]) != bits(&cpu[i]))
        .collect();
    if let Some(&i) = mismatches.first() {
        println!("first difference, particle {i}:");
        println!("  start {:?}", initial[i]);
        println!("  GPU   {:?}", gpu[i]);
        println!("  CPU   {:?}", cpu[i]);
    }
    let rising = gpu.iter().filter(|p| p.vel[1] > 0.0).count();
    let moved = (0..PARTICLES)
        .filter(|&i| gpu[i].pos != initial[i].pos)
        .count();
    println!(
        "after {STEPS} steps: {rising} particles are rising (they bounced), {moved} have moved"
    );

    let mut checks = Checks::new("particles");
    checks.check(
        mismatches.is_empty(),
        format_args!(
            "GPU and CPU agree bit for bit on all {PARTICLES} particles ({} differ)",
            mismatches.len()
        ),
    );
    checks.check(
        moved == PARTICLES,
        format_args!("the kernel moved every particle ({moved} of {PARTICLES})"),
    );
    let below = gpu.iter().filter(|p| p.pos[1] < FLOOR).count();
    checks.check(
        below == 0,
        format_args!("no particle is below the floor ({below})"),
    );
    checks.check(
        rising > 0,
        format_args!("some particles bounced off the floor ({rising} rising)"),
    );
    checks.finish();
    Ok(())
}
