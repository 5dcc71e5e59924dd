//! A tile size of 0 (which owns no element, and would make every tile
//! number point at the same place) fails the build where the parameter is
//! made.
#![allow(dead_code)]
use cm_renamed::device::DeviceTilesMut;
use cm_renamed::{CudaStream, DeviceBuffer, LaunchConfig, Module};
use std::sync::Arc;

#[cm_renamed::kernel(crate = "cm_renamed")]
fn fill(out: DeviceTilesMut<u32, 0>) {
    let _ = out;
}

fn launch(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, out: &mut DeviceBuffer<u32>) -> cm_renamed::Result<()> {
    fill.launch(m, s, c, (out,))
}

fn main() {
    // Reached from `main`, so the launcher is instantiated (and with it the
    // parameter's size check).
    let _: fn(&'static Module, &Arc<CudaStream>, LaunchConfig, &mut DeviceBuffer<u32>) -> cm_renamed::Result<()> = launch;
}
