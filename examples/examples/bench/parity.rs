//! The parity rows (`--parity-only`, group `parity`): the kernels of
//! `examples/parity-kernels` (safe Rust, typed launches) against their CUDA
//! C++ twins (`cuda/parity.cu`, built here with nvcc), on the same buffers
//! with the same launch shapes, and CUB where CUB has the algorithm.
//!
//! For each kernel: both outputs are poisoned, computed and checked against
//! the CPU element by element (a wrong output stops the bench); then each
//! side is timed with CUDA events, the median of 20 runs after 3 warm-ups,
//! in two alternating rounds. A row gives the Rust time (`ours`), the C++
//! time (`raw`) and C++ time / Rust time; the printed table adds GB/s and
//! each side's registers and local memory (the loaded functions'
//! attributes).

use std::sync::Arc;

use cuda_mem::cudarc::driver::{result, sys, CudaFunction};
use cuda_mem::prelude::*;
use cuda_mem::{CudaContext, DeviceBuffer, LaunchConfig, PitchedBuffer};
use parity_kernels::{Particle, BLOCK, TILE};

use crate::cxx::Cxx;
use crate::harness::{median, Bench};
use crate::report::Detail;

/// The Rust kernels, compiled to PTX by `examples/build.rs`.
static PARITY: cuda_mem::Module = cuda_mem::include_kernels!("parity-kernels");

/// Timed runs per side and round, after the warm-ups.
const RUNS: usize = 20;
const WARM_UPS: usize = 3;
const ROUNDS: usize = 2;

/// A row of the printed table, kept for the summary.
struct Measured {
    name: &'static str,
    rust_us: f64,
    cxx_us: f64,
    cub_us: Option<f64>,
    bytes: usize,
    rust_regs: (i32, i32),
    cxx_regs: (i32, i32),
}

/// A small deterministic generator (SplitMix64) seeded per run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    }
}

/// Median GPU milliseconds of `op` over [`RUNS`] runs, each after `prep`
/// (which is not timed), after [`WARM_UPS`] untimed runs.
fn time_ms(b: &Bench, mut prep: impl FnMut(), mut op: impl FnMut()) -> f64 {
    for _ in 0..WARM_UPS {
        prep();
        op();
    }
    b.stream.synchronize().unwrap();
    median(
        (0..RUNS)
            .map(|_| {
                prep();
                b.gpu_ms_once(&mut op)
            })
            .collect(),
    )
}

/// `(registers, local bytes)` of a loaded function.
fn attributes(f: &CudaFunction) -> (i32, i32) {
    (f.num_regs().unwrap(), f.local_size_bytes().unwrap())
}

/// Launches a C++ twin with `params` (each a pointer to a parameter value).
///
/// # Safety
/// `params` are the twin's parameters, in order and of its types; the
/// buffers they name are live and used by nothing else until it is done.
unsafe fn launch_cxx(
    f: &CudaFunction,
    b: &Bench,
    config: LaunchConfig,
    params: &mut [*mut std::ffi::c_void],
) {
    // SAFETY: the caller's promise.
    unsafe {
        result::launch_kernel(
            f.cu_function(),
            config.grid_dim,
            config.block_dim,
            config.shared_mem_bytes,
            b.stream.cu_stream(),
            params,
        )
    }
    .unwrap();
}

macro_rules! params {
    ($($value:expr),* $(,)?) => {
        &mut [$((&mut $value as *mut _ as *mut std::ffi::c_void)),*]
    };
}

/// The Rust PTX loaded on its own (the typed launches load it too), for
/// the functions' attributes.
fn rust_function(ctx: &Arc<CudaContext>, name: &str) -> CudaFunction {
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(PARITY.ptx()))
        .unwrap();
    module.load_function(name).unwrap()
}

/// Checks `got` against `want` element by element; panics with the first
/// difference (a bench on wrong results measures nothing).
fn check<T: PartialEq + std::fmt::Debug>(what: &str, side: &str, got: &[T], want: &[T]) {
    assert_eq!(got.len(), want.len(), "{what} ({side}): length");
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what} ({side}): element {i} is {:?}, the CPU says {:?}",
            got[i], want[i]
        );
    }
}

