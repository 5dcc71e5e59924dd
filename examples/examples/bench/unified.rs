//! The unified-memory row: a 1 GiB prefetch to the device.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::{result, sys};
use cuda_mem::{CudaContext, UnifiedBuffer};

use crate::harness::{median, Bench};

/// `prefetch_to_device` of 1 GiB (after a prefetch to the host) against
/// `cuMemPrefetchAsync`.
pub fn prefetch(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let gib = 1 << 30;
    let mut u = UnifiedBuffer::<u8>::new(ctx, gib).unwrap();
    u.as_mut_slice().unwrap().fill(3);
    let s = b.stream.clone();
    let addr = u.as_device_ptr().addr();
    let dev_loc = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    };
    let host_loc = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
        id: 0,
    };
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..b.reps.min(6) {
        u.prefetch_to_host(&s).unwrap();
        s.synchronize().unwrap();
        ours.push(b.gpu_ms_once(|| u.prefetch_to_device(&s).unwrap()));
        // SAFETY: the live managed allocation.
        unsafe { result::mem_prefetch_async(addr, gib, host_loc, s.cu_stream()).unwrap() };
        s.synchronize().unwrap();
        // SAFETY: as above.
        raw.push(b.gpu_ms_once(|| unsafe {
            result::mem_prefetch_async(addr, gib, dev_loc, s.cu_stream()).unwrap()
        }));
    }
    let gbps = |ms: f64| gib as f64 / ms / 1e6;
    b.push(
        "unified",
        "prefetch 1 GiB to device".into(),
        "GB/s",
        gbps(median(ours)),
        gbps(median(raw)),
        "cuMemPrefetchAsync",
        true,
        None,
    );
}
