//! `cuda_mem::Stream`, the stream whose calls skip the driver's capture
//! query: every kind of call that takes a stream runs on one and gives the
//! same results as on a cudarc stream, work on a `Stream` and on cudarc
//! streams is ordered against each other through the buffers, and the
//! context handle its calls use never reaches the caller (a stream made
//! from what a buffer hands out is still checked for a capture).
//!
//! GPU tests, random data and sizes (odd ones, unaligned views), outputs
//! poisoned first, every element checked.

use cuda_mem::prelude::*;

use cuda_mem::algo;
use cuda_mem::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cuda_mem::device::ops::Sum;
use cuda_mem::{CudaContext, DeviceBuffer, Graph, LaunchConfig, PinnedBuffer, PoolBuffer, Stream};
use cuda_mem_launch_kernels::{churn, churned, write_indices};
use cuda_mem_tests::{expect_err, gpu, Rng};

/// The kernels of `tests/launch-kernels`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("launch-kernels");

/// A 12-byte element: fills of it take cuda-mem's fill kernel.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Rgb {
    r: f32,
    g: f32,
    b: f32,
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_kind_of_call_runs_on_a_stream() {
    let ctx = gpu();
    let mut rng = Rng::from_env("every_kind_of_call_runs_on_a_stream");
    let stream = Stream::new(&ctx).unwrap();
    let n = (1000 + rng.below(1 << 20)) | 1;
    let poison = 0xdead_beef_u32;

    // The memset path and a copy.
    let word: u32 = rng.value();
    let mut words = DeviceBuffer::<u32>::from_slice(&ctx, &vec![poison; n]).unwrap();
    words.fill_async(word, &stream).unwrap();
    let mut copy = DeviceBuffer::<u32>::from_slice(&ctx, &vec![poison; n]).unwrap();
    copy.copy_from_async(&words, &stream).unwrap();
    assert!(
        copy.to_vec().unwrap().iter().all(|&w| w == word),
        "fill + copy on a Stream"
    );

    // The fill kernel, over a view that starts at an odd element.
    let value = Rgb {
        r: rng.value(),
        g: 1.5,
        b: -2.0,
    };
    let bad = Rgb {
        r: f32::NAN,
        g: f32::NAN,
        b: f32::NAN,
    };
    let start = 1 + rng.below(7);
    let mut rgb = DeviceBuffer::<Rgb>::from_slice(&ctx, &vec![bad; n]).unwrap();
    rgb.slice_mut(start..)
        .unwrap()
        .fill_async(value, &stream)
        .unwrap();
    let got = rgb.to_vec().unwrap();
    for (i, v) in got.iter().enumerate() {
        let want = if i < start { bad } else { value };
        assert!(
            [v.r, v.g, v.b].map(f32::to_bits) == [want.r, want.g, want.b].map(f32::to_bits),
            "12-byte fill on a Stream: element {i} of {n} is {v:?}"
        );
    }

    // A typed kernel launch.
    let offset = rng.next_u64() >> 8;
    let mut indices = DeviceBuffer::<u64>::from_slice(&ctx, &vec![u64::MAX; n]).unwrap();
    write_indices
        .launch(
            &KERNELS,
            &stream,
            LaunchConfig::for_num_elems(n as u32),
            (&mut indices, offset),
        )
        .unwrap();
    for (i, &x) in indices.to_vec().unwrap().iter().enumerate() {
        assert_eq!(
            x,
            offset + i as u64,
            "typed launch on a Stream: element {i}"
        );
    }

    // Pool memory: allocated, filled, copied out and freed on the stream.
    let mut pooled = PoolBuffer::<u32>::new(n, &stream).unwrap();
    pooled.fill_async(!word, &stream).unwrap();
    let mut host = PinnedBuffer::<u32>::new(&ctx, n).unwrap();
    host.as_mut_slice().unwrap().fill(poison);
    pooled.copy_to_host_async(&mut host, &stream).unwrap();
    pooled.free_on_stream(&stream).unwrap();
    assert!(
        host.as_slice().unwrap().iter().all(|&w| w == !word),
        "pool buffer on a Stream"
    );

    // A graph recorded on a cudarc stream, launched on the `Stream`.
    let recording = ctx.new_stream().unwrap();
    let mut target = DeviceBuffer::<u32>::from_slice(&ctx, &vec![poison; n]).unwrap();
    let mut graph = Graph::capture(&recording, (&mut target,), |s, (mut t,)| {
        t.fill_async(word ^ 0x5a5a, s)
    })
    .unwrap();
    graph.launch(&stream).unwrap();
    drop(graph);
    assert!(
        target.to_vec().unwrap().iter().all(|&w| w == word ^ 0x5a5a),
        "graph launched on a Stream"
    );

    // An algorithm, and a completion awaited.
    let data: Vec<u32> = (0..n).map(|_| rng.below(1000) as u32).collect();
    let input = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut sum = DeviceBuffer::<u32>::from_slice(&ctx, &[poison]).unwrap();
    algo::reduce_into(&input, Sum, &mut sum, &stream).unwrap();
    pollster::block_on(cuda_mem::Completion::of_stream(&stream).unwrap()).unwrap();
    let want = data.iter().fold(0u32, |a, &x| a.wrapping_add(x));
    assert_eq!(sum.to_vec().unwrap(), [want], "reduce_into on a Stream");
    stream.synchronize().unwrap();
    println!(
        "{n} elements: fills, copies, a launch, pool memory, a graph and a reduction on a Stream"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_and_cudarc_streams_are_ordered_through_the_buffers() {
    let ctx = gpu();
    let mut rng = Rng::from_env("a_stream_and_cudarc_streams_are_ordered_through_the_buffers");
    let n = (1 << 18) + rng.below(1 << 18);
    let rounds = 2000 + rng.below(2000) as u32;
    let data: Vec<u32> = rng.values(n);
    let want: Vec<u32> = data.iter().map(|&x| churned(x, rounds)).collect();
    let ours = Stream::new(&ctx).unwrap();
    let theirs = ctx.new_stream().unwrap();
    let config = LaunchConfig::for_num_elems(n as u32);

    // A slow kernel on the `Stream`, then a copy on a cudarc stream: the
    // copy waits for the kernel.
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut out = DeviceBuffer::<u32>::from_slice(&ctx, &vec![0; n]).unwrap();
    churn
        .launch(&KERNELS, &ours, config, (&mut buf, rounds))
        .unwrap();
    out.copy_from_async(&buf, &theirs).unwrap();
    assert_eq!(out.to_vec().unwrap(), want, "Stream, then a cudarc stream");

    // The other way round, and two `Stream`s of one context.
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    let mut out = DeviceBuffer::<u32>::from_slice(&ctx, &vec![0; n]).unwrap();
    churn
        .launch(&KERNELS, &theirs, config, (&mut buf, rounds))
        .unwrap();
    out.copy_from_async(&buf, &ours).unwrap();
    let second = Stream::new(&ctx).unwrap();
    let mut last = DeviceBuffer::<u32>::from_slice(&ctx, &vec![0; n]).unwrap();
    last.copy_from_async(&out, &second).unwrap();
    assert_eq!(
        last.to_vec().unwrap(),
        want,
        "cudarc stream, then two Streams"
    );
    println!("{n} elements, {rounds} rounds: ordered across a Stream and cudarc streams");
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_context_a_streams_buffers_hand_out_is_still_checked_for_captures() {
    let ctx = gpu();
    let mut rng = Rng::from_env("the_context_a_streams_buffers_hand_out_is_still_checked");
    let n = 1 + rng.below(1 << 16);
    let stream = Stream::new(&ctx).unwrap();
    assert_eq!(stream.context().cu_ctx(), ctx.cu_ctx());
    let mut buf = PoolBuffer::<u32>::new(n, &stream).unwrap();
    buf.fill_async(1, &stream).unwrap();
    // A stream made from the context the buffer reports is an ordinary
    // cudarc stream: one that begins a capture is refused, as any is.
    let handed_out = buf.context().new_stream().unwrap();
    handed_out
        .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .unwrap();
    let refused = buf.fill_async(2, &handed_out);
    let _ = handed_out
        .end_capture(CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
    expect_err(
        refused,
        &["cannot order work on this stream", "capturing a cuda graph"],
        "a fill on a capturing stream of the buffer's context",
    );
    assert!(buf.to_vec().unwrap().iter().all(|&w| w == 1));
    buf.free_on_stream(&stream).unwrap();
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_belongs_to_a_primary_context() {
    let ctx = gpu();
    let other = CudaContext::new_non_primary(ctx.ordinal(), 0).unwrap();
    expect_err(
        Stream::new(&other),
        &["primary context", "new_stream"],
        "a Stream of a non-primary context",
    );
    // The primary context again: one sealed handle per device, shared.
    let a = Stream::new(&ctx).unwrap();
    let b = Stream::new(&ctx).unwrap();
    assert_ne!(a.cu_stream(), b.cu_stream());
    let mut buf = DeviceBuffer::<u8>::zeroed(&ctx, 4099).unwrap();
    buf.fill_async(3, &a).unwrap();
    buf.fill_async(4, &b).unwrap();
    assert!(buf.to_vec().unwrap().iter().all(|&x| x == 4));
}

/// A `Stream` can join a capture only through a wait for another stream's
/// event, when another thread begins a capture on that stream between
/// cuda-mem's question and the event (cudarc's safe `begin_capture`). The
/// copy that waited must then be refused, not recorded into the other
/// thread's graph (and so never run now): here one thread begins and ends
/// captures on `x` in a loop while this one copies memory that a kernel
/// launched on `x` took as an argument into a buffer on a `Stream`. A
/// kernel argument's use stays in the ledger, so every copy records an
/// event on `x` and makes the `Stream` wait for it; this thread queues
/// nothing else on `x` once the loop runs, and the other thread ends its
/// captures only between this thread's copies (`capture_until`'s lock):
/// work queued on a stream, even an event record, while another thread
/// ends a capture there can crash driver 580 by itself (see
/// `examples/examples/capture_race.rs`; this test crashed so once, under
/// memcheck on an H100, 2026-12-06, before the ends were kept apart). The
/// beginnings still race the copies, which is what makes the join. Every
/// copy that returns `Ok` must
/// have run (its output holds the input); a refusal says why: `x` is
/// capturing when asked (then the next round goes on), or the `Stream`
/// joined. Stops at the first join (from then on every call asks the
/// driver, and the remaining window is the documented one between a call's
/// check and its enqueue) or after `CUDA_MEM_JOIN_ROUNDS` rounds (default
/// 3000).
#[test]
#[ignore = "needs a CUDA device"]
fn a_stream_that_joins_a_capture_through_a_wait_is_refused() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let ctx = gpu();
    let mut rng = Rng::from_env("a_stream_that_joins_a_capture_through_a_wait_is_refused");
    let rounds = cuda_mem_tests::env_count("CUDA_MEM_JOIN_ROUNDS", 3000);
    let n = 1 + rng.below(4096);
    let churns = 1 + rng.below(8) as u32;
    let input: Vec<u32> = rng.values(n);
    let data: Vec<u32> = input.iter().map(|&w| churned(w, churns)).collect();
    let mut src = DeviceBuffer::from_slice(&ctx, &input).unwrap();
    let mut dst = DeviceBuffer::<u32>::new(&ctx, n).unwrap();
    let s = Stream::new(&ctx).unwrap();
    let x = ctx.new_stream().unwrap();
    // `src`'s use as a kernel argument on `x`: every later use elsewhere
    // waits for `x` through a fresh event.
    churn
        .launch(
            &KERNELS,
            &x,
            LaunchConfig::for_num_elems(n as u32),
            (&mut src, churns),
        )
        .unwrap();
    /// Stops the capturing thread when this one leaves the loop, also by
    /// a failed assertion (else the scope would wait for it for ever).
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let stop = AtomicBool::new(false);
    let ends = std::sync::Mutex::new(());
    let (mut ok, mut busy, mut joined) = (0usize, 0usize, None);
    std::thread::scope(|scope| {
        let _stop = StopOnDrop(&stop);
        scope.spawn(|| cuda_mem_tests::capture_until(&x, &stop, Some(&ends)));
        for round in 0..rounds {
            dst.fill_async(!0, &s).unwrap();
            // `s` waits for `src`'s use on `x`: the hand-over, its event
            // record on `x` kept apart from the captures' ends.
            let copied = {
                let _no_end = ends.lock().unwrap();
                dst.copy_from_async(&src, &s)
            };
            match copied {
                Ok(()) => {
                    ok += 1;
                    let got = dst.to_vec().unwrap();
                    assert_eq!(
                        got, data,
                        "round {round}: a copy returned Ok but did not run"
                    );
                }
                Err(e) => {
                    let text = e.to_string().to_ascii_lowercase();
                    if text.contains("join the capture") {
                        joined = Some(round);
                        break;
                    }
                    assert!(
                        text.contains("now capturing a cuda graph"),
                        "round {round}: an unexpected refusal: {text}"
                    );
                    busy += 1;
                }
            }
        }
    });
    // The capture that `s` joined has ended (the other thread's
    // `end_capture` failed: `s` left it unjoined), and `s` with it.
    x.synchronize().unwrap();
    s.synchronize().unwrap();
    // Nothing of the refused copy ran later either: the last copy that
    // ran left `dst` holding `data`, or the poison of its round.
    let got = dst.to_vec().unwrap();
    assert!(got == data || got.iter().all(|&w| w == !0));
    // And `s` works again.
    dst.fill_async(!0, &s).unwrap();
    dst.copy_from_async(&src, &s).unwrap();
    assert_eq!(
        dst.to_vec().unwrap(),
        data,
        "a copy on the Stream afterwards"
    );
    match joined {
        Some(round) => println!("{ok} copies ran; the join at round {round} was refused"),
        None => {
            println!("{ok} copies ran, {busy} rounds found x capturing; no join in {rounds} rounds")
        }
    }
}