/// Every parity row.
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let cxx = match Cxx::build(ctx) {
        Ok(cxx) => cxx,
        Err(why) => {
            println!("parity: C++ side skipped: {why}");
            return;
        }
    };
    println!("parity: C++ twins built with {} (-O3)", cxx.version);
    let seed = std::env::var("CUDA_MEM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    println!("parity: data seed {seed} (CUDA_MEM_SEED)");
    let mut rng = Rng(seed);
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap() as u32;
    let mut all = Vec::new();
    all.push(saxpy(b, ctx, &cxx, &mut rng));
    all.extend(sums(b, ctx, &cxx, &mut rng, sms));
    all.push(histogram(b, ctx, &cxx, &mut rng, sms));
    all.push(stencil(b, ctx, &cxx, &mut rng));
    all.extend(transposes(b, ctx, &cxx, &mut rng));
    all.push(particles(b, ctx, &cxx, &mut rng));
    all.push(scan(b, ctx, &cxx, &mut rng));
    println!();
    println!(
        "{:<30} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>11} {:>11}",
        "parity kernel",
        "Rust us",
        "C++ us",
        "CUB us",
        "C++/Rust",
        "Rust GB/s",
        "C++ GB/s",
        "regs R/C++",
        "local R/C++"
    );
    for m in &all {
        let gbs = |us: f64| m.bytes as f64 / (us * 1e-6) / 1e9;
        println!(
            "{:<30} {:>10.1} {:>10.1} {:>10} {:>8.3} {:>9.0} {:>9.0} {:>5}/{:<5} {:>5}/{:<5}",
            m.name,
            m.rust_us,
            m.cxx_us,
            m.cub_us.map_or("-".into(), |c| format!("{c:.1}")),
            m.cxx_us / m.rust_us,
            gbs(m.rust_us),
            gbs(m.cxx_us),
            m.rust_regs.0,
            m.cxx_regs.0,
            m.rust_regs.1,
            m.cxx_regs.1,
        );
    }
    let worst = all
        .iter()
        .map(|m| m.cxx_us / m.rust_us)
        .fold(f64::INFINITY, f64::min);
    println!("parity: {} kernels, worst C++/Rust {worst:.3}", all.len());
}

/// Records a measured kernel as bench rows (against C++, and against CUB
/// when there is a CUB figure), with their GB/s, registers and local memory,
/// and returns it.
fn record(b: &mut Bench, m: Measured) -> Measured {
    let gbs = |us: f64| m.bytes as f64 / (us * 1e-6) / 1e9;
    b.push(
        "parity",
        format!("{} (Rust vs C++)", m.name),
        "us",
        m.rust_us,
        m.cxx_us,
        "CUDA C++ twin (nvcc -O3)",
        false,
        None,
    );
    b.rows.last_mut().unwrap().detail = Some(Detail {
        ours_gb_s: gbs(m.rust_us),
        raw_gb_s: gbs(m.cxx_us),
        ours_registers: m.rust_regs.0,
        raw_registers: Some(m.cxx_regs.0),
        ours_local_bytes: m.rust_regs.1,
        raw_local_bytes: Some(m.cxx_regs.1),
    });
    if let Some(cub) = m.cub_us {
        b.push(
            "parity",
            format!("{} (Rust vs CUB)", m.name),
            "us",
            m.rust_us,
            cub,
            "CUB",
            false,
            None,
        );
        b.rows.last_mut().unwrap().detail = Some(Detail {
            ours_gb_s: gbs(m.rust_us),
            raw_gb_s: gbs(cub),
            ours_registers: m.rust_regs.0,
            raw_registers: None,
            ours_local_bytes: m.rust_regs.1,
            raw_local_bytes: None,
        });
    }
    m
}

/// Times `rust`, `cxx` and (if any) `cub` in [`ROUNDS`] alternating rounds,
/// each run after `prep`; medians in microseconds.
fn time_sides(
    b: &Bench,
    mut prep: impl FnMut(),
    mut rust: impl FnMut(),
    mut cxx: impl FnMut(),
    mut cub: Option<&mut dyn FnMut()>,
) -> (f64, f64, Option<f64>) {
    let (mut r, mut c, mut k) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        r.push(time_ms(b, &mut prep, &mut rust));
        c.push(time_ms(b, &mut prep, &mut cxx));
        if let Some(cub) = cub.as_deref_mut() {
            k.push(time_ms(b, &mut prep, cub));
        }
    }
    let us = |v: Vec<f64>| median(v) * 1e3;
    (us(r), us(c), (!k.is_empty()).then(|| us(k)))
}

