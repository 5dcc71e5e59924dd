//! The measuring harness: [`Bench`] (the stream, timing events, repetitions
//! and the rows measured so far), GPU timing by CUDA events, host timing by
//! the wall clock, and the printed row format.

use std::sync::Arc;
use std::time::Instant;

use cuda_mem::cudarc::driver::{result, sys, CudaEvent, CudaStream};

/// A stream the host-cost rows run on, each row once per kind: the bench's
/// cudarc stream, whose calls ask the driver whether it is capturing a
/// graph, and a [`cuda_mem::Stream`], whose calls do not. cuda-mem's calls
/// take the stream itself, the raw calls its [`handle`](Self::handle) (the
/// same stream); a row's name ends with [`SUFFIX`](Self::SUFFIX).
pub trait RowStream: cuda_mem::AsStream {
    /// How the row's name ends.
    const SUFFIX: &'static str;
    /// The driver's handle, for the raw calls.
    fn handle(&self) -> sys::CUstream;
    /// Waits for everything queued on the stream.
    fn sync(&self);
}

impl RowStream for Arc<CudaStream> {
    const SUFFIX: &'static str = "";
    fn handle(&self) -> sys::CUstream {
        self.cu_stream()
    }
    fn sync(&self) {
        self.synchronize().unwrap()
    }
}

impl RowStream for cuda_mem::Stream {
    const SUFFIX: &'static str = ", on a cuda_mem::Stream";
    fn handle(&self) -> sys::CUstream {
        self.cu_stream()
    }
    fn sync(&self) {
        self.synchronize().unwrap()
    }
}

/// One row of the table: our figure, the raw call's, measured in the same run.
pub struct Row {
    pub group: &'static str,
    pub name: String,
    pub unit: &'static str,
    pub ours: f64,
    pub raw: f64,
    pub raw_name: &'static str,
    pub higher_is_better: bool,
    /// The element size of a fill row (the plot's x axis).
    pub size: Option<usize>,
    /// A parity row's details (set after `push`).
    pub detail: Option<crate::report::Detail>,
}

impl Row {
    /// Ours against raw, so that 1.0 is parity and above 1.0 is better.
    /// Equal figures are parity, zeros included (a count of 0 against 0
    /// is 1.0, not the NaN that the JSON would write as `null`).
    pub fn ratio(&self) -> f64 {
        if self.ours == self.raw {
            1.0
        } else if self.higher_is_better {
            self.ours / self.raw
        } else {
            self.raw / self.ours
        }
    }
}

/// The benchmark's state: the stream every section queues on, two timing
/// events, the repetitions per measurement and the rows so far.
pub struct Bench {
    pub stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: CudaEvent,
    /// A mapped pinned word the stream waits on in [`Bench::gpu_held_ms`].
    gate: *mut u32,
    /// The value the gate opens at next, less one (each measurement's own).
    gate_value: std::cell::Cell<u32>,
    pub reps: usize,
    pub rows: Vec<Row>,
}

/// The medians of `measure(ours)` and `measure(raw)` over three alternating
/// rounds, so that drifting clocks hit both.
fn alternate(
    measure: impl Fn(&mut dyn FnMut()) -> f64,
    mut ours: impl FnMut(),
    mut raw: impl FnMut(),
) -> (f64, f64) {
    let (mut o, mut r) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        o.push(measure(&mut ours));
        r.push(measure(&mut raw));
    }
    (median(o), median(r))
}

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// A non-repeating value of `N` bytes (no period 1, 2 or 4).
pub fn value<const N: usize>() -> [u8; N] {
    std::array::from_fn(|i| (i * 37 + 11) as u8 ^ (i >> 8) as u8)
}

