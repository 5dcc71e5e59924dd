//! The `algo` rows: `cuda_mem::algo` against CUB and Thrust (built with
//! nvcc from `parity-kernels/cuda/algo.cu`, in the same run) at 2^20, 2^24
//! and 2^28 elements: the sum of `u32`, the max of `f32`, the exclusive sum
//! of `u32`, the inclusive sum of `f32`, the 256-bin histogram of `u8`
//! and the 1024-bin one of `f32` over `[0, 1)` (CUB only: Thrust has
//! none), and the radix sorts of `u32` keys and of
//! `(u32, u32)` pairs; and, where `python3` has torch, `torch.sort` and
//! `torch.cumsum` at the same sizes. Each side's result is checked
//! against the host before it is timed. GPU time by events on the bench's
//! stream, median of the repetitions, the sides alternating: ours includes
//! its stream-ordered temporaries (and the scan's zeroed tile states); CUB
//! is given its temporary storage up front, so its time is the algorithm
//! alone; Thrust allocates its own, as a Thrust call does. Ours and CUB
//! run on a held stream (`Bench::gpu_held_ms`: the GPU starts once the
//! host has queued the whole call, so a small size's time is the GPU's,
//! not the host's cost to queue its launches); Thrust's rows cannot (its
//! `cudaFree` waits for the device), so ours is measured again unheld
//! against it.

use std::sync::Arc;

use cuda_mem::device::ops::{Max, Sum};
use cuda_mem::prelude::*;
use cuda_mem::{algo, CudaContext, DeviceBuffer};

use crate::cxx::AlgoLib;
use crate::harness::Bench;

/// The kinds of algo rows (`--algo-rows`): a run may measure some alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// The sum of `u32` and the max of `f32`.
    Reductions,
    /// The exclusive sum of `u32` and the inclusive sum of `f32`.
    Scans,
    /// The 256-bin histogram of `u8` and the 1024-bin one of `f32`.
    Histogram,
    /// The sorts of `u32` keys and of `(u32, u32)` pairs.
    Sorts,
    /// `torch.sort` and `torch.cumsum`.
    Torch,
}

/// What a row runs: `algo.cu`'s number, its name, and whether it is a scan
/// (an output of `n` elements) or a reduction (one).
const ALGORITHMS: [(i32, &str, bool); 4] = [
    (0, "sum u32", false),
    (1, "max f32", false),
    (2, "exclusive sum u32", true),
    (3, "inclusive sum f32", true),
];

/// SplitMix64: the data of each size, from the run's seed.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether `got` (an output of `algorithm`) is right for the input: exact
/// for the `u32` rows and the max, within the bound of any summation order
/// for the `f32` sums.
fn check(algorithm: i32, side: &str, input_u: &[u32], input_f: &[f32], got: &[u8]) {
    let what = format!("algo {} ({side})", ALGORITHMS[algorithm as usize].1);
    let as_u32 = |i: usize| u32::from_ne_bytes(got[4 * i..4 * i + 4].try_into().unwrap());
    let as_f32 = |i: usize| f32::from_bits(as_u32(i));
    match algorithm {
        0 => {
            let want = input_u.iter().fold(0u32, |a, &b| a.wrapping_add(b));
            assert_eq!(as_u32(0), want, "{what}");
        }
        1 => {
            let want = input_f.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(as_f32(0), want, "{what}");
        }
        2 => {
            let mut acc = 0u32;
            for (i, &x) in input_u.iter().enumerate() {
                assert_eq!(as_u32(i), acc, "{what}: element {i}");
                acc = acc.wrapping_add(x);
            }
        }
        _ => {
            let (mut exact, mut magnitude) = (0f64, 0f64);
            for (i, &x) in input_f.iter().enumerate() {
                exact += f64::from(x);
                magnitude += f64::from(x.abs());
                let bound = (i + 1) as f64 * f64::from(f32::EPSILON) * magnitude + 1e-30;
                let g = f64::from(as_f32(i));
                assert!(
                    (g - exact).abs() <= bound,
                    "{what}: element {i} is {g}, want {exact}"
                );
            }
        }
    }
}

