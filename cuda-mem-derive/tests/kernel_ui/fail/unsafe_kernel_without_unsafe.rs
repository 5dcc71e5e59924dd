//! Launching an `unsafe fn` kernel outside `unsafe`.
#![allow(dead_code)]
use cm_renamed::{kernel, CudaStream, DevicePtr, LaunchConfig, Module};
use std::sync::Arc;

/// # Safety
/// `ptr` points to a `u32` that nothing else uses.
#[kernel(crate = "cm_renamed")]
unsafe fn poke(ptr: DevicePtr<u32>, value: u32) {
    let _ = (ptr, value);
}

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, p: DevicePtr<u32>) -> cm_renamed::Result<()> {
    poke.launch(m, s, c, (p, 7))
}

fn main() {}