impl Bench {
    /// A bench on a new stream of `ctx`: 15 repetitions per measurement, 5
    /// with `quick`.
    pub fn new(ctx: &Arc<cuda_mem::CudaContext>, quick: bool) -> Self {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        ctx.bind_to_thread().unwrap();
        // SAFETY: a 4-byte mapped pinned allocation, zeroed below and kept
        // for the process (the bench's one gate).
        let gate = unsafe { result::malloc_host(4, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
            .unwrap()
            .cast::<u32>();
        // SAFETY: just allocated, 4 bytes, aligned; no GPU work uses it yet.
        unsafe { gate.write_volatile(0) };
        Self {
            gate,
            gate_value: std::cell::Cell::new(0),
            start: ctx.new_event(timing).unwrap(),
            stop: ctx.new_event(timing).unwrap(),
            stream: ctx.new_stream().unwrap(),
            reps: if quick { 5 } else { 15 },
            rows: Vec::new(),
        }
    }

    /// Median GPU milliseconds of `op` (queued on `self.stream`).
    pub fn gpu_ms(&self, mut op: impl FnMut()) -> f64 {
        op(); // warm-up
        let times = (0..self.reps)
            .map(|_| {
                self.start.record(&self.stream).unwrap();
                op();
                self.stop.record(&self.stream).unwrap();
                self.stop.synchronize().unwrap();
                self.start.elapsed_ms(&self.stop).unwrap() as f64
            })
            .collect();
        median(times)
    }

    /// Median GPU milliseconds of `op`, with the host's cost to queue it
    /// taken out: the stream first waits (`cuStreamWaitValue32`) on a mapped
    /// pinned word that the host sets only once `op` has queued everything,
    /// so the GPU runs the queued work back to back. For batches of
    /// operations too short for their host cost to stay hidden (fills of
    /// 1 MiB take about as long on the GPU as on the host).
    ///
    /// `op` runs once unheld first: the driver loads kernels lazily, at
    /// their first launch, and that load waits for the device, which would
    /// wait for the gate forever. A watchdog opens the gate after two
    /// seconds all the same, and the measurement then panics.
    pub fn gpu_held_ms(&self, mut op: impl FnMut()) -> f64 {
        op();
        self.stream.synchronize().unwrap();
        self.gpu_held_once(&mut op); // warm-up
        median(
            (0..self.reps)
                .map(|_| self.gpu_held_once(&mut op))
                .collect(),
        )
    }

    /// One measurement of [`gpu_held_ms`](Self::gpu_held_ms): GPU
    /// milliseconds of `op` queued behind the gate, which opens once `op`
    /// has queued everything. `op` must have run once before (its kernels
    /// loaded).
    pub fn gpu_held_once(&self, op: impl FnOnce()) -> f64 {
        let gate_addr = self.gate as usize;
        let open = move |value: u32| {
            // SAFETY: the host's write of the live pinned word the stream
            // waits on.
            unsafe { (gate_addr as *mut u32).write_volatile(value) }
        };
        let gate = self.gate_value.get() + 1;
        self.gate_value.set(gate);
        // SAFETY: the gate is a live mapped pinned word (its host address
        // is its device address under unified addressing); the stream
        // waits until it equals `gate`, which the host writes below, after
        // queuing.
        unsafe {
            sys::cuStreamWaitValue32_v2(
                self.stream.cu_stream(),
                gate_addr as u64,
                gate,
                sys::CUstreamWaitValue_flags::CU_STREAM_WAIT_VALUE_EQ as u32,
            )
            .result()
            .unwrap()
        };
        let (queued, wait) = std::sync::mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            let timed_out = wait
                .recv_timeout(std::time::Duration::from_secs(2))
                .is_err();
            open(gate);
            timed_out
        });
        self.start.record(&self.stream).unwrap();
        op();
        self.stop.record(&self.stream).unwrap();
        let _ = queued.send(());
        assert!(
            !watchdog.join().unwrap(),
            "queuing the operation waited for the held stream"
        );
        self.stop.synchronize().unwrap();
        self.start.elapsed_ms(&self.stop).unwrap() as f64
    }

    /// [`gpu_held_ms`](Self::gpu_held_ms) of `ours` and of `raw`, in three
    /// alternating rounds.
    pub fn gpu_held_pair_ms(&self, ours: impl FnMut(), raw: impl FnMut()) -> (f64, f64) {
        alternate(|op| self.gpu_held_ms(op), ours, raw)
    }

