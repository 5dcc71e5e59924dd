//! `&` a buffer where the kernel writes (`DeviceSliceMut`): `&mut` is needed.
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

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, input: &DeviceBuffer<u32>, out: &DeviceBuffer<u64>) -> cm_renamed::Result<()> {
    sum.launch(m, s, c, (input, out))
}

fn main() {}
