//! DeviceVec: collecting a variable number of results per step in one
//! growable device vector whose address never changes.
//!
//!     cargo run --release --example device_vec
//!
//! An emitter releases a different number of particles in every step (from
//! none to tens of thousands). Each step's batch is uploaded into a scratch
//! `DeviceBuffer`, advanced on the GPU by the Rust kernel `particles_step`
//! (`examples/particles-shared`, the same kernel as the `particles`
//! example) for a number of sub-steps that depends on the step, and its
//! results are appended to a `DeviceVec<Particle>` with
//! `extend_from_device`: device to device, no host round trip. A
//! `DeviceVec<u32>` collects the count of each step through the batched
//! `pusher`.
//!
//! The vector grows in place: it maps physical memory after its elements
//! (`cuMemCreate` / `cuMemMap`) instead of reallocating, so its address is
//! the same after every step and no element is ever copied by growth. At
//! the end the example checks every particle bit for bit against the same
//! computation on the CPU (the time step is a power of two, see
//! `particles-shared`), checks that the address never moved, and gives the
//! unused memory back with `shrink_to_fit`. Exits with status 1 if a check
//! fails.
#![forbid(unsafe_code)]

use cuda_mem::prelude::*;
use std::error::Error;
use std::time::Instant;

use cuda_mem::{DeviceBuffer, DeviceVec, LaunchConfig, Module};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::{particles_step, step, Particle, DT};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Emitter steps.
const STEPS: usize = 200;
/// Threads per block of the launches.
const BLOCK: u32 = 256;

/// How many particles step `t` releases: none now and then, else anything
/// up to 60,000 (deterministic, so every run checks the same data).
fn released(t: usize) -> usize {
    let u = unit_f32(t as u64 * 7919 + 1);
    if u < 0.1 {
        0
    } else {
        (unit_f32(t as u64 * 7919 + 2) * 60_000.0) as usize
    }
}

/// Sub-steps of `DT` that step `t`'s batch is advanced by.
fn sub_steps(t: usize) -> u32 {
    1 + (t as u32 * 37) % 64
}

/// Particle `i` of step `t`, at the emitter with a spread of velocities.
fn emitted(t: usize, i: usize) -> Particle {
    let u = |k: u64| unit_f32(((t as u64) << 32 | i as u64) * 8 + k);
    Particle {
        pos: [u(0) - 0.5, 5.0 + u(1), u(2) - 0.5],
        vel: [u(3) * 4.0 - 2.0, u(4) * 6.0, u(5) * 4.0 - 2.0],
        mass: 0.5 + u(6),
    }
}

/// The bits of every field, for an exact comparison.
fn bits(p: &Particle) -> [u32; 7] {
    let [x, y, z] = p.pos;
    let [u, v, w] = p.vel;
    [x, y, z, u, v, w, p.mass].map(f32::to_bits)
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("device_vec");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;
    particles_step.check(&KERNELS, &ctx)?;

    let mut results = DeviceVec::<Particle>::new(&ctx)?;
    let mut counts = DeviceVec::<u32>::new(&ctx)?;
    let address = results.as_device_ptr();
    println!(
        "reserved {} particles of address space ({:.1} GiB), granularity {} KiB, nothing mapped",
        results.max_capacity(),
        (results.max_capacity() * size_of::<Particle>()) as f64 / (1u64 << 30) as f64,
        results.granularity() >> 10
    );

    let mut moved_address = 0;
    let mut growths = 0;
    let mut capacity = results.capacity();
    let start = Instant::now();
    let mut pusher_counts = Vec::with_capacity(STEPS);
    for t in 0..STEPS {
        let n = released(t);
        pusher_counts.push(n as u32);
        if n == 0 {
            continue;
        }
        // The step's device work: a variable number of results.
        let batch: Vec<Particle> = (0..n).map(|i| emitted(t, i)).collect();
        let mut scratch = DeviceBuffer::from_slice(&ctx, &batch)?;
        let config = LaunchConfig {
            grid_dim: ((n as u32).div_ceil(BLOCK), 1, 1),
            block_dim: (BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        particles_step.launch(&KERNELS, &stream, config, (&mut scratch, DT, sub_steps(t)))?;
        // Appended on the stream, after the kernel; grows in place if needed.
        results.extend_from_device_async(&scratch, &stream)?;
        if results.capacity() != capacity {
            growths += 1;
            capacity = results.capacity();
        }
        if results.as_device_ptr() != address {
            moved_address += 1;
        }
    }
    {
        let mut pusher = counts.pusher();
        for &n in &pusher_counts {
            pusher.push(n)?;
        }
        pusher.finish()?;
    }
    let gpu = results.to_vec()?;
    let gpu_ms = start.elapsed().as_secs_f64() * 1e3;
    let total = results.len();
    println!(
        "{STEPS} steps released {total} particles ({:.1} MiB) in {gpu_ms:.1} ms; \
         the vector grew {growths} times, to a capacity of {capacity}",
        (total * size_of::<Particle>()) as f64 / (1 << 20) as f64
    );

    // The CPU's version of every step.
    let mut cpu = Vec::with_capacity(total);
    for t in 0..STEPS {
        for i in 0..released(t) {
            let mut p = emitted(t, i);
            for _ in 0..sub_steps(t) {
                step(&mut p, DT);
            }
            cpu.push(p);
        }
    }

    let mut checks = Checks::new("device_vec");
    let wrong = if gpu.len() == cpu.len() {
        (0..cpu.len())
            .filter(|&i| bits(&gpu[i]) != bits(&cpu[i]))
            .count()
    } else {
        cpu.len()
    };
    checks.check(
        gpu.len() == cpu.len(),
        format_args!("{} results collected, {} expected", gpu.len(), cpu.len()),
    );
    checks.check(
        wrong == 0,
        format_args!("GPU and CPU agree bit for bit on every result ({wrong} differ)"),
    );
    checks.check(
        moved_address == 0 && growths > 1,
        format_args!(
            "the address stayed the same through {growths} growths (moved {moved_address} times)"
        ),
    );
    let counted = counts.to_vec()?;
    checks.check(
        counted == pusher_counts,
        format_args!("the {} pushed per-step counts came back", counted.len()),
    );
    let counted_total: usize = counted.iter().map(|&n| n as usize).sum();
    checks.check(
        counted_total == total,
        format_args!("the counts add up to the vector's length ({counted_total})"),
    );

    // Keep the first half; give the rest of the memory back.
    let (free_before, _) = ctx.mem_get_info()?;
    let mapped_before = results.capacity() * size_of::<Particle>();
    results.truncate(total / 2);
    results.shrink_to_fit()?;
    let mapped_after = results.capacity() * size_of::<Particle>();
    let (free_after, _) = ctx.mem_get_info()?;
    println!(
        "shrink_to_fit: mapped {:.1} -> {:.1} MiB, device free memory +{:.1} MiB",
        mapped_before as f64 / (1 << 20) as f64,
        mapped_after as f64 / (1 << 20) as f64,
        free_after.saturating_sub(free_before) as f64 / (1 << 20) as f64
    );
    checks.check(
        mapped_after < mapped_before && free_after > free_before,
        "shrink_to_fit returned memory to the device",
    );
    let kept = results.to_vec()?;
    checks.check(
        kept.iter().zip(&cpu).all(|(a, b)| bits(a) == bits(b)) && kept.len() == total / 2,
        "the kept half is unchanged",
    );
    checks.finish();
    Ok(())
}
