//! The graph rows: a graph of 10 small operations (5 fills and 5 device
//! copies of 16 KiB buffers) recorded with `Graph::capture`, against the
//! same operations issued one by one (host cost), and against the same
//! graph built with raw driver calls (`cuStreamBeginCapture`,
//! `cuMemsetD32Async`, `cuMemcpyAsync`, `cuGraphInstantiate`,
//! `cuGraphLaunch`): the GPU time of a replay and the host cost of a launch,
//! on a cudarc stream and on a `cuda_mem::Stream`.

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::{CudaContext, DeviceBuffer, Graph, Recorded};

use crate::harness::{Bench, RowStream};

/// Elements per buffer (16 KiB of `u32`).
const LEN: usize = 4096;
/// Fills and copies per graph (10 operations).
const PAIRS: usize = 5;
/// Launches per timed batch (short, so that the launch queue never fills).
const BATCH: usize = 100;

/// `PAIRS` buffers of `LEN` words.
fn buffers(ctx: &Arc<CudaContext>) -> Vec<DeviceBuffer<u32>> {
    (0..PAIRS)
        .map(|_| DeviceBuffer::<u32>::zeroed(ctx, LEN).unwrap())
        .collect()
}

/// The fill value of pair `i` (bytes that do not repeat: one `cuMemsetD32`).
fn value(i: usize) -> u32 {
    0x0102_0304 + i as u32
}

/// The same 10 operations captured with raw driver calls on `stream`, over
/// `dst[i] <- fill`, `copy[i] <- dst[i]`.
fn raw_graph(
    stream: &cuda_mem::CudaStream,
    dst: &[u64],
    copy: &[u64],
) -> (sys::CUgraph, sys::CUgraphExec) {
    let s = stream.cu_stream();
    let mut graph = std::ptr::null_mut();
    let mut exec = std::ptr::null_mut();
    // SAFETY: `dst` and `copy` are live device buffers of `LEN` words, used
    // by nothing else while the raw graph lives (its launches are
    // synchronised before they are dropped); the capture is ended before
    // the stream is used again.
    unsafe {
        sys::cuStreamBeginCapture_v2(s, sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .result()
            .unwrap();
        for i in 0..PAIRS {
            sys::cuMemsetD32Async(dst[i], value(i), LEN, s)
                .result()
                .unwrap();
            sys::cuMemcpyAsync(copy[i], dst[i], LEN * 4, s)
                .result()
                .unwrap();
        }
        sys::cuStreamEndCapture(s, &mut graph).result().unwrap();
        sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0)
            .result()
            .unwrap();
    }
    (graph, exec)
}

/// The three rows (see the module docs).
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let s = b.stream.clone();
    let sync = || s.synchronize().unwrap();
    let (mut a, mut c) = (buffers(ctx), buffers(ctx));
    let (mut d, mut e) = (buffers(ctx), buffers(ctx));
    let (raw_dst, raw_copy) = (buffers(ctx), buffers(ctx));
    let addrs = |v: &[DeviceBuffer<u32>]| -> Vec<u64> {
        v.iter().map(|x| x.as_device_ptr().addr()).collect()
    };
    let (raw_graph, raw_exec) = raw_graph(&s, &addrs(&raw_dst), &addrs(&raw_copy));
    let raw_launch = || {
        // SAFETY: the raw graph's executable, alive until the end of `rows`.
        unsafe { sys::cuGraphLaunch(raw_exec, s.cu_stream()) }
            .result()
            .unwrap()
    };

    {
        let [a0, a1, a2, a3, a4] = &mut a[..] else {
            unreachable!()
        };
        let [c0, c1, c2, c3, c4] = &mut c[..] else {
            unreachable!()
        };
        let held = (a0, a1, a2, a3, a4, c0, c1, c2, c3, c4);
        let mut graph = Graph::capture(&s, held, |s, (a0, a1, a2, a3, a4, c0, c1, c2, c3, c4)| {
            let pairs = [(a0, c0), (a1, c1), (a2, c2), (a3, c3), (a4, c4)];
            for (i, (mut a, mut c)) in pairs.into_iter().enumerate() {
                a.fill_async(value(i), s)?;
                c.copy_from_async(&a, s)?;
            }
            Ok(())
        })
        .unwrap();
        let mut launch = || graph.launch(&s).unwrap();

        // (a) Host cost: one launch against the 10 operations one by one.
        let (ours, direct) = b.host_pair_us(
            BATCH,
            &mut launch,
            || {
                for (i, (d, e)) in d.iter_mut().zip(e.iter_mut()).enumerate() {
                    d.fill_async(value(i), &s).unwrap();
                    e.copy_from_async(&*d, &s).unwrap();
                }
            },
            sync,
        );
        b.push(
            "graph",
            "graph launch, 10 small fills and copies (host)".into(),
            "us",
            ours,
            direct,
            "the 10 operations issued directly",
            false,
            Some(LEN * 4),
        );

        // (b) The replay on the GPU against the raw graph's.
        let (ours_gpu, raw_gpu) = b.gpu_pair_ms(
            || (0..BATCH).for_each(|_| launch()),
            || (0..BATCH).for_each(|_| raw_launch()),
        );
        b.push(
            "graph",
            format!("graph replay x{BATCH} (GPU)"),
            "ms",
            ours_gpu,
            raw_gpu,
            "raw cuGraphLaunch x100",
            false,
            Some(LEN * 4),
        );

        // (c) The launch's host cost against a bare cuGraphLaunch, on the
        // bench's stream and on a `cuda_mem::Stream` (no capture query).
        host_row(b, &mut graph, raw_exec, &s);
        host_row(
            b,
            &mut graph,
            raw_exec,
            &cuda_mem::Stream::new(ctx).unwrap(),
        );
        drop(graph);
    }
    s.synchronize().unwrap();
    // SAFETY: the raw graph's handles, no longer launched (synchronised above).
    unsafe {
        sys::cuGraphExecDestroy(raw_exec).result().unwrap();
        sys::cuGraphDestroy(raw_graph).result().unwrap();
    }
    // Every graph and direct call wrote the same values.
    for set in [&a, &c, &d, &e, &raw_dst, &raw_copy] {
        for (i, buf) in set.iter().enumerate() {
            assert!(
                buf.to_vec().unwrap().iter().all(|&x| x == value(i)),
                "graph bench: buffer {i} does not hold its fill value"
            );
        }
    }
}

/// The host cost of a launch of `graph` on `s` against a bare
/// `cuGraphLaunch` of `raw_exec` (the same operations) on the same stream.
fn host_row<A: Recorded, S: RowStream>(
    b: &mut Bench,
    graph: &mut Graph<A>,
    raw_exec: sys::CUgraphExec,
    s: &S,
) {
    let (ours, raw) = b.host_pair_us(
        BATCH,
        || graph.launch(s).unwrap(),
        // SAFETY: the raw graph's executable, alive until the end of `rows`.
        || {
            unsafe { sys::cuGraphLaunch(raw_exec, s.handle()) }
                .result()
                .unwrap()
        },
        || s.sync(),
    );
    b.push(
        "graph",
        format!("graph launch (host){}", S::SUFFIX),
        "us",
        ours,
        raw,
        "raw cuGraphLaunch",
        false,
        Some(LEN * 4),
    );
}
