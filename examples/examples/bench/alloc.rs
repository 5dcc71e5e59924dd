//! The allocation rows: pool allocation (against the same calls and against
//! CUDA's default release threshold), device allocation, and uncached pinned
//! allocation of 4 KiB and 64 MiB (the cached rows are `staged::pinned_alloc`).

use std::sync::Arc;

use cuda_mem::cudarc::driver::{result, sys};
use cuda_mem::{CudaContext, DeviceBuffer, PinnedBuffer, PinnedFlags, PoolBuffer};

use crate::harness::{Bench, RowStream};

/// Host microseconds per allocation and free, ours against the driver's.
pub fn alloc_free(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let s = b.stream.clone();
    pool_alloc_free(b, &s);
    pool_alloc_free(b, &cuda_mem::Stream::new(ctx).unwrap());
    let (ours, raw_same_pool) = b.host_pair_us(
        2000,
        || {
            let p = PoolBuffer::<u8>::new(1 << 20, &s).unwrap();
            p.free_on_stream(&s).unwrap();
            s.synchronize().unwrap();
        },
        || unsafe {
            // SAFETY: a stream-ordered allocation freed right away on the same stream.
            let p = result::malloc_async(s.cu_stream(), 1 << 20).unwrap();
            result::free_async(p, s.cu_stream()).unwrap();
            s.synchronize().unwrap();
        },
        || {},
    );
    b.push(
        "alloc",
        "PoolBuffer alloc+free+sync".into(),
        "us",
        ours,
        raw_same_pool,
        "same calls, same pool",
        false,
        None,
    );
    // A raw pool as CUDA creates it: release threshold 0.
    // SAFETY: all-zero props plus type and location are valid pool properties.
    let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location = sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: 0,
    };
    // SAFETY: `props` is initialised.
    let raw_pool = unsafe { result::mem_pool::create(&props) }.unwrap();
    let raw_default = b.host_us(
        200,
        || unsafe {
            // SAFETY: a stream-ordered allocation from the raw pool, freed on the same stream.
            let p = result::mem_pool::alloc_async(raw_pool, 1 << 20, s.cu_stream()).unwrap();
            result::free_async(p, s.cu_stream()).unwrap();
            s.synchronize().unwrap();
        },
        || {},
    );
    b.push(
        "alloc",
        "PoolBuffer alloc+free+sync vs CUDA default".into(),
        "us",
        ours,
        raw_default,
        "same, CUDA default threshold 0",
        false,
        None,
    );
    let (ours, raw) = b.host_pair_us(
        500,
        || drop(DeviceBuffer::<u8>::new(ctx, 1 << 20).unwrap()),
        || unsafe {
            // SAFETY: allocate and free 1 MiB.
            let p = result::malloc_sync(1 << 20).unwrap();
            result::free_sync(p).unwrap();
        },
        || {},
    );
    b.push(
        "alloc",
        "DeviceBuffer 1 MiB alloc+free".into(),
        "us",
        ours,
        raw,
        "cuMemAlloc+cuMemFree",
        false,
        None,
    );
    for (calls, bytes, size) in [(200, 4 << 10, "4 KiB"), (20, 64 << 20, "64 MiB")] {
        let (ours, raw) = b.host_pair_us(
            calls,
            || drop(PinnedBuffer::<u8>::uncached(ctx, bytes, PinnedFlags::default()).unwrap()),
            || unsafe {
                // SAFETY: allocate and free `bytes` of pinned memory.
                let p = result::malloc_host(bytes, 0).unwrap();
                result::free_host(p).unwrap();
            },
            || {},
        );
        b.push(
            "alloc",
            format!("PinnedBuffer {size} alloc+free (uncached)"),
            "us",
            ours,
            raw,
            "cuMemHostAlloc+FreeHost",
            false,
            None,
        );
    }
}

/// A 1 MiB `PoolBuffer` allocated and freed on `s` against the raw calls on
/// the same stream, in batches of 5000 (a `cuda_mem::Stream` skips the
/// capture query of the alloc and of the free).
fn pool_alloc_free<S: RowStream>(b: &mut Bench, s: &S) {
    let (ours, raw) = b.host_pair_us(
        5000,
        || {
            let p = PoolBuffer::<u8>::new(1 << 20, s).unwrap();
            p.free_on_stream(s).unwrap();
        },
        || unsafe {
            // SAFETY: a stream-ordered allocation freed right away on the same stream.
            let p = result::malloc_async(s.handle(), 1 << 20).unwrap();
            result::free_async(p, s.handle()).unwrap();
        },
        || s.sync(),
    );
    b.push(
        "alloc",
        format!("PoolBuffer 1 MiB alloc+free{}", S::SUFFIX),
        "us",
        ours,
        raw,
        "cuMemAllocAsync+FreeAsync",
        false,
        None,
    );
}
