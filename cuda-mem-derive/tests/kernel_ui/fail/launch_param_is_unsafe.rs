//! The same through a launch under way (`Module::__begin`): its `param` is
//! an `unsafe fn` too, so no parameter value reaches safe code.
#![forbid(unsafe_code)]
#![allow(dead_code)]
use cm_renamed::device::DeviceSliceMut;
use cm_renamed::{CudaStream, DeviceBuffer, Module};
use std::sync::Arc;

fn leak(
    m: &'static Module,
    b: &mut DeviceBuffer<u32>,
    s: &Arc<CudaStream>,
) -> cm_renamed::Result<DeviceSliceMut<'static, u32>> {
    let launch = m.__begin("k", 0, &[], s)?;
    launch.param::<_, DeviceSliceMut<'static, u32>>(b)
}

fn main() {}
