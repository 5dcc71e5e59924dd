//! Per-range ordering on the GPU: operations on views of one allocation on
//! different streams.
//!
//! Overlapping views stay ordered: random steps (fills, memsets, copies from
//! another buffer, from pinned memory and between two halves of the buffer,
//! kernel writes, view reads) on 2-4 streams over random, often overlapping
//! views of one buffer of every 1D kind; a step's stream is often held back
//! first behind a slow kernel, so an ordering that let a later step on
//! another stream run first leaves the earlier step's bytes, which the host
//! model (applied in program order) does not have. Every element is checked.
//!
//! Disjoint views do not wait for each other: a read of one part returns
//! while a slow kernel still writes the other part, and a read of a view
//! that overlaps that part by one element waits for it.

use cuda_mem::prelude::*;
use std::sync::Arc;
use std::time::Instant;

use cuda_mem::cudarc::driver::{CudaFunction, CudaStream};
use cuda_mem::{
    Buffer, CudaContext, DeviceBuffer, MemoryKind, PinnedBuffer, PoolBuffer, UnifiedBuffer,
};
use cuda_mem_tests::spin::{launch, spin_copy, SLOW};
use cuda_mem_tests::{gpu, Rng};

/// How long a held-back stream waits (about 10 ms on a 2 GHz GPU: long
/// enough for the host to queue the next steps on other streams).
const STALL: u64 = 20_000_000;

/// What every round needs besides its buffer.
struct Env {
    ctx: Arc<CudaContext>,
    spin: CudaFunction,
    streams: Vec<Arc<CudaStream>>,
    /// A buffer of its own that the stalling kernels copy within.
    blocker: DeviceBuffer<u32>,
}

impl Env {
    /// Holds `stream` back for [`STALL`] cycles (a kernel on another allocation).
    fn stall(&mut self, stream: &Arc<CudaStream>) {
        let mut blocker = self.blocker.slice_mut(..).unwrap();
        let arg = blocker.kernel_arg_mut(stream).unwrap();
        launch(&self.spin, stream, &arg, &arg, 1, STALL);
    }
}

/// A random non-empty range of `0..n`, half the time meeting `near`.
fn range(rng: &mut Rng, n: usize, near: Option<(usize, usize)>) -> (usize, usize) {
    let a = match near {
        Some((x, y)) if rng.below(2) == 0 => x.saturating_sub(rng.below(64)).min(y - 1),
        _ => rng.below(n),
    };
    let most = 1 + rng.below(n);
    let b = a + 1 + rng.below((n - a).min(most));
    (a, b.min(n))
}

