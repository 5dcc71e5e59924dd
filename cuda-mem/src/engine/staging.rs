//! Synchronous copies between *pageable* host memory (an ordinary `Vec` or
//! slice) and the GPU, staged through pinned memory.
//!
//! The driver stages pageable copies itself, with one CPU thread copying
//! through its own pinned buffer: about 8-10 GB/s (to the device) and 15-20
//! GB/s (to the host) on an H200 host, against 55 GB/s for pinned memory.
//! Copies of at least [`min_bytes`] from or to memory the driver does not
//! know take this path instead: the copy is cut into up to [`lanes`]
//! contiguous parts, one per lane, run in parallel by the calling thread and
//! the persistent workers of `workers` (no thread is spawned per copy).
//! Each lane cuts its part into up to [`DEFAULT_DEPTH`] chunks, which take
//! turns in [`SLOTS`] pinned slots of one block, so that the `memcpy` into
//! (or out of) one chunk overlaps the DMA of the others, and the lanes'
//! CPU copies together keep pace with the DMA (one thread copies about 12
//! GB/s, sixteen about 50).
//!
//! The pinned block comes from the context's pinned cache (`pinned_cache`)
//! and goes back to it when the copy returns, guarded by an event behind the
//! copy's last DMA: only the first staged copy (or the first after a
//! `trim_to`) pins memory, and it shares the cache with `PinnedBuffer`s.
//!
//! Small copies, host memory that is already pinned or managed, and any copy
//! for which no pinned block can be had go straight to the driver.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{sys, CudaEvent, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::memory::pinned_cache::{self, Block};
use crate::memory::pinned_pages::registered_or_self;

/// Pinned slots per lane: two (double buffering; a lane's chunks take turns
/// in them). Many lanes share one copy engine, so a lane's next DMA waits
/// behind the other lanes' anyway.
const SLOTS: usize = 2;
/// The smallest chunk: smaller copies use fewer lanes.
const MIN_CHUNK: usize = 256 << 10;

/// Tuning (0: the default); set by [`__set_staging`] for benchmarks.
static LANES: AtomicUsize = AtomicUsize::new(0);
static CHUNK_BYTES: AtomicUsize = AtomicUsize::new(0);
static MIN_BYTES: AtomicUsize = AtomicUsize::new(0);
static DEPTH: AtomicUsize = AtomicUsize::new(0);

/// Default bytes per chunk (at most; see [`chunk_for`]).
const DEFAULT_CHUNK_BYTES: usize = 2 << 20;
/// Default thresholds: copies at least this large are staged, to the device
/// and to the host. Measured on an H200 host (bench `--copy-sweep`): the
/// driver's own pageable copy to the device ran at 12-15 GB/s from 1 to
/// 16 MiB, where staging reached 13-15 (0.93 of it at 16 MiB in one run,
/// 1.17x in another), and staging won clearly from 32 MiB (1.87x); to the
/// host, where the driver tops out at 8-12 GB/s, staging won from 4 MiB
/// (1.51x at 4 MiB, 1.64x at 8 MiB).
const DEFAULT_MIN_BYTES: [usize; 2] = [32 << 20, 4 << 20];
/// Default most lanes, capped by the host's parallelism.
const DEFAULT_MAX_LANES: usize = 16;
/// Default chunks per lane that a copy is cut into (fewer where chunks
/// would fall below [`MIN_CHUNK`], smaller ones never above the largest).
/// No DMA can start before the first chunk of some lane is copied, and every
/// lane copies its first chunk at once, sharing the host's memory bandwidth,
/// so more chunks start the DMAs sooner; but each chunk is one more DMA and
/// event wait, and small ones cost more than they save. Measured on the H200
/// host at 64 MiB against pinned memory (bench `--copies-only --staging
/// 0,0,0,DEPTH`, means of four runs, H2D / D2H): 2 chunks 0.44 / 0.48,
/// 4 chunks 0.45 / 0.55, 8 chunks 0.32 / 0.38 (below 2 chunks in five of
/// the six interleaved comparisons). From 256 MiB, 16 lanes get the largest
/// chunk at every depth up to 8, so the same plan.
const DEFAULT_DEPTH: usize = 4;

/// Benchmark knob (feature `test-hooks`): the most lanes of a staged copy,
/// the largest chunk, the smallest staged copy, in bytes, in both
/// directions, and the chunks per lane; 0 restores each default (lanes: the
/// host's parallelism, at most 16; chunks: 2 MiB; thresholds: 32 MiB to the
/// device, 4 MiB to the host; 4 chunks per lane). `usize::MAX` as the
/// threshold turns staging off.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __set_staging(lanes: usize, chunk_bytes: usize, min_bytes: usize, depth: usize) {
    // Bounded, so that the chunk and slot arithmetic cannot overflow.
    LANES.store(lanes.min(1024), Ordering::Relaxed);
    CHUNK_BYTES.store(chunk_bytes.min(1 << 30), Ordering::Relaxed);
    MIN_BYTES.store(min_bytes, Ordering::Relaxed);
    DEPTH.store(depth.min(1 << 16), Ordering::Relaxed);
}

