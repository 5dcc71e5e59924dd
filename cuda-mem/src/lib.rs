//! cuda-mem: typed GPU memory (crate docs are written in `docs/guide.md`).
#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

extern crate self as cuda_mem;

mod device_copy;
mod device_ptr;

pub use device_copy::DeviceCopy;
pub use device_ptr::DevicePtr;
