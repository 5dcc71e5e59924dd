//! Quickstart: your own `#[repr(C)]` struct in device memory, filled, memset
//! and copied back.
//!
//!     cargo run --release --example quickstart

use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, DeviceCopy};
use cuda_mem_examples::{gpu_or_exit, Checks};

/// A particle, laid out as in C (`struct { float pos[3]; float mass; unsigned id; }`).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    mass: f32,
    id: u32,
}

fn main() -> Result<(), cuda_mem::Error> {
    let ctx = gpu_or_exit("quickstart");
    println!("device: {}", ctx.name()?);

    // 1 million 20-byte particles: not a power of two, and not a repeating byte
    // pattern, so `fill` runs cuda-mem's Rust fill kernel.
    let n = 1_000_003;
    let mut particles = DeviceBuffer::<Particle>::new(&ctx, n)?;
    let p = Particle {
        pos: [1.0, 2.0, 3.0],
        mass: 0.5,
        id: 42,
    };
    particles.fill(p)?;

    // Views: re-fill the middle third.
    let q = Particle {
        pos: [-1.0, 0.0, 1.0],
        mass: 2.0,
        id: 7,
    };
    particles.slice_mut(n / 3..2 * n / 3)?.fill(q)?;

    let host = particles.to_vec()?;
    let in_middle = |i: usize| (n / 3..2 * n / 3).contains(&i);
    let wrong = host
        .iter()
        .enumerate()
        .filter(|&(i, x)| *x != if in_middle(i) { q } else { p })
        .count();
    println!(
        "fill: {n} particles, first {:?}, middle {:?}, {wrong} wrong",
        host[0],
        host[n / 2]
    );

    // memset sets every byte: 0 is a valid Particle of zeros.
    particles.memset(0)?;
    let zeros = particles
        .to_vec()?
        .iter()
        .filter(|x| x.mass == 0.0 && x.id == 0)
        .count();
    println!("memset(0): {zeros} of {n} particles are zero");

    let mut checks = Checks::new("quickstart");
    checks.check(
        wrong == 0,
        format_args!("fill and a view's fill: every particle right ({wrong} wrong)"),
    );
    checks.check(
        zeros == n,
        format_args!("memset(0): every particle zero ({zeros} of {n})"),
    );
    checks.finish();
    Ok(())
}
