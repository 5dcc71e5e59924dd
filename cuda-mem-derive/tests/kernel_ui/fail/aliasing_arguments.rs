//! One buffer as the written and the read argument of one launch.
#![allow(dead_code)]
use cm_renamed::device::{DeviceSlice, DeviceSliceMut};
use cm_renamed::{kernel, CudaStream, DeviceBuffer, LaunchConfig, Module};
use std::sync::Arc;

#[kernel(crate = "cm_renamed")]
fn add(out: DeviceSliceMut<f32>, input: DeviceSlice<f32>) {
    let _ = (out, input);
}

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, b: &mut DeviceBuffer<f32>) -> cm_renamed::Result<()> {
    add.launch(m, s, c, (&mut *b, &*b))
}

fn main() {}