/// The sort rows at `2^log` keys: ours (in place) against CUB (from one
/// buffer into another) and Thrust (in place), keys alone and pairs; each
/// run starts from the same random keys (restored before the timed part).
fn sorts(b: &mut Bench, ctx: &Arc<CudaContext>, lib: &AlgoLib, log: u32, seed: &mut u64) {
    let n = 1usize << log;
    let keys: Vec<u32> = (0..n).map(|_| next(seed) as u32).collect();
    let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
    want.sort_by_key(|p| p.0);
    let s = b.stream.clone();
    let pristine = DeviceBuffer::from_slice(ctx, &keys).unwrap();
    let indices = DeviceBuffer::from_slice(ctx, &(0..n as u32).collect::<Vec<_>>()).unwrap();
    let mut k = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let mut v = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let k_out = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let v_out = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    for pairs in [false, true] {
        // SAFETY: the size query of `algo.cu`.
        let bytes = unsafe { (lib.sort_temp_bytes)(i32::from(pairs), n as i32) };
        let temp = DeviceBuffer::<u8>::zeroed(ctx, bytes.max(1)).unwrap();
        let (temp_addr, k_addr, v_addr, ko_addr, vo_addr) = (
            temp.as_device_ptr().addr(),
            k.as_device_ptr().addr(),
            v.as_device_ptr().addr(),
            k_out.as_device_ptr().addr(),
            v_out.as_device_ptr().addr(),
        );
        let values = |addr: u64| if pairs { addr } else { 0 };
        let cub = || {
            // SAFETY: CUB's radix sort from the live `k` (and `v`) into the
            // live `k_out` (and `v_out`), with temporary storage of the size
            // it asked for, on the bench's stream.
            let status = unsafe {
                (lib.cub_sort)(
                    temp_addr as *mut _,
                    bytes,
                    k_addr as *const u32,
                    ko_addr as *mut u32,
                    values(v_addr) as *const u32,
                    values(vo_addr) as *mut u32,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "CUB radix sort");
        };
        let thrust = || {
            // SAFETY: Thrust's sort of the live `k` (and `v`) in place, on
            // the bench's stream.
            let status = unsafe {
                (lib.thrust_sort)(
                    k_addr as *mut u32,
                    values(v_addr) as *mut u32,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "Thrust sort");
        };
        let restore = |k: &mut DeviceBuffer<u32>, v: &mut DeviceBuffer<u32>| {
            k.copy_from_async(&pristine, &s).unwrap();
            v.copy_from_async(&indices, &s).unwrap();
        };
        let check = |side: &str, keys: &DeviceBuffer<u32>, values: &DeviceBuffer<u32>| {
            ctx.synchronize().unwrap();
            let got_keys = keys.to_vec().unwrap();
            assert!(
                got_keys.iter().zip(&want).all(|(a, w)| *a == w.0),
                "sort of u32 ({side})"
            );
            if pairs {
                let got = values.to_vec().unwrap();
                // CUB's and ours are stable; Thrust's sort_by_key is too.
                assert!(
                    got.iter().zip(&want).all(|(a, w)| *a == w.1),
                    "sort pairs ({side})"
                );
            }
        };
        let ours = |k: &mut DeviceBuffer<u32>, v: &mut DeviceBuffer<u32>| {
            if pairs {
                algo::sort_pairs(k, v, algo::SortOrder::Ascending, &s).unwrap();
            } else {
                algo::sort(k, algo::SortOrder::Ascending, &s).unwrap();
            }
        };
        restore(&mut k, &mut v);
        ours(&mut k, &mut v);
        check("ours", &k, &v);
        restore(&mut k, &mut v);
        ctx.synchronize().unwrap();
        cub();
        check("CUB", &k_out, &v_out);
        restore(&mut k, &mut v);
        ctx.synchronize().unwrap();
        thrust();
        check("Thrust", &k, &v);
        // Medians of runs that each start from the random keys (the restore
        // is queued and done before the start event, so it is not timed);
        // ours and CUB held, ours again and Thrust not (see the module).
        let time = |side: u8, held: bool, k: &mut DeviceBuffer<u32>, v: &mut DeviceBuffer<u32>| {
            let runs: Vec<f64> = (0..b.reps.max(3))
                .map(|_| {
                    restore(k, v);
                    ctx.synchronize().unwrap();
                    let run = || match side {
                        0 => ours(k, v),
                        1 => cub(),
                        _ => thrust(),
                    };
                    if held {
                        b.gpu_held_once(run)
                    } else {
                        b.gpu_ms_once(run)
                    }
                })
                .collect();
            crate::harness::median(runs) * 1e3
        };
        let (ours_us, cub_us, ours_unheld_us, thrust_us) = (
            time(0, true, &mut k, &mut v),
            time(1, true, &mut k, &mut v),
            time(0, false, &mut k, &mut v),
            time(2, false, &mut k, &mut v),
        );
        // Pairs also in the plain pass (384 x 22), which the device's own
        // choice (the wide pass, 384 x 23, on an H100 or H200) replaces:
        // checked, then timed in the same run.
        let plain_us = pairs.then(|| {
            algo::__force_pairs_pass("plain");
            restore(&mut k, &mut v);
            ours(&mut k, &mut v);
            check("ours, plain pass", &k, &v);
            let us = time(0, true, &mut k, &mut v);
            algo::__force_pairs_pass("auto");
            us
        });
        let name = if pairs {
            "sort (u32, u32) pairs"
        } else {
            "sort u32 keys"
        };
        b.push(
            "algo",
            format!("{name} 2^{log}"),
            "µs",
            ours_us,
            cub_us,
            "CUB",
            false,
            None,
        );
        if let Some(plain_us) = plain_us {
            b.push(
                "algo",
                format!("{name} 2^{log}, plain pass (384 x 22)"),
                "µs",
                plain_us,
                cub_us,
                "CUB",
                false,
                None,
            );
        }
        b.push(
            "algo",
            format!("{name} 2^{log} (Thrust)"),
            "µs",
            ours_unheld_us,
            thrust_us,
            "Thrust",
            false,
            None,
        );
    }
}

/// The histogram rows at `2^log` samples, ours against CUB's
/// `HistogramEven` (Thrust has no histogram): 256 bins of `u8` (every
/// byte), and 1024 bins of `f32` over `[0, 1)` (samples on a grid of
/// `2^-24`, so that every formula for a bin is exact: ours and CUB's
/// agree on every sample).
fn histograms(b: &mut Bench, ctx: &Arc<CudaContext>, lib: &AlgoLib, log: u32, seed: &mut u64) {
    let n = 1usize << log;
    let bytes: Vec<u8> = (0..n).map(|_| next(seed) as u8).collect();
    let name = format!("histogram 256 bins of u8 2^{log}");
    histogram(
        b,
        (ctx, lib),
        (4, name),
        &bytes,
        0..=255u8,
        256,
        usize::from,
    );
    let floats: Vec<f32> = (0..n)
        .map(|_| (next(seed) >> 40) as f32 / (1 << 24) as f32)
        .collect();
    let name = format!("histogram 1024 bins of f32 2^{log}");
    histogram(b, (ctx, lib), (5, name), &floats, 0.0f32..1.0, 1024, |x| {
        (x * 1024.0) as usize
    });
}

/// One histogram row: `samples` into `bins` equal bins over `range`, ours
/// against `algo.cu`'s CUB algorithm `which`, both checked against the
/// host's `bin_of` first.
fn histogram<T: algo::SortKey + cuda_mem::device::wide::HistogramSample + Copy>(
    b: &mut Bench,
    (ctx, lib): (&Arc<CudaContext>, &AlgoLib),
    (which, name): (i32, String),
    samples: &[T],
    range: impl algo::BinRange<T> + Clone,
    bins: usize,
    bin_of: impl Fn(T) -> usize,
) {
    let n = samples.len();
    let mut want = vec![0u32; bins];
    for &x in samples {
        want[bin_of(x)] += 1;
    }
    let s = b.stream.clone();
    let input = DeviceBuffer::from_slice(ctx, samples).unwrap();
    let mut counts = DeviceBuffer::<u32>::zeroed(ctx, bins).unwrap();
    // SAFETY: the size query of `algo.cu`.
    let temp_bytes = unsafe { (lib.temp_bytes)(which, n as i32) };
    let temp = DeviceBuffer::<u8>::zeroed(ctx, temp_bytes.max(1)).unwrap();
    let (temp_addr, in_addr, out_addr) = (
        temp.as_device_ptr().addr(),
        input.as_device_ptr().addr(),
        counts.as_device_ptr().addr(),
    );
    let cub = || {
        // SAFETY: CUB's histogram `which` of the live samples into the live
        // bins (as many as `algo.cu` gives it), with temporary storage of
        // the size it asked for, on the bench's stream.
        let status = unsafe {
            (lib.cub)(
                which,
                temp_addr as *mut _,
                temp_bytes,
                in_addr as *const _,
                out_addr as *mut _,
                n as i32,
                s.cu_stream(),
            )
        };
        assert_eq!(status, 0, "CUB {name}");
    };
    algo::histogram_even(&input, range.clone(), &mut counts, &s).unwrap();
    assert_eq!(
        counts.to_vec().unwrap(),
        want,
        "algo histogram_even (ours): {name}"
    );
    counts.memset(0).unwrap();
    ctx.synchronize().unwrap();
    cub();
    ctx.synchronize().unwrap();
    assert_eq!(counts.to_vec().unwrap(), want, "CUB: {name}");
    let (ours, raw) = b.gpu_held_pair_ms(
        || algo::histogram_even(&input, range.clone(), &mut counts, &s).unwrap(),
        cub,
    );
    b.push(
        "algo",
        name,
        "µs",
        ours * 1e3,
        raw * 1e3,
        "CUB",
        false,
        None,
    );
}

/// PyTorch's side of the torch rows, run by `python3` when it has torch:
/// prints `sort <µs>` (`torch.sort` of random `int32`, which also returns
/// the indices) and `cumsum <µs>` (`torch.cumsum` of random `float32`),
/// medians of CUDA-event timings, for `2^argv[1]` elements.
const TORCH: &str = r#"
import sys, statistics, torch
n = 1 << int(sys.argv[1])
keys = torch.randint(-2**31, 2**31 - 1, (n,), dtype=torch.int32, device="cuda")
x = torch.rand(n, dtype=torch.float32, device="cuda")
def us(f):
    for _ in range(3): f()
    torch.cuda.synchronize()
    times = []
    for _ in range(15):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)
print("sort", us(lambda: torch.sort(keys)))
print("cumsum", us(lambda: torch.cumsum(x, 0)))
"#;

/// The torch rows at `2^log`: ours (`sort_pairs` of `i32` keys with their
/// `u32` indices, as `torch.sort` returns both; the inclusive sum of `f32`)
/// against PyTorch in the same run, when `python3` has torch (else one
/// line says why not).
fn torch(b: &mut Bench, ctx: &Arc<CudaContext>, log: u32, seed: &mut u64) {
    let out = std::process::Command::new("python3")
        .args(["-c", TORCH, &log.to_string()])
        .output();
    let text = match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            let why = String::from_utf8_lossy(&o.stderr);
            println!(
                "algo: torch rows skipped: {}",
                why.lines().last().unwrap_or("")
            );
            return;
        }
        Err(e) => {
            println!("algo: torch rows skipped: python3: {e}");
            return;
        }
    };
    let figure = |name: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(name)
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
    };
    let (Some(torch_sort), Some(torch_cumsum)) = (figure("sort "), figure("cumsum ")) else {
        println!("algo: torch rows skipped: unexpected output {text:?}");
        return;
    };
    let n = 1usize << log;
    let s = b.stream.clone();
    let keys: Vec<i32> = (0..n).map(|_| next(seed) as i32).collect();
    let pristine = DeviceBuffer::from_slice(ctx, &keys).unwrap();
    let order = DeviceBuffer::from_slice(ctx, &(0..n as u32).collect::<Vec<_>>()).unwrap();
    let mut k = DeviceBuffer::<i32>::zeroed(ctx, n).unwrap();
    let mut v = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let runs: Vec<f64> = (0..b.reps.max(3))
        .map(|_| {
            k.copy_from_async(&pristine, &s).unwrap();
            v.copy_from_async(&order, &s).unwrap();
            ctx.synchronize().unwrap();
            b.gpu_ms_once(|| {
                algo::sort_pairs(&mut k, &mut v, algo::SortOrder::Ascending, &s).unwrap()
            })
        })
        .collect();
    let ours_sort = crate::harness::median(runs) * 1e3;
    let x: Vec<f32> = (0..n)
        .map(|_| (next(seed) >> 40) as f32 / (1u32 << 24) as f32)
        .collect();
    let xs = DeviceBuffer::from_slice(ctx, &x).unwrap();
    let mut ys = DeviceBuffer::<f32>::zeroed(ctx, n).unwrap();
    let ours_cumsum = b.gpu_ms(|| algo::inclusive_scan(&xs, &mut ys, Sum, &s).unwrap()) * 1e3;
    b.push(
        "algo",
        format!("sort i32 keys with indices 2^{log} (torch.sort)"),
        "µs",
        ours_sort,
        torch_sort,
        "torch.sort",
        false,
        None,
    );
    b.push(
        "algo",
        format!("inclusive sum f32 2^{log} (torch.cumsum)"),
        "µs",
        ours_cumsum,
        torch_cumsum,
        "torch.cumsum",
        false,
        None,
    );
}

