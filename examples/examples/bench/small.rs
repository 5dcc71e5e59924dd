//! The small-operation rows: the host cost of a 4 KiB fill against the raw
//! call it dispatches to, on the memset path and on the kernel path.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, DeviceBuffer};
use cuda_mem_examples::raw::{self, FillPattern};

use crate::harness::{value, Bench};

/// A 4 KiB fill of `u32` (a memset) and of 16-byte elements (the fill
/// kernel). Batches of 1000 calls, short enough that the launch queue never
/// fills (then the host would wait for the GPU and the row would time the
/// GPU, not the call).
pub fn fills(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let n = 1000;
    let mut words = DeviceBuffer::<u32>::new(ctx, 1024).unwrap();
    let addr = words.as_device_ptr().addr();
    let s = b.stream.clone();
    let sync = || s.synchronize().unwrap();
    // The raw call of both rows below (a `Copy` closure: it borrows only).
    // SAFETY: the live 4 KiB allocation, on the same stream.
    let memset = || unsafe {
        sys::cuMemsetD32Async(addr, 0x0102_0304, 1024, s.cu_stream())
            .result()
            .unwrap()
    };
    let (ours, raw) = b.host_pair_us(
        n,
        || words.fill_async(0x0102_0304, &s).unwrap(),
        memset,
        sync,
    );
    b.push(
        "small",
        "4 KiB fill (u32, memset path)".into(),
        "us",
        ours,
        raw,
        "cuMemsetD32Async",
        false,
        None,
    );

    // The floor under the row above: the raw memset plus the driver query
    // every checked call on a stream of its own makes, `cuStreamIsCapturing`,
    // which stays because cudarc's safe `begin_capture` can start a capture
    // cuda-mem did not begin (the context is not asked for: such a call
    // queues the work as the stream's context's). cuda-mem's own
    // instructions are the rest of the row above.
    let (floor, raw) = b.host_pair_us(
        n,
        // SAFETY: a live stream; the query only reads the stream's state.
        || unsafe {
            let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
            sys::cuStreamIsCapturing(s.cu_stream(), &mut status)
                .result()
                .unwrap();
            assert_eq!(
                status,
                sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
            );
            memset()
        },
        memset,
        sync,
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

    let mut structs = DeviceBuffer::<[u8; 16]>::new(ctx, 256).unwrap();
    let addr = structs.as_device_ptr().addr();
    let v = value::<16>();
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(
            cuda_mem::fill_kernels_ptx(),
        ))
        .unwrap();
    let f = module.load_function("cuda_mem_fill_small").unwrap();
    let pattern = FillPattern::repeating(&v);
    let (ours, raw) = b.host_pair_us(
        n,
        || structs.fill_async(v, &s).unwrap(),
        // SAFETY: the fill kernel, over the live 4 KiB buffer of 16-byte
        // elements, on the stream that fills it.
        || unsafe { raw::fill_small(f.cu_function(), &s, addr, 4096, 16, &pattern).unwrap() },
        sync,
    );
    b.push(
        "small",
        "4 KiB fill (16 B, kernel path)".into(),
        "us",
        ours,
        raw,
        "cuLaunchKernel",
        false,
        None,
    );
    assert_eq!(structs.to_vec().unwrap()[255], v);
}
