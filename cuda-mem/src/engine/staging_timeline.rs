//! A timeline of staged host copies (feature `test-hooks`), for seeing
//! where a copy's time goes where no profiler can record one: per piece,
//! the lane that copied it and when; per wait of a lane for a slot, which
//! chunk it waited for and how long; per chunk, when its DMA was queued
//! (host clock) and when the copy engine ran it (timing events recorded on
//! the copy's stream before and after the DMA).
//!
//! Recording is asked for per thread ([`__record_staging`]): the staged
//! copies that thread makes are recorded, and their timelines are kept for
//! it ([`__take_staging_timelines`]). A recorded copy to the device waits
//! for its last DMA before it returns, and every recorded copy pays for
//! two events a chunk, so its time is not the plain copy's. While nothing
//! is recorded, a staged copy pays a thread-local read, and a test of an
//! `Option` a piece.

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::time::Instant;

use cudarc::driver::{sys, CudaEvent, CudaStream};

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
/// thread keeps none after this call. Copies that were not staged (too
/// small, or from pinned memory) have none.
#[doc(hidden)]
pub fn __take_staging_timelines() -> Vec<StagingTimeline> {
    TIMELINES.with(|t| std::mem::take(&mut *t.borrow_mut()))
}

/// One staged copy's timeline. Times are microseconds from the copy's
/// start, on the host's clock; the DMAs' are the GPU's times, placed on the
/// host's clock by an event recorded on the copy's stream at the start
/// (exact when the stream was idle then; otherwise late by the work queued
/// before the copy).
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq)]
pub struct StagingTimeline {
    /// A copy to the device (else to the host).
    pub to_device: bool,
    /// The copy's bytes.
    pub bytes: usize,
    /// The lanes (threads) the plan gave it.
    pub lanes: usize,
    /// The pinned slots the plan gave it.
    pub slots: usize,
    /// Every piece, in the order the lanes finished them.
    pub pieces: Vec<PieceSpan>,
    /// Every wait of a lane for a slot or a chunk's DMA.
    pub waits: Vec<WaitSpan>,
    /// Every chunk, in order.
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
    /// The lane that copied it (0 is the calling thread's first lane).
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
    /// When the copy engine reached it (the GPU's clock: the later of the
    /// queueing and the end of the DMA before it on the stream).
    pub dma_start_us: f64,
    /// When its DMA ended (the GPU's clock).
    pub dma_end_us: f64,
}

/// The recording of one staged copy, shared by its lanes.
pub(crate) struct Recorder {
    origin: Instant,
    origin_event: CudaEvent,
    /// Per chunk: events before and after its DMA.
    dma_events: Vec<(CudaEvent, CudaEvent)>,
    pieces: Mutex<Vec<PieceSpan>>,
    waits: Mutex<Vec<WaitSpan>>,
    /// Per chunk: `(bytes, queued_us)`, once queued.
    queued: Mutex<Vec<Option<(usize, f64)>>>,
}

/// Records `event` on `stream` (the raw call, as `staging` does: cudarc's
/// `record` first returns any error another thread left in the context).
fn record(event: &CudaEvent, stream: &CudaStream) -> Result<()> {
    // SAFETY: a live event and a live stream of the context current on this
    // thread (the copy's lanes bind it).
    unsafe { sys::cuEventRecord(event.cu_event(), stream.cu_stream()).result() }
        .op("cuEventRecord (a staged copy's timeline)")
}

impl Recorder {
    /// A recorder for a copy of `chunks` chunks on `stream`, when the
    /// calling thread records its staged copies and the events can be had
    /// (else the copy runs unrecorded).
    pub(crate) fn start(
        state: &ContextState,
        stream: &CudaStream,
        chunks: usize,
    ) -> Option<Recorder> {
        if !RECORDING.with(Cell::get) {
            return None;
        }
        let event = || state.ctx.new_event(None).ok();
        let dma_events = (0..chunks)
            .map(|_| Some((event()?, event()?)))
            .collect::<Option<Vec<_>>>()?;
        let origin_event = event()?;
        record(&origin_event, stream).ok()?;
        Some(Recorder {
            origin: Instant::now(),
            origin_event,
            dma_events,
            pieces: Mutex::new(Vec::new()),
            waits: Mutex::new(Vec::new()),
            queued: Mutex::new(vec![None; chunks]),
        })
    }

    /// Microseconds from the copy's start to `t`.
    fn us(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.origin).as_secs_f64() * 1e6
    }

    /// Piece `piece`, begun at `start` by lane `lane`, is done.
    pub(crate) fn piece(&self, piece: usize, lane: usize, start: Instant) {
        let span = PieceSpan {
            piece,
            lane,
            start_us: self.us(start),
            end_us: self.us(Instant::now()),
        };
        self.pieces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
    }

    /// A wait for chunk `chunk`, begun at `start`, has ended.
    pub(crate) fn wait(&self, chunk: usize, start: Instant) {
        let span = WaitSpan {
            chunk,
            start_us: self.us(start),
            end_us: self.us(Instant::now()),
        };
        self.waits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(span);
    }

    /// Queues chunk `chunk`'s DMA of `bytes` with `dma` on `stream`,
    /// between its two events.
    pub(crate) fn around_dma(
        &self,
        (chunk, bytes): (usize, usize),
        stream: &CudaStream,
        dma: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let queued_us = self.us(Instant::now());
        let (before, after) = &self.dma_events[chunk];
        record(before, stream)?;
        dma()?;
        record(after, stream)?;
        self.queued.lock().unwrap_or_else(|p| p.into_inner())[chunk] = Some((bytes, queued_us));
        Ok(())
    }

    /// The copy's lanes are done: waits for its DMAs on `stream`, reads the
    /// events and keeps the timeline for the calling thread. `what` is the
    /// copy's direction, bytes, lanes and slots.
    pub(crate) fn finish(
        self,
        stream: &CudaStream,
        (to_device, bytes, lanes, slots): (bool, usize, usize, usize),
    ) -> Result<()> {
        let lanes_done_us = self.us(Instant::now());
        // SAFETY: a live stream of the context bound on this thread.
        unsafe { sys::cuStreamSynchronize(stream.cu_stream()).result() }
            .op("cuStreamSynchronize (a staged copy's timeline)")?;
        let gpu_us = |event: &CudaEvent| -> Result<f64> {
            let ms = self
                .origin_event
                .elapsed_ms(event)
                .op("cuEventElapsedTime (a staged copy's timeline)")?;
            Ok(f64::from(ms) * 1e3)
        };
        let queued = self.queued.into_inner().unwrap_or_else(|p| p.into_inner());
        let mut chunks = Vec::with_capacity(queued.len());
        for (chunk, (queued, (before, after))) in queued.iter().zip(&self.dma_events).enumerate() {
            // A chunk never queued (the copy failed): no span.
            let Some((bytes, queued_us)) = *queued else {
                continue;
            };
            chunks.push(ChunkSpan {
                chunk,
                bytes,
                queued_us,
                dma_start_us: gpu_us(before)?,
                dma_end_us: gpu_us(after)?,
            });
        }
        let timeline = StagingTimeline {
            to_device,
            bytes,
            lanes,
            slots,
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
