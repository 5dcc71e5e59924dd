//! The `DeviceVec` rows of the benchmark table, in the row format of
//! `bench.rs` (ours, the comparison measured in the same run, their ratio):
//!
//!     cargo run --release --example bench_device_vec -- [--quick] [--max-gib N]
//!
//! - Growth: a vector grown by doubling from 1 MiB to 16 GiB (`--max-gib`,
//!   1 GiB with `--quick`), each step's new elements written with `fill`.
//!   Ours: `DeviceVec::resize` (maps memory after the old, copies nothing).
//!   Compared with: a `DeviceBuffer` reallocated at every step (allocate
//!   the new size, copy the old contents over, fill the rest, free the old).
//!   Wall time of the whole growth, and the peak device memory it used
//!   (`cuMemGetInfo` after each step, against the free memory before).
//! - Fill and copy on a 256 MiB `DeviceVec` against a `DeviceBuffer` of the
//!   same size: the same engine on mapped memory, so the ratio should be
//!   about 1 (goal: at least 0.98). GPU time by CUDA events, median of the
//!   repetitions, three alternating rounds. Also the fill against the raw
//!   `cuMemsetD32Async` on the vector's own memory.

use std::sync::Arc;
use std::time::Instant;

use cuda_mem::cudarc::driver::{sys, CudaEvent, CudaStream};
use cuda_mem::{CudaContext, DeviceBuffer, DeviceVec};

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

/// One row of the table (as in `bench.rs`).
struct Row {
    group: &'static str,
    name: String,
    unit: &'static str,
    ours: f64,
    raw: f64,
    raw_name: &'static str,
    higher_is_better: bool,
}

impl Row {
    fn ratio(&self) -> f64 {
        if self.higher_is_better {
            self.ours / self.raw
        } else {
            self.raw / self.ours
        }
    }
}

/// The row-printing and GPU-timing harness of `bench.rs`.
struct Bench {
    stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: CudaEvent,
    reps: usize,
    rows: Vec<Row>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

impl Bench {
    /// Median GPU milliseconds of `op` (queued on `self.stream`).
    fn gpu_ms(&self, mut op: impl FnMut()) -> f64 {
        op(); // warm-up
        let times = (0..self.reps)
            .map(|_| {
                self.start.record(&self.stream).unwrap();
                op();
                self.stop.record(&self.stream).unwrap();
                self.stop.synchronize().unwrap();
                self.start.elapsed_ms(&self.stop).unwrap() as f64
            })
            .collect();
        median(times)
    }

    /// Median GPU milliseconds of `ours` and of `raw`, measured in three
    /// alternating rounds so that drifting clocks hit both.
    fn gpu_pair_ms(&self, mut ours: impl FnMut(), mut raw: impl FnMut()) -> (f64, f64) {
        let (mut o, mut r) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            o.push(self.gpu_ms(&mut ours));
            r.push(self.gpu_ms(&mut raw));
        }
        (median(o), median(r))
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        group: &'static str,
        name: String,
        unit: &'static str,
        ours: f64,
        raw: f64,
        raw_name: &'static str,
        higher_is_better: bool,
    ) {
        let row = Row {
            group,
            name,
            unit,
            ours,
            raw,
            raw_name,
            higher_is_better,
        };
        println!(
            "{:<8} {:<34} ours {:>10.2} {:<5} raw {:>10.2} {:<5} ({}) ratio {:.3}",
            row.group,
            row.name,
            row.ours,
            row.unit,
            row.raw,
            row.unit,
            row.raw_name,
            row.ratio()
        );
        self.rows.push(row);
    }
}

/// Free device memory in bytes.
fn free_memory(ctx: &Arc<CudaContext>) -> usize {
    ctx.mem_get_info().unwrap().0
}

/// A value of the `k`-th growth step (distinct per step).
fn step_value(k: usize) -> u32 {
    0x9E37_79B9u32.wrapping_mul(k as u32 + 1)
}

