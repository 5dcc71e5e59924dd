//! Kernel arguments are *deferred* uses: the launch comes after the claim,
//! possibly after claims on other streams. These GPU tests claim a buffer on
//! two streams before launching, make the first launch slow (it spins for a
//! while before touching the buffer), and check that host access waits for
//! both launches, not only for the stream claimed last.

use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, PinnedBuffer};
use cuda_mem_tests::spin::{launch, spin_copy, SLOW};
use cuda_mem_tests::{gpu, Rng};

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
