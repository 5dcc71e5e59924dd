//! The small-operation rows: the host cost of a 4 KiB fill against the raw
//! call it dispatches to, on the memset path and on the kernel path, on a
//! cudarc stream and on a `cuda_mem::Stream`.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::{sys, CudaFunction};
use cuda_mem::{CudaContext, DeviceBuffer};
use cuda_mem_examples::raw::{self, FillPattern};

use crate::harness::{value, Bench, RowStream};

/// Calls per timed batch: short enough that the launch queue never fills
/// (then the host would wait for the GPU and the row would time the GPU,
/// not the call).
const CALLS: usize = 1000;

/// The memset's word.
const WORD: u32 = 0x0102_0304;

/// A 4 KiB fill of `u32` (a memset) and of 16-byte elements (the fill
/// kernel), on the bench's stream and on a `cuda_mem::Stream`, and the
/// floor under the first: the raw memset with the capture check's query.
pub fn fills(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let s = b.stream.clone();
    let mut words = DeviceBuffer::<u32>::new(ctx, 1024).unwrap();
    let mut structs = DeviceBuffer::<[u8; 16]>::new(ctx, 256).unwrap();
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(
            cuda_mem::fill_kernels_ptx(),
        ))
        .unwrap();
    let kernel = module.load_function("cuda_mem_fill_small").unwrap();
    memset_row(b, &s, &mut words);
    floor_row(b, &s, &words);
    kernel_row(b, &s, &mut structs, &kernel);
    let ss = cuda_mem::Stream::new(ctx).unwrap();
    memset_row(b, &ss, &mut words);
    kernel_row(b, &ss, &mut structs, &kernel);
    assert_eq!(words.to_vec().unwrap()[1023], WORD);
    assert_eq!(structs.to_vec().unwrap()[255], value::<16>());
}

/// The raw memset of the 4 KiB at `addr` on `handle`.
///
/// # Safety
/// `addr` is a live allocation of at least 4 KiB, which the row's own
/// calls use on the same stream only.
unsafe fn memset(addr: u64, handle: sys::CUstream) {
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemsetD32Async(addr, WORD, 1024, handle) }
        .result()
        .unwrap()
}

/// The memset-path fill on `s` against the raw memset.
fn memset_row<S: RowStream>(b: &mut Bench, s: &S, words: &mut DeviceBuffer<u32>) {
    let addr = words.as_device_ptr().addr();
    let (ours, raw) = b.host_pair_us(
        CALLS,
        || words.fill_async(WORD, s).unwrap(),
        // SAFETY: `words`, filled on the same stream.
        || unsafe { memset(addr, s.handle()) },
        || s.sync(),
    );
    b.push(
        "small",
        format!("4 KiB fill (u32, memset path){}", S::SUFFIX),
        "us",
        ours,
        raw,
        "cuMemsetD32Async",
        false,
        None,
    );
}

/// The floor under the memset row: the raw memset plus the driver query
/// every checked call on a cudarc stream of its own makes,
/// `cuStreamIsCapturing`, which stays there because cudarc's safe
/// `begin_capture` can start a capture cuda-mem did not begin (the context
/// is not asked for: such a call queues the work as the stream's
/// context's). cuda-mem's own instructions are the rest of the memset row;
/// a `cuda_mem::Stream` makes no query.
fn floor_row(b: &mut Bench, s: &Arc<cuda_mem::CudaStream>, words: &DeviceBuffer<u32>) {
    let addr = words.as_device_ptr().addr();
    let (floor, raw) = b.host_pair_us(
        CALLS,
        || {
            let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
            // SAFETY: a live stream; the query only reads the stream's state.
            unsafe { sys::cuStreamIsCapturing(s.cu_stream(), &mut status) }
                .result()
                .unwrap();
            assert_eq!(
                status,
                sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
            );
            // SAFETY: `words`, filled on this stream only.
            unsafe { memset(addr, s.cu_stream()) }
        },
        // SAFETY: as above.
        || unsafe { memset(addr, s.cu_stream()) },
        || s.sync(),
    );
    b.push(
        "small",
        "4 KiB memset + the capture check's driver query (floor)".into(),
        "us",
        floor,
        raw,
        "cuMemsetD32Async",
        false,
        None,
    );
}

/// The kernel-path fill of 16-byte elements on `s` against a bare launch
/// of the same fill kernel.
fn kernel_row<S: RowStream>(
    b: &mut Bench,
    s: &S,
    structs: &mut DeviceBuffer<[u8; 16]>,
    kernel: &CudaFunction,
) {
    let v = value::<16>();
    let pattern = FillPattern::repeating(&v);
    let addr = structs.as_device_ptr().addr();
    let (ours, raw) = b.host_pair_us(
        CALLS,
        || structs.fill_async(v, s).unwrap(),
        // SAFETY: the fill kernel, over the live 4 KiB buffer of 16-byte
        // elements, on the stream that fills it.
        || unsafe {
            raw::fill_small(kernel.cu_function(), s.handle(), addr, 4096, 16, &pattern).unwrap()
        },
        || s.sync(),
    );
    b.push(
        "small",
        format!("4 KiB fill (16 B, kernel path){}", S::SUFFIX),
        "us",
        ours,
        raw,
        "cuLaunchKernel",
        false,
        None,
    );
}