/// Chunks per lane (see [`DEFAULT_DEPTH`]).
fn depth() -> usize {
    match DEPTH.load(Ordering::Relaxed) {
        0 => DEFAULT_DEPTH,
        n => n,
    }
}

/// The most lanes of a staged copy.
fn lanes() -> usize {
    static PARALLELISM: OnceLock<usize> = OnceLock::new();
    match LANES.load(Ordering::Relaxed) {
        0 => *PARALLELISM.get_or_init(|| {
            std::thread::available_parallelism()
                .map_or(4, usize::from)
                .clamp(1, DEFAULT_MAX_LANES)
        }),
        n => n,
    }
}

/// The largest chunk.
fn max_chunk() -> usize {
    match CHUNK_BYTES.load(Ordering::Relaxed) {
        0 => DEFAULT_CHUNK_BYTES,
        n => n.next_multiple_of(4096),
    }
}

/// The direction of a staged copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    ToDevice,
    ToHost,
}

/// Copies in direction `to` at least this large are staged.
pub(crate) fn min_bytes(to: Direction) -> usize {
    match MIN_BYTES.load(Ordering::Relaxed) {
        0 => DEFAULT_MIN_BYTES[to as usize],
        n => n,
    }
}

/// The chunk size for a copy of `total` bytes: [`depth`] chunks for every
/// lane, whole pages, between [`MIN_CHUNK`] and the largest.
fn chunk_for(total: usize, lanes: usize) -> usize {
    let max = max_chunk();
    total
        .div_ceil(lanes * depth())
        .next_multiple_of(4096)
        .clamp(MIN_CHUNK.min(max), max)
}

/// How a copy of `total` bytes is cut: the chunk size, the bytes per lane
/// (whole chunks, so that every lane but the last fills its chunks) and the
/// number of lanes.
fn plan(total: usize) -> (usize, usize, usize) {
    let most = lanes();
    let chunk = chunk_for(total, most);
    let per_lane = total.div_ceil(most).next_multiple_of(chunk);
    (chunk, per_lane, total.div_ceil(per_lane))
}

/// One lane's pinned memory: `SLOTS` slots of a chunk each, and the events
/// that mark the end of their latest DMA.
struct Lane<'a> {
    slots: [*mut u8; SLOTS],
    done: &'a [CudaEvent],
}

/// The per-lane events of a context's staged copies, kept for reuse: a set
/// per copy in flight.
type EventSets = Mutex<Vec<Vec<CudaEvent>>>;

/// `n` events for a copy (reused, or created), or `None`.
fn take_events(state: &ContextState, n: usize) -> Option<Vec<CudaEvent>> {
    let sets = state
        .lazy(&state.staging, || Ok(EventSets::default()))
        .ok()?;
    let mut set = sets
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .pop()
        .unwrap_or_default();
    let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
    while set.len() < n {
        set.push(state.ctx.new_event(flags).ok()?);
    }
    Some(set)
}

fn return_events(state: &ContextState, set: Vec<CudaEvent>) {
    if let Some(sets) = state.staging.get::<EventSets>() {
        sets.lock().unwrap_or_else(|p| p.into_inner()).push(set);
    }
}

/// Whether `ptr` is host memory the driver does not know (pageable), so that
/// staging pays off. `cuPointerGetAttributes`, unlike the singular call, does
/// not fail for such memory: it reports memory type 0.
fn is_pageable(ptr: *const u8) -> bool {
    let mut memory_type: u32 = 0;
    let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data = [(&mut memory_type as *mut u32).cast::<c_void>()];
    // SAFETY: one attribute, one output slot of the size that attribute takes.
    let found = unsafe {
        sys::cuPointerGetAttributes(1, &mut attribute, data.as_mut_ptr(), ptr as u64).result()
    };
    found.is_ok() && memory_type == 0
}

/// Records `done` on `stream`. The raw call, because cudarc's `record`
/// first returns any error another thread stored in the context, which would
/// leave the chunk's queued DMA unrecorded.
fn record(done: &CudaEvent, stream: &CudaStream) -> Result<()> {
    // SAFETY: a live event and a live stream of the context current on this
    // thread (every lane binds it).
    unsafe { sys::cuEventRecord(done.cu_event(), stream.cu_stream()).result() }.op("cuEventRecord")
}

