//! A slow kernel for ordering tests: `spin_then_copy` spins for a given
//! number of clock cycles before it copies, so work queued after it on its
//! stream is held back long enough for a missing cross-stream wait to show.

use std::sync::Arc;

use cuda_mem::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cuda_mem::cudarc::nvrtc::Ptx;
use cuda_mem::KernelArg;

/// The PTX of `spin_then_copy(src, dst, n, spin)`: spins for `spin` clock cycles, then
/// copies `n` `u32`s from `src` to `dst` (one per thread).
pub const SPIN_COPY_PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64

.visible .entry spin_then_copy(
    .param .u64 src,
    .param .u64 dst,
    .param .u64 n,
    .param .u64 spin
)
{
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<14>;

    ld.param.u64 %rd1, [src];
    ld.param.u64 %rd2, [dst];
    ld.param.u64 %rd3, [n];
    ld.param.u64 %rd4, [spin];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u64 %rd5, %clock64;
SPIN:
    mov.u64 %rd6, %clock64;
    sub.u64 %rd7, %rd6, %rd5;
    setp.lt.u64 %p1, %rd7, %rd4;
    @%p1 bra SPIN;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mul.wide.u32 %rd8, %r2, %r3;
    cvt.u64.u32 %rd9, %r1;
    add.u64 %rd8, %rd8, %rd9;
    setp.ge.u64 %p2, %rd8, %rd3;
    @%p2 bra DONE;
    shl.b64 %rd10, %rd8, 2;
    add.u64 %rd11, %rd1, %rd10;
    add.u64 %rd12, %rd2, %rd10;
    ld.global.u32 %r4, [%rd11];
    st.global.u32 [%rd12], %r4;
DONE:
    ret;
}
"#;

/// About 0.2 s on a 2 GHz GPU: far longer than the host needs to get ahead.
pub const SLOW: u64 = 400_000_000;

/// Loads `spin_then_copy` into `ctx`.
pub fn spin_copy(ctx: &Arc<cuda_mem::CudaContext>) -> CudaFunction {
    ctx.load_module(Ptx::from_src(SPIN_COPY_PTX))
        .unwrap()
        .load_function("spin_then_copy")
        .unwrap()
}

/// Launches `spin_then_copy` on `stream`: spins `spin` cycles, then copies
/// `n` (at least 1) `u32`s from `src` to `dst`.
pub fn launch(
    f: &CudaFunction,
    stream: &Arc<CudaStream>,
    src: &KernelArg<'_, u32>,
    dst: &KernelArg<'_, u32>,
    n: usize,
    spin: u64,
) {
    let n = n as u64;
    let mut b = stream.launch_builder(f);
    b.arg(src).arg(dst).arg(&n).arg(&spin);
    // SAFETY: the kernel's signature is (u64, u64, u64, u64); `src` and `dst`
    // address at least `n` u32s each (the callers' buffers), and the kernel
    // arguments order the launch after earlier work on them.
    unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.unwrap();
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_spin_kernel_is_valid_ptx() {
        crate::assemble_ptx(super::SPIN_COPY_PTX, "spin_then_copy");
    }
}
