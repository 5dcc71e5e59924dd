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
//! Modes (each `ours` mode has a `-raw` twin, and `pool`, `fill-memset`,
//! `fill-kernel`, `launch` and `graph` a `-stream` one, the same calls on a
//! [`cuda_mem::Stream`]): `pool` (a 1 MiB `PoolBuffer`
//! allocated and freed on a stream), `fill-memset` (a 4 KiB `u32` fill, which
//! is one `cuMemsetD32Async`), `fill-kernel` (a 4 KiB fill of 16-byte
//! elements: cuda-mem's fill kernel), `launch` (a typed `#[kernel]` launch
//! with a buffer and an `f32`), `launch2` (one with two buffers,
//! `kinetic_aos`), `graph` (a launch of a `Graph` that holds
//! ten 16 KiB buffers, five fills and five copies, against `cuGraphLaunch`
//! of the same operations captured with raw calls), `reduce` (`algo::reduce_into`, the sum of
//! 1024 `f32`s into a one-element buffer: one launch of the shipped
//! `cuda_mem_reduce_sum_f32`, against `cuLaunchKernel` of the same kernel). With a real driver and GPU the program runs
//! the same loops (the benchmark's `small` rows time them).

use std::hint::black_box;
use std::process::ExitCode;

use cuda_mem::cudarc::driver::{result, sys};
use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, Graph, LaunchConfig, PoolBuffer};
use cuda_mem_examples::raw::{self, FillPattern};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("particles-shared");

