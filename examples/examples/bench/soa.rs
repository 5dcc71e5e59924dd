//! The structure-of-arrays rows: a kernel that reads 2 of 8 fields
//! (`particles-shared`'s kinetic energy) over a `SoaBuffer` against the same
//! kernel over an array of structs; and the transpositions of `SoaBuffer`
//! (an array of structs into its fields' arrays, and back, on the GPU)
//! against `cuMemcpyDtoDAsync` of the same bytes, which reads and writes
//! each byte once as a transposition must. GPU time on the bench's stream.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::soa::{DeviceSoA, SoaBuffer};
use cuda_mem::{CudaContext, Device, DeviceBuffer, DeviceSoA, LaunchConfig, Module};
use particles_shared::soa::{kinetic_aos, kinetic_soa, Body, BodySoA};

use crate::harness::Bench;
use crate::staged::size_name;

/// Seven fields of whole words (48 bytes): the word kernels.
#[derive(Clone, Copy, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Particle {
    pos: [f32; 3],
    vel: [f32; 3],
    mass: f32,
    charge: f32,
    id: u64,
    kind: u32,
    age: f32,
}

/// Fields of 1, 3, 2, 2 and 4 bytes (12 bytes): the byte kernels.
#[derive(Clone, Copy, DeviceCopy, DeviceSoA)]
#[repr(C)]
struct Pixel {
    alpha: u8,
    rgb: [u8; 3],
    depth: u16,
    mask: u16,
    label: u32,
}

/// Both transpositions of `bytes` bytes of `T`s against a copy of them.
fn rows_of<T: DeviceSoA + 'static>(
    b: &mut Bench,
    ctx: &Arc<CudaContext>,
    what: &str,
    bytes: usize,
) {
    let n = bytes / size_of::<T>();
    let bytes = n * size_of::<T>();
    let mut aos = DeviceBuffer::<u8>::new(ctx, bytes).unwrap();
    aos.memset(0x5a).unwrap();
    let mut aos = aos.cast_mut::<T>().unwrap();
    let mut soa = SoaBuffer::<T, Device>::new(ctx, n).unwrap();
    let copy = DeviceBuffer::<u8>::new(ctx, bytes).unwrap();
    let (from, to) = (aos.as_device_ptr().addr(), copy.as_device_ptr().addr());
    let s = b.stream.clone();
    let raw = || {
        // SAFETY: two live allocations of `bytes` bytes each; nothing else
        // touches them meanwhile.
        unsafe { sys::cuMemcpyDtoDAsync_v2(to, from, bytes, s.cu_stream()) }
            .result()
            .unwrap()
    };
    let gbps = |ms: f64| bytes as f64 / ms / 1e6;
    let (ours, copied) = b.gpu_pair_ms(|| soa.copy_from_aos_async(&aos, &s).unwrap(), raw);
    let size = size_name(bytes);
    b.push(
        "soa",
        format!("AoS to SoA {size}, {what}"),
        "GB/s",
        gbps(ours),
        gbps(copied),
        "cuMemcpyDtoDAsync of the bytes",
        true,
        Some(bytes),
    );
    let (ours, copied) = b.gpu_pair_ms(|| soa.copy_to_aos_async(&mut aos, &s).unwrap(), raw);
    b.push(
        "soa",
        format!("SoA to AoS {size}, {what}"),
        "GB/s",
        gbps(ours),
        gbps(copied),
        "cuMemcpyDtoDAsync of the bytes",
        true,
        Some(bytes),
    );
}

/// The kernels of `examples/particles-shared`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// The kinetic energy of `n` 48-byte bodies (velocity and mass, 2 of 8
/// fields) from a structure of arrays against the same from an array of
/// structs.
fn two_of_eight(b: &mut Bench, ctx: &Arc<CudaContext>, n: usize) {
    let body = Body {
        pos: [1.0; 3],
        vel: [0.5, -0.25, 2.0],
        mass: 1.5,
        charge: 0.0,
        radius: 0.1,
        temperature: 300.0,
        id: 0,
        flags: 0,
    };
    let mut aos = DeviceBuffer::<Body>::new(ctx, n).unwrap();
    aos.fill(body).unwrap();
    let mut soa = BodySoA::new(ctx, n).unwrap();
    soa.fill(body).unwrap();
    let mut energy = DeviceBuffer::<f32>::new(ctx, n).unwrap();
    let mut energy_aos = DeviceBuffer::<f32>::new(ctx, n).unwrap();
    let s = b.stream.clone();
    let config = LaunchConfig::for_num_elems(n as u32);
    let (ours, raw) = b.gpu_pair_ms(
        || {
            kinetic_soa
                .launch(&KERNELS, &s, config, (&soa, &mut energy))
                .unwrap()
        },
        || {
            kinetic_aos
                .launch(&KERNELS, &s, config, (&aos, &mut energy_aos))
                .unwrap()
        },
    );
    b.push(
        "soa",
        format!("kernel reading 2 of 8 fields, {n} 48-byte structs, structure of arrays"),
        "us",
        ours * 1e3,
        raw * 1e3,
        "the same kernel over an array of structs",
        false,
        Some(n),
    );
}

/// The rows: the 2-of-8-fields kernel over 2^24 bodies; the transpositions
/// of a 48-byte struct of 7 word fields at 64 MiB and 1 GiB and of a
/// 12-byte struct of byte fields at 64 MiB.
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>) {
    two_of_eight(b, ctx, 1 << 24);
    rows_of::<Particle>(b, ctx, "48-byte struct, 7 fields", 64 << 20);
    rows_of::<Particle>(b, ctx, "48-byte struct, 7 fields", 1 << 30);
    rows_of::<Pixel>(b, ctx, "12-byte struct of 1- to 4-byte fields", 64 << 20);
    rows_of::<Pixel>(b, ctx, "12-byte struct of 1- to 4-byte fields", 1 << 30);
}