/// Waits until the latest DMA recorded on `done` has finished (the raw
/// call, as for [`record`]).
fn wait(done: &CudaEvent) -> Result<()> {
    // SAFETY: a live event of the context current on this thread.
    unsafe { sys::cuEventSynchronize(done.cu_event()).result() }.op("cuEventSynchronize")
}

/// What a staged copy holds while it runs: a pinned block of the context's
/// cache, cut into `SLOTS` slots of one chunk per lane, and an event per
/// slot.
struct Staged<'s> {
    state: &'s ContextState,
    block: Block,
    events: Vec<CudaEvent>,
    chunk: usize,
    per_lane: usize,
    lanes: usize,
}

/// The pinned block and events for a copy of `total` bytes from or to host
/// address `host`, if the copy should be staged and they can be had.
fn prepare(
    state: &ContextState,
    host: *const u8,
    total: usize,
    to: Direction,
) -> Option<Staged<'_>> {
    if total < min_bytes(to) || !is_pageable(host) {
        return None;
    }
    let (chunk, per_lane, lanes) = plan(total);
    let block = pinned_cache::take_for_staging(state, lanes * SLOTS * chunk).ok()?;
    let Some(events) = take_events(state, lanes * SLOTS) else {
        // Its earlier uses have finished (waited for when it was taken).
        let _ = pinned_cache::give_back(state, block, None);
        return None;
    };
    Some(Staged {
        state,
        block,
        events,
        chunk,
        per_lane,
        lanes,
    })
}

impl Staged<'_> {
    /// Runs `lane(chunks, offset, part)` for each part (the host range
    /// starting `offset` bytes into the copy, `per_lane` bytes apart) on the
    /// workers, each with its own chunks; then gives the block back to the
    /// cache, guarded by an event behind every DMA queued on `stream` when
    /// `queued_dma` (a copy to the device returns before its last DMAs end).
    /// Returns the first error. After an error, `stream` is waited for
    /// before the block goes back (and the block is leaked if that fails),
    /// so no DMA of the copy still uses it.
    fn run<P: Send>(
        self,
        stream: &CudaStream,
        parts: Vec<P>,
        queued_dma: bool,
        lane: impl Fn(&Lane<'_>, usize, P) -> Result<()> + Sync,
    ) -> Result<()> {
        let Staged {
            state,
            block,
            events,
            chunk,
            per_lane,
            lanes,
        } = self;
        debug_assert!(parts.len() <= lanes && events.len() >= lanes * SLOTS);
        let base = block.pages().dma() as usize;
        let parts: Vec<Mutex<Option<P>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
        let first_error = Mutex::new(None);
        crate::engine::workers::run_lanes(parts.len(), &|i| {
            let part = parts[i].lock().unwrap_or_else(|p| p.into_inner()).take();
            let Some(part) = part else { return };
            let own = Lane {
                slots: std::array::from_fn(|k| (base + (i * SLOTS + k) * chunk) as *mut u8),
                done: &events[i * SLOTS..(i + 1) * SLOTS],
            };
            let result = state.bind().and_then(|()| lane(&own, i * per_lane, part));
            if let Err(e) = result {
                first_error
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get_or_insert(e);
            }
        });
        let error = first_error.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = state.bind() {
            // Its DMAs cannot be guarded or waited for.
            pinned_cache::leak(state, block);
            return Err(e);
        }
        let returned = match error {
            None => pinned_cache::give_back(state, block, queued_dma.then_some(stream)),
            Some(e) => {
                // SAFETY: a live stream of the context bound above.
                if unsafe { sys::cuStreamSynchronize(stream.cu_stream()) }
                    .result()
                    .is_ok()
                {
                    let _ = pinned_cache::give_back(state, block, None);
                } else {
                    pinned_cache::leak(state, block);
                }
                return_events(state, events);
                return Err(e);
            }
        };
        return_events(state, events);
        returned
    }
}

