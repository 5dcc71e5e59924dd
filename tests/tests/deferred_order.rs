//! Kernel arguments are *deferred* uses: the launch comes after the claim,
//! possibly after claims on other streams. These GPU tests claim a buffer on
//! two streams before launching, make the first launch slow (it spins for a
//! while before touching the buffer), and check that host access waits for
//! both launches, not only for the stream claimed last.

use std::sync::Arc;

use cuda_mem::cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cuda_mem::{DeviceBuffer, KernelArg, PinnedBuffer};
use cuda_mem_tests::{assemble_ptx, gpu, spin_copy, Rng, SPIN_COPY_PTX};

/// About 0.2 s on a 2 GHz GPU: far longer than the host needs to get ahead.
const SLOW: u64 = 400_000_000;

#[test]
fn the_spin_kernel_is_valid_ptx() {
    assemble_ptx(SPIN_COPY_PTX, "spin_then_copy");
}

fn launch(
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

#[test]
#[ignore = "needs a CUDA device"]
fn host_writes_wait_for_every_stream_that_holds_a_read_argument() {
    let mut rng = Rng::from_env("host_writes_wait_for_every_stream_that_holds_a_read_argument");
    let ctx = gpu();
    let f = spin_copy(&ctx);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 1 + rng.below(1 << 16);
    let data: Vec<u32> = rng.values(n);
    let mut src = PinnedBuffer::from_slice(&ctx, &data).unwrap();
    let mut out1 = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    let mut out2 = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    out1.memset(0x5a).unwrap();
    out2.memset(0x5a).unwrap();
    {
        // Two read-only arguments of one buffer, claimed on two streams
        // before either launch; the first launch is the slow one.
        let a = src.kernel_arg(&s1).unwrap();
        let b = src.kernel_arg(&s2).unwrap();
        let o1 = out1.kernel_arg_mut(&s1).unwrap();
        let o2 = out2.kernel_arg_mut(&s2).unwrap();
        launch(&f, &s1, &a, &o1, n, SLOW);
        launch(&f, &s2, &b, &o2, n, 0);
    }
    // The host overwrites the source: this must wait for the slow kernel too.
    src.as_mut_slice().unwrap().fill(0xdead_beef);
    assert!(
        out1.to_vec().unwrap() == data,
        "the slow kernel read the overwritten source"
    );
    assert!(out2.to_vec().unwrap() == data, "the fast kernel");
}

#[test]
#[ignore = "needs a CUDA device"]
fn host_reads_wait_for_both_halves_of_split_at_mut() {
    let mut rng = Rng::from_env("host_reads_wait_for_both_halves_of_split_at_mut");
    let ctx = gpu();
    let f = spin_copy(&ctx);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let n = 2 + rng.below(1 << 16);
    let half = 1 + rng.below(n - 1);
    let data: Vec<u32> = rng.values(n);
    let input = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut dst = PinnedBuffer::<u32>::new(&ctx, n).unwrap();
    {
        // Each half written by its own kernel on its own stream, claimed
        // before either launch; the first (slow) one writes the left half.
        let (mut left, mut right) = dst.split_at_mut(half).unwrap();
        let l = left.kernel_arg_mut(&s1).unwrap();
        let r = right.kernel_arg_mut(&s2).unwrap();
        let (input_l, input_r) = (input.slice(..half).unwrap(), input.slice(half..).unwrap());
        let in_l = input_l.kernel_arg(&s1).unwrap();
        let in_r = input_r.kernel_arg(&s2).unwrap();
        launch(&f, &s1, &in_l, &l, half, SLOW);
        launch(&f, &s2, &in_r, &r, n - half, 0);
    }
    // Reading the destination must wait for the slow left half too.
    assert!(
        dst.as_slice().unwrap() == &data[..],
        "the host read before both kernels wrote"
    );
}
