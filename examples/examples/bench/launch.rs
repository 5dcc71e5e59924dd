//! The typed-launch row: a `#[kernel]` launch against a bare
//! `cuLaunchKernel` of the same kernel.

use cuda_mem::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;

use cuda_mem::cudarc::driver::result;
use cuda_mem::{CudaContext, DeviceBuffer};

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
    /// `DeviceSliceMut<f32>` as the kernel reads it.
    #[repr(C)]
    struct RawSlice {
        ptr: u64,
        len: usize,
    }
    let (ours, raw) = b.host_pair_us(
        n,
        || {
            scale_f32
                .launch(&KERNELS, &s, config, (&mut data, 1.0))
                .unwrap()
        },
        || {
            let mut slice = RawSlice {
                ptr: addr,
                len: 1024,
            };
            let mut factor = 1.0f32;
            let params: &mut [*mut c_void] = &mut [
                (&mut slice as *mut RawSlice).cast(),
                (&mut factor as *mut f32).cast(),
            ];
            // SAFETY: `scale_f32`'s parameters (the live 1024-float buffer
            // as `{ptr, len}`, a factor), on the stream the typed launches use.
            unsafe {
                result::launch_kernel(
                    f.cu_function(),
                    config.grid_dim,
                    config.block_dim,
                    0,
                    s.cu_stream(),
                    params,
                )
                .unwrap()
            }
        },
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