/// One round: poisons `buf`, runs random steps over views of it on the
/// environment's streams, and compares every element with the model.
fn round<K: MemoryKind>(env: &mut Env, rng: &mut Rng, buf: &mut Buffer<u32, K>, name: &str) {
    let n = buf.len();
    let poison: u32 = rng.value();
    buf.fill(poison).unwrap();
    let mut model = vec![poison; n];
    let data: Vec<u32> = rng.values(n);
    let src = DeviceBuffer::from_slice(&env.ctx, &data).unwrap();
    // Pinned sources stay alive until the end: dropping one would wait for
    // its copy and take the race away.
    let mut pinned = Vec::new();
    let mut log = Vec::new();
    let mut last: Option<(usize, usize)> = None;
    let steps = 2 + rng.below(12);
    for _ in 0..steps {
        let si = rng.below(env.streams.len());
        let s = env.streams[si].clone();
        let stalled = rng.below(2) == 0;
        if stalled {
            env.stall(&s);
        }
        let (a, b) = range(rng, n, last);
        let len = b - a;
        let op = rng.below(7);
        let step = format!(
            "stream {si} {a}..{b}{}",
            if stalled { " stalled" } else { "" }
        );
        match op {
            0 => {
                let v: u32 = rng.value();
                buf.slice_mut(a..b).unwrap().fill_async(v, &s).unwrap();
                model[a..b].fill(v);
                log.push(format!("{step}: fill {v:#x}"));
            }
            1 => {
                let byte = rng.value::<u8>();
                buf.slice_mut(a..b).unwrap().memset_async(byte, &s).unwrap();
                model[a..b].fill(u32::from_ne_bytes([byte; 4]));
                log.push(format!("{step}: memset {byte:#x}"));
            }
            2 => {
                let o = rng.below(n - len + 1);
                let from = src.slice(o..o + len).unwrap();
                buf.slice_mut(a..b)
                    .unwrap()
                    .copy_from_async(&from, &s)
                    .unwrap();
                model[a..b].copy_from_slice(&data[o..o + len]);
                log.push(format!("{step}: copy from device {o}.."));
            }
            3 => {
                let values: Vec<u32> = rng.values(len);
                let host = PinnedBuffer::from_slice(&env.ctx, &values).unwrap();
                buf.slice_mut(a..b)
                    .unwrap()
                    .copy_from_host_async(&host, &s)
                    .unwrap();
                model[a..b].copy_from_slice(&values);
                pinned.push(host);
                log.push(format!("{step}: copy from pinned"));
            }
            4 => {
                // A kernel writes the view (a deferred claim), reading `src`.
                let o = rng.below(n - len + 1);
                let from = src.slice(o..o + len).unwrap();
                let input = from.kernel_arg(&s).unwrap();
                let mut view = buf.slice_mut(a..b).unwrap();
                let out = view.kernel_arg_mut(&s).unwrap();
                launch(&env.spin, &s, &input, &out, len, 0);
                model[a..b].copy_from_slice(&data[o..o + len]);
                log.push(format!("{step}: kernel copy from device {o}.."));
            }
            5 if n >= 2 => {
                // A copy between two disjoint views of the buffer itself.
                let mid = 1 + rng.below(n - 1);
                let k = 1 + rng.below(mid.min(n - mid));
                let (l, r) = (rng.below(mid - k + 1), mid + rng.below(n - mid - k + 1));
                let to_left = rng.below(2) == 0;
                let (mut left, mut right) = buf.split_at_mut(mid).unwrap();
                if to_left {
                    let from = right.slice(r - mid..r - mid + k).unwrap();
                    let mut to = left.slice_mut(l..l + k).unwrap();
                    to.copy_from_async(&from, &s).unwrap();
                    model.copy_within(r..r + k, l);
                } else {
                    let from = left.slice(l..l + k).unwrap();
                    let mut to = right.slice_mut(r - mid..r - mid + k).unwrap();
                    to.copy_from_async(&from, &s).unwrap();
                    model.copy_within(l..l + k, r);
                }
                log.push(format!(
                    "stream {si}: copy within {}..{} <- {}..{}{}",
                    if to_left { l } else { r },
                    if to_left { l + k } else { r + k },
                    if to_left { r } else { l },
                    if to_left { r + k } else { l + k },
                    if stalled { " (stalled)" } else { "" }
                ));
                last = Some(if to_left { (l, l + k) } else { (r, r + k) });
                continue;
            }
            _ => {
                // A view read: waits for the steps that wrote these elements.
                let got = buf.slice(a..b).unwrap().to_vec().unwrap();
                if let Some(i) = (0..len).find(|&i| got[i] != model[a + i]) {
                    panic!(
                        "{name}: reading {a}..{b}: element {} is {:#x}, want {:#x} (poison {poison:#x}); steps:\n{}",
                        a + i,
                        got[i],
                        model[a + i],
                        log.join("\n")
                    );
                }
                log.push(format!("{step}: read"));
            }
        }
        last = Some((a, b));
    }
    let got = buf.to_vec().unwrap();
    let bad: Vec<usize> = (0..n).filter(|&i| got[i] != model[i]).collect();
    assert!(
        bad.is_empty(),
        "{name}: {} of {n} elements differ, first {} is {:#x}, want {:#x} (poison {poison:#x}); steps:\n{}",
        bad.len(),
        bad[0],
        got[bad[0]],
        model[bad[0]],
        log.join("\n")
    );
    drop(pinned);
}

