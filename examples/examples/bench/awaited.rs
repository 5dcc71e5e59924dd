//! The rows of awaited work ([`Completion`]): the latency of awaiting a
//! small operation (`pollster` and tokio's current-thread runtime) against
//! `cuStreamSynchronize`, and 10,000 completions pending at once on 8 held
//! streams (the time to make and resolve them all, their wake-ups and the
//! resident memory they add) against the same number of raw
//! `cuStreamAddCallback`s.

use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use cuda_mem::cudarc::driver::{result, sys, CudaStream};
use cuda_mem::prelude::*;
use cuda_mem::{Completion, CudaContext, DeviceBuffer};

use crate::harness::Bench;

/// Completions pending at once.
const MANY: usize = 10_000;
/// Streams they are spread over.
const STREAMS: usize = 8;

/// The rows (see the module docs).
pub fn rows(b: &mut Bench, ctx: &Arc<CudaContext>) {
    latency(b, ctx);
    many(b, ctx);
}

fn latency(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let s = b.stream.clone();
    let word = DeviceBuffer::<u32>::zeroed(ctx, 1).unwrap();
    let addr = word.as_device_ptr().addr();
    let memset = || {
        // SAFETY: one word of a live device buffer that nothing else uses
        // while the rows run (synchronised before it is dropped).
        unsafe { sys::cuMemsetD32Async(addr, 7, 1, s.cu_stream()) }
            .result()
            .unwrap()
    };
    let sync = || s.synchronize().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let with_pollster = || pollster::block_on(Completion::of_stream(&s).unwrap()).unwrap();
    let with_tokio = || rt.block_on(async { Completion::of_stream(&s).unwrap().await.unwrap() });
    let executors: [(&str, &dyn Fn()); 2] = [("pollster", &with_pollster), ("tokio", &with_tokio)];
    for (executor, awaited) in executors {
        let (ours, raw) = b.host_pair_us(
            200,
            || {
                memset();
                awaited();
            },
            || {
                memset();
                sync();
            },
            || {},
        );
        b.push(
            "async",
            format!("awaited 4-byte memset ({executor})"),
            "us",
            ours,
            raw,
            "cuStreamSynchronize",
            false,
            None,
        );
    }
    sync();
    assert_eq!(word.to_vec().unwrap(), [7]);
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Counting(AtomicUsize);

impl Wake for Counting {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The raw callback of the comparison: counts itself off.
unsafe extern "C" fn raw_done(_: sys::CUstream, _: sys::CUresult, data: *mut c_void) {
    // SAFETY: `data` is the `Box<Arc<AtomicUsize>>` made for this one call.
    let count = unsafe { Box::from_raw(data.cast::<Arc<AtomicUsize>>()) };
    count.fetch_add(1, Ordering::SeqCst);
}

/// Streams held on a mapped pinned word until [`Gate::open`], so that work
/// queued behind the hold stays pending.
struct Gate {
    word: *mut u32,
}

impl Gate {
    fn new(streams: &[Arc<CudaStream>]) -> Self {
        streams[0].context().bind_to_thread().unwrap();
        // SAFETY: a 4-byte mapped pinned allocation, zeroed below, freed in
        // `Drop` after the streams have passed it.
        let word = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .unwrap()
            .cast::<u32>();
        // SAFETY: just allocated, aligned, no GPU work uses it yet.
        unsafe { word.write_volatile(0) };
        for s in streams {
            // SAFETY: the live mapped word (its host address is its device
            // address under unified addressing); `open` writes 1.
            unsafe {
                sys::cuStreamWaitValue32_v2(
                    s.cu_stream(),
                    word as u64,
                    1,
                    sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ as u32,
                )
            }
            .result()
            .unwrap();
        }
        Self { word }
    }

    fn open(&self) {
        // SAFETY: the host's write of the live word the streams wait on.
        unsafe { self.word.write_volatile(1) };
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.open();
        // SAFETY: the streams waiting on it are synchronised by the caller
        // before the gate is dropped.
        unsafe { result::free_host(self.word.cast()) }.unwrap();
    }
}

/// The resident set of this process, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

/// Waits (on the host, yielding) until `count` reaches `n`, at most 10 s.
fn wait_for(count: &AtomicUsize, n: usize) {
    let begun = Instant::now();
    while count.load(Ordering::SeqCst) < n {
        assert!(
            begun.elapsed() < Duration::from_secs(10),
            "only {} of {n} callbacks ran",
            count.load(Ordering::SeqCst)
        );
        std::thread::yield_now();
    }
}

/// One round of `MANY` completions: (ms to make and resolve them all,
/// wakes, resident bytes added while pending).
fn completions(streams: &[Arc<CudaStream>]) -> (f64, usize, usize) {
    let counting = Arc::new(Counting::default());
    let waker = Waker::from(counting.clone());
    let gate = Gate::new(streams);
    let before = rss();
    let begun = Instant::now();
    let mut pending: Vec<Completion> = (0..MANY)
        .map(|i| {
            let mut done = Completion::of_stream(&streams[i % STREAMS]).unwrap();
            let first = Pin::new(&mut done).poll(&mut Context::from_waker(&waker));
            assert!(first.is_pending(), "a completion behind the gate resolved");
            done
        })
        .collect();
    let added = rss().saturating_sub(before);
    gate.open();
    wait_for(&counting.0, MANY);
    let ms = begun.elapsed().as_secs_f64() * 1e3;
    for done in &mut pending {
        let ready = Pin::new(done).poll(&mut Context::from_waker(&waker));
        assert!(matches!(ready, Poll::Ready(Ok(()))));
    }
    for s in streams {
        s.synchronize().unwrap();
    }
    drop(gate);
    (ms, counting.0.load(Ordering::SeqCst), added)
}

/// The same with raw callbacks: (ms, callbacks run, resident bytes added).
fn raw_callbacks(streams: &[Arc<CudaStream>]) -> (f64, usize, usize) {
    let count = Arc::new(AtomicUsize::new(0));
    let gate = Gate::new(streams);
    let before = rss();
    let begun = Instant::now();
    for i in 0..MANY {
        let data = Box::into_raw(Box::new(count.clone())).cast::<c_void>();
        // SAFETY: a live stream of the bound context; `raw_done` takes the
        // box, and the driver calls it exactly once.
        unsafe {
            sys::cuStreamAddCallback(streams[i % STREAMS].cu_stream(), Some(raw_done), data, 0)
        }
        .result()
        .unwrap();
    }
    let added = rss().saturating_sub(before);
    gate.open();
    wait_for(&count, MANY);
    let ms = begun.elapsed().as_secs_f64() * 1e3;
    for s in streams {
        s.synchronize().unwrap();
    }
    drop(gate);
    (ms, count.load(Ordering::SeqCst), added)
}

fn many(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let streams: Vec<_> = (0..STREAMS).map(|_| ctx.new_stream().unwrap()).collect();
    // Warm-up of both (the driver's callback thread, the allocator).
    completions(&streams);
    raw_callbacks(&streams);
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..b.reps.min(5) {
        ours.push(completions(&streams));
        raw.push(raw_callbacks(&streams));
    }
    let median = |v: &[(f64, usize, usize)], f: fn(&(f64, usize, usize)) -> f64| {
        crate::harness::median(v.iter().map(f).collect())
    };
    b.push(
        "async",
        format!("{MANY} completions on {STREAMS} streams, made and resolved"),
        "ms",
        median(&ours, |r| r.0),
        median(&raw, |r| r.0),
        "raw cuStreamAddCallback",
        false,
        None,
    );
    b.push(
        "async",
        format!("{MANY} pending completions: wake-ups"),
        "wakes",
        median(&ours, |r| r.1 as f64),
        median(&raw, |r| r.1 as f64),
        "raw callbacks run",
        false,
        None,
    );
    b.push(
        "async",
        format!("{MANY} pending completions: resident memory added"),
        "KiB",
        median(&ours, |r| r.2 as f64 / 1024.0),
        median(&raw, |r| r.2 as f64 / 1024.0),
        "raw callbacks, a boxed Arc each",
        false,
        None,
    );
}
