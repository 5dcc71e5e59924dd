//! The device side: what a kernel written in Rust uses, for the stock
//! `nvptx64-nvidia-cuda` target (nightly, `-Zbuild-std=core`, no NVVM).
//!
//! This module builds on every target, so that a crate shared by the host and
//! its kernels type-checks (and documents) on the host too.
//!
//! - [`DeviceSlice`] and [`DeviceSliceMut`]: kernel parameters, the exact
//!   `{ptr, len}` the host pushes for a buffer or view.

pub mod slice;

pub use slice::{DeviceSlice, DeviceSliceMut};
