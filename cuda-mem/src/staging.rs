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

/// The context's staging chunks, if the copy should be staged and no other
/// thread is using them (that thread's copy keeps its speed; this one goes
/// straight to the driver).
fn staging_for<'a>(
    state: &'a ContextState,
    host: *const u8,
    bytes: usize,
) -> Option<std::sync::MutexGuard<'a, Option<Staging>>> {
    if bytes < STAGE_MIN_BYTES || !is_pageable(host) {
        return None;
    }
    let mut guard = state.staging.try_lock().ok()?;
    if guard.is_none() {
        // Without pinned memory to spare, the driver's own path still works.
        *guard = Some(Staging::new(state).ok()?);
        release_at_exit();
    }
    Some(guard)
}

/// Frees every context's staging chunks when the process exits. The chunks
/// live as long as their context's state (the whole run), so without this a
/// leak checker (compute-sanitizer's memcheck) would report them at exit.
fn release_at_exit() {
    extern "C" fn release_all() {
        for state in ContextState::all() {
            // A copy still running on another thread keeps its chunks.
            if let Ok(mut staging) = state.staging.try_lock() {
                if state.bind().is_ok() {
                    drop(staging.take());
                }
            }
        }
    }
    extern "C" {
        fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
    }
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `atexit` (C standard library, linked by std) stores a plain
        // function pointer; `release_all` cannot unwind: it takes locks
        // without panicking and `Staging`'s drop ignores every error. It runs
        // before the shared libraries' destructors, so the driver is still
        // loaded. If registration fails, the chunks are merely not freed.
        unsafe { atexit(release_all) };
    });
}

/// Bytes per lane for a copy of `total` bytes: whole chunks, so that every
/// lane but the last fills its chunks.
fn lane_len(total: usize) -> usize {
    total.div_ceil(LANES).div_ceil(CHUNK_BYTES) * CHUNK_BYTES
}

/// Runs `lane(slots, offset, part)` for each part (the host range starting
/// `offset` bytes into the copy, `lane_len` bytes apart), one thread per
/// part with its own two chunks; returns the first error.
fn run_lanes<P: Send>(
    state: &ContextState,
    staging: &Staging,
    per_lane: usize,
    parts: Vec<P>,
    lane: impl Fn(&[Slot], usize, P) -> Result<()> + Sync,
) -> Result<()> {
    std::thread::scope(|scope| {
        let lane = &lane;
        let handles: Vec<_> = parts
            .into_iter()
            .zip(staging.slots.chunks_exact(2))
            .enumerate()
            .map(|(i, (part, slots))| {
                scope.spawn(move || {
                    state.bind()?;
                    lane(slots, i * per_lane, part)
                })
            })
            .collect();
        // Every lane is joined (by the scope) even after an error.
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
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
    let Some(mut guard) = staging_for(state, src.as_ptr(), src.len()) else {
        // SAFETY: `src` is live for `src.len()` bytes and the synchronous copy
        // has read it on return; the caller vouches for the destination.
        return unsafe { sys::cuMemcpyHtoD_v2(dst, src.as_ptr().cast(), src.len()).result() }
            .op("cuMemcpyHtoD");
    };
    let staging = guard.as_mut().expect("set by staging_for");
    let per_lane = lane_len(src.len());
    let parts = src.chunks(per_lane).collect();
    run_lanes(
        state,
        staging,
        per_lane,
        parts,
        |slots, offset, part: &[u8]| {
            for (i, piece) in part.chunks(CHUNK_BYTES).enumerate() {
                let slot = &slots[i % 2];
                slot.done.synchronize().op("cuEventSynchronize")?;
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
                slot.done.record(stream).op("cuEventRecord")?;
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
    let Some(mut guard) = staging_for(state, dst.as_ptr(), dst.len()) else {
        // SAFETY: `dst` is live and exclusive for `dst.len()` bytes; the
        // synchronous copy has finished on return.
        return unsafe { sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), src, dst.len()).result() }
            .op("cuMemcpyDtoH");
    };
    let staging = guard.as_mut().expect("set by staging_for");
    let per_lane = lane_len(dst.len());
    let parts = dst.chunks_mut(per_lane).collect();
    run_lanes(
        state,
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
                slot.done.record(stream).op("cuEventRecord")
            };
            // The chunks may still be read by an earlier host-to-device copy.
            for (i, slot) in slots.iter().enumerate().take(pieces) {
                slot.done.synchronize().op("cuEventSynchronize")?;
                queue(i, slot)?;
            }
            for (i, piece) in part.chunks_mut(CHUNK_BYTES).enumerate() {
                let slot = &slots[i % 2];
                slot.done.synchronize().op("cuEventSynchronize")?;
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

/// The staging chunks of a context, allocated on first use.
pub(crate) type StagingCell = Mutex<Option<Staging>>;
