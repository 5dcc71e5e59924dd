//! Futures of GPU work: [`Completion`] (of a stream, of a buffer's queued
//! work), [`Memory::download`] and [`MemoryMut::upload`], on tokio's
//! multi-thread runtime and on `pollster`'s one-thread executor.
//!
//! - Many futures on many streams, with kernels of random lengths between
//!   them, resolve in whatever order the GPU finishes, each with every
//!   element right (random sizes and offsets, poisoned destinations).
//! - A future forgotten with `mem::forget`, then its buffer dropped: the
//!   drop waits for the queued work, and memory allocated afterwards is not
//!   written by it.
//! - A future dropped halfway (polled once, then dropped): the work goes on,
//!   and the pinned block it staged through is not handed to the next
//!   download while its DMA runs.
//! - A panic inside the runtime (a task panicking with futures pending) and
//!   a waker that panics when the driver's callback wakes it.
//! - Refusals: streams cuda-mem cannot order, a stream capturing a graph,
//!   an upload of the wrong length.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Instant;

use cuda_mem::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cuda_mem::prelude::*;
use cuda_mem::{
    Completion, CudaContext, CudaStream, DeviceBuffer, Download, LaunchConfig, Module,
    PinnedBuffer, PitchedBuffer, UnifiedBuffer, Upload,
};
use cuda_mem_launch_kernels::churn;
use cuda_mem_tests::{churned_fast, expect_err, gpu, under_sanitizer, Rng};

static KERNELS: Module = cuda_mem::include_kernels!("launch-kernels");

/// Rounds of `churn` for a kernel that runs for milliseconds.
fn long_rounds() -> u32 {
    if under_sanitizer() {
        20_000
    } else {
        2_000_000
    }
}

fn config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap()
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Polls `f` once with `waker`.
fn poll_once<F: Future + Unpin>(f: &mut F, waker: &Waker) -> Poll<F::Output> {
    std::pin::Pin::new(f).poll(&mut Context::from_waker(waker))
}

#[test]
fn the_futures_are_send_sync_and_unpin() {
    fn send_unpin<T: Send + Unpin>() {}
    fn sync<T: Sync>() {}
    send_unpin::<Completion>();
    sync::<Completion>();
    send_unpin::<Download<[f32; 3]>>();
    send_unpin::<Upload<u8>>();
}

/// One request of the any-order test: an upload into a view at a random
/// offset of a poisoned buffer, a kernel of random length, a download.
async fn request(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, seed: u64) -> (u64, usize) {
    let mut rng = Rng::new(seed);
    let n = 1 + rng.below(200_000);
    let (before, after) = (rng.below(70), rng.below(70));
    let poison: u32 = rng.value();
    let data: Vec<u32> = rng.values(n);
    let rounds = rng.below(if under_sanitizer() { 50 } else { 20_000 }) as u32;
    let mut buf = DeviceBuffer::<u32>::new(&ctx, before + n + after).unwrap();
    buf.fill_async(poison, &stream).unwrap();
    let back = buf
        .slice_mut(before..before + n)
        .unwrap()
        .upload(data.clone(), &stream)
        .unwrap()
        .await
        .unwrap();
    assert_eq!(back, data, "the upload hands its Vec back unchanged");
    {
        let mut view = buf.slice_mut(before..before + n).unwrap();
        churn
            .launch(&KERNELS, &stream, config(n), (&mut view, rounds))
            .unwrap();
    }
    Completion::of_stream(&stream).unwrap().await.unwrap();
    let got = buf.download(&stream).unwrap().await.unwrap();
    assert_eq!(got.len(), before + n + after);
    for (i, &v) in got.iter().enumerate() {
        let want = if (before..before + n).contains(&i) {
            churned_fast(data[i - before], rounds)
        } else {
            poison
        };
        assert_eq!(v, want, "request {seed:#x}: element {i} of {}", got.len());
    }
    (seed, n)
}

