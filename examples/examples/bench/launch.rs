//! The typed-launch row: a `#[kernel]` launch against a bare
//! `cuLaunchKernel` of the same kernel.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::{CudaContext, DeviceBuffer};
use cuda_mem_examples::raw;

use crate::harness::Bench;

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("particles-shared");

/// The host cost of a typed launch of `scale_f32` (one `&mut` buffer and one
/// `f32`: a lookup of the checked function, the buffer's claim on the
/// stream, the context bind) against `cuLaunchKernel` of the same function
/// with hand-made parameters. Batches of 1000 launches, short enough that
/// the launch queue never fills (then the host would wait for the GPU).
pub fn typed_launch(b: &mut Bench, ctx: &Arc<CudaContext>) {
    use particles_shared::scale_f32;
    let n = 1000;
    let s = b.stream.clone();
    let sync = || s.synchronize().unwrap();
    let mut data = DeviceBuffer::<f32>::zeroed(ctx, 1024).unwrap();
    let config = cuda_mem::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    scale_f32.check(&KERNELS, ctx).unwrap();
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(KERNELS.ptx()))
        .unwrap();
    let f = module.load_function(scale_f32::NAME).unwrap();
    let addr = data.as_device_ptr().addr();
    let (ours, raw) = b.host_pair_us(
        n,
        || {
            scale_f32
                .launch(&KERNELS, &s, config, (&mut data, 1.0))
                .unwrap()
        },
        // SAFETY: `scale_f32` over the live 1024-float buffer, on the
        // stream the typed launches use.
        || unsafe { raw::slice_and_scalar(f.cu_function(), &s, config, addr, 1024, 1.0).unwrap() },
        sync,
    );
    assert!(data.to_vec().unwrap().iter().all(|&x| x == 0.0));
    b.push(
        "small",
        "typed launch (#[kernel], buffer + f32)".into(),
        "us",
        ours,
        raw,
        "cuLaunchKernel",
        false,
        None,
    );
}
