//! The `DeviceVec` rows: growth by doubling to 16 GiB (`--max-gib N`; 1 GiB
//! with `--quick`) against a `DeviceBuffer` reallocated and copied at every
//! step (wall time, peak device memory), and fill and copy on a 256 MiB
//! `DeviceVec` against a `DeviceBuffer` of the same size (the same engine on
//! mapped memory: goal ratio at least 0.98), plus the fill against the raw
//! `cuMemsetD32Async` on the vector's own memory.
//!
//! - Growth: ours is `DeviceVec::resize` (maps memory after the old, copies
//!   nothing); the comparison allocates the new size, copies the old contents
//!   over, fills the rest and frees the old. Peak memory is `cuMemGetInfo`
//!   after each step against the free memory before.
//! - Fill and copy: GPU time by CUDA events, median of the repetitions, three
//!   alternating rounds.

use std::sync::Arc;
use std::time::Instant;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::prelude::*;
use cuda_mem::{CudaContext, DeviceBuffer, DeviceVec};

use crate::harness::{median, Bench};

const MIB: usize = 1 << 20;
const GIB: usize = 1 << 30;

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

/// The `DeviceVec` rows (group `devvec`), growing to `max_gib` GiB.
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>, max_gib: usize, quick: bool) {
    let ctx = ctx.clone();
    let stream = b.stream.clone();
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
        None,
    );
    b.push(
        "devvec",
        format!("{name}: peak memory"),
        "GiB",
        vec_peak as f64 / GIB as f64,
        buf_peak as f64 / GIB as f64,
        "DeviceBuffer realloc+copy",
        false,
        None,
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
            None,
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
            None,
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
            None,
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
            None,
        );
        assert!(
            dst_v.to_vec().unwrap().iter().all(|&x| x == 3),
            "copy result"
        );
    }
}
