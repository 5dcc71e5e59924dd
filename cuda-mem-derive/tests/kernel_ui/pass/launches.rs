//! Every accepted argument form, in a crate that forbids `unsafe` code and
//! warnings: the generated launcher needs neither.
#![forbid(unsafe_code)]
#![deny(warnings)]
#![allow(non_snake_case)]

use cm_renamed::device::{DeviceSlice, DeviceSliceMut};
use cm_renamed::{kernel, CudaStream, DeviceBuffer, DeviceCopy, DevicePtr, LaunchConfig, Module, PinnedBuffer};
use std::sync::Arc; use cm_renamed::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
pub struct Params {
    pub scale: f32,
    pub count: u32,
}

/// Reads one slice and writes another.
#[kernel(crate = "cm_renamed")]
pub fn map(out: DeviceSliceMut<f32>, input: DeviceSlice<'_, f32>, params: Params, extra: [u64; 2]) {
    let _ = (out, input, params, extra);
}

#[kernel(crate = "cm_renamed")]
pub fn one(out: DeviceSliceMut<u8>) {
    let _ = out;
}

#[kernel(crate = "cm_renamed")]
pub fn none() {}

/// A declared block shape, with the crate path after it.
#[kernel(block = [32, 8], crate = "cm_renamed")]
pub fn shaped(out: DeviceSliceMut<u8>) {
    let _ = (out, cm_renamed::device::thread_idx_for::<32, 8, 1>());
}

#[kernel(crate = "cm_renamed")]
pub fn pointer(mut p: DevicePtr<u32>, [a, b]: [u32; 2]) {
    p = p.cast();
    let _ = (p, a, b);
}

pub fn launches(KERNELS: &'static Module, s: &Arc<CudaStream>, out: &mut DeviceBuffer<f32>, input: &PinnedBuffer<f32>) -> cm_renamed::Result<()> {
    let c = LaunchConfig::for_num_elems(out.len() as u32);
    let params = Params { scale: 2.0, count: 3 };
    let shape = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
    let mut shaped_out = DeviceBuffer::<u8>::new(out.context(), 16)?;
    shaped.launch(KERNELS, s, shape, (&mut shaped_out,))?;
    map.launch(KERNELS, s, c, (&mut *out, input, params, [1, 2]))?;
    map.launch(KERNELS, s, c, (out.slice_mut(1..)?, input.slice(1..)?, params, [1, 2]))?;
    {
        let mut view = out.slice_mut(..)?;
        map.launch(KERNELS, s, c, (&mut view, &input.slice(..)?, params, [0; 2]))?;
        let shared = input.slice(..)?;
        map.launch(KERNELS, s, c, (view, &shared, params, [0; 2]))?;
    }
    // Integer and float literals take the parameter's type.
    let mut bytes = DeviceBuffer::<u8>::new(out.context(), 4)?;
    one.launch(KERNELS, s, c, (&mut bytes,))?;
    none.launch(KERNELS, s, c, ())?;
    pointer.launch(KERNELS, s, c, (bytes.as_device_ptr().cast(), [1, 2]))?;
    // After the call the buffers are free again.
    out.fill(1.0)?;
    Ok(())
}

fn main() {}
