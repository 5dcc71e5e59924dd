//! A timeline of staged host copies (feature `test-hooks`), for seeing
//! where a copy's time goes where no profiler can record one: per piece,
//! the lane that copied it and when; per wait of a lane for a slot, which
//! chunk it waited for and how long; per chunk, when its DMA was queued
//! (host clock) and when the copy engine ran it (timing events recorded on
//! the copy's stream before and after the DMA).
//!
//! Recording is asked for per thread ([`__record_staging`]): the staged
//! copies that thread makes are recorded, and their timelines are kept for
//! it ([`__take_staging_timelines`]). A recorded copy is not the plain
//! copy, so its total is not the plain copy's time: it first waits for the
//! work queued on its stream before it (so that the two clocks meet), its
//! lanes queue their DMAs one at a time (so that each DMA's two events
//! bracket it alone), it pays for two events a chunk, and it waits for its
//! stream before it returns (a copy to the device otherwise returns before
//! its last DMAs end). Its stream is the one the copy runs on: for the
//! synchronous `copy_from_host` and `copy_to_host`, the context's legacy
//! default stream, so these waits take in the work every thread queued
//! there. While nothing is recorded, a staged copy pays a thread-local
//! read, and a test of an `Option` a piece.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::time::Instant;

use cudarc::driver::{sys, CudaEvent, CudaStream};

use super::events::{record, wait};
use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};

thread_local! {
    /// Whether this thread's staged copies are recorded.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    /// The timelines of this thread's recorded copies, oldest first.
    static TIMELINES: RefCell<Vec<StagingTimeline>> = const { RefCell::new(Vec::new()) };
}

/// Benchmark and diagnosis hook (feature `test-hooks`): record the staged
/// copies this thread makes from now on (`true`), or stop (`false`). See
/// [`__take_staging_timelines`].
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let mut dev = cuda_mem::DeviceBuffer::<f32>::new(&ctx, 16 << 20)?;
/// let host = vec![1.0f32; 16 << 20];
/// cuda_mem::__record_staging(true);
/// dev.copy_from_host(&host)?; // 64 MiB: staged
/// cuda_mem::__record_staging(false);
/// let timeline = &cuda_mem::__take_staging_timelines()[0];
/// println!("{} chunks, the last DMA ended at {:.0} µs", timeline.chunks.len(),
///     timeline.chunks.last().map_or(0.0, |c| c.dma_end_us));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[doc(hidden)]
pub fn __record_staging(on: bool) {
    RECORDING.with(|r| r.set(on));
}

/// Benchmark and diagnosis hook (feature `test-hooks`): the timelines of
/// the staged copies this thread made while recording, oldest first; the
/// thread keeps none after this call. Copies that were not staged (below
/// the staging thresholds, 2 MiB to the device and 1 MiB to the host by
/// default, or from pinned memory) have none, and so has a copy whose
/// events could not be had or read (it ran unrecorded).
#[doc(hidden)]
pub fn __take_staging_timelines() -> Vec<StagingTimeline> {
    TIMELINES.with(|t| std::mem::take(&mut *t.borrow_mut()))
}

/// One staged copy's timeline. Times are microseconds from the copy's
/// start, on the host's clock; the DMAs' are the GPU's times, placed on the
/// host's clock by an event recorded on the copy's stream at the start and
/// waited for: the GPU's times read early by the time the host took to see
/// that event end (microseconds), never late.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq)]
pub struct StagingTimeline {
    /// A copy to the device (else to the host).
    pub to_device: bool,
    /// The copy's bytes.
    pub bytes: usize,
    /// The lanes the plan gave it (shares of the copy, run by the calling
    /// thread and the worker threads; a thread may run several).
    pub lanes: usize,
    /// The pinned slots the plan gave it.
    pub slots: usize,
    /// The bytes of a piece (the last may be shorter): the copy has
    /// `bytes.div_ceil(piece_bytes)` pieces.
    pub piece_bytes: usize,
    /// Every piece, in the order the lanes finished them.
    pub pieces: Vec<PieceSpan>,
    /// Every wait of a lane for a slot or a chunk's DMA.
    pub waits: Vec<WaitSpan>,
    /// Every chunk, in the copy's order (their DMAs may have been queued
    /// in another: a chunk is queued by the lane that finishes it).
    pub chunks: Vec<ChunkSpan>,
    /// When the last lane was done.
    pub lanes_done_us: f64,
}

