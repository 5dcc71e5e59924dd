//! The host work cuda-mem adds around a driver call, counted without a GPU.
//!
//! `examples/host-cost/run` builds a stand-in `libcuda.so` whose calls return
//! at once (`examples/host-cost/fake_libcuda.c`), runs this program under it
//! with `valgrind --tool=callgrind` at two loop counts, and prints the
//! instructions per operation of each pair of modes: cuda-mem's call and the
//! raw driver call(s) it makes, in the same program, through the same stand-in.
//! The difference is what cuda-mem itself executes per call (checks,
//! ordering, bookkeeping); the driver's own cost is not in either figure.
//! Instruction counts do not vary from run to run, so a change to the launch
//! path can be judged on any machine.
//!
//! ```sh
//! bash examples/host-cost/run          # every pair
//! cargo run --release --example host_cost -- pool 1000   # one mode, any driver
//! ```
//!
//! Modes (each `ours` mode has a `-raw` twin): `pool` (a 1 MiB `PoolBuffer`
//! allocated and freed on a stream), `fill-memset` (a 4 KiB `u32` fill, which
//! is one `cuMemsetD32Async`), `fill-kernel` (a 4 KiB fill of 16-byte
//! elements: cuda-mem's fill kernel), `launch` (a typed `#[kernel]` launch
//! with a buffer and an `f32`). With a real driver and GPU the program runs
//! the same loops (the benchmark's `small` rows time them).

use std::ffi::c_void;
use std::hint::black_box;
use std::process::ExitCode;

use cuda_mem::cudarc::driver::{result, sys};
use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, LaunchConfig, PoolBuffer};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("particles-shared");

/// The fill kernel's pattern parameter as `cuda_mem_fill_small` reads it.
#[repr(C, align(16))]
struct Pattern([u32; 72]);

/// `DeviceSliceMut<f32>` as a kernel reads it.
#[repr(C)]
struct RawSlice {
    ptr: u64,
    len: usize,
}

const MODES: [&str; 8] = [
    "pool",
    "pool-raw",
    "fill-memset",
    "fill-memset-raw",
    "fill-kernel",
    "fill-kernel-raw",
    "launch",
    "launch-raw",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, n) = match args.as_slice() {
        [mode, n] if MODES.contains(&mode.as_str()) => match n.parse::<usize>() {
            Ok(n) => (mode.as_str(), n),
            Err(_) => return usage(),
        },
        _ => return usage(),
    };
    match run(mode, n) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("host_cost: {e}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: host_cost MODE COUNT, MODE one of {}",
        MODES.join(", ")
    );
    ExitCode::FAILURE
}

fn run(mode: &str, n: usize) -> Result<(), Box<dyn std::error::Error>> {
    use particles_shared::scale_f32;
    let ctx = cuda_mem::context(0)?;
    let s = ctx.new_stream()?;
    // Every per-context set-up happens here, before the loop: the pool's
    // threshold, the fill kernels, the typed kernel's module.
    PoolBuffer::<u8>::new(1 << 20, &s)?.free_on_stream(&s)?;
    let mut words = DeviceBuffer::<u32>::new(&ctx, 1024)?;
    let mut structs = DeviceBuffer::<[u8; 16]>::new(&ctx, 256)?;
    let mut floats = DeviceBuffer::<f32>::zeroed(&ctx, 1024)?;
    let value: [u8; 16] = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];
    words.fill_async(0x0102_0304, &s)?;
    structs.fill_async(value, &s)?;
    let config = LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    scale_f32.launch(&KERNELS, &s, config, (&mut floats, 1.0))?;
    let fills = ctx.load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(
        cuda_mem::fill_kernels_ptx(),
    ))?;
    let fill_small = fills.load_function("cuda_mem_fill_small")?;
    let typed = ctx.load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(KERNELS.ptx()))?;
    let scale = typed.load_function(scale_f32::NAME)?;
    let pattern = Pattern(std::array::from_fn(|i| {
        u32::from_le_bytes(std::array::from_fn(|j| value[(4 * i + j) % 16]))
    }));
    let (words_addr, structs_addr) = (words.as_device_ptr().addr(), structs.as_device_ptr().addr());
    let floats_addr = floats.as_device_ptr().addr();
    s.synchronize()?;
    for _ in 0..n {
        match mode {
            "pool" => PoolBuffer::<u8>::new(black_box(1 << 20), &s)?.free_on_stream(&s)?,
            // SAFETY: a stream-ordered allocation freed at once on its stream.
            "pool-raw" => unsafe {
                let p = result::malloc_async(s.cu_stream(), black_box(1 << 20))?;
                result::free_async(p, s.cu_stream())?;
            },
            "fill-memset" => words.fill_async(black_box(0x0102_0304), &s)?,
            // SAFETY: the live 4 KiB allocation, on the stream that used it.
            "fill-memset-raw" => unsafe {
                sys::cuMemsetD32Async(black_box(words_addr), 0x0102_0304, 1024, s.cu_stream())
                    .result()?
            },
            "fill-kernel" => structs.fill_async(black_box(value), &s)?,
            "fill-kernel-raw" => {
                let (mut a, mut p, mut w, mut r, mut size) =
                    (black_box(structs_addr), 4096u64, 4096u64, 1u64, 16u32);
                let mut pat = Pattern(pattern.0);
                let params: &mut [*mut c_void] = &mut [
                    (&mut a as *mut u64).cast(),
                    (&mut p as *mut u64).cast(),
                    (&mut w as *mut u64).cast(),
                    (&mut r as *mut u64).cast(),
                    (&mut size as *mut u32).cast(),
                    (&mut pat as *mut Pattern).cast(),
                ];
                // SAFETY: the fill kernel's exact signature, over the live 4 KiB buffer.
                unsafe {
                    result::launch_kernel(
                        fill_small.cu_function(),
                        (1, 1, 1),
                        (256, 1, 1),
                        0,
                        s.cu_stream(),
                        params,
                    )?
                }
            }
            "launch" => scale_f32.launch(&KERNELS, &s, config, (&mut floats, black_box(1.0)))?,
            "launch-raw" => {
                let mut slice = RawSlice {
                    ptr: black_box(floats_addr),
                    len: 1024,
                };
                let mut factor = black_box(1.0f32);
                let params: &mut [*mut c_void] = &mut [
                    (&mut slice as *mut RawSlice).cast(),
                    (&mut factor as *mut f32).cast(),
                ];
                // SAFETY: `scale_f32`'s parameters (the live 1024-float
                // buffer as `{ptr, len}`, a factor), on the typed launches' stream.
                unsafe {
                    result::launch_kernel(
                        scale.cu_function(),
                        config.grid_dim,
                        config.block_dim,
                        0,
                        s.cu_stream(),
                        params,
                    )?
                }
            }
            _ => unreachable!("checked in main"),
        }
    }
    s.synchronize()?;
    Ok(())
}