    /// Median GPU milliseconds of `ours` and of `raw`, measured in three
    /// alternating rounds so that drifting clocks hit both.
    pub fn gpu_pair_ms(&self, ours: impl FnMut(), raw: impl FnMut()) -> (f64, f64) {
        alternate(|op| self.gpu_ms(op), ours, raw)
    }

    /// GPU milliseconds of one run of `op` (for operations that need a reset in between).
    pub fn gpu_ms_once(&self, op: impl FnOnce()) -> f64 {
        self.start.record(&self.stream).unwrap();
        op();
        self.stop.record(&self.stream).unwrap();
        self.stop.synchronize().unwrap();
        self.start.elapsed_ms(&self.stop).unwrap() as f64
    }

    /// Median GPU milliseconds of `op`, which queues work on the two streams
    /// `a` and `b`: from the start event (recorded on `self.stream`, which
    /// both streams wait for) until both streams are done (`self.stream`
    /// waits for each before the stop event).
    pub fn gpu_two_streams_ms(
        &self,
        a: &Arc<CudaStream>,
        b: &Arc<CudaStream>,
        mut op: impl FnMut(),
    ) -> f64 {
        let ctx = self.stream.context();
        let (done_a, done_b) = (ctx.new_event(None).unwrap(), ctx.new_event(None).unwrap());
        let mut once = || {
            self.start.record(&self.stream).unwrap();
            a.wait(&self.start).unwrap();
            b.wait(&self.start).unwrap();
            op();
            done_a.record(a).unwrap();
            done_b.record(b).unwrap();
            self.stream.wait(&done_a).unwrap();
            self.stream.wait(&done_b).unwrap();
            self.stop.record(&self.stream).unwrap();
            self.stop.synchronize().unwrap();
            self.start.elapsed_ms(&self.stop).unwrap() as f64
        };
        once(); // warm-up
        median((0..self.reps).map(|_| once()).collect())
    }

    /// Median host microseconds per call of `op` over batches of `n` calls.
    pub fn host_us(&self, n: usize, mut op: impl FnMut(), mut after_batch: impl FnMut()) -> f64 {
        op();
        after_batch();
        let times = (0..self.reps.max(5))
            .map(|_| {
                let t = Instant::now();
                for _ in 0..n {
                    op();
                }
                let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
                after_batch();
                us
            })
            .collect();
        median(times)
    }

    /// Median host microseconds per call of `ours` and of `raw`, batches of `n`
    /// calls alternating between the two so that drifting clocks hit both.
    pub fn host_pair_us(
        &self,
        n: usize,
        mut ours: impl FnMut(),
        mut raw: impl FnMut(),
        mut after_batch: impl FnMut(),
    ) -> (f64, f64) {
        let mut batch = |op: &mut dyn FnMut()| {
            let t = Instant::now();
            for _ in 0..n {
                op();
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
            after_batch();
            us
        };
        batch(&mut ours);
        batch(&mut raw);
        let (mut o, mut r) = (Vec::new(), Vec::new());
        for _ in 0..self.reps.max(5) {
            o.push(batch(&mut ours));
            r.push(batch(&mut raw));
        }
        (median(o), median(r))
    }

    /// Prints a row and keeps it.
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        group: &'static str,
        name: String,
        unit: &'static str,
        ours: f64,
        raw: f64,
        raw_name: &'static str,
        higher_is_better: bool,
        size: Option<usize>,
    ) {
        let row = Row {
            group,
            name,
            unit,
            ours,
            raw,
            raw_name,
            higher_is_better,
            size,
            detail: None,
        };
        println!(
            "{:<8} {:<34} ours {:>10.2} {:<5} raw {:>10.2} {:<5} ({}) ratio {:.3}",
            row.group,
            row.name,
            row.ours,
            row.unit,
            row.raw,
            row.unit,
            row.raw_name,
            row.ratio()
        );
        self.rows.push(row);
    }
}
