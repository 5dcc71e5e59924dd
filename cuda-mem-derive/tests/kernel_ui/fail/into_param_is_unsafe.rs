//! A launch argument's parameter value taken by hand: a `DeviceSlice` of any
//! lifetime over the buffer, which safe host code could read after the
//! buffer is freed, or hold twice as `DeviceSliceMut`. Only the launchers
//! `#[kernel]` generates may make one (`__into_param` is an `unsafe fn`).
#![forbid(unsafe_code)]
#![allow(dead_code)]
use cm_renamed::device::DeviceSlice;
use cm_renamed::{CudaStream, DeviceBuffer, LaunchArg};
use std::sync::Arc;

fn leak(b: &DeviceBuffer<u32>, s: &Arc<CudaStream>) -> DeviceSlice<'static, u32> {
    LaunchArg::<DeviceSlice<'static, u32>>::__into_param(b, s).unwrap()
}

fn main() {}