/// A lane's copy of one piece, the wait for its slot included.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieceSpan {
    /// The piece's index in the copy.
    pub piece: usize,
    /// The lane that copied it, below [`StagingTimeline::lanes`].
    pub lane: usize,
    /// When the lane began it.
    pub start_us: f64,
    /// When the lane was done with it.
    pub end_us: f64,
}

/// A lane's wait for chunk `chunk`'s DMA to end (to the device: before it
/// reuses the chunk's slot; to the host: before it copies the chunk out).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitSpan {
    /// The chunk waited for.
    pub chunk: usize,
    /// When the wait began.
    pub start_us: f64,
    /// When it ended.
    pub end_us: f64,
}

/// One chunk's DMA.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkSpan {
    /// The chunk's index in the copy.
    pub chunk: usize,
    /// Its bytes.
    pub bytes: usize,
    /// When a lane queued its DMA (host clock).
    pub queued_us: f64,
    /// When the stream reached it (the GPU's clock: the later of its
    /// queueing and the end of the work before it on the stream).
    pub dma_start_us: f64,
    /// When its DMA ended (the GPU's clock).
    pub dma_end_us: f64,
}

/// The recording of one staged copy, shared by its lanes.
pub(super) struct Recorder {
    origin: Instant,
    origin_event: CudaEvent,
    /// Per chunk: the events before and after its DMA, recorded under the
    /// lock (so that no other lane's DMA falls between them), and once
    /// queued its bytes and when.
    chunks: Mutex<Vec<ChunkEvents>>,
    pieces: Mutex<Vec<PieceSpan>>,
    waits: Mutex<Vec<WaitSpan>>,
}

/// What a recorded copy was: its direction, bytes and plan (the fields of
/// [`StagingTimeline`] of the same names).
pub(super) struct CopyShape {
    pub(super) to_device: bool,
    pub(super) bytes: usize,
    pub(super) lanes: usize,
    pub(super) slots: usize,
    pub(super) piece_bytes: usize,
}

/// One chunk's events, and `(bytes, queued_us)` once its DMA is queued.
struct ChunkEvents {
    before: CudaEvent,
    after: CudaEvent,
    queued: Option<(usize, f64)>,
}