const MODES: [&str; 19] = [
    "pool",
    "pool-raw",
    "pool-stream",
    "fill-memset",
    "fill-memset-raw",
    "fill-memset-stream",
    "fill-kernel",
    "fill-kernel-raw",
    "fill-kernel-stream",
    "launch",
    "launch-raw",
    "launch-stream",
    "launch2",
    "launch2-raw",
    "graph",
    "graph-raw",
    "graph-stream",
    "reduce",
    "reduce-raw",
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
    use particles_shared::soa::{kinetic_aos, Body};
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
    let kinetic = typed.load_function(kinetic_aos::NAME)?;
    let bodies = DeviceBuffer::<Body>::new(&ctx, 1024)?;
    let mut energies = DeviceBuffer::<f32>::new(&ctx, 1024)?;
    kinetic_aos.launch(&KERNELS, &s, config, (&bodies, &mut energies))?;
    let (bodies_addr, energies_addr) = (
        bodies.as_device_ptr().addr(),
        energies.as_device_ptr().addr(),
    );
    let pattern = FillPattern::repeating(&value);
    // The reduction rows: the sum of 1024 floats, one tile of the kernel.
    let mut sum = DeviceBuffer::<f32>::zeroed(&ctx, 1)?;
    let reduce_state = DeviceBuffer::<u8>::zeroed(&ctx, 32)?;
    cuda_mem::algo::reduce_into(&floats, cuda_mem::device::ops::Sum, &mut sum, &s)?;
    let reductions = ctx.load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(
        cuda_mem::algo::kernel_ptx("cuda_mem_reduce_sum_f32").ok_or("no reduce kernel")?,
    ))?;
    let reduce_sum = reductions.load_function("cuda_mem_reduce_sum_f32")?;
    let (sum_addr, reduce_state_addr) = (
        sum.as_device_ptr().addr(),
        reduce_state.as_device_ptr().addr(),
    );
    let (words_addr, structs_addr) = (words.as_device_ptr().addr(), structs.as_device_ptr().addr());
    let floats_addr = floats.as_device_ptr().addr();
    // The graph rows: five fills and five copies of 16 KiB buffers.
    let mut held: Vec<DeviceBuffer<u32>> = (0..10)
        .map(|_| DeviceBuffer::<u32>::zeroed(&ctx, 4096))
        .collect::<Result<_, _>>()?;
    let raw_exec = raw_graph(&s, &held)?;
    let [a0, a1, a2, a3, a4, c0, c1, c2, c3, c4] = &mut held[..] else {
        unreachable!("ten buffers")
    };
    let mut graph = Graph::capture(
        &s,
        (a0, a1, a2, a3, a4, c0, c1, c2, c3, c4),
        |s, (a0, a1, a2, a3, a4, c0, c1, c2, c3, c4)| {
            for (i, (mut a, mut c)) in [(a0, c0), (a1, c1), (a2, c2), (a3, c3), (a4, c4)]
                .into_iter()
                .enumerate()
            {
                a.fill_async(0x0102_0304 + i as u32, s)?;
                c.copy_from_async(&a, s)?;
            }
            Ok(())
        },
    )?;
    graph.launch(&s)?;
    s.synchronize()?;
    // The `-stream` modes: the same calls on a `cuda_mem::Stream`, which
    // skip the capture query (each buffer's first use there waits for `s`;
    // the launch's gets a buffer of its own, which no kernel on `s` has
    // claimed). Made for those modes only: the others measure a program
    // without one.
    let ss = match mode.ends_with("-stream") {
        true => Some(cuda_mem::Stream::new(&ctx)?),
        false => None,
    };
    let ss = ss.as_ref();
    let mut floats_ss = DeviceBuffer::<f32>::zeroed(&ctx, 1024)?;
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
            // SAFETY: the fill kernel, over the live 4 KiB buffer of
            // 16-byte elements, on the stream that filled it.
            "fill-kernel-raw" => unsafe {
                raw::fill_small(
                    fill_small.cu_function(),
                    s.cu_stream(),
                    black_box(structs_addr),
                    4096,
                    16,
                    &pattern,
                )?
            },
            "launch" => scale_f32.launch(&KERNELS, &s, config, (&mut floats, black_box(1.0)))?,
            // SAFETY: `scale_f32` over the live 1024-float buffer, on the
            // typed launches' stream.
            "launch-raw" => unsafe {
                raw::slice_and_scalar(
                    scale.cu_function(),
                    s.cu_stream(),
                    config,
                    black_box(floats_addr),
                    1024,
                    black_box(1.0),
                )?
            },
            "launch2" => kinetic_aos.launch(&KERNELS, &s, config, (&bodies, &mut energies))?,
            // SAFETY: `kinetic_aos` over the live 1024-body and 1024-float
            // buffers, on the typed launches' stream.
            "launch2-raw" => unsafe {
                raw::two_slices(
                    kinetic.cu_function(),
                    s.cu_stream(),
                    config,
                    black_box(bodies_addr),
                    black_box(energies_addr),
                    1024,
                )?
            },
            "reduce" => {
                cuda_mem::algo::reduce_into(&floats, cuda_mem::device::ops::Sum, &mut sum, &s)?
            }
            // SAFETY: the shipped sum of `f32`s over the live 1024 floats
            // (one tile), its zeroed 32-byte state and one-float output,
            // which only this mode uses, on the stream that zeroed them.
            "reduce-raw" => unsafe {
                raw::reduce(
                    reduce_sum.cu_function(),
                    s.cu_stream(),
                    black_box(floats_addr),
                    1024,
                    (reduce_state_addr, sum_addr),
                )?
            },
            "graph" => graph.launch(&s)?,
            "pool-stream" => PoolBuffer::<u8>::new(black_box(1 << 20), ss.ok_or("no Stream")?)?
                .free_on_stream(ss.ok_or("no Stream")?)?,
            "fill-memset-stream" => {
                words.fill_async(black_box(0x0102_0304), ss.ok_or("no Stream")?)?
            }
            "fill-kernel-stream" => structs.fill_async(black_box(value), ss.ok_or("no Stream")?)?,
            "launch-stream" => scale_f32.launch(
                &KERNELS,
                ss.ok_or("no Stream")?,
                config,
                (&mut floats_ss, black_box(1.0)),
            )?,
            "graph-stream" => graph.launch(ss.ok_or("no Stream")?)?,
            // SAFETY: the executable of `raw_graph`, over buffers that live
            // until the end of `run`.
            "graph-raw" => unsafe { sys::cuGraphLaunch(raw_exec, s.cu_stream()).result()? },
            _ => unreachable!("checked in main"),
        }
    }
    s.synchronize()?;
    if let Some(ss) = ss {
        ss.synchronize()?;
    }
    Ok(())
}

/// The graph's operations captured with raw driver calls on `stream`: a
/// fill of each of the first five buffers and a copy of it into the next
/// five. Its executable is never destroyed (the program ends).
fn raw_graph(
    stream: &cuda_mem::CudaStream,
    buffers: &[DeviceBuffer<u32>],
) -> Result<sys::CUgraphExec, Box<dyn std::error::Error>> {
    let addrs: Vec<u64> = buffers.iter().map(|b| b.as_device_ptr().addr()).collect();
    let s = stream.cu_stream();
    let (mut graph, mut exec) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: live buffers of 4096 words each, used by nothing else while
    // the graph is launched (the program's other modes never run with this
    // one); the capture ends before the stream is used again.
    unsafe {
        sys::cuStreamBeginCapture_v2(s, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .result()?;
        for i in 0..5 {
            sys::cuMemsetD32Async(addrs[i], 0x0102_0304 + i as u32, 4096, s).result()?;
            sys::cuMemcpyAsync(addrs[i + 5], addrs[i], 4096 * 4, s).result()?;
        }
        sys::cuStreamEndCapture(s, &mut graph).result()?;
        sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0).result()?;
    }
    Ok(exec)
}