/// Grows a `DeviceVec<u32>` by doubling from 1 MiB to `max` bytes; returns
/// (wall milliseconds, peak bytes used beyond the free memory before).
fn grow_vec(ctx: &Arc<CudaContext>, max: usize) -> (f64, usize) {
    let before = free_memory(ctx);
    let mut peak = 0;
    let start = Instant::now();
    let mut v = DeviceVec::<u32>::new(ctx).unwrap();
    let mut bytes = MIB;
    let mut k = 0;
    while bytes <= max {
        v.resize(bytes / 4, step_value(k)).unwrap();
        v.synchronize().unwrap();
        peak = peak.max(before.saturating_sub(free_memory(ctx)));
        bytes *= 2;
        k += 1;
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    check_steps(&v.to_vec().unwrap(), "DeviceVec");
    (ms, peak)
}

/// The same growth with a `DeviceBuffer` reallocated (and copied) at every
/// step; returns (wall milliseconds, peak bytes).
fn grow_buffer(ctx: &Arc<CudaContext>, max: usize) -> (f64, usize) {
    let before = free_memory(ctx);
    let mut peak = 0;
    let start = Instant::now();
    let mut old: Option<DeviceBuffer<u32>> = None;
    let mut bytes = MIB;
    let mut k = 0;
    while bytes <= max {
        let len = bytes / 4;
        let mut new = DeviceBuffer::<u32>::new(ctx, len).unwrap();
        let kept = old.as_ref().map_or(0, |o| o.len());
        if let Some(o) = &old {
            new.slice_mut(..kept).unwrap().copy_from(o).unwrap();
        }
        new.slice_mut(kept..).unwrap().fill(step_value(k)).unwrap();
        new.synchronize().unwrap();
        // Both alive: the moment of the peak.
        peak = peak.max(before.saturating_sub(free_memory(ctx)));
        old = Some(new);
        bytes *= 2;
        k += 1;
    }
    let ms = start.elapsed().as_secs_f64() * 1e3;
    check_steps(&old.unwrap().to_vec().unwrap(), "DeviceBuffer");
    (ms, peak)
}

/// Checks that element `i` holds the value of the step that added it.
fn check_steps(got: &[u32], what: &str) {
    let mut start = 0;
    let mut end = MIB / 4;
    let mut k = 0;
    while start < got.len() {
        let expected = step_value(k);
        if let Some(i) = (start..end.min(got.len())).find(|&i| got[i] != expected) {
            panic!(
                "{what}: element {i} is {:#x}, expected {expected:#x}",
                got[i]
            );
        }
        start = end;
        end *= 2;
        k += 1;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let max_gib: usize = args
        .iter()
        .position(|a| a == "--max-gib")
        .and_then(|i| args.get(i + 1))
        .map(|s| s.parse().expect("--max-gib takes a whole number of GiB"))
        .unwrap_or(if quick { 1 } else { 16 });
    let ctx = cuda_mem_examples::gpu_or_exit("bench_device_vec");
    let stream = ctx.new_stream().unwrap();
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut b = Bench {
        start: ctx.new_event(timing).unwrap(),
        stop: ctx.new_event(timing).unwrap(),
        stream: stream.clone(),
        reps: if quick { 5 } else { 15 },
        rows: Vec::new(),
    };
    println!(
        "device: {} (driver API; cuda-mem {})",
        ctx.name().unwrap(),
        env!("CARGO_PKG_VERSION")
    );

    // --- growth by doubling: DeviceVec vs DeviceBuffer realloc + copy ---
    let max = max_gib * GIB;
    // Warm-up of both paths (first allocations, the fill kernels' module).
    grow_vec(&ctx, 64 * MIB);
    grow_buffer(&ctx, 64 * MIB);
    let (mut vec_ms, mut vec_peak, mut buf_ms, mut buf_peak) = (vec![], 0, vec![], 0);
    for _ in 0..if quick { 1 } else { 3 } {
        let (ms, peak) = grow_vec(&ctx, max);
        vec_ms.push(ms);
        vec_peak = vec_peak.max(peak);
        let (ms, peak) = grow_buffer(&ctx, max);
        buf_ms.push(ms);
        buf_peak = buf_peak.max(peak);
    }
    let name = format!("grow 1 MiB -> {max_gib} GiB by doubling");
    b.push(
        "devvec",
        format!("{name}: time"),
        "ms",
        median(vec_ms),
        median(buf_ms),
        "DeviceBuffer realloc+copy",
        false,
    );
    b.push(
        "devvec",
        format!("{name}: peak memory"),
        "GiB",
        vec_peak as f64 / GIB as f64,
        buf_peak as f64 / GIB as f64,
        "DeviceBuffer realloc+copy",
        false,
    );

    // --- fill and copy on 256 MiB: DeviceVec vs DeviceBuffer ---
    let bytes = 256 * MIB;
    let gbps = |ms: f64| bytes as f64 / ms / 1e6;
    {
        let len = bytes / 4;
        let mut v = DeviceVec::<u32>::with_capacity(&ctx, len).unwrap();
        v.resize(len, 0).unwrap();
        let mut buf = DeviceBuffer::<u32>::zeroed(&ctx, len).unwrap();
        let (ours, raw) = b.gpu_pair_ms(
            || v.fill_async(0x1234_5678, &stream).unwrap(),
            || buf.fill_async(0x1234_5678, &stream).unwrap(),
        );
        b.push(
            "devvec",
            "fill 4 B, 256 MiB".into(),
            "GB/s",
            gbps(ours),
            gbps(raw),
            "DeviceBuffer::fill",
            true,
        );
        let addr = v.as_device_ptr().addr();
        let (ours, raw) = b.gpu_pair_ms(
            || v.fill_async(0x1234_5678, &stream).unwrap(),
            // SAFETY: the vector's whole mapped, live memory, on the stream
            // its fills use; nothing else uses it meanwhile.
            || unsafe {
                sys::cuMemsetD32Async(addr, 0x1234_5678, len, stream.cu_stream())
                    .result()
                    .unwrap()
            },
        );
        b.push(
            "devvec",
            "fill 4 B, 256 MiB (vs memset)".into(),
            "GB/s",
            gbps(ours),
            gbps(raw),
            "cuMemsetD32Async",
            true,
        );
        v.fill(7).unwrap();
        assert!(v.to_vec().unwrap().iter().all(|&x| x == 7), "fill result");
    }
    {
        // A 12-byte element: cuda-mem's fill kernels.
        let len = bytes / 12;
        let value: [u8; 12] = std::array::from_fn(|i| (i * 37 + 11) as u8);
        let mut v = DeviceVec::<[u8; 12]>::new(&ctx).unwrap();
        v.resize(len, [0; 12]).unwrap();
        let mut buf = DeviceBuffer::<[u8; 12]>::new(&ctx, len).unwrap();
        let (ours, raw) = b.gpu_pair_ms(
            || v.fill_async(value, &stream).unwrap(),
            || buf.fill_async(value, &stream).unwrap(),
        );
        b.push(
            "devvec",
            "fill 12 B, 256 MiB".into(),
            "GB/s",
            gbps(ours),
            gbps(raw),
            "DeviceBuffer::fill",
            true,
        );
        assert!(
            v.to_vec().unwrap().iter().all(|&x| x == value),
            "fill result"
        );
    }
    {
        let len = bytes / 4;
        let mut src_v = DeviceVec::<u32>::new(&ctx).unwrap();
        src_v.resize(len, 3).unwrap();
        let mut dst_v = DeviceVec::<u32>::new(&ctx).unwrap();
        dst_v.resize(len, 0).unwrap();
        let src_b = DeviceBuffer::from_slice(&ctx, &vec![3u32; len]).unwrap();
        let mut dst_b = DeviceBuffer::<u32>::zeroed(&ctx, len).unwrap();
        let (ours, raw) = b.gpu_pair_ms(
            || dst_v.copy_from_async(&src_v, &stream).unwrap(),
            || dst_b.copy_from_async(&src_b, &stream).unwrap(),
        );
        // A copy reads and writes every byte.
        b.push(
            "devvec",
            "copy d2d, 256 MiB (read + write)".into(),
            "GB/s",
            2.0 * gbps(ours),
            2.0 * gbps(raw),
            "DeviceBuffer::copy_from",
            true,
        );
        assert!(
            dst_v.to_vec().unwrap().iter().all(|&x| x == 3),
            "copy result"
        );
    }
    let worst = b
        .rows
        .iter()
        .filter(|r| r.unit == "GB/s")
        .map(Row::ratio)
        .fold(f64::INFINITY, f64::min);
    println!(
        "bench_device_vec: {} rows, worst fill/copy ratio {worst:.3} (goal >= 0.98)",
        b.rows.len()
    );
}
