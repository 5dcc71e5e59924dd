//! A shared view where the kernel writes: only `slice_mut` views are writable.
#![allow(dead_code)]
use cm_renamed::device::{DeviceSlice, DeviceSliceMut};
use cm_renamed::{kernel, CudaStream, DeviceBuffer, LaunchConfig, Module};
use std::sync::Arc; use cm_renamed::prelude::*;

#[kernel(crate = "cm_renamed")]
fn scale(data: DeviceSliceMut<f32>, factor: f32) {
    let _ = (data, factor);
}

#[kernel(crate = "cm_renamed")]
fn sum(input: DeviceSlice<u32>, out: DeviceSliceMut<u64>) {
    let _ = (input, out);
}

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, b: &mut DeviceBuffer<f32>) -> cm_renamed::Result<()> {
    scale.launch(m, s, c, (b.slice(1..)?, 2.0))
}

fn main() {}
