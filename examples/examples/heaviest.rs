//! Heaviest: the first index of the heaviest of 2^22 + 7 particles (a
//! derived 28-byte struct), two ways; `cuda_mem::algo` on a field; and the
//! particles sorted by that field.
//!
//!     cargo run --release --example heaviest
//!
//! - A safe Rust kernel, `heaviest_particle`
//!   (`examples/particles-shared/src/heaviest.rs`), runs the device std's
//!   device-wide block `reduce_slice` on the user's own type (`Heaviest`:
//!   a mass and an index) with the user's own operator (`HeavierFirst`),
//!   and folds the blocks' results with an atomic maximum.
//! - `cuda_mem::algo::max_index` does the same over the masses alone (an
//!   `f32` buffer), and `cuda_mem::algo::sum` and an inclusive scan give
//!   the total and running masses.
//! - `cuda_mem::algo::sort_pairs` sorts the particles (the derived struct
//!   as the values) by mass, heaviest first, stably.
//!
//! Several particles share the largest mass (the masses are drawn from a
//! small set), so "the first" matters. Every result is checked against the
//! CPU: the indices and the maximum exactly, the float sums within the
//! bound of any summation order. Exits with status 1 if a check fails.
#![forbid(unsafe_code)]

use cuda_mem::device::ops::Sum;
use cuda_mem::prelude::*;
use std::error::Error;

use cuda_mem::{algo, DeviceBuffer, LaunchConfig, Module};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::heaviest::{heaviest_particle, index_of, BLOCK};
use particles_shared::Particle;

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Number of particles.
const N: usize = (1 << 22) + 7;

/// Particle `i`: a position and velocity, and a mass from 64 values.
fn particle(i: usize) -> Particle {
    let u = |k: u64| unit_f32(i as u64 * 8 + k);
    Particle {
        pos: [u(0), u(1), u(2)],
        vel: [u(3) - 0.5, u(4) - 0.5, u(5) - 0.5],
        mass: 0.25 + (u(6) * 64.0).floor() / 8.0,
    }
}

/// Whether `got` is within the error bound of any order of summing `terms`
/// in `f32` of their exact sum.
fn close(got: f32, terms: &[f32]) -> bool {
    let exact: f64 = terms.iter().map(|&x| f64::from(x)).sum();
    let bound = terms.len() as f64 * f64::from(f32::EPSILON) * exact.abs();
    (f64::from(got) - exact).abs() <= bound
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("heaviest");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;
    heaviest_particle.check(&KERNELS, &ctx)?;
    let mut checks = Checks::new("heaviest");

    let host: Vec<Particle> = (0..N).map(particle).collect();
    let masses: Vec<f32> = host.iter().map(|p| p.mass).collect();
    let top = masses.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let first = masses.iter().position(|&m| m == top).expect("particles");
    let ties = masses.iter().filter(|&&m| m == top).count();
    println!("{N} particles; the largest mass {top} kg, {ties} times, first at {first}");

    // The kernel: the device std's blocks on the user's type.
    let particles = DeviceBuffer::from_slice(&ctx, &host)?;
    let mut best = DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
    let sms = ctx.attribute(
        cuda_mem::cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
    )? as u32;
    let config = LaunchConfig {
        grid_dim: (sms * 4, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    heaviest_particle.launch(&KERNELS, &stream, config, (&particles, &mut best))?;
    let found = index_of(best.to_vec()?[0]) as usize;
    checks.check(
        found == first,
        format_args!("heaviest_particle (reduce_slice, HeavierFirst): index {found}, want {first}"),
    );

    // The same over the masses alone, with cuda_mem::algo.
    let mass = DeviceBuffer::from_slice(&ctx, &masses)?;
    let arg = algo::max_index(&mass)?;
    checks.check(
        arg == Some((first, top)),
        format_args!("algo::max_index: {arg:?}, want {:?}", Some((first, top))),
    );
    let total = algo::sum(&mass)?;
    checks.check(close(total, &masses), format_args!("algo::sum: {total} kg"));
    let mut running = DeviceBuffer::<f32>::zeroed(&ctx, N)?;
    algo::inclusive_scan(&mass, &mut running, Sum, &stream)?;
    let running = running.to_vec()?;
    // The masses are positive: the bound of element `i` is (i + 1)·u·Σ.
    let mut exact = 0f64;
    let mut wrong = 0;
    for (i, (&got, &m)) in running.iter().zip(&masses).enumerate() {
        exact += f64::from(m);
        let bound = (i + 1) as f64 * f64::from(f32::EPSILON) * exact;
        wrong += usize::from((f64::from(got) - exact).abs() > bound);
    }
    checks.check(
        wrong == 0,
        format_args!("algo::inclusive_scan: {wrong} of {N} running masses outside the bound"),
    );

    // The particles sorted by mass, heaviest first: the masses as keys,
    // the derived structs as values (stable: equal masses keep their order).
    let mut keys = DeviceBuffer::from_slice(&ctx, &masses)?;
    let mut sorted = DeviceBuffer::from_slice(&ctx, &host)?;
    algo::sort_pairs(&mut keys, &mut sorted, algo::SortOrder::Descending, &stream)?;
    let mut want: Vec<(f32, Particle)> = masses.iter().copied().zip(host.iter().copied()).collect();
    want.sort_by(|a, b| b.0.total_cmp(&a.0));
    let got = sorted.to_vec()?;
    let misplaced = got.iter().zip(&want).filter(|(g, w)| **g != w.1).count();
    checks.check(
        misplaced == 0 && got[0] == host[first],
        format_args!(
            "algo::sort_pairs (Particle by mass, descending): {misplaced} of {N} out of place"
        ),
    );
    checks.finish();
    Ok(())
}
