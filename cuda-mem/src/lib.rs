//! cuda-mem: typed GPU memory (crate docs are written in `docs/guide.md`).
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

extern crate self as cuda_mem;

mod device_copy;
mod device_ptr;
#[doc(hidden)]
pub mod private;

#[doc(hidden)]
pub use private as __private;

pub use cuda_mem_derive::DeviceCopy;
pub use device_copy::{bytes_of, bytes_of_slice, DeviceCopy};
pub use device_ptr::DevicePtr;

#[cfg(feature = "build")]
#[allow(clippy::needless_doctest_main)]
#[path = "kernel_build.rs"]
pub mod build;

#[cfg(feature = "host")]
mod alloc;
#[cfg(feature = "host")]
mod buffer;
#[cfg(feature = "host")]
mod context;
#[cfg(feature = "host")]
mod error;
#[cfg(feature = "host")]
mod fill;
#[cfg(feature = "host")]
mod memory;
#[cfg(feature = "host")]
mod ops;
#[cfg(feature = "host")]
mod order;
#[cfg(feature = "host")]
mod pitched;
#[cfg(feature = "host")]
mod pool;
#[cfg(feature = "host")]
mod view;

#[cfg(feature = "host")]
pub use {
    buffer::{
        Advice, Buffer, Device, DeviceBuffer, HostAccessible, Location, MemoryKind, Pinned,
        PinnedBuffer, Pool, PoolBuffer, Unified, UnifiedBuffer,
    },
    context::{context, device_count, is_available},
    cudarc::driver::{CudaContext, CudaStream},
    error::{Error, Result},
    fill::{__set_fill_chunks_per_thread, fill_kernels_ptx},
    memory::PinnedFlags,
    pool::{MemPool, PoolUsage},
    view::{AsView, KernelArg, View, ViewMut},
};

#[cfg(feature = "host")]
pub use {
    alloc::{
        CudaAllocator, DeviceAlloc, PinnedAllocator, UnifiedAllocator, DEVICE_MAX_ALIGN,
        PINNED_MAX_ALIGN,
    },
    pitched::PitchedBuffer,
};

/// Re-export of the cudarc version cuda-mem is built on, for kernel launches
/// (`cudarc::driver::PushKernelArg`, `LaunchConfig`) and anything else.
#[cfg(feature = "host")]
pub use cudarc;
