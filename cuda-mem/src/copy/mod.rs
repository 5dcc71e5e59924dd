//! `copy/`: the type contract, shared by the host and the kernels (it builds
//! under `#![no_std]`, for `nvptx64-nvidia-cuda` too). It owns
//! [`DeviceCopy`](device_copy::DeviceCopy) and its impls for the primitives,
//! [`CheckedDeviceCopy`](checked::CheckedDeviceCopy) (types stored as the
//! bits of a `DeviceCopy` type, read back through a check),
//! [`DeviceSoA`](soa::DeviceSoA) (structs kept as a structure of arrays:
//! their field table and the generic pieces the derive fills in),
//! arrays, `half`, `num_complex` and (module `foreign`) glam and mint; the
//! byte views it makes sound; [`DevicePtr`](device_ptr::DevicePtr); the
//! layout fingerprints (`layout`); and the proof that `#[derive(DeviceCopy)]`
//! expands to (`derive_support`, whose checks live in `private`).
//!
//! May use: nothing else of the crate. This is the bottom layer: everything
//! else, the device std included, builds on it.

pub(crate) mod checked;
mod derive_support;
pub(crate) mod device_copy;
pub(crate) mod device_ptr;
#[cfg(any(feature = "glam", feature = "mint"))]
mod foreign;
#[doc(hidden)]
pub mod layout;
#[doc(hidden)]
pub mod private;
pub(crate) mod soa;