/// The reduction and scan rows at `2^log` (those `runs` picks): ours
/// against CUB (held) and Thrust (unheld), each output checked first.
fn reductions_and_scans(
    b: &mut Bench,
    ctx: &Arc<CudaContext>,
    lib: &AlgoLib,
    log: u32,
    seed: &mut u64,
    runs: impl Fn(Kind) -> bool,
) {
    let n = 1usize << log;
    let s = b.stream.clone();
    let input_u: Vec<u32> = (0..n).map(|_| next(seed) as u32).collect();
    let input_f: Vec<f32> = (0..n)
        .map(|_| ((next(seed) >> 40) as f32 / (1u32 << 24) as f32) * 2.0 - 1.0)
        .collect();
    let xu = DeviceBuffer::from_slice(ctx, &input_u).unwrap();
    let xf = DeviceBuffer::from_slice(ctx, &input_f).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed(ctx, n).unwrap();
    let (xu_addr, xf_addr) = (xu.as_device_ptr().addr(), xf.as_device_ptr().addr());
    for (which, name, scan) in ALGORITHMS {
        if !runs(if scan { Kind::Scans } else { Kind::Reductions }) {
            continue;
        }
        let input_addr = if which == 1 || which == 3 {
            xf_addr
        } else {
            xu_addr
        };
        let out_len = if scan { n } else { 1 };
        let ours = |out: &mut DeviceBuffer<u32>| {
            let mut out = out.slice_mut(..out_len).unwrap();
            match which {
                0 => algo::reduce_into(&xu, Sum, &mut out, &s).unwrap(),
                1 => algo::reduce_into(&xf, Max, &mut out.cast_mut::<f32>().unwrap(), &s).unwrap(),
                2 => algo::exclusive_scan(&xu, &mut out, Sum, &s).unwrap(),
                _ => {
                    algo::inclusive_scan(&xf, &mut out.cast_mut::<f32>().unwrap(), Sum, &s).unwrap()
                }
            }
        };
        // SAFETY: the size query of `algo.cu`.
        let bytes = unsafe { (lib.temp_bytes)(which, n as i32) };
        let temp = DeviceBuffer::<u8>::zeroed(ctx, bytes.max(1)).unwrap();
        let temp_addr = temp.as_device_ptr().addr();
        let out_addr = out.as_device_ptr().addr();
        let cub = || {
            // SAFETY: CUB's algorithm over the live input into the live
            // output (`out_len` elements), with temporary storage of the
            // size it asked for, on the bench's stream, which every use
            // of these buffers is on.
            let status = unsafe {
                (lib.cub)(
                    which,
                    temp_addr as *mut _,
                    bytes,
                    input_addr as *const _,
                    out_addr as *mut _,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "CUB algorithm {which}");
        };
        let thrust = || {
            // SAFETY: Thrust's algorithm over the live input into the
            // live output, on the bench's stream, as for CUB.
            let status = unsafe {
                (lib.thrust)(
                    which,
                    input_addr as *const _,
                    out_addr as *mut _,
                    n as i32,
                    s.cu_stream(),
                )
            };
            assert_eq!(status, 0, "Thrust algorithm {which}");
        };
        let result = |out: &DeviceBuffer<u32>| -> Vec<u8> {
            ctx.synchronize().unwrap();
            cuda_mem::bytes_of_slice(&out.slice(..out_len).unwrap().to_vec().unwrap()).to_vec()
        };
        for (side, run) in [("ours", 0), ("CUB", 1), ("Thrust", 2)] {
            out.memset(0xa5).unwrap();
            ctx.synchronize().unwrap();
            match run {
                0 => ours(&mut out),
                1 => cub(),
                _ => thrust(),
            }
            check(which, side, &input_u, &input_f, &result(&out));
        }
        ctx.synchronize().unwrap();
        let (ours_cub, cub_ms) = b.gpu_held_pair_ms(|| ours(&mut out), cub);
        let (ours_thrust, thrust_ms) = b.gpu_pair_ms(|| ours(&mut out), thrust);
        let us = |ms: f64| ms * 1e3;
        b.push(
            "algo",
            format!("{name} 2^{log}"),
            "µs",
            us(ours_cub),
            us(cub_ms),
            "CUB",
            false,
            None,
        );
        b.push(
            "algo",
            format!("{name} 2^{log} (Thrust)"),
            "µs",
            us(ours_thrust),
            us(thrust_ms),
            "Thrust",
            false,
            None,
        );
    }
}

/// The algo rows at 2^20, 2^24 and (unless `quick`) 2^28: those of the
/// kinds in `only`, or all of them when it is empty. Only the kinds run
/// make their data (from the seed, in order), so a run of some kinds
/// measures other random data than a full run does.
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>, quick: bool, only: &[Kind]) {
    let runs = |kind: Kind| only.is_empty() || only.contains(&kind);
    let lib = match AlgoLib::build(ctx) {
        Ok(lib) => lib,
        Err(why) => {
            println!("algo: CUB and Thrust rows skipped: {why}");
            return;
        }
    };
    println!("algo: CUB and Thrust built with {} (-O3)", lib.version);
    let mut seed = std::env::var("CUDA_MEM_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_a160);
    println!("algo: data seed {seed} (CUDA_MEM_SEED)");
    let logs: &[u32] = if quick { &[20, 24] } else { &[20, 24, 28] };
    for &log in logs {
        if runs(Kind::Reductions) || runs(Kind::Scans) {
            reductions_and_scans(b, ctx, &lib, log, &mut seed, runs);
        }
        if runs(Kind::Histogram) {
            histograms(b, ctx, &lib, log, &mut seed);
        }
        if runs(Kind::Sorts) {
            sorts(b, ctx, &lib, log, &mut seed);
        }
        if runs(Kind::Torch) {
            torch(b, ctx, log, &mut seed);
        }
    }
}