/// Copies `src` to device address `dst` on `stream`, staged when that is
/// faster. Returns once `src` may be reused; the copy is queued on `stream`
/// (later work on `stream` sees it), as with the driver's own pageable copy.
///
/// The caller has bound the context and ordered `stream` after earlier work on
/// the destination, which lies inside one allocation.
pub(crate) fn copy_from_host(
    state: &ContextState,
    stream: &CudaStream,
    dst: u64,
    src: &[u8],
) -> Result<()> {
    // A slice of cuda-mem's pinned memory is an unregistered alias
    // (`pinned_pages`): copy from the registered mapping of the same pages,
    // which is not pageable, so it is never staged.
    let from = registered_or_self(src.as_ptr().cast_mut(), src.len()).cast_const();
    let Some(staged) = prepare(state, from, src.len(), Direction::ToDevice) else {
        // SAFETY: `from` is `src` or the registered mapping of the same
        // pages, live for `src.len()` bytes (borrowed); the synchronous copy
        // has read it on return; the caller vouches for the destination.
        return unsafe { sys::cuMemcpyHtoD_v2(dst, from.cast(), src.len()).result() }
            .op("cuMemcpyHtoD");
    };
    let chunk = staged.chunk;
    let parts = src.chunks(staged.per_lane).collect();
    staged.run(stream, parts, true, |lane, offset, part: &[u8]| {
        for (i, piece) in part.chunks(chunk).enumerate() {
            let (host, done) = (lane.slots[i % SLOTS], &lane.done[i % SLOTS]);
            wait(done)?;
            // SAFETY: the chunk holds `chunk >= piece.len()` bytes of this
            // lane's part of the block, and its last DMA has finished
            // (waited above); `piece` is live host memory.
            unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), host, piece.len()) };
            let at = dst + (offset + i * chunk) as u64;
            // SAFETY: the chunk is pinned and stays untouched until `done`
            // fires; the destination range lies inside the caller's allocation.
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(at, host.cast(), piece.len(), stream.cu_stream()).result()
            }
            .op("cuMemcpyHtoDAsync")?;
            record(done, stream)?;
        }
        Ok(())
    })
}

/// Copies `dst.len()` bytes from device address `src` into `dst`, staged when
/// that is faster. Returns once `dst` holds the data.
///
/// The caller has bound the context and ordered `stream` after earlier work on
/// the source, which lies inside one allocation.
pub(crate) fn copy_to_host(
    state: &ContextState,
    stream: &CudaStream,
    dst: &mut [u8],
    src: u64,
) -> Result<()> {
    let into = registered_or_self(dst.as_mut_ptr(), dst.len());
    let Some(staged) = prepare(state, into, dst.len(), Direction::ToHost) else {
        // SAFETY: `into` is `dst` or the registered mapping of the same
        // pages, live and exclusive for `dst.len()` bytes (borrowed mutably);
        // the synchronous copy has finished on return.
        return unsafe { sys::cuMemcpyDtoH_v2(into.cast(), src, dst.len()).result() }
            .op("cuMemcpyDtoH");
    };
    let chunk = staged.chunk;
    let parts = dst.chunks_mut(staged.per_lane).collect();
    // Every DMA into a chunk is waited for before its bytes are copied out,
    // so none is left when the copy returns.
    staged.run(stream, parts, false, |lane, offset, part: &mut [u8]| {
        let total = part.len();
        let pieces = total.div_ceil(chunk);
        let queue = |i: usize| -> Result<()> {
            let (host, done) = (lane.slots[i % SLOTS], &lane.done[i % SLOTS]);
            let len = chunk.min(total - i * chunk);
            let from = src + (offset + i * chunk) as u64;
            // SAFETY: the chunk is pinned, holds `len` bytes, and nothing
            // reads it until `done` fires; the source lies inside the
            // allocation.
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(host.cast(), from, len, stream.cu_stream()).result()
            }
            .op("cuMemcpyDtoHAsync")?;
            record(done, stream)
        };
        // The chunks may still be read by an earlier copy's DMA.
        for i in 0..pieces.min(SLOTS) {
            wait(&lane.done[i])?;
            queue(i)?;
        }
        for (i, piece) in part.chunks_mut(chunk).enumerate() {
            let (host, done) = (lane.slots[i % SLOTS], &lane.done[i % SLOTS]);
            wait(done)?;
            // SAFETY: the DMA into the chunk has finished (waited above) and
            // it holds at least `piece.len()` bytes of the source.
            unsafe { std::ptr::copy_nonoverlapping(host, piece.as_mut_ptr(), piece.len()) };
            if i + SLOTS < pieces {
                queue(i + SLOTS)?;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_cover_the_copy_with_whole_chunks_per_lane() {
        let most = lanes();
        for total in [
            4 << 20,
            (4 << 20) + 1,
            8 << 20,
            (64 << 20) - 4097,
            256 << 20,
            1 << 30,
        ] {
            let (chunk, per_lane, n) = plan(total);
            assert!(chunk >= MIN_CHUNK.min(max_chunk()) && chunk <= max_chunk());
            assert!(chunk.is_multiple_of(4096));
            assert!(per_lane.is_multiple_of(chunk));
            assert!(n >= 1 && n <= most, "{total}: {n} lanes of {most}");
            assert!(per_lane * n >= total && per_lane * (n - 1) < total);
        }
    }
}
