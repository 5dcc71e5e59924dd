//! cuda-mem's launch macro called by hand for an `unsafe fn` kernel
//! (`unsafe_kernel true`, which the PTX's fingerprint of such a kernel requires)
//! from a safe fn: the launch needs an unsafe context, as the generated
//! `unsafe fn launch` has.
#![allow(dead_code)]
use cm_renamed::{CudaStream, DevicePtr, KernelParam, LaunchArg, LaunchConfig, Module};
use std::sync::Arc;

fn launch<A: LaunchArg<P>, P: KernelParam>(
    module: &'static Module,
    stream: &Arc<CudaStream>,
    config: LaunchConfig,
    args: (A,),
) -> cm_renamed::Result<()> {
    cm_renamed::__kernel_launch! {
        module module, stream stream, config config, name "poke",
        unsafe_kernel true, source 1u64, args args [ptr: A => P]
    }
}

fn call(m: &'static Module, s: &Arc<CudaStream>, c: LaunchConfig, p: DevicePtr<u32>) -> cm_renamed::Result<()> {
    launch::<DevicePtr<u32>, DevicePtr<u32>>(m, s, c, (p,))
}

fn main() {}