#[test]
#[ignore = "needs a CUDA device"]
fn many_futures_on_many_streams_resolve_in_any_order() {
    let ctx = gpu();
    let mut rng = Rng::from_env("many_futures_on_many_streams_resolve_in_any_order");
    let streams: Vec<_> = (0..8).map(|_| ctx.new_stream().unwrap()).collect();
    let requests = if under_sanitizer() { 16 } else { 96 };
    let seeds: Vec<u64> = (0..requests).map(|_| rng.value()).collect();
    let finished = Arc::new(Mutex::new(Vec::new()));
    runtime().block_on(async {
        let tasks: Vec<_> = seeds
            .iter()
            .enumerate()
            .map(|(i, &seed)| {
                let (ctx, stream) = (ctx.clone(), streams[i % streams.len()].clone());
                let finished = finished.clone();
                tokio::spawn(async move {
                    let done = request(ctx, stream, seed).await;
                    finished.lock().unwrap().push(done.0);
                    done
                })
            })
            .collect();
        for t in tasks {
            t.await.unwrap();
        }
    });
    let finished = finished.lock().unwrap();
    assert_eq!(finished.len(), seeds.len());
    let in_order = finished.iter().zip(&seeds).filter(|(a, b)| a == b).count();
    println!(
        "{} requests on {} streams: {in_order} finished in the order they started",
        seeds.len(),
        streams.len()
    );

    // A short copy on one stream resolves while a long kernel on another
    // still runs: completions follow the GPU, not the order of creation.
    let n = 1 << 20;
    let mut slow = DeviceBuffer::from_slice(&ctx, &rng.values::<u32>(n)).unwrap();
    let quick = DeviceBuffer::from_slice(&ctx, &rng.values::<u32>(1000)).unwrap();
    churn
        .launch(&KERNELS, &streams[0], config(n), (&mut slow, long_rounds()))
        .unwrap();
    let long = Completion::of_stream(&streams[0]).unwrap();
    let values = pollster::block_on(quick.download(&streams[1]).unwrap()).unwrap();
    let long_still_runs = !long.is_complete();
    assert_eq!(values, quick.to_vec().unwrap());
    // (Not under a sanitizer, which slows the copy more than the kernel.)
    assert!(
        long_still_runs || under_sanitizer(),
        "the long kernel's completion resolved before a 4 KB copy on another stream"
    );
    pollster::block_on(long).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_buffer_kind_view_and_pitched_buffer_awaits() {
    let ctx = gpu();
    let mut rng = Rng::from_env("every_buffer_kind_view_and_pitched_buffer_awaits");
    let s = ctx.new_stream().unwrap();
    let n = 1 + rng.below(100_000);
    let data: Vec<[u16; 3]> = rng.values(n);

    let mut pinned = PinnedBuffer::<[u16; 3]>::new(&ctx, n).unwrap();
    let mut unified = UnifiedBuffer::<[u16; 3]>::new(&ctx, n).unwrap();
    let mut device = DeviceBuffer::<[u16; 3]>::new(&ctx, n).unwrap();
    for (name, back) in [
        (
            "pinned",
            pollster::block_on(pinned.upload(data.clone(), &s).unwrap()),
        ),
        (
            "unified",
            pollster::block_on(unified.upload(data.clone(), &s).unwrap()),
        ),
        (
            "device",
            pollster::block_on(device.upload(data.clone(), &s).unwrap()),
        ),
    ] {
        assert_eq!(back.unwrap(), data, "{name}: the Vec handed back");
    }
    assert_eq!(pinned.as_slice().unwrap(), &data[..]);
    assert_eq!(unified.to_vec().unwrap(), data);
    assert_eq!(device.to_vec().unwrap(), data);
    for got in [
        pollster::block_on(pinned.download(&s).unwrap()),
        pollster::block_on(unified.download(&s).unwrap()),
        pollster::block_on(device.download(&s).unwrap()),
    ] {
        assert_eq!(got.unwrap(), data);
    }
    // An unaligned view.
    let a = rng.below(n);
    let b = a + rng.below(n - a + 1);
    let part = pollster::block_on(device.slice(a..b).unwrap().download(&s).unwrap()).unwrap();
    assert_eq!(part, data[a..b]);

    // A pitched buffer: rows come packed, padding neither read nor written.
    let (w, h) = (1 + rng.below(300), 1 + rng.below(40));
    let image: Vec<f32> = rng.values(w * h);
    let mut pitched = PitchedBuffer::<f32>::new(&ctx, w, h).unwrap();
    pitched.fill(f32::NAN).unwrap();
    let image = pollster::block_on(pitched.upload(image, &s).unwrap()).unwrap();
    let got = pollster::block_on(pitched.download(&s).unwrap()).unwrap();
    assert_eq!(
        got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        image.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );

    // A buffer's completion covers its work on every stream; with nothing
    // queued it resolves at once.
    let t = ctx.new_stream().unwrap();
    let idle = DeviceBuffer::<u32>::new(&ctx, 16).unwrap();
    idle.synchronize().unwrap();
    assert!(idle.completion().unwrap().is_complete());
    // Work of the calls that take no stream (cuda-mem queues them on the
    // legacy default stream) is awaited too.
    let mut plain = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    plain.fill(3).unwrap();
    plain.slice_mut(..n / 2).unwrap().memset(0).unwrap();
    pollster::block_on(plain.completion().unwrap()).unwrap();
    let want: Vec<u32> = (0..n).map(|i| if i < n / 2 { 0 } else { 3 }).collect();
    assert_eq!(plain.to_vec().unwrap(), want);
    let m = 1 << 20;
    let start: Vec<u32> = rng.values(2 * m);
    let mut both = DeviceBuffer::from_slice(&ctx, &start).unwrap();
    {
        let (mut lo, mut hi) = both.split_at_mut(m).unwrap();
        churn
            .launch(&KERNELS, &s, config(m), (&mut lo, long_rounds()))
            .unwrap();
        hi.fill_async(5, &t).unwrap();
    }
    let done = both.completion().unwrap();
    assert!(
        !done.is_complete(),
        "the completion resolved during the kernel"
    );
    pollster::block_on(done).unwrap();
    // Everything has finished: reading needs no more waiting than a query.
    let want: Vec<u32> = start[..m]
        .iter()
        .map(|&x| churned_fast(x, long_rounds()))
        .chain(std::iter::repeat_n(5, m))
        .collect();
    assert_eq!(both.to_vec().unwrap(), want);
}

#[test]
#[ignore = "needs a CUDA device"]
fn forgotten_futures_then_dropped_buffers_leave_later_memory_alone() {
    let ctx = gpu();
    let mut rng = Rng::from_env("forgotten_futures_then_dropped_buffers_leave_later_memory_alone");
    let s = ctx.new_stream().unwrap();
    for round in 0..4 {
        let n = (1 << 20) + rng.below(1000);
        let start: Vec<u32> = rng.values(n);
        let mut src = DeviceBuffer::from_slice(&ctx, &start).unwrap();
        let mut dst = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        churn
            .launch(&KERNELS, &s, config(n), (&mut src, long_rounds()))
            .unwrap();
        // Queued behind the kernel, then forgotten: the futures never run
        // their polls or drops. (Under a sanitizer they are dropped at the
        // end of the round instead, long after their buffers: a forgotten
        // download or upload leaks its pinned block by design, which the
        // leak check would report.)
        let forgotten = (
            src.download(&s).unwrap(),
            dst.upload(rng.values(n), &s).unwrap(),
            src.completion().unwrap(),
            Completion::of_stream(&s).unwrap(),
        );
        let kept = if under_sanitizer() {
            Some(std::mem::ManuallyDrop::new(forgotten))
        } else {
            std::mem::forget(forgotten);
            None
        };
        let begun = Instant::now();
        drop(src);
        drop(dst);
        let waited = begun.elapsed();
        // Memory allocated now may reuse the freed addresses: nothing queued
        // before may write it.
        let poison: u32 = rng.value();
        let fresh: Vec<_> = (0..4)
            .map(|_| DeviceBuffer::from_slice(&ctx, &vec![poison; n]).unwrap())
            .collect();
        s.synchronize().unwrap();
        for (i, b) in fresh.iter().enumerate() {
            assert!(
                b.to_vec().unwrap().iter().all(|&v| v == poison),
                "round {round}: buffer {i} allocated after the drops was written"
            );
        }
        println!("round {round}: the drops waited {waited:?} for the forgotten futures' work");
        if let Some(kept) = kept {
            drop(std::mem::ManuallyDrop::into_inner(kept));
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn futures_dropped_halfway_cancel_nothing_and_keep_their_blocks_guarded() {
    let ctx = gpu();
    let mut rng =
        Rng::from_env("futures_dropped_halfway_cancel_nothing_and_keep_their_blocks_guarded");
    let (s, t) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let waker = Waker::from(Arc::new(Counting::default()));
    for round in 0..4 {
        let n = (1 << 20) + rng.below(1000);
        let start: Vec<u32> = rng.values(n);
        let mut src = DeviceBuffer::from_slice(&ctx, &start).unwrap();
        churn
            .launch(&KERNELS, &s, config(n), (&mut src, long_rounds()))
            .unwrap();
        // A download behind the kernel, polled once (pending) and dropped:
        // its pinned block goes back to the cache while the DMA is still to
        // come.
        let mut first = src.download(&s).unwrap();
        assert!(poll_once(&mut first, &waker).is_pending(), "round {round}");
        drop(first);
        // An upload behind the same kernel, dropped before its copy ran: the
        // copy still happens.
        let mut dst = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
        let data: Vec<u32> = rng.values(n);
        let mut up = dst.upload(data.clone(), &s).unwrap();
        assert!(poll_once(&mut up, &waker).is_pending(), "round {round}");
        drop(up);
        // Downloads of other data on another stream, of the same size,
        // take blocks from the cache meanwhile: never the guarded one.
        let other: Vec<u32> = rng.values(n);
        let other_buf = DeviceBuffer::from_slice(&ctx, &other).unwrap();
        for _ in 0..3 {
            let got = pollster::block_on(other_buf.download(&t).unwrap()).unwrap();
            assert_eq!(got, other, "round {round}: a download on another stream");
        }
        let want: Vec<u32> = start
            .iter()
            .map(|&x| churned_fast(x, long_rounds()))
            .collect();
        assert_eq!(
            pollster::block_on(src.download(&s).unwrap()).unwrap(),
            want,
            "round {round}"
        );
        assert_eq!(
            dst.to_vec().unwrap(),
            data,
            "round {round}: the dropped upload"
        );
    }
}

/// A waker whose `wake` panics.
struct Panicking;

impl Wake for Panicking {
    fn wake(self: Arc<Self>) {
        panic!("a waker that panics");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_panic_inside_the_runtime_or_the_waker_leaves_the_rest_working() {
    let ctx = gpu();
    let mut rng = Rng::from_env("a_panic_inside_the_runtime_or_the_waker_leaves_the_rest_working");
    let s = ctx.new_stream().unwrap();
    let n = 1 << 20;
    let start: Vec<u32> = rng.values(n);
    let shared = Arc::new(Mutex::new(DeviceBuffer::from_slice(&ctx, &start).unwrap()));
    let rt = runtime();
    rt.block_on(async {
        // A task that panics with a download and a completion pending.
        let (buf, stream) = (shared.clone(), s.clone());
        let panicked = tokio::spawn(async move {
            let download = {
                let mut b = buf.lock().unwrap();
                churn
                    .launch(&KERNELS, &stream, config(n), (&mut *b, long_rounds()))
                    .unwrap();
                b.download(&stream).unwrap()
            };
            let _pending = (download, Completion::of_stream(&stream).unwrap());
            tokio::task::yield_now().await;
            panic!("a task panics with its futures pending");
        })
        .await;
        assert!(panicked.unwrap_err().is_panic());
        // The runtime and the stream go on.
        let download = shared.lock().unwrap().download(&s).unwrap();
        let got = download.await.unwrap();
        let want: Vec<u32> = start
            .iter()
            .map(|&x| churned_fast(x, long_rounds()))
            .collect();
        assert_eq!(got, want);
    });
    drop(rt);

    // The driver's callback wakes a waker that panics: the panic stays in
    // the callback, and the completion still resolves.
    let mut b = shared.lock().unwrap();
    churn
        .launch(&KERNELS, &s, config(n), (&mut *b, 1000))
        .unwrap();
    let mut done = Completion::of_stream(&s).unwrap();
    let waker = Waker::from(Arc::new(Panicking));
    let first = poll_once(&mut done, &waker);
    s.synchronize().unwrap();
    assert!(done.is_complete());
    let counting = Arc::new(Counting::default());
    let second = poll_once(&mut done, &Waker::from(counting.clone()));
    assert!(
        matches!(second, Poll::Ready(Ok(()))),
        "{first:?} then {second:?}"
    );
    drop(b);
}

#[test]
#[ignore = "needs a CUDA device"]
fn one_wake_per_completion_and_none_after() {
    let ctx = gpu();
    let s = ctx.new_stream().unwrap();
    let n = 1 << 20;
    let mut b = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    let counting = Arc::new(Counting::default());
    let waker = Waker::from(counting.clone());
    let mut pending = Vec::new();
    for _ in 0..100 {
        churn
            .launch(&KERNELS, &s, config(n), (&mut b, 200))
            .unwrap();
        let mut done = Completion::of_stream(&s).unwrap();
        if poll_once(&mut done, &waker).is_pending() {
            pending.push(done);
        }
    }
    s.synchronize().unwrap();
    // The callbacks may still be finishing on the driver's thread.
    let begun = Instant::now();
    while counting.0.load(Ordering::SeqCst) < pending.len() && begun.elapsed().as_secs() < 10 {
        std::thread::yield_now();
    }
    assert_eq!(counting.0.load(Ordering::SeqCst), pending.len());
    let woken = pending.len();
    for mut done in pending {
        assert!(matches!(poll_once(&mut done, &waker), Poll::Ready(Ok(()))));
    }
    assert_eq!(
        counting.0.load(Ordering::SeqCst),
        woken,
        "a resolved completion woke its task again"
    );
    println!("{woken} of 100 completions were pending when polled; each woke its task once");
}

#[test]
#[ignore = "needs a CUDA device"]
fn streams_cuda_mem_cannot_order_and_wrong_lengths_are_refused() {
    let ctx = gpu();
    let mut b = DeviceBuffer::<u32>::new(&ctx, 64).unwrap();
    for (name, stream) in [
        ("per-thread", ctx.per_thread_stream()),
        ("legacy", ctx.default_stream()),
    ] {
        expect_err(
            Completion::of_stream(&stream),
            &["cannot order work on this stream"],
            &format!("Completion::of_stream on the {name} default stream"),
        );
        expect_err(b.download(&stream).map(drop), &["stream"], name);
        expect_err(b.upload(vec![0; 64], &stream).map(drop), &["stream"], name);
    }
    let s = ctx.new_stream().unwrap();
    expect_err(
        b.upload(vec![0; 63], &s).map(drop),
        &["length"],
        "an upload of 63 elements into 64",
    );
    let capturing = ctx.new_stream().unwrap();
    capturing
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let refused = Completion::of_stream(&capturing);
    let graph = capturing
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
        .unwrap();
    expect_err(refused, &["capturing a cuda graph"], "a capturing stream");
    // Nothing was recorded: the (empty) graph replays without a callback.
    if let Some(graph) = graph {
        graph.launch().unwrap();
        capturing.synchronize().unwrap();
    }
    // A graph's launch is awaited on the stream it runs on.
    let mut inside = None;
    let mut g = cuda_mem::Graph::capture(&s, (&mut b,), |s, (mut b,)| {
        inside = Some(Completion::of_stream(s).map(drop));
        b.fill_async(9, s)
    })
    .unwrap();
    expect_err(
        inside.unwrap(),
        &["capturing a cuda graph"],
        "a completion inside Graph::capture",
    );
    g.launch(&s).unwrap();
    pollster::block_on(Completion::of_stream(&s).unwrap()).unwrap();
    drop(g);
    assert_eq!(b.to_vec().unwrap(), vec![9; 64]);
}
