//! `&` a buffer where the kernel writes tiles (`DeviceTilesMut`): the
//! partitions take the arguments of a `DeviceSliceMut`, `&mut` ones.
#![allow(dead_code)]
use cm_renamed::device::DeviceTilesMut;
use cm_renamed::{CudaStream, DeviceBuffer, LaunchConfig, Module};
use std::sync::Arc;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(out: DeviceTilesMut<u32, 4>) {
    let _ = out;
}

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, out: &DeviceBuffer<u32>) -> cm_renamed::Result<()> {
    fill.launch(m, s, c, (out,))
}

fn main() {}
