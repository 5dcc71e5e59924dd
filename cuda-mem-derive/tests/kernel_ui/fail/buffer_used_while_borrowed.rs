//! The arguments are borrowed for the call only, but a view taken for it
//! keeps its buffer borrowed as long as the view lives.
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
    let view = b.slice_mut(..)?;
    b.fill(0.0)?;
    scale.launch(m, s, c, (view, 2.0))
}

fn main() {}