/// `mutex` locked (a lane that panicked while it held it left a whole
/// entry or none: each is one push or one store).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recorder {
    /// A recorder for a copy of `chunks` chunks on `stream`, when the
    /// calling thread records its staged copies and the events can be had
    /// (else the copy runs unrecorded).
    pub(super) fn start(
        state: &ContextState,
        stream: &CudaStream,
        chunks: usize,
    ) -> Option<Recorder> {
        if !RECORDING.with(Cell::get) {
            return None;
        }
        // Timing events (cudarc's default is without timing).
        let event = || {
            state
                .ctx
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .ok()
        };
        let chunks = (0..chunks)
            .map(|_| {
                Some(ChunkEvents {
                    before: event()?,
                    after: event()?,
                    queued: None,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        let origin_event = event()?;
        record(&origin_event, stream).ok()?;
        // The clocks meet where the host sees the origin end.
        wait(&origin_event).ok()?;
        Some(Recorder {
            origin: Instant::now(),
            origin_event,
            chunks: Mutex::new(chunks),
            pieces: Mutex::new(Vec::new()),
            waits: Mutex::new(Vec::new()),
        })
    }

    /// Microseconds from the copy's start to `t`.
    fn us(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// From `start` to now, in microseconds from the copy's start.
    fn span_to_now(&self, start: Instant) -> (f64, f64) {
        (self.us(start), self.us(Instant::now()))
    }

    /// Piece `piece`, begun at `start` by lane `lane`, is done.
    pub(super) fn piece(&self, piece: usize, lane: usize, start: Instant) {
        let (start_us, end_us) = self.span_to_now(start);
        let span = PieceSpan {
            piece,
            lane,
            start_us,
            end_us,
        };
        lock(&self.pieces).push(span);
    }

    /// A wait for chunk `chunk`, begun at `start`, has ended.
    pub(super) fn wait(&self, chunk: usize, start: Instant) {
        let (start_us, end_us) = self.span_to_now(start);
        lock(&self.waits).push(WaitSpan {
            chunk,
            start_us,
            end_us,
        });
    }

    /// Queues chunk `chunk`'s DMA of `bytes` with `dma` on `stream`,
    /// between its two events (one lane at a time).
    pub(super) fn around_dma(
        &self,
        (chunk, bytes): (usize, usize),
        stream: &CudaStream,
        dma: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let mut chunks = lock(&self.chunks);
        let queued_us = self.us(Instant::now());
        let events = &mut chunks[chunk];
        record(&events.before, stream)?;
        dma()?;
        record(&events.after, stream)?;
        events.queued = Some((bytes, queued_us));
        Ok(())
    }

    /// The lanes of the copy `copy` are done: waits for `stream` (an error
    /// there is the copy's), reads the events and keeps the timeline for
    /// the calling thread (none if an event cannot be read).
    pub(super) fn finish(self, stream: &CudaStream, copy: CopyShape) -> Result<()> {
        let lanes_done_us = self.us(Instant::now());
        // SAFETY: a live stream of the context bound on this thread.
        unsafe { sys::cuStreamSynchronize(stream.cu_stream()).result() }.op(
            "cuStreamSynchronize, the end of a staged copy that records its timeline \
             (__record_staging(false) copies without it)",
        )?;
        let origin = self.origin_event.cu_event();
        // The raw call: cudarc's `elapsed_ms` first returns any error
        // another thread left in the context.
        // SAFETY: two live events of the context bound on this thread,
        // both complete (the stream was waited for).
        let gpu_us = |event: &CudaEvent| unsafe {
            cudarc::driver::result::event::elapsed(origin, event.cu_event())
                .ok()
                .map(|ms| f64::from(ms) * 1e3)
        };
        let events = self.chunks.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut chunks = Vec::with_capacity(events.len());
        for (chunk, events) in events.iter().enumerate() {
            // A chunk never queued (the copy failed): no span.
            let Some((bytes, queued_us)) = events.queued else {
                continue;
            };
            let (Some(dma_start_us), Some(dma_end_us)) =
                (gpu_us(&events.before), gpu_us(&events.after))
            else {
                return Ok(());
            };
            chunks.push(ChunkSpan {
                chunk,
                bytes,
                queued_us,
                dma_start_us,
                dma_end_us,
            });
        }
        let timeline = StagingTimeline {
            to_device: copy.to_device,
            bytes: copy.bytes,
            lanes: copy.lanes,
            slots: copy.slots,
            piece_bytes: copy.piece_bytes,
            pieces: self.pieces.into_inner().unwrap_or_else(|p| p.into_inner()),
            waits: self.waits.into_inner().unwrap_or_else(|p| p.into_inner()),
            chunks,
            lanes_done_us,
        };
        TIMELINES.with(|t| t.borrow_mut().push(timeline));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recording is per thread: another thread's switch does not reach
    /// this one, and taking the timelines empties them.
    #[test]
    fn recording_is_asked_for_per_thread() {
        __record_staging(true);
        assert!(RECORDING.with(Cell::get));
        std::thread::spawn(|| {
            assert!(!RECORDING.with(Cell::get), "a new thread records");
            __record_staging(false);
        })
        .join()
        .unwrap();
        assert!(
            RECORDING.with(Cell::get),
            "another thread switched this one off"
        );
        __record_staging(false);
        assert!(!RECORDING.with(Cell::get));
        assert!(__take_staging_timelines().is_empty());
    }
}