/// One element per thread in blocks of [`BLOCK`] threads (the shape the
/// one-element kernels declare, `#[kernel(block = [256])]`), for both sides.
fn one_per_thread(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(BLOCK) as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn saxpy(b: &mut Bench, ctx: &Arc<CudaContext>, cxx: &Cxx, rng: &mut Rng) -> Measured {
    use parity_kernels::saxpy;
    let n = 1usize << 28;
    let a = 0.5f32 + rng.f32() * 0.25;
    let x_host: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let y_host: Vec<f32> = (0..n).map(|_| rng.f32()).collect();
    let want: Vec<f32> = (0..n).map(|i| a.mul_add(x_host[i], y_host[i])).collect();
    let x = DeviceBuffer::from_slice(ctx, &x_host).unwrap();
    let mut y = DeviceBuffer::from_slice(ctx, &y_host).unwrap();
    let config = one_per_thread(n);
    let f = cxx.function("saxpy");
    let (s, y_addr, x_addr) = (
        b.stream.clone(),
        y.as_device_ptr().addr(),
        x.as_device_ptr().addr(),
    );
    let cxx_launch = || {
        let (mut py, mut px, mut pn, mut pa) = (y_addr, x_addr, n as i32, a);
        // SAFETY: `saxpy(float*, const float*, int, float)` over two live
        // buffers of `n` floats, on the stream every use of them is on.
        unsafe { launch_cxx(&f, b, config, params![py, px, pn, pa]) };
    };
    y.memset(0xff).unwrap();
    y.copy_from_host(&y_host).unwrap();
    saxpy.launch(&PARITY, &s, config, (&mut y, &x, a)).unwrap();
    check("saxpy", "Rust", &y.to_vec().unwrap(), &want);
    y.memset(0xff).unwrap();
    y.copy_from_host(&y_host).unwrap();
    // cuda-mem orders its own work, not the raw launch: wait for it.
    ctx.synchronize().unwrap();
    cxx_launch();
    b.stream.synchronize().unwrap();
    check("saxpy", "C++", &y.to_vec().unwrap(), &want);
    let (rust_us, cxx_us, _) = time_sides(
        b,
        || {},
        || saxpy.launch(&PARITY, &s, config, (&mut y, &x, a)).unwrap(),
        cxx_launch,
        None,
    );
    record(
        b,
        Measured {
            name: "saxpy f32 2^28",
            rust_us,
            cxx_us,
            cub_us: None,
            bytes: 12 * n,
            rust_regs: attributes(&rust_function(ctx, saxpy::NAME)),
            cxx_regs: attributes(&f),
        },
    )
}

/// The two sums of 2^28 `u32` (scalar and 16-byte loads), and CUB's.
fn sums(
    b: &mut Bench,
    ctx: &Arc<CudaContext>,
    cxx: &Cxx,
    rng: &mut Rng,
    sms: u32,
) -> Vec<Measured> {
    use parity_kernels::{sum_u32, sum_u32_v4};
    let n = 1usize << 28;
    let host: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
    let want = host.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    let input = DeviceBuffer::from_slice(ctx, &host).unwrap();
    let mut total = DeviceBuffer::<u32>::zeroed(ctx, 1).unwrap();
    let s = b.stream.clone();
    let (in_addr, total_addr) = (input.as_device_ptr().addr(), total.as_device_ptr().addr());
    let mut out = Vec::new();
    for (name, rust_name, cxx_name) in [
        ("sum u32 2^28, scalar loads", sum_u32::NAME, "sum_u32"),
        (
            "sum u32 2^28, 16-byte loads",
            sum_u32_v4::NAME,
            "sum_u32_v4",
        ),
    ] {
        // Whole waves, from the Rust kernel's occupancy (the same grid for both).
        let occupancy = if rust_name == sum_u32::NAME {
            sum_u32.occupancy(&PARITY, ctx, BLOCK as u32, 0)
        } else {
            sum_u32_v4.occupancy(&PARITY, ctx, BLOCK as u32, 0)
        }
        .unwrap();
        let config = occupancy.waves(1);
        assert_eq!(config.grid_dim.0, occupancy.blocks_per_sm * sms);
        let f = cxx.function(cxx_name);
        let rust = |total: &mut DeviceBuffer<u32>| {
            if rust_name == sum_u32::NAME {
                sum_u32
                    .launch(&PARITY, &s, config, (&input, total))
                    .unwrap();
            } else {
                sum_u32_v4
                    .launch(&PARITY, &s, config, (&input, total))
                    .unwrap();
            }
        };
        let cxx_launch = || {
            let (mut pi, mut pn, mut pt) = (in_addr, n as i32, total_addr);
            // SAFETY: `sum(const unsigned*, int, unsigned*)` over live
            // buffers on the stream every use of them is on.
            unsafe { launch_cxx(&f, b, config, params![pi, pn, pt]) };
        };
        total.memset(0xff).unwrap();
        total.memset(0).unwrap();
        rust(&mut total);
        check(name, "Rust", &total.to_vec().unwrap(), &[want]);
        total.memset(0xff).unwrap();
        total.memset(0).unwrap();
        ctx.synchronize().unwrap();
        cxx_launch();
        b.stream.synchronize().unwrap();
        check(name, "C++", &total.to_vec().unwrap(), &[want]);
        let total_cell = std::cell::RefCell::new(&mut total);
        let (rust_us, cxx_us, _) = time_sides(
            b,
            || total_cell.borrow_mut().memset_async(0, &s).unwrap(),
            || rust(&mut total_cell.borrow_mut()),
            cxx_launch,
            None,
        );
        out.push((name, rust_name, f, rust_us, cxx_us));
    }
    // CUB's sum of the same data.
    let cub_us = cxx.cub.as_ref().map(|cub| {
        // SAFETY: the size query of `cub.cu`.
        let bytes = unsafe { (cub.sum_temp)(n as i32) };
        let temp = DeviceBuffer::<u8>::zeroed(ctx, bytes.max(1)).unwrap();
        let temp_addr = temp.as_device_ptr().addr();
        let mut run = || {
            // SAFETY: CUB's sum over the live input into the live total,
            // with temporary storage of the size it asked for, on the stream
            // every use of these buffers is on.
            let status = unsafe {
                (cub.sum)(
                    temp_addr as *mut _,
                    bytes,
                    in_addr as *const _,
                    total_addr as *mut _,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "cub::DeviceReduce::Sum");
        };
        total.memset(0xff).unwrap();
        ctx.synchronize().unwrap();
        run();
        b.stream.synchronize().unwrap();
        check("sum u32", "CUB", &total.to_vec().unwrap(), &[want]);
        median((0..ROUNDS).map(|_| time_ms(b, || {}, &mut run)).collect()) * 1e3
    });
    out.into_iter()
        .map(|(name, rust_name, f, rust_us, cxx_us)| {
            record(
                b,
                Measured {
                    name,
                    rust_us,
                    cxx_us,
                    cub_us: (rust_name == sum_u32_v4::NAME).then_some(cub_us).flatten(),
                    bytes: 4 * n,
                    rust_regs: attributes(&rust_function(ctx, rust_name)),
                    cxx_regs: attributes(&f),
                },
            )
        })
        .collect()
}

fn histogram(
    b: &mut Bench,
    ctx: &Arc<CudaContext>,
    cxx: &Cxx,
    rng: &mut Rng,
    sms: u32,
) -> Measured {
    use parity_kernels::histogram;
    let n = 1usize << 28;
    let mut host = vec![0u8; n];
    for chunk in host.chunks_mut(8) {
        let bytes = rng.next().to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    let mut want = vec![0u32; 256];
    for &x in &host {
        want[x as usize] += 1;
    }
    let input = DeviceBuffer::from_slice(ctx, &host).unwrap();
    let mut bins = DeviceBuffer::<u32>::zeroed(ctx, 256).unwrap();
    let occupancy = histogram.occupancy(&PARITY, ctx, BLOCK as u32, 0).unwrap();
    let config = occupancy.waves(1);
    assert_eq!(config.grid_dim.0, occupancy.blocks_per_sm * sms);
    let f = cxx.function("histogram");
    let s = b.stream.clone();
    let (in_addr, bins_addr) = (input.as_device_ptr().addr(), bins.as_device_ptr().addr());
    let cxx_launch = || {
        let (mut pi, mut pn, mut pb) = (in_addr, n as i32, bins_addr);
        // SAFETY: `histogram(const unsigned char*, int, unsigned*)` over
        // live buffers on the stream every use of them is on.
        unsafe { launch_cxx(&f, b, config, params![pi, pn, pb]) };
    };
    bins.memset(0).unwrap();
    histogram
        .launch(&PARITY, &s, config, (&input, &mut bins))
        .unwrap();
    check("histogram", "Rust", &bins.to_vec().unwrap(), &want);
    bins.memset(0).unwrap();
    // cuda-mem orders its own work, not the raw launch: wait for it.
    ctx.synchronize().unwrap();
    cxx_launch();
    b.stream.synchronize().unwrap();
    check("histogram", "C++", &bins.to_vec().unwrap(), &want);
    let cub = cxx.cub.as_ref().map(|cub| {
        // SAFETY: the size query of `cub.cu`.
        let bytes = unsafe { (cub.histogram_temp)(n as i32) };
        (
            cub,
            bytes,
            DeviceBuffer::<u8>::zeroed(ctx, bytes.max(1)).unwrap(),
        )
    });
    let mut cub_run = cub.as_ref().map(|(cub, bytes, temp)| {
        let temp_addr = temp.as_device_ptr().addr();
        let s = s.clone();
        move || {
            // SAFETY: CUB's histogram of the live input into the live bins
            // with the temporary storage it asked for, on the bench's stream.
            let status = unsafe {
                (cub.histogram)(
                    temp_addr as *mut _,
                    *bytes,
                    in_addr as *const _,
                    bins_addr as *mut _,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "cub::DeviceHistogram::HistogramEven");
        }
    });
    if let Some(run) = cub_run.as_mut() {
        bins.memset(0xff).unwrap();
        ctx.synchronize().unwrap();
        run();
        b.stream.synchronize().unwrap();
        check("histogram", "CUB", &bins.to_vec().unwrap(), &want);
    }
    let bins_cell = std::cell::RefCell::new(&mut bins);
    let (rust_us, cxx_us, cub_us) = time_sides(
        b,
        || bins_cell.borrow_mut().memset_async(0, &s).unwrap(),
        || {
            histogram
                .launch(&PARITY, &s, config, (&input, &mut **bins_cell.borrow_mut()))
                .unwrap()
        },
        cxx_launch,
        cub_run.as_mut().map(|r| r as &mut dyn FnMut()),
    );
    record(
        b,
        Measured {
            name: "histogram 256 bins, u8 2^28",
            rust_us,
            cxx_us,
            cub_us,
            bytes: n,
            rust_regs: attributes(&rust_function(ctx, histogram::NAME)),
            cxx_regs: attributes(&f),
        },
    )
}

/// The stencil's CPU reference: what both kernels compute.
fn stencil_cpu(input: &[f32], w: usize, h: usize, c0: f32, c1: f32) -> Vec<f32> {
    let mut out = input.to_vec();
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            let at = |x: usize, y: usize| input[y * w + x];
            let around = at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1);
            out[y * w + x] = c1.mul_add(around, c0 * at(x, y));
        }
    }
    out
}

fn stencil(b: &mut Bench, ctx: &Arc<CudaContext>, cxx: &Cxx, rng: &mut Rng) -> Measured {
    use parity_kernels::stencil5;
    let (w, h) = (8192usize, 8192usize);
    let (c0, c1) = (0.5f32, 0.125f32);
    let host: Vec<f32> = (0..w * h).map(|_| rng.f32()).collect();
    let want = stencil_cpu(&host, w, h, c0, c1);
    let input = PitchedBuffer::from_slice(ctx, &host, w, h).unwrap();
    let mut out = PitchedBuffer::<f32>::zeroed(ctx, w, h).unwrap();
    let config = LaunchConfig {
        grid_dim: ((w / 32) as u32, (h / 8) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let f = cxx.function("stencil5");
    let s = b.stream.clone();
    let (in_addr, in_pitch) = (input.as_device_ptr().addr(), input.pitch());
    let (out_addr, out_pitch) = (out.as_device_ptr().addr(), out.pitch());
    let cxx_launch = || {
        let (mut po, mut pop, mut pi, mut pp, mut pw, mut ph, mut p0, mut p1) = (
            out_addr, out_pitch, in_addr, in_pitch, w as i32, h as i32, c0, c1,
        );
        // SAFETY: `stencil5(float*, size_t, const float*, size_t, int, int,
        // float, float)` over two live pitched images of `w x h`.
        unsafe { launch_cxx(&f, b, config, params![po, pop, pi, pp, pw, ph, p0, p1]) };
    };
    out.memset(0xff).unwrap();
    stencil5
        .launch(&PARITY, &s, config, (&mut out, &input, c0, c1))
        .unwrap();
    check("stencil", "Rust", &out.to_vec().unwrap(), &want);
    out.memset(0xff).unwrap();
    // cuda-mem orders its own work, not the raw launch: wait for it.
    ctx.synchronize().unwrap();
    cxx_launch();
    b.stream.synchronize().unwrap();
    check("stencil", "C++", &out.to_vec().unwrap(), &want);
    let (rust_us, cxx_us, _) = time_sides(
        b,
        || {},
        || {
            stencil5
                .launch(&PARITY, &s, config, (&mut out, &input, c0, c1))
                .unwrap()
        },
        cxx_launch,
        None,
    );
    record(
        b,
        Measured {
            name: "5-point stencil f32 8192^2",
            rust_us,
            cxx_us,
            cub_us: None,
            bytes: 8 * w * h,
            rust_regs: attributes(&rust_function(ctx, stencil5::NAME)),
            cxx_regs: attributes(&f),
        },
    )
}

fn transposes(b: &mut Bench, ctx: &Arc<CudaContext>, cxx: &Cxx, rng: &mut Rng) -> Vec<Measured> {
    use parity_kernels::{transpose_classic, transpose_tile32};
    let (w, h) = (8192usize, 8192usize);
    let host: Vec<f32> = (0..w * h).map(|_| rng.f32()).collect();
    let mut want = vec![0f32; w * h];
    for y in 0..h {
        for x in 0..w {
            want[x * h + y] = host[y * w + x];
        }
    }
    let input = PitchedBuffer::from_slice(ctx, &host, w, h).unwrap();
    let mut out = PitchedBuffer::<f32>::zeroed(ctx, h, w).unwrap();
    let s = b.stream.clone();
    let (in_addr, in_pitch) = (input.as_device_ptr().addr(), input.pitch());
    let (out_addr, out_pitch) = (out.as_device_ptr().addr(), out.pitch());
    let mut measured = Vec::new();
    for (name, rust_name, rows) in [
        (
            "transpose f32 8192^2, 32x32 threads",
            transpose_tile32::NAME,
            32u32,
        ),
        (
            "transpose f32 8192^2, 32x8 threads",
            transpose_classic::NAME,
            8u32,
        ),
    ] {
        let config = LaunchConfig {
            grid_dim: ((h / 32) as u32, (w / 32) as u32, 1),
            block_dim: (32, rows, 1),
            shared_mem_bytes: 0,
        };
        let f = cxx.function(rust_name);
        let cxx_launch = || {
            let (mut po, mut pop, mut pi, mut pp, mut pw, mut ph) =
                (out_addr, out_pitch, in_addr, in_pitch, w as i32, h as i32);
            // SAFETY: `transpose(float*, size_t, const float*, size_t, int,
            // int)` from a live `w x h` image into a live `h x w` one.
            unsafe { launch_cxx(&f, b, config, params![po, pop, pi, pp, pw, ph]) };
        };
        let rust = |out: &mut PitchedBuffer<f32>| {
            if rows == 32 {
                transpose_tile32
                    .launch(&PARITY, &s, config, (out, &input))
                    .unwrap();
            } else {
                transpose_classic
                    .launch(&PARITY, &s, config, (out, &input))
                    .unwrap();
            }
        };
        out.memset(0xff).unwrap();
        rust(&mut out);
        check(name, "Rust", &out.to_vec().unwrap(), &want);
        out.memset(0xff).unwrap();
        ctx.synchronize().unwrap();
        cxx_launch();
        b.stream.synchronize().unwrap();
        check(name, "C++", &out.to_vec().unwrap(), &want);
        let (rust_us, cxx_us, _) = time_sides(b, || {}, || rust(&mut out), cxx_launch, None);
        measured.push(record(
            b,
            Measured {
                name: if rows == 32 {
                    "transpose 8192^2, 32x32 threads"
                } else {
                    "transpose 8192^2, 32x8 threads"
                },
                rust_us,
                cxx_us,
                cub_us: None,
                bytes: 8 * w * h,
                rust_regs: attributes(&rust_function(ctx, rust_name)),
                cxx_regs: attributes(&f),
            },
        ));
    }
    measured
}

fn particles(b: &mut Bench, ctx: &Arc<CudaContext>, cxx: &Cxx, rng: &mut Rng) -> Measured {
    use parity_kernels::particles_step;
    let n = 1usize << 26;
    let host: Vec<Particle> = (0..n)
        .map(|_| Particle {
            pos: [rng.f32(), rng.f32(), rng.f32()],
            mass: 1.0 + rng.f32().abs(),
            vel: [rng.f32(), rng.f32(), rng.f32()],
            charge: rng.f32(),
        })
        .collect();
    let (field, dt) = ([0.25f32, -0.5, 0.125], 1e-3f32);
    let want: Vec<Particle> = host
        .iter()
        .map(|p| {
            let mut p = *p;
            p.step(field, dt);
            p
        })
        .collect();
    let mut ps = DeviceBuffer::from_slice(ctx, &host).unwrap();
    let config = one_per_thread(n);
    let f = cxx.function("particles_step");
    let s = b.stream.clone();
    let addr = ps.as_device_ptr().addr();
    let cxx_launch = || {
        let (mut pp, mut pn, mut fx, mut fy, mut fz, mut pdt) =
            (addr, n as i32, field[0], field[1], field[2], dt);
        // SAFETY: `particles_step(Particle*, int, float, float, float,
        // float)` over a live buffer of `n` 32-byte particles.
        unsafe { launch_cxx(&f, b, config, params![pp, pn, fx, fy, fz, pdt]) };
    };
    particles_step
        .launch(&PARITY, &s, config, (&mut ps, field, dt))
        .unwrap();
    check("particles", "Rust", &ps.to_vec().unwrap(), &want);
    ps.copy_from_host(&host).unwrap();
    // cuda-mem orders its own work, not the raw launch: wait for it.
    ctx.synchronize().unwrap();
    cxx_launch();
    b.stream.synchronize().unwrap();
    check("particles", "C++", &ps.to_vec().unwrap(), &want);
    let (rust_us, cxx_us, _) = time_sides(
        b,
        || {},
        || {
            particles_step
                .launch(&PARITY, &s, config, (&mut ps, field, dt))
                .unwrap()
        },
        cxx_launch,
        None,
    );
    record(
        b,
        Measured {
            name: "particles AoS 32 B, 2^26",
            rust_us,
            cxx_us,
            cub_us: None,
            bytes: 2 * 32 * n,
            rust_regs: attributes(&rust_function(ctx, particles_step::NAME)),
            cxx_regs: attributes(&f),
        },
    )
}

fn scan(b: &mut Bench, ctx: &Arc<CudaContext>, cxx: &Cxx, rng: &mut Rng) -> Measured {
    use parity_kernels::{scan_reduce_tiles, scan_tile_sums, scan_tiles};
    let n = 1usize << 26;
    let tiles = n.div_ceil(TILE);
    let host: Vec<u32> = (0..n).map(|_| rng.next() as u32).collect();
    let mut want = vec![0u32; n];
    let mut run = 0u32;
    for i in 0..n {
        want[i] = run;
        run = run.wrapping_add(host[i]);
    }
    let input = DeviceBuffer::from_slice(ctx, &host).unwrap();
    let mut sums = DeviceBuffer::<u32>::zeroed(ctx, tiles).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let s = b.stream.clone();
    let per_tile = LaunchConfig {
        grid_dim: (tiles as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        ..per_tile
    };
    let (fr, fs, ft) = (
        cxx.function("scan_reduce_tiles"),
        cxx.function("scan_tile_sums"),
        cxx.function("scan_tiles"),
    );
    let (in_addr, sums_addr, out_addr) = (
        input.as_device_ptr().addr(),
        sums.as_device_ptr().addr(),
        out.as_device_ptr().addr(),
    );
    let cxx_launch = || {
        let (mut pi, mut pn, mut ps) = (in_addr, n as i32, sums_addr);
        // SAFETY: the three passes' signatures, over live buffers of `n`
        // and `tiles` elements, on the stream every use of them is on.
        unsafe {
            launch_cxx(&fr, b, per_tile, params![pi, pn, ps]);
            let (mut ps2, mut pt) = (sums_addr, tiles as i32);
            launch_cxx(&fs, b, one, params![ps2, pt]);
            let (mut po, mut pi2, mut pn2, mut ps3) = (out_addr, in_addr, n as i32, sums_addr);
            launch_cxx(&ft, b, per_tile, params![po, pi2, pn2, ps3]);
        }
    };
    let rust = |sums: &mut DeviceBuffer<u32>, out: &mut DeviceBuffer<u32>| {
        scan_reduce_tiles
            .launch(&PARITY, &s, per_tile, (&input, &mut *sums))
            .unwrap();
        scan_tile_sums
            .launch(&PARITY, &s, one, (&mut *sums,))
            .unwrap();
        scan_tiles
            .launch(&PARITY, &s, per_tile, (out, &input, &*sums))
            .unwrap();
    };
    out.memset(0xff).unwrap();
    sums.memset(0xff).unwrap();
    rust(&mut sums, &mut out);
    check("scan", "Rust", &out.to_vec().unwrap(), &want);
    out.memset(0xff).unwrap();
    sums.memset(0xff).unwrap();
    // cuda-mem orders its own work, not the raw launch: wait for it.
    ctx.synchronize().unwrap();
    cxx_launch();
    b.stream.synchronize().unwrap();
    check("scan", "C++", &out.to_vec().unwrap(), &want);
    let cub = cxx.cub.as_ref().map(|cub| {
        // SAFETY: the size query of `cub.cu`.
        let bytes = unsafe { (cub.scan_temp)(n as i32) };
        (
            cub,
            bytes,
            DeviceBuffer::<u8>::zeroed(ctx, bytes.max(1)).unwrap(),
        )
    });
    let mut cub_run = cub.as_ref().map(|(cub, bytes, temp)| {
        let (temp_addr, s) = (temp.as_device_ptr().addr(), s.clone());
        move || {
            // SAFETY: CUB's exclusive sum of the live input into the live
            // output with the temporary storage it asked for.
            let status = unsafe {
                (cub.scan)(
                    temp_addr as *mut _,
                    *bytes,
                    in_addr as *const _,
                    out_addr as *mut _,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "cub::DeviceScan::ExclusiveSum");
        }
    });
    if let Some(run) = cub_run.as_mut() {
        out.memset(0xff).unwrap();
        ctx.synchronize().unwrap();
        run();
        b.stream.synchronize().unwrap();
        check("scan", "CUB", &out.to_vec().unwrap(), &want);
    }
    let (rust_us, cxx_us, cub_us) = time_sides(
        b,
        || {},
        || rust(&mut sums, &mut out),
        cxx_launch,
        cub_run.as_mut().map(|r| r as &mut dyn FnMut()),
    );
    let regs = |names: [&str; 3], cxx: [&CudaFunction; 3]| {
        let r = names
            .iter()
            .map(|n| attributes(&rust_function(ctx, n)))
            .fold((0, 0), |a, x| (a.0.max(x.0), a.1.max(x.1)));
        let c = cxx
            .iter()
            .map(|f| attributes(f))
            .fold((0, 0), |a, x| (a.0.max(x.0), a.1.max(x.1)));
        (r, c)
    };
    let (rust_regs, cxx_regs) = regs(
        [
            scan_reduce_tiles::NAME,
            scan_tile_sums::NAME,
            scan_tiles::NAME,
        ],
        [&fr, &fs, &ft],
    );
    record(
        b,
        Measured {
            name: "exclusive scan u32 2^26, 3 passes",
            rust_us,
            cxx_us,
            cub_us,
            bytes: 8 * n,
            rust_regs,
            cxx_regs,
        },
    )
}
