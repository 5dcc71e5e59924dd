//! A module that is not `'static`: a loaded module lives as long as the program.
#![allow(dead_code)]
use cm_renamed::device::{DeviceSlice, DeviceSliceMut};
use cm_renamed::{kernel, CudaStream, DeviceBuffer, LaunchConfig, Module};
use std::sync::Arc;

#[kernel(crate = "cm_renamed")]
fn scale(data: DeviceSliceMut<f32>, factor: f32) {
    let _ = (data, factor);
}

#[kernel(crate = "cm_renamed")]
fn sum(input: DeviceSlice<u32>, out: DeviceSliceMut<u64>) {
    let _ = (input, out);
}

fn launch(s: &Arc<CudaStream>, c: LaunchConfig, b: &mut DeviceBuffer<f32>) -> cm_renamed::Result<()> {
    // SAFETY: no kernels.
    let module = unsafe { Module::new("local", "") };
    scale.launch(&module, s, c, (b, 2.0))
}

fn main() {}