#[test]
#[ignore = "needs a CUDA device"]
fn steps_on_overlapping_views_on_several_streams_keep_program_order() {
    let mut rng = Rng::from_env("steps_on_overlapping_views_on_several_streams_keep_program_order");
    let ctx = gpu();
    let k = 2 + rng.below(3);
    let mut env = Env {
        spin: spin_copy(&ctx),
        streams: (0..k).map(|_| ctx.new_stream().unwrap()).collect(),
        blocker: DeviceBuffer::zeroed(&ctx, 1).unwrap(),
        ctx: ctx.clone(),
    };
    let rounds = 40;
    for r in 0..rounds {
        let bits = 4 + rng.below(14);
        let n = 1 + rng.below(1 << bits);
        let name = ["device", "pinned", "unified", "pool"][r % 4];
        match r % 4 {
            0 => round(
                &mut env,
                &mut rng,
                &mut DeviceBuffer::new(&ctx, n).unwrap(),
                name,
            ),
            1 => round(
                &mut env,
                &mut rng,
                &mut PinnedBuffer::new(&ctx, n).unwrap(),
                name,
            ),
            2 => round(
                &mut env,
                &mut rng,
                &mut UnifiedBuffer::new(&ctx, n).unwrap(),
                name,
            ),
            _ => {
                let s = env.streams[0].clone();
                round(
                    &mut env,
                    &mut rng,
                    &mut PoolBuffer::new(n, &s).unwrap(),
                    name,
                )
            }
        }
    }
    eprintln!("{rounds} rounds on {k} streams: every element as in program order");
}

/// A slow kernel writes `0..half` of a device or pool buffer on one stream;
/// a fill and a read of `half..` on another return while it runs; a read that
/// overlaps its part by one element waits for it.
fn disjoint_parts<K: MemoryKind>(ctx: &Arc<CudaContext>, rng: &mut Rng, buf: &mut Buffer<u32, K>) {
    let n = buf.len();
    let half = 1 + rng.below(n - 1);
    let (s1, s2) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let spin = spin_copy(ctx);
    let poison: u32 = rng.value();
    buf.fill(poison).unwrap();
    let data: Vec<u32> = rng.values(n);
    let src = DeviceBuffer::from_slice(ctx, &data).unwrap();
    let v: u32 = rng.value();
    // Untimed: the first read back sets up its staging memory.
    assert!(buf.to_vec().unwrap().iter().all(|&x| x == poison));
    let start;
    {
        let input = src.slice(..half).unwrap();
        let input = input.kernel_arg(&s1).unwrap();
        let (mut left, mut right) = buf.split_at_mut(half).unwrap();
        let out = left.kernel_arg_mut(&s1).unwrap();
        start = Instant::now();
        launch(&spin, &s1, &input, &out, half, SLOW);
        right.fill_async(v, &s2).unwrap();
    }
    let right = buf.slice(half..).unwrap().to_vec().unwrap();
    let t_right = start.elapsed();
    assert!(right.iter().all(|&x| x == v), "the right part");
    let k = 1 + rng.below(n - half);
    let straddle = buf.slice(half - 1..half + k).unwrap().to_vec().unwrap();
    let t_straddle = start.elapsed();
    assert_eq!(
        straddle[0],
        data[half - 1],
        "a read overlapping the kernel's part by one element did not wait for it"
    );
    assert!(straddle[1..].iter().all(|&x| x == v));
    let whole = buf.to_vec().unwrap();
    assert!(whole[..half] == data[..half], "the kernel's part");
    assert!(whole[half..].iter().all(|&x| x == v), "the filled part");
    eprintln!(
        "n {n}, half {half}: the disjoint part read after {t_right:?}, the overlapping one after {t_straddle:?}"
    );
    assert!(
        t_right * 4 < t_straddle,
        "the read of the disjoint part ({t_right:?}) waited for the slow kernel on the other \
         part (done at {t_straddle:?})"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn disjoint_parts_of_one_buffer_do_not_wait_for_each_other() {
    let mut rng = Rng::from_env("disjoint_parts_of_one_buffer_do_not_wait_for_each_other");
    let ctx = gpu();
    for _ in 0..4 {
        let n = 2 + rng.below(1 << 20);
        disjoint_parts(&ctx, &mut rng, &mut DeviceBuffer::new(&ctx, n).unwrap());
        let stream = ctx.new_stream().unwrap();
        disjoint_parts(&ctx, &mut rng, &mut PoolBuffer::new(n, &stream).unwrap());
    }
}
