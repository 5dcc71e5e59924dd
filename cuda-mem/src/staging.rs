//! Synchronous copies between *pageable* host memory (an ordinary `Vec` or
//! slice) and the GPU, staged through pinned chunks.
//!
//! The driver stages pageable copies itself, with one CPU thread copying
//! through its own pinned buffer: about 5-10 GB/s on an H200 host, against
//! 55 GB/s for pinned memory. Large copies from or to memory the driver does
//! not know take this path instead: the copy is cut into [`LANES`] contiguous
//! parts, each handled by its own thread with two pinned chunks, so that the
//! `memcpy` into one chunk overlaps the DMA of the other and the lanes' CPU
//! copies run in parallel. Small copies, and host memory that is already
//! pinned or managed, go straight to the driver.

use std::ffi::c_void;
use std::sync::Mutex;

use cudarc::driver::{result, sys, CudaEvent, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::pinned_pages::registered_or_self;

/// Copies at least this large are staged (smaller ones gain nothing).
pub(crate) const STAGE_MIN_BYTES: usize = 8 << 20;
/// Bytes per pinned chunk.
const CHUNK_BYTES: usize = 2 << 20;
/// Threads (each with two chunks) per staged copy: `LANES * 2 * CHUNK_BYTES`
/// = 16 MiB of pinned memory per context, allocated on first use.
const LANES: usize = 4;

/// One pinned chunk and the event that marks the end of its latest DMA.
struct Slot {
    host: *mut u8,
    done: CudaEvent,
}

// SAFETY: `host` points to pinned memory owned by the `Staging` that holds
// the slot (allocated in `Staging::new`, freed in its `drop`); a slot is used
// by one thread at a time (its lane's), under the context's staging mutex.
unsafe impl Send for Slot {}
// SAFETY: as above: shared references only cross into the lane thread that
// uses the slot, while the mutex keeps every other thread out.
unsafe impl Sync for Slot {}

/// The pinned chunks of one context: two per lane.
pub(crate) struct Staging {
    slots: Vec<Slot>,
}

impl Staging {
    fn new(state: &ContextState) -> Result<Self> {
        state.bind()?;
        // Slots made so far are freed by `drop` if a later one fails.
        let mut staging = Self {
            slots: Vec::with_capacity(2 * LANES),
        };
        for _ in 0..2 * LANES {
            // SAFETY: a plain pinned allocation of CHUNK_BYTES, freed in `drop`
            // (or just below if its event cannot be made).
            let host = unsafe { result::malloc_host(CHUNK_BYTES, 0) }.op("cuMemHostAlloc")?;
            let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
            match state.ctx.new_event(flags) {
                Ok(done) => staging.slots.push(Slot {
                    host: host.cast(),
                    done,
                }),
                Err(e) => {
                    // SAFETY: allocated just above and never used.
                    let _ = unsafe { result::free_host(host) };
                    return Err(e).op("cuEventCreate");
                }
            }
        }
        Ok(staging)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        for slot in &self.slots {
            // A failed wait (a poisoned context) leaks the chunk rather than
            // freeing memory a DMA may still use.
            if slot.done.synchronize().is_ok() {
                // SAFETY: no DMA uses the chunk any more (waited above), and
                // it is freed once: the staging is being dropped.
                let _ = unsafe { result::free_host(slot.host.cast()) };
            }
        }
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

/// A context's staging chunks, allocated on first use.
enum StagingSlot {
    /// No staged copy yet.
    Untried,
    Ready(Staging),
    /// Pinned memory could not be had: copies go straight to the driver.
    Unavailable,
}

/// The staging chunks of a context.
type StagingCell = Mutex<StagingSlot>;

/// `state`'s staging cell (kept in the context's state).
fn cell(state: &ContextState) -> Option<&StagingCell> {
    state
        .lazy(&state.staging, || Ok(Mutex::new(StagingSlot::Untried)))
        .ok()
}

/// The context's staging chunks (ready, or unavailable), if the copy should be
/// staged and no other thread is using them (that thread's copy keeps its
/// speed; this one goes straight to the driver).
fn staging_for<'a>(
    state: &'a ContextState,
    host: *const u8,
    bytes: usize,
) -> Option<std::sync::MutexGuard<'a, StagingSlot>> {
    if bytes < STAGE_MIN_BYTES || !is_pageable(host) {
        return None;
    }
    let mut guard = cell(state)?.try_lock().ok()?;
    if let StagingSlot::Untried = *guard {
        *guard = match Staging::new(state) {
            Ok(staging) => {
                release_at_exit();
                StagingSlot::Ready(staging)
            }
            Err(_) => StagingSlot::Unavailable,
        };
    }
    Some(guard)
}

/// Frees every context's staging chunks when the process exits. The chunks
/// live as long as their context's state (for a primary context, the whole
/// run), so without this a leak checker (compute-sanitizer's memcheck) would
/// report them at exit.
fn release_at_exit() {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    extern "C" fn release_all() {
        // A forked child inherits the handler but must not call the driver.
        if PID.get() != Some(&std::process::id()) {
            return;
        }
        for state in ContextState::all_live() {
            // A copy still running on another thread keeps its chunks.
            if let Some(Ok(mut staging)) = state.staging.get::<StagingCell>().map(Mutex::try_lock) {
                if state.bind().is_ok() {
                    *staging = StagingSlot::Unavailable;
                }
            }
        }
    }
    extern "C" {
        fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
    }
    PID.get_or_init(|| {
        // SAFETY: `atexit` (C standard library, linked by std) stores a plain
        // function pointer; `release_all` does not unwind (a panic in an
        // `extern "C"` function aborts, and nothing in it panics: `try_lock`
        // only, and `Staging`'s drop ignores every error). It runs before the
        // shared libraries' ELF destructors, so the driver is still loaded.
        // If registration fails, the chunks are merely not freed.
        unsafe { atexit(release_all) };
        std::process::id()
    });
}

/// Bytes per lane for a copy of `total` bytes: whole chunks, so that every
/// lane but the last fills its chunks.
fn lane_len(total: usize) -> usize {
    total.div_ceil(LANES).div_ceil(CHUNK_BYTES) * CHUNK_BYTES
}

/// Records `slot.done` on `stream`. The raw call, because cudarc's `record`
/// first returns any error another thread stored in the context, which would
/// leave the chunk's queued DMA unrecorded.
fn record(slot: &Slot, stream: &CudaStream) -> Result<()> {
    // SAFETY: a live event and a live stream of the context current on this
    // thread (every lane binds it).
    unsafe { sys::cuEventRecord(slot.done.cu_event(), stream.cu_stream()).result() }
        .op("cuEventRecord")
}

/// Waits until the latest DMA recorded for `slot` has finished (the raw call,
/// as for [`record`]).
fn wait(slot: &Slot) -> Result<()> {
    // SAFETY: a live event of the context current on this thread.
    unsafe { sys::cuEventSynchronize(slot.done.cu_event()).result() }.op("cuEventSynchronize")
}

/// Runs `lane(slots, offset, part)` for each part (the host range starting
/// `offset` bytes into the copy, `lane_len` bytes apart), one thread per
/// part with its own two chunks (or on this thread, if the system refuses a
/// new one); returns the first error. After an error a lane waits for
/// `stream`, so no DMA it queued still uses its chunks.
fn run_lanes<P: Send>(
    state: &ContextState,
    stream: &CudaStream,
    staging: &Staging,
    per_lane: usize,
    parts: Vec<P>,
    lane: impl Fn(&[Slot], usize, P) -> Result<()> + Sync,
) -> Result<()> {
    let run = |i: usize, slots: &[Slot], part: P| -> Result<()> {
        state.bind()?;
        let result = lane(slots, i * per_lane, part);
        if result.is_err() {
            // SAFETY: a live stream of the context bound above.
            let _ = unsafe { sys::cuStreamSynchronize(stream.cu_stream()) };
        }
        result
    };
    let parts: Vec<Mutex<Option<P>>> = parts.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let take =
        |i: usize| -> Option<P> { parts[i].lock().unwrap_or_else(|p| p.into_inner()).take() };
    std::thread::scope(|scope| {
        let (run, take) = (&run, &take);
        let mut results = Vec::with_capacity(parts.len());
        let mut handles = Vec::with_capacity(parts.len());
        for (i, slots) in staging.slots.chunks_exact(2).take(parts.len()).enumerate() {
            let spawned = std::thread::Builder::new()
                .name("cuda-mem staging".into())
                .spawn_scoped(scope, move || {
                    take(i).map_or(Ok(()), |part| run(i, slots, part))
                });
            match spawned {
                Ok(handle) => handles.push(handle),
                // No thread to be had: this lane runs here (its part is still
                // in its slot: the closure that would have taken it was dropped).
                Err(_) => results.push(take(i).map_or(Ok(()), |part| run(i, slots, part))),
            }
        }
        // Every lane is joined before the first error is returned.
        let joined: Vec<Result<()>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        results.into_iter().chain(joined).try_for_each(|r| r)
    })
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
    let guard = staging_for(state, from, src.len());
    let Some(StagingSlot::Ready(staging)) = guard.as_deref() else {
        // SAFETY: `from` is `src` or the registered mapping of the same
        // pages, live for `src.len()` bytes (borrowed); the synchronous copy
        // has read it on return; the caller vouches for the destination.
        return unsafe { sys::cuMemcpyHtoD_v2(dst, from.cast(), src.len()).result() }
            .op("cuMemcpyHtoD");
    };
    let per_lane = lane_len(src.len());
    let parts = src.chunks(per_lane).collect();
    run_lanes(
        state,
        stream,
        staging,
        per_lane,
        parts,
        |slots, offset, part: &[u8]| {
            for (i, piece) in part.chunks(CHUNK_BYTES).enumerate() {
                let slot = &slots[i % 2];
                wait(slot)?;
                // SAFETY: the chunk holds CHUNK_BYTES >= piece.len() bytes and its
                // last DMA has finished (waited above); `piece` is live host memory.
                unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), slot.host, piece.len()) };
                let at = dst + (offset + i * CHUNK_BYTES) as u64;
                // SAFETY: the chunk is pinned and stays untouched until `done`
                // fires; the destination range lies inside the caller's allocation.
                unsafe {
                    sys::cuMemcpyHtoDAsync_v2(at, slot.host.cast(), piece.len(), stream.cu_stream())
                        .result()
                }
                .op("cuMemcpyHtoDAsync")?;
                record(slot, stream)?;
            }
            Ok(())
        },
    )
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
    let guard = staging_for(state, into, dst.len());
    let Some(StagingSlot::Ready(staging)) = guard.as_deref() else {
        // SAFETY: `into` is `dst` or the registered mapping of the same
        // pages, live and exclusive for `dst.len()` bytes (borrowed mutably);
        // the synchronous copy has finished on return.
        return unsafe { sys::cuMemcpyDtoH_v2(into.cast(), src, dst.len()).result() }
            .op("cuMemcpyDtoH");
    };
    let per_lane = lane_len(dst.len());
    let parts = dst.chunks_mut(per_lane).collect();
    run_lanes(
        state,
        stream,
        staging,
        per_lane,
        parts,
        |slots, offset, part: &mut [u8]| {
            let total = part.len();
            let pieces = total.div_ceil(CHUNK_BYTES);
            let queue = |i: usize, slot: &Slot| -> Result<()> {
                let len = CHUNK_BYTES.min(total - i * CHUNK_BYTES);
                let from = src + (offset + i * CHUNK_BYTES) as u64;
                // SAFETY: the chunk is pinned, holds `len` bytes, and nothing reads
                // it until `done` fires; the source lies inside the allocation.
                unsafe {
                    sys::cuMemcpyDtoHAsync_v2(slot.host.cast(), from, len, stream.cu_stream())
                        .result()
                }
                .op("cuMemcpyDtoHAsync")?;
                record(slot, stream)
            };
            // The chunks may still be read by an earlier host-to-device copy.
            for (i, slot) in slots.iter().enumerate().take(pieces) {
                wait(slot)?;
                queue(i, slot)?;
            }
            for (i, piece) in part.chunks_mut(CHUNK_BYTES).enumerate() {
                let slot = &slots[i % 2];
                wait(slot)?;
                // SAFETY: the DMA into the chunk has finished (waited above) and it
                // holds at least `piece.len()` bytes of the source.
                unsafe {
                    std::ptr::copy_nonoverlapping(slot.host, piece.as_mut_ptr(), piece.len())
                };
                if i + 2 < pieces {
                    queue(i + 2, slot)?;
                }
            }
            Ok(())
        },
    )
}
