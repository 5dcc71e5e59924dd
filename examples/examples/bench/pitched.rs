//! The pitched rows: a 12-byte fill of an odd width, which skips the row
//! padding, and a 2D copy from pinned memory into the pitched buffer.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, PinnedBuffer, PitchedBuffer};

use crate::harness::{value, Bench};

/// The pitched fill and the 2D host-to-device copy, 8191 x 8192 12-byte elements.
pub fn fill_and_copy(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let (w, h) = (8191, 8192);
    let mut img = PitchedBuffer::<[u8; 12]>::new(ctx, w, h).unwrap();
    let (addr, pitch) = (img.as_device_ptr().addr(), img.pitch());
    let v = value::<12>();
    let s = b.stream.clone();
    let bytes = (w * h * 12) as f64;
    let (ours, raw) = b.gpu_pair_ms(
        || img.fill_async(v, &s).unwrap(),
        // SAFETY: the live pitched allocation's rows, on the same stream.
        || unsafe {
            sys::cuMemsetD2D32Async(addr, pitch, 7, w * 3, h, s.cu_stream())
                .result()
                .unwrap()
        },
    );
    img.fill_async(v, &s).unwrap();
    assert_eq!(img.row(h - 1).unwrap().to_vec().unwrap()[w - 1], v);
    b.push(
        "fill",
        format!("pitched {w} x {h}, 12 B"),
        "GB/s",
        bytes / ours / 1e6,
        bytes / raw / 1e6,
        "cuMemsetD2D32Async",
        true,
        None,
    );

    let host = PinnedBuffer::<[u8; 12]>::from_slice(ctx, &vec![v; w * h]).unwrap();
    // The raw call gets the registered (DMA) mapping of the pinned pages,
    // as cuda-mem's copy does: a host slice of a `PinnedBuffer` is an
    // unregistered alias of them, which the driver copies as pageable.
    let host_ptr = host.as_device_ptr().addr() as usize as *const u8;
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        srcHost: host_ptr.cast(),
        srcDevice: 0,
        srcArray: std::ptr::null_mut(),
        srcPitch: w * 12,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        dstHost: std::ptr::null_mut(),
        dstDevice: addr,
        dstArray: std::ptr::null_mut(),
        dstPitch: pitch,
        WidthInBytes: w * 12,
        Height: h,
    };
    let (ours, raw) = b.gpu_pair_ms(
        || img.copy_from_host_async(&host, &s).unwrap(),
        // SAFETY: the pinned source and the pitched destination are live
        // and sized as described; nothing else uses them meanwhile.
        || unsafe {
            sys::cuMemcpy2DAsync_v2(&copy, s.cu_stream())
                .result()
                .unwrap()
        },
    );
    b.push(
        "copy",
        format!("2D H2D pinned -> pitched {w} x {h}"),
        "GB/s",
        bytes / ours / 1e6,
        bytes / raw / 1e6,
        "cuMemcpy2DAsync",
        true,
        None,
    );
}
