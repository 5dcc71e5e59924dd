//! A launch argument's parameter value taken by hand: a `DeviceSlice` of any
//! lifetime over the buffer, which safe host code could read after the
//! buffer is freed, or hold twice as `DeviceSliceMut`. Only the launchers
//! `#[kernel]` generates may make one (`__into_param` is an `unsafe fn`),
//! even with a launch under way to hand it (`Module::__begin`).
#![forbid(unsafe_code)]
#![allow(dead_code)]
use cm_renamed::device::DeviceSlice;
use cm_renamed::{CudaStream, DeviceBuffer, LaunchArg, Module};
use std::sync::Arc;

fn leak(
    m: &'static Module,
    b: &DeviceBuffer<u32>,
    s: &Arc<CudaStream>,
) -> cm_renamed::Result<DeviceSlice<'static, u32>> {
    let launch = m.__begin("k", 0, &[], s)?;
    LaunchArg::<DeviceSlice<'static, u32>>::__into_param(b, &launch)
}

fn main() {}
