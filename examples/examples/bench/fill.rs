//! The fill rows: every element size over 1 GiB, a view at an unaligned
//! offset, and the fill kernels' tuning knobs (`--sweep`, `--chunks`).

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, DeviceBuffer};

use crate::harness::{value, Bench};

const GIB: usize = 1 << 30;

fn fill_row<const N: usize>(b: &mut Bench, ctx: &Arc<CudaContext>, bytes: usize) {
    let len = bytes / N;
    let mut buf = DeviceBuffer::<[u8; N]>::new(ctx, len).unwrap();
    let gbps = |ms: f64, bytes: usize| bytes as f64 / ms / 1e6;
    let v = value::<N>();
    let stream = b.stream.clone();
    let addr = buf.as_device_ptr().addr();
    let words = len * N / 4;
    let (ours, raw) = b.gpu_pair_ms(
        || buf.fill_async(v, &stream).unwrap(),
        // SAFETY: the whole live allocation, on the stream the fills use.
        || unsafe {
            sys::cuMemsetD32Async(addr, 0x1234_5678, words, stream.cu_stream())
                .result()
                .unwrap()
        },
    );
    buf.fill_async(v, &stream).unwrap();
    let check = buf.slice(len - 1..).unwrap().to_vec().unwrap();
    assert_eq!(check[0], v, "fill result wrong for size {N}");
    b.push(
        "fill",
        format!("fill {N:>3} B elements, 1 GiB"),
        "GB/s",
        gbps(ours, len * N),
        gbps(raw, words * 4),
        "cuMemsetD32Async",
        true,
        Some(N),
    );
}

/// `--sweep`: the fill rows of 100 and 256 B for several chunks per thread
/// of long pattern periods (0: one wave of long-lived blocks), then back to
/// the default; `--chunks SHORT,LONG`: the chunks per thread for the run.
/// The sweep's rows are printed, not kept.
pub fn tuning(b: &mut Bench, ctx: &Arc<CudaContext>, sweep: bool, chunks: Option<&str>) {
    if sweep {
        for k in [0u32, 4, 8, 16, 32, 64] {
            cuda_mem::__set_fill_chunks_per_thread(8, k);
            print!("sweep long k={k:<3} ");
            fill_row::<100>(b, ctx, GIB);
            print!("sweep long k={k:<3} ");
            fill_row::<256>(b, ctx, GIB);
        }
        b.rows.clear();
        cuda_mem::__set_fill_chunks_per_thread(8, 16);
    }
    if let Some(spec) = chunks {
        let k: Vec<u32> = spec.split(',').filter_map(|k| k.parse().ok()).collect();
        if let [short, long] = k[..] {
            cuda_mem::__set_fill_chunks_per_thread(short, long);
            println!("fill kernels: {short} / {long} chunks per thread (short / long periods)");
        }
    }
}

/// A 1 GiB fill for every element size from 1 to 256 bytes.
pub fn element_sizes(b: &mut Bench, ctx: &Arc<CudaContext>) {
    macro_rules! fills { ($($n:literal)*) => { $( fill_row::<$n>(b, ctx, GIB); )* } }
    fills!(1 2 3 4 6 8 12 16 20 24 32 48 64 100 128 256);
}

/// A view whose start is 4 bytes past a 16-byte boundary (12-byte elements from element 3).
pub fn unaligned_view(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let len = GIB / 12;
    let mut buf = DeviceBuffer::<[u8; 12]>::new(ctx, len).unwrap();
    let addr = buf.as_device_ptr().addr();
    let v = value::<12>();
    let s = b.stream.clone();
    let (ours, raw) = b.gpu_pair_ms(
        || buf.slice_mut(3..len).unwrap().fill_async(v, &s).unwrap(),
        // SAFETY: inside the live allocation, on the same stream.
        || unsafe {
            sys::cuMemsetD32Async(addr + 36, 7, (len - 3) * 3, s.cu_stream())
                .result()
                .unwrap()
        },
    );
    let bytes = (len - 3) * 12;
    b.push(
        "fill",
        "view at byte offset 4, 12 B".into(),
        "GB/s",
        bytes as f64 / ours / 1e6,
        bytes as f64 / raw / 1e6,
        "cuMemsetD32Async",
        true,
        None,
    );
}
