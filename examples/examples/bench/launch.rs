//! The typed-launch row: a `#[kernel]` launch against a bare
//! `cuLaunchKernel` of the same kernel.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::CudaFunction;
use cuda_mem::{CudaContext, DeviceBuffer};
use cuda_mem_examples::raw;

use crate::harness::{Bench, RowStream};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("particles-shared");

/// The host cost of a typed launch of `scale_f32` (one `&mut` buffer and one
/// `f32`: a lookup of the checked function, the buffer's claim on the
/// stream, the context bind) against `cuLaunchKernel` of the same function
/// with hand-made parameters, on the bench's stream and on a
/// `cuda_mem::Stream`.
pub fn typed_launch(b: &mut Bench, ctx: &Arc<CudaContext>) {
    use particles_shared::scale_f32;
    scale_f32.check(&KERNELS, ctx).unwrap();
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(KERNELS.ptx()))
        .unwrap();
    let f = module.load_function(scale_f32::NAME).unwrap();
    let s = b.stream.clone();
    launch_row(b, ctx, &s, &f);
    launch_row(b, ctx, &cuda_mem::Stream::new(ctx).unwrap(), &f);
}

/// The typed launch on `s` against the bare launch, in batches of 1000
/// launches, short enough that the launch queue never fills (then the host
/// would wait for the GPU). Each stream gets a buffer of its own: a
/// buffer's claims as a kernel argument stay in its ledger (see `order`),
/// so launches on another stream would order after them.
fn launch_row<S: RowStream>(b: &mut Bench, ctx: &Arc<CudaContext>, s: &S, f: &CudaFunction) {
    use particles_shared::scale_f32;
    let mut data = DeviceBuffer::<f32>::zeroed(ctx, 1024).unwrap();
    let config = cuda_mem::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let addr = data.as_device_ptr().addr();
    let (ours, raw) = b.host_pair_us(
        1000,
        || {
            scale_f32
                .launch(&KERNELS, s, config, (&mut data, 1.0))
                .unwrap()
        },
        // SAFETY: `scale_f32` over the live 1024-float buffer, on the
        // stream the typed launches use.
        || unsafe {
            raw::slice_and_scalar(f.cu_function(), s.handle(), config, addr, 1024, 1.0).unwrap()
        },
        || s.sync(),
    );
    assert!(data.to_vec().unwrap().iter().all(|&x| x == 0.0));
    b.push(
        "small",
        format!("typed launch (#[kernel], buffer + f32){}", S::SUFFIX),
        "us",
        ours,
        raw,
        "cuLaunchKernel",
        false,
        None,
    );
}
