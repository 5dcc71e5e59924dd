//! Particles as a structure of arrays: the same 8-field `Body` as an array
//! of structs (`DeviceBuffer<Body>`) and as a structure of arrays
//! (`BodySoA`, from `#[derive(DeviceSoA)]`), the same update in both, and a
//! kernel that reads 2 of the 8 fields (the kinetic energy) timed in each.
//!
//!     cargo run --release --example particles_soa
//!
//! - `Body` and the kernels live in `examples/particles-shared` (`soa.rs`):
//!   `advance_aos` / `advance_soa` run the particle update (`step`, exact
//!   on the GPU and the CPU alike: see `particles-shared`'s docs),
//!   `kinetic_aos` / `kinetic_soa` read velocity and mass.
//! - `BodySoA::from_slice` transposes on the GPU; `fields()` gives each
//!   field's array as a view, which a kernel takes as a `DeviceSlice`, and
//!   the whole structure goes to a kernel as a `BodySlice` /
//!   `BodySliceMut` (typed launches, no `unsafe`).
//!
//! Checks: both layouts give the same bodies bit for bit, and the CPU's;
//! both give the same energies bit for bit; the structure of arrays' energy
//! kernel is faster. Exits with status 1 if a check fails.
#![forbid(unsafe_code)]

use std::error::Error;

use cuda_mem::prelude::*;
use cuda_mem::{CudaStream, DeviceBuffer, LaunchConfig, Module};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::soa::{
    advance, advance_aos, advance_soa, kinetic, kinetic_aos, kinetic_soa, Body, BodySoA,
};
use particles_shared::DT;

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Bodies: not a multiple of the block size.
const BODIES: usize = 4_000_037;
/// Steps of the update.
const STEPS: u32 = 64;
/// Timed runs of each energy kernel (the median is printed).
const RUNS: usize = 21;

/// Body `i`: somewhere above the floor, moving, of varied mass.
fn body(i: usize) -> Body {
    let u = |k: u64| unit_f32(i as u64 * 16 + k);
    Body {
        pos: [u(0) * 20.0 - 10.0, u(1) * 10.0, u(2) * 20.0 - 10.0],
        vel: [u(3) * 2.0 - 1.0, u(4) * 4.0 - 2.0, u(5) * 2.0 - 1.0],
        mass: 0.5 + u(6) * 1.5,
        charge: u(7) - 0.5,
        radius: 0.01 + u(8) * 0.1,
        temperature: 250.0 + u(9) * 100.0,
        id: i as u32,
        flags: (i % 7) as u32,
    }
}

/// The bodies' bytes, for an exact comparison.
fn same(a: &[Body], b: &[Body]) -> bool {
    cuda_mem::bytes_of_slice(a) == cuda_mem::bytes_of_slice(b)
}

/// Median GPU microseconds of `launch` on `stream`.
fn median_us(
    stream: &std::sync::Arc<CudaStream>,
    mut launch: impl FnMut(),
) -> Result<f64, Box<dyn Error>> {
    let ctx = stream.context();
    let timing = Some(cuda_mem::cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let (start, stop) = (ctx.new_event(timing)?, ctx.new_event(timing)?);
    launch(); // warm-up
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        start.record(stream)?;
        launch();
        stop.record(stream)?;
        stop.synchronize()?;
        times.push(start.elapsed_ms(&stop)? as f64 * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[RUNS / 2])
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("particles_soa");
    println!("device: {}", ctx.name()?);
    let stream = ctx.new_stream()?;
    let config = LaunchConfig::for_num_elems(BODIES as u32);
    let initial: Vec<Body> = (0..BODIES).map(body).collect();

    // The same bodies in both layouts; the structure of arrays is
    // transposed on the GPU.
    let mut aos = DeviceBuffer::from_slice(&ctx, &initial)?;
    let mut soa = BodySoA::from_slice(&ctx, &initial)?;
    let mut checks = Checks::new("particles_soa");
    checks.check(
        same(&soa.to_vec()?, &initial),
        format_args!(
            "{BODIES} bodies through BodySoA (transposed on the GPU both ways) come back unchanged"
        ),
    );

    // The update in both layouts, and on the CPU.
    advance_aos.launch(&KERNELS, &stream, config, (&mut aos, DT, STEPS))?;
    advance_soa.launch(&KERNELS, &stream, config, (&mut soa, DT, STEPS))?;
    let (from_aos, from_soa) = (aos.to_vec()?, soa.to_vec()?);
    let cpu: Vec<Body> = initial
        .iter()
        .map(|b| {
            let mut b = *b;
            for _ in 0..STEPS {
                advance(&mut b, DT);
            }
            b
        })
        .collect();
    checks.check(
        same(&from_aos, &from_soa),
        format_args!(
            "{STEPS} updates: the array of structs and the structure of arrays agree bit for bit"
        ),
    );
    checks.check(
        same(&from_soa, &cpu),
        "and both agree with the CPU bit for bit",
    );

    // The energies, 2 of 8 fields, in both layouts, timed.
    let mut e_aos = DeviceBuffer::<f32>::new(&ctx, BODIES)?;
    let mut e_soa = DeviceBuffer::<f32>::new(&ctx, BODIES)?;
    e_aos.fill(f32::NAN)?;
    e_soa.fill(-1.0)?;
    let aos_us = median_us(&stream, || {
        kinetic_aos
            .launch(&KERNELS, &stream, config, (&aos, &mut e_aos))
            .unwrap()
    })?;
    let soa_us = median_us(&stream, || {
        kinetic_soa
            .launch(&KERNELS, &stream, config, (&soa, &mut e_soa))
            .unwrap()
    })?;
    let (ea, es) = (e_aos.to_vec()?, e_soa.to_vec()?);
    let cpu_e: Vec<f32> = cpu.iter().map(|b| kinetic(b.vel, b.mass)).collect();
    checks.check(
        ea.iter()
            .map(|x| x.to_bits())
            .eq(es.iter().map(|x| x.to_bits())),
        "the energies of both layouts agree bit for bit",
    );
    let close = es
        .iter()
        .zip(&cpu_e)
        .all(|(g, c)| (g - c).abs() <= 1e-6 * c.abs().max(1.0));
    checks.check(
        close,
        "and with the CPU's within 1e-6 (the GPU may fuse a multiply-add)",
    );
    // The field view as a plain slice argument: the masses' total agrees.
    let masses = soa.fields().mass.to_vec()?;
    checks.check(
        masses
            .iter()
            .zip(&cpu)
            .all(|(m, b)| m.to_bits() == b.mass.to_bits()),
        "soa.fields().mass is the bodies' masses",
    );
    let read = |bytes_per_body: usize, us: f64| (bytes_per_body * BODIES) as f64 / us / 1e3;
    println!(
        "kinetic energy of {BODIES} bodies (2 of 8 fields): array of structs {aos_us:.1} µs \
         ({:.0} GB/s of bodies read), structure of arrays {soa_us:.1} µs ({:.0} GB/s of fields read): \
         {:.2}x faster",
        read(48, aos_us),
        read(16, soa_us),
        aos_us / soa_us
    );
    checks.check(
        soa_us < aos_us,
        "the structure of arrays reads the 2 fields faster",
    );
    checks.finish();
    Ok(())
}
