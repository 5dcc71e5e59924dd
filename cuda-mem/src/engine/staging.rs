//! Synchronous copies between *pageable* host memory (an ordinary `Vec` or
//! slice) and the GPU, staged through pinned memory.
//!
//! The driver stages pageable copies itself, with one CPU thread copying
//! through its own pinned buffer: about 7-17 GB/s either way on an H200
//! host (the largest copies to the device at the low end), against 55 GB/s
//! for pinned memory.
//! Copies of at least [`min_bytes`] from or to memory the driver does not
//! know take this path instead.
//!
//! The copy is cut into chunks that take turns in a ring of pinned slots
//! ([`Plan`]): the `memcpy` into (or out of) one chunk overlaps the DMA of
//! the others. Every chunk is cut into pieces of [`PIECE`] bytes, and up to
//! [`lanes`] threads (the calling thread and the persistent workers of
//! `workers`; no thread is spawned per copy) claim the pieces in order,
//! so all of them work on the same few chunks at once: a chunk is copied
//! at the speed of all the threads together, and the thread that
//! completes a chunk queues its DMA. The first chunks are smaller (a ramp
//! from [`RAMP`] bytes), so that the first DMA starts after microseconds
//! and the copy engine is then never idle. A thread that reaches a slot
//! whose chunk is not ready yet (its DMA not yet finished, or, to the
//! host, not yet landed) waits for it; the pieces that chunk waits for
//! were all claimed earlier, by threads that are copying them, so every
//! wait ends, however many threads run ([`Ring::wait_landed`]). A copy to
//! the host writes the caller's buffer with streaming stores
//! (`streaming_copy`). A copy to the device of up to
//! [`STREAMING_TO_DEVICE_MAX`] bytes writes its slots with ordinary stores
//! and then demotes their lines to the shared cache where the CPU can
//! (`cldemote`), with streaming stores where it cannot ([`SlotWrites`]).
//!
//! The pinned block comes from the context's pinned cache (`pinned_cache`)
//! and goes back to it when the copy returns, guarded by an event behind the
//! copy's last DMA: only the first staged copy (or the first after a
//! `trim_to`) pins memory, and it shares the cache with `PinnedBuffer`s.
//!
//! Small copies, host memory that is already pinned or managed, and any copy
//! for which no pinned block can be had go straight to the driver.

use std::ffi::c_void;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use cudarc::driver::{sys, CudaEvent, CudaStream};

use crate::context::ContextState;
use crate::engine::streaming_copy::{copy_streaming, demote};
use crate::error::{DriverResultExt, Result};
use crate::memory::pinned_cache::{self, Block};
use crate::memory::pinned_pages::registered_or_self;
use events::{record, wait};
#[cfg(feature = "test-hooks")]
use timeline::Recorder;

mod events;
#[cfg(feature = "test-hooks")]
pub mod timeline;

/// Bytes a thread copies at a time: chunks are whole pieces (the last
/// piece of a copy may be shorter).
const PIECE: usize = 64 << 10;
/// The first chunk's bytes; each later chunk doubles, up to the largest.
///
/// One piece (64 KiB) was tried on an H100 host (2026-12-06): the first
/// DMA of a 64 MiB copy to the device was queued sooner (48-76 µs against
/// 94), but bench `--copies-only --quick`, three runs of each build
/// interleaved in one call, put both at 0.65 of the pinned DMA at 64 MiB
/// and level elsewhere. What delays a copy's start there is waking the
/// workers, which sleep between copies: they began their first pieces
/// 40-300 µs in (`vec_copy --timeline`, which prints when each lane
/// began), and the calling thread, which wakes them, began its own 20-53
/// µs in.
const RAMP: usize = 256 << 10;

/// Tuning (0: the default); set by [`__set_staging`] for benchmarks.
static LANES: AtomicUsize = AtomicUsize::new(0);
static CHUNK_BYTES: AtomicUsize = AtomicUsize::new(0);
static MIN_BYTES: AtomicUsize = AtomicUsize::new(0);
static SLOTS: AtomicUsize = AtomicUsize::new(0);
static STREAMING_MAX: AtomicUsize = AtomicUsize::new(0);
static DEMOTE: AtomicUsize = AtomicUsize::new(0);

/// Default bytes of the largest chunk (a slot), with [`DEFAULT_SLOTS`]: a
/// ring of 32 MiB. On an H100 host (16 cores, 2026-12-05; bench
/// `--copies-only --staging 0,CHUNK_KIB,0,SLOTS`, one run each, 64 MiB /
/// 256 MiB / 1 GiB), 4 MiB chunks in 8 slots copied to the device at
/// 45.6 / 49.8 / 52.4 GB/s and to the host at 51.4 / 53.1 / 53.7, where
/// 2 MiB in 16 (two runs) reached 43.7-44.1 / 45.1-47.8 / 50.0-50.3 and
/// 49.9-50.7 / 51.2-52.0 / 52.2-52.4. The copies' timelines
/// (`vec_copy --timeline`) suggest why: short DMAs run slowly (the first
/// 256 KiB chunk at 9-14 GB/s; 2 MiB chunks of a 64 MiB copy at 39-50,
/// 4 MiB chunks of a 256 MiB copy at 50-53 once it runs), so larger
/// chunks lose less. 8 MiB in 4 slots was no faster (45.9 / 50.9 /
/// 52.5), and 16 MiB in 4 slower (41.7 / 44.8 / 50.4). On a second,
/// noisier H100 machine the two rings were level (two runs each,
/// interleaved).
const DEFAULT_CHUNK_BYTES: usize = 4 << 20;
/// Default thresholds: copies at least this large are staged, to the device
/// and to the host. Measured on an H200 host (bench `--copy-sweep` with
/// every size staged, with 8 slots and ordinary stores, against the
/// driver's pageable copy): to the device, 1.02x at 1 MiB, 1.22x at 2 MiB
/// and more from there; to the host, 0.81x at 256 KiB, 1.33x at 1 MiB.
const DEFAULT_MIN_BYTES: [usize; 2] = [2 << 20, 1 << 20];
/// Default most lanes, capped by the host's parallelism. On the H200 host
/// (16 cores), 8, 12 and 16 lanes copied at the same rates within the
/// runs' noise (bench `--copies-only --staging LANES,0,0,16`, twice each):
/// 35-55 GB/s to the device and 50-53 to the host from 64 MiB to 1 GiB;
/// twelve leave cores to the rest of the process.
const DEFAULT_MAX_LANES: usize = 12;
/// Default pinned slots: chunks in flight between the threads and the
/// copy engine. On the H200 host, 8 slots of 2 MiB moved copies to the
/// host at 21-31 GB/s from 64 MiB to 1 GiB, and 16 at 49-53 (the DMAs
/// queued ahead cover a thread's late piece): what counts is the bytes
/// queued ahead, which 8 slots of 4 MiB ([`DEFAULT_CHUNK_BYTES`]) keep.
/// On the H100 host, 8 and 16 slots of 4 MiB were level (to the device
/// 45.6 / 49.8 / 52.4 against 45.5 / 48.0 / 52.0 GB/s).
const DEFAULT_SLOTS: usize = 8;
/// Copies to the device of at most this many bytes keep their slots out of
/// the writing cores' caches (demoted lines, or streaming stores: see
/// [`SlotWrites`]), larger ones write them with ordinary stores. Measured
/// with streaming stores on the H200 host (bench `--copies-only --copy-sweep`, each way
/// in the same run): with streaming stores 2-16 MiB ran at 26-37 GB/s
/// against 17-25 and 64 MiB at 43 against 36; from 128 MiB the ordinary
/// stores were ahead (45 against 42.5 at 128 MiB, 50 against 42 at 1 GiB),
/// for reasons not measured.
const STREAMING_TO_DEVICE_MAX: usize = 64 << 20;

/// Benchmark knob (feature `test-hooks`): the most lanes of a staged copy,
/// the largest chunk, the smallest staged copy, in bytes, in both
/// directions, and the pinned slots; 0 restores each default (lanes: the
/// host's parallelism, at most 12; chunks: 4 MiB; thresholds: 2 MiB to
/// the device, 1 MiB to the host; 8 slots), and the largest copy to the
/// device whose slots bypass the cores' caches (default
/// [`STREAMING_TO_DEVICE_MAX`]). `usize::MAX` as the threshold turns
/// staging off.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __set_staging(
    lanes: usize,
    chunk_bytes: usize,
    min_bytes: usize,
    slots: usize,
    streaming_max: usize,
) {
    // Bounded, so that the chunk and slot arithmetic cannot overflow.
    LANES.store(lanes.min(1024), Ordering::Relaxed);
    CHUNK_BYTES.store(chunk_bytes.min(1 << 30), Ordering::Relaxed);
    MIN_BYTES.store(min_bytes, Ordering::Relaxed);
    SLOTS.store(slots.min(1024), Ordering::Relaxed);
    STREAMING_MAX.store(streaming_max, Ordering::Relaxed);
}

/// Benchmark knob (feature `test-hooks`): how copies to the device write
/// their slots. 0: the default ([`SlotWrites::for_copy`]); 1: never demote
/// (streaming stores up to the threshold, as on a CPU without `cldemote`);
/// 2: demote every slot written with ordinary stores, whatever the size.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __set_staging_demote(mode: usize) {
    DEMOTE.store(mode, Ordering::Relaxed);
}

/// The largest copy to the device whose slots bypass the cores' caches
/// (see [`STREAMING_TO_DEVICE_MAX`]).
fn streaming_max() -> usize {
    knob_or(&STREAMING_MAX, STREAMING_TO_DEVICE_MAX)
}

/// A benchmark knob's value, or `default` where it is 0 (unset).
fn knob_or(knob: &AtomicUsize, default: usize) -> usize {
    match knob.load(Ordering::Relaxed) {
        0 => default,
        n => n,
    }
}

/// How a copy to the device writes its pinned slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotWrites {
    /// Non-temporal stores (`copy_streaming`): the lines go to memory, not
    /// to the writing core's caches.
    Streaming,
    /// Ordinary stores, then `cldemote` of every line written
    /// (`streaming_copy::demote`): the lines move from the writing core's
    /// caches to the shared last-level cache, where the DMA reads them.
    Demoted,
    /// Ordinary stores.
    Ordinary,
}

impl SlotWrites {
    /// The writes of a copy of `bytes` to the device: up to
    /// [`streaming_max`], demoted lines where the CPU has `cldemote`, else
    /// streaming stores; ordinary stores above.
    ///
    /// Measured on an H100 host (Intel Xeon with `cldemote`, 2026-12-05;
    /// bench `--copies-only`, interleaved, two runs each, the slots
    /// demoted at every size as `--staging 0,0,0,0,1,2` does now, ordinary
    /// as `0,0,0,0,1,1`, streaming up to 64 MiB as `0,0,0,0,0,1`): 64 MiB
    /// copies ran at 49.6 and 46.2 GB/s with demoted lines,
    /// 44.2 and 43.5 with streaming stores, 31.3 and 34.9 with ordinary
    /// stores alone (the DMA then reads lines still in the writing cores'
    /// caches). At 256 MiB and 1 GiB demoting measured 51.0 / 41.9 and
    /// 50.2 / 44.7 against ordinary stores' 44.8 / 46.8 and 50.7 / 51.3:
    /// no clear gain, so those sizes keep ordinary stores. On a second H100
    /// machine the same day (whose CPU flags were not recorded: it may
    /// lack `cldemote`, where both ways are streaming stores), 64 MiB ran
    /// at 41.3 and 45.1 GB/s this way against 44.2 and 43.7 with
    /// streaming stores: level.
    fn for_copy(bytes: usize) -> SlotWrites {
        let mode = DEMOTE.load(Ordering::Relaxed);
        if bytes > streaming_max() {
            return if mode == 2 {
                SlotWrites::Demoted
            } else {
                SlotWrites::Ordinary
            };
        }
        if mode != 1 && crate::engine::streaming_copy::can_demote() {
            SlotWrites::Demoted
        } else {
            SlotWrites::Streaming
        }
    }
}

/// Pinned slots of a copy (see [`DEFAULT_SLOTS`]).
fn slots() -> usize {
    knob_or(&SLOTS, DEFAULT_SLOTS)
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

/// The largest chunk, in pieces.
fn max_chunk_pieces() -> usize {
    match CHUNK_BYTES.load(Ordering::Relaxed) {
        0 => DEFAULT_CHUNK_BYTES / PIECE,
        n => n.div_ceil(PIECE),
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
    knob_or(&MIN_BYTES, DEFAULT_MIN_BYTES[to as usize])
}

/// How a copy of `total` bytes is cut: pieces of [`PIECE`] bytes, in
/// chunks of `min(ramp << i, max)` pieces (chunk `i`), which take turns
/// in `slots` pinned slots of `max` pieces each; `lanes` threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    total: usize,
    ramp: usize,
    max: usize,
    slots: usize,
    lanes: usize,
}

impl Plan {
    fn new(total: usize) -> Plan {
        let max = max_chunk_pieces().max(1);
        let ramp = (RAMP / PIECE).clamp(1, max);
        let mut plan = Plan {
            total,
            ramp,
            max,
            slots: 1,
            lanes: 1,
        };
        plan.slots = slots().clamp(1, plan.chunks().max(1));
        plan.lanes = lanes().clamp(1, plan.pieces().max(1));
        plan
    }

    /// Pieces of the copy.
    fn pieces(&self) -> usize {
        self.total.div_ceil(PIECE)
    }

    /// Bytes of a slot (of the largest chunk).
    fn slot_bytes(&self) -> usize {
        self.max * PIECE
    }

    /// The full chunks of the ramp (smaller than the largest), and the
    /// pieces in them.
    fn ramp_chunks(&self) -> (usize, usize) {
        let (mut chunks, mut pieces) = (0, 0);
        while self.ramp << chunks < self.max {
            pieces += self.ramp << chunks;
            chunks += 1;
        }
        (chunks, pieces)
    }

    /// The chunk of piece `j`.
    fn chunk_of(&self, j: usize) -> usize {
        let (ramp_chunks, ramp_pieces) = self.ramp_chunks();
        if j >= ramp_pieces {
            return ramp_chunks + (j - ramp_pieces) / self.max;
        }
        let (mut chunk, mut first) = (0, 0);
        while j >= first + (self.ramp << chunk) {
            first += self.ramp << chunk;
            chunk += 1;
        }
        chunk
    }

    /// Chunk `i`'s first piece and its pieces (fewer in the copy's last
    /// chunk; none past it).
    fn span(&self, i: usize) -> (usize, usize) {
        let (ramp_chunks, ramp_pieces) = self.ramp_chunks();
        let (first, full) = if i < ramp_chunks {
            (self.ramp * ((1 << i) - 1), self.ramp << i)
        } else {
            (ramp_pieces + (i - ramp_chunks) * self.max, self.max)
        };
        let first = first.min(self.pieces());
        (first, full.min(self.pieces() - first))
    }

    /// Chunks of the copy.
    fn chunks(&self) -> usize {
        match self.pieces() {
            0 => 0,
            n => self.chunk_of(n - 1) + 1,
        }
    }

    /// The bytes of pieces `first..first + count`: offset and length.
    fn bytes(&self, first: usize, count: usize) -> (usize, usize) {
        let start = (first * PIECE).min(self.total);
        (start, ((first + count) * PIECE).min(self.total) - start)
    }
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

/// One slot's progress, on its own cache line: the pieces of its current
/// chunk copied in (to the device) or out (to the host), how many of the
/// copy's chunks have had their DMA queued there and are known finished
/// (as `chunk + 1`: the slot's chunks are `s`, `s + slots`, ...), and
/// whether a thread is asking the driver.
#[derive(Default)]
#[repr(align(128))]
struct SlotState {
    arrived: AtomicUsize,
    queued: AtomicUsize,
    landed: AtomicUsize,
    /// A thread is waiting for the slot's event.
    polling: AtomicBool,
}

/// What the threads of one staged copy share: the plan, the pinned slots
/// (the block's DMA mapping at `base`) with their events and progress,
/// the next piece to claim, whether the copy failed (every thread then
/// stops at its next claim or wait), and its timeline's recording, if the
/// calling thread asked for one ([`timeline`]).
struct Ring<'a> {
    plan: Plan,
    base: usize,
    events: &'a [CudaEvent],
    slots: Vec<SlotState>,
    next: AtomicUsize,
    failed: AtomicBool,
    #[cfg(feature = "test-hooks")]
    recorder: Option<&'a Recorder>,
}

/// Spins a while, then yields, then sleeps: the waits here are for other
/// threads' `memcpy` of a piece or for one DMA, tens of microseconds, but a
/// DMA can also wait behind a long kernel, where a waiting lane should not
/// hold a core.
fn backoff(spins: &mut u32) {
    *spins = spins.saturating_add(1);
    match *spins {
        0..256 => std::hint::spin_loop(),
        256..4096 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(20)),
    }
}

impl Ring<'_> {
    /// Where piece `j` of chunk `i` lies in the chunk's slot.
    fn slot_piece(&self, i: usize, j: usize) -> *mut u8 {
        let (first, _) = self.plan.span(i);
        let slot = (i % self.plan.slots) * self.plan.slot_bytes();
        (self.base + slot + (j - first) * PIECE) as *mut u8
    }

    /// The next piece, in order; `None` once all are claimed or the copy
    /// failed.
    fn claim(&self) -> Option<usize> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        let j = self.next.fetch_add(1, Ordering::Relaxed);
        (j < self.plan.pieces()).then_some(j)
    }

    /// Waits until chunk `c`'s DMA has been queued and has finished: `false`
    /// if the copy failed meanwhile. The wait ends: to the device, chunk `c`
    /// is an earlier chunk than the caller's, whose pieces were all claimed
    /// before the caller's; to the host, chunk `c` is the caller's own,
    /// queued at the start or by the thread that drains chunk `c - slots`,
    /// whose pieces were all claimed before. By induction on the chunks,
    /// every piece is copied by a running thread that waits only for
    /// earlier chunks.
    fn wait_landed(&self, c: usize) -> Result<bool> {
        #[cfg(feature = "test-hooks")]
        if let Some(recorder) = self.recorder {
            let slot = &self.slots[c % self.plan.slots];
            if slot.landed.load(Ordering::Acquire) <= c {
                let start = std::time::Instant::now();
                let waited = self.wait_landed_unrecorded(c);
                recorder.wait(c, start);
                return waited;
            }
        }
        self.wait_landed_unrecorded(c)
    }

    /// [`Ring::wait_landed`], not recorded.
    fn wait_landed_unrecorded(&self, c: usize) -> Result<bool> {
        let slot = &self.slots[c % self.plan.slots];
        let mut spins = 0;
        while slot.landed.load(Ordering::Acquire) <= c {
            if self.failed.load(Ordering::Relaxed) {
                return Ok(false);
            }
            // One thread asks the driver; the others watch `landed`.
            if slot.queued.load(Ordering::Acquire) > c
                && !slot.polling.swap(true, Ordering::Acquire)
            {
                // The event is recorded behind chunk `c`'s DMA, and not
                // again before the caller's piece is done (to the device,
                // of the slot's next chunk; to the host, of chunk `c`).
                let waited = wait(&self.events[c % self.plan.slots]);
                if waited.is_ok() {
                    slot.landed.fetch_max(c + 1, Ordering::Release);
                }
                slot.polling.store(false, Ordering::Release);
                waited?;
                return Ok(true);
            }
            backoff(&mut spins);
        }
        Ok(true)
    }

    /// Counts one piece of chunk `i` done: `true` for the thread that
    /// completes the chunk, which resets the count (no piece of the slot's
    /// next chunk is counted before this chunk's DMA is queued).
    fn arrive(&self, i: usize) -> bool {
        let slot = &self.slots[i % self.plan.slots];
        let (_, count) = self.plan.span(i);
        let last = slot.arrived.fetch_add(1, Ordering::AcqRel) + 1 == count;
        if last {
            slot.arrived.store(0, Ordering::Relaxed);
        }
        last
    }

    /// Queues chunk `i`'s DMA with `dma(offset into the copy, the slot's
    /// host address, bytes)` on `stream`, and records the slot's event
    /// behind it.
    fn queue(
        &self,
        i: usize,
        stream: &CudaStream,
        dma: impl Fn(usize, *mut u8, usize) -> Result<()>,
    ) -> Result<()> {
        let (first, count) = self.plan.span(i);
        let (offset, len) = self.plan.bytes(first, count);
        let host = self.slot_piece(i, first);
        #[cfg(feature = "test-hooks")]
        if let Some(recorder) = self.recorder {
            recorder.around_dma((i, len), stream, || dma(offset, host, len))?;
        } else {
            dma(offset, host, len)?;
        }
        #[cfg(not(feature = "test-hooks"))]
        dma(offset, host, len)?;
        record(&self.events[i % self.plan.slots], stream)?;
        self.slots[i % self.plan.slots]
            .queued
            .store(i + 1, Ordering::Release);
        Ok(())
    }
}

/// Marks the copy failed if a lane unwinds, so that no other lane waits
/// for a chunk that will never complete. It remembers whether the thread
/// was unwinding already when the lane began (a copy made by a `Drop`
/// during a panic): a lane that ends normally then must not count as
/// failed, which would leave the other lanes' pieces uncopied.
struct FailOnUnwind<'r, 'a> {
    ring: &'r Ring<'a>,
    unwinding_before: bool,
}

impl<'r, 'a> FailOnUnwind<'r, 'a> {
    fn new(ring: &'r Ring<'a>) -> Self {
        FailOnUnwind {
            ring,
            unwinding_before: std::thread::panicking(),
        }
    }
}

impl Drop for FailOnUnwind<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() && !self.unwinding_before {
            self.ring.failed.store(true, Ordering::Relaxed);
        }
    }
}

/// What a staged copy holds while it runs: a pinned block of the context's
/// cache, cut into the plan's slots, and an event per slot; and its
/// direction.
struct Staged<'s> {
    state: &'s ContextState,
    block: Block,
    events: Vec<CudaEvent>,
    plan: Plan,
    to: Direction,
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
    let plan = Plan::new(total);
    // The knobs are bounded, but their product need not fit a 32-bit `usize`.
    let bytes = plan.slots.checked_mul(plan.slot_bytes())?;
    let block = pinned_cache::take_for_staging(state, bytes).ok()?;
    let Some(events) = take_events(state, plan.slots) else {
        // Its earlier uses have finished (waited for when it was taken).
        let _ = pinned_cache::give_back(state, block, None);
        return None;
    };
    Some(Staged {
        state,
        block,
        events,
        plan,
        to,
    })
}

impl Staged<'_> {
    /// Runs `start` on the calling thread, then `piece(ring, j)` for every
    /// piece `j`, claimed in order by the plan's lanes (the calling thread
    /// and workers); a piece returns `false` when the copy failed while it
    /// waited. Then gives the block back to the cache, guarded, for a copy
    /// to the device (which returns before its last DMAs end), by an event
    /// behind every DMA queued on `stream`. Returns the first
    /// error. After an error, `stream` is waited for before the block goes
    /// back (and the block is leaked if that fails), so no DMA of the copy
    /// still uses it.
    fn run(
        self,
        stream: &CudaStream,
        start: impl FnOnce(&Ring<'_>) -> Result<()>,
        piece: impl Fn(&Ring<'_>, usize) -> Result<bool> + Sync,
    ) -> Result<()> {
        let Staged {
            state,
            block,
            events,
            plan,
            to,
        } = self;
        let queued_dma = to == Direction::ToDevice;
        #[cfg(feature = "test-hooks")]
        let recorder = Recorder::start(state, stream, plan.chunks());
        let ring = Ring {
            plan,
            base: block.pages().dma() as usize,
            events: &events,
            slots: (0..plan.slots).map(|_| SlotState::default()).collect(),
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            #[cfg(feature = "test-hooks")]
            recorder: recorder.as_ref(),
        };
        let first_error = Mutex::new(None);
        let fail = |e| {
            ring.failed.store(true, Ordering::Relaxed);
            first_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        };
        // A lane's panic comes back here (`run_lanes` resumes it), and is
        // resumed after the block is safe to give back.
        let lanes = catch_unwind(AssertUnwindSafe(|| match start(&ring) {
            Err(e) => fail(e),
            Ok(()) => crate::engine::workers::run_lanes(plan.lanes, &|_lane| {
                let _unwinding = FailOnUnwind::new(&ring);
                if let Err(e) = state.bind() {
                    return fail(e);
                }
                while let Some(j) = ring.claim() {
                    #[cfg(feature = "test-hooks")]
                    let started = ring.recorder.map(|_| std::time::Instant::now());
                    match piece(&ring, j) {
                        Ok(true) => {}
                        Ok(false) => return,
                        Err(e) => return fail(e),
                    }
                    #[cfg(feature = "test-hooks")]
                    if let (Some(recorder), Some(started)) = (ring.recorder, started) {
                        recorder.piece(j, _lane, started);
                    }
                }
            }),
        }));
        let error = first_error.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = state.bind() {
            // Its DMAs cannot be guarded or waited for.
            pinned_cache::leak(state, block);
            return match lanes {
                Err(panic) => resume_unwind(panic),
                Ok(()) => Err(e),
            };
        }
        // A recorded copy that succeeded waits for its DMAs and reads its
        // events; failing that, it fails as a lane's error would.
        #[cfg(feature = "test-hooks")]
        let error = match recorder {
            Some(recorder) if error.is_none() && lanes.is_ok() => {
                let copy = timeline::CopyShape {
                    to_device: queued_dma,
                    bytes: plan.total,
                    lanes: plan.lanes,
                    slots: plan.slots,
                    piece_bytes: PIECE,
                };
                recorder.finish(stream, copy).err()
            }
            _ => error,
        };
        if error.is_none() && lanes.is_ok() {
            let returned = pinned_cache::give_back(state, block, queued_dma.then_some(stream));
            return_events(state, events);
            return returned;
        }
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
        match (lanes, error) {
            (Err(panic), _) => resume_unwind(panic),
            (Ok(()), error) => Err(error.expect("an error, as the lanes did not panic")),
        }
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
    let dma = |offset: usize, host: *mut u8, len: usize| {
        // SAFETY: the slot is pinned, holds the chunk's `len` bytes and stays
        // untouched until its event fires; the destination range lies
        // inside the caller's allocation (`offset + len <= src.len()`).
        unsafe {
            sys::cuMemcpyHtoDAsync_v2(dst + offset as u64, host.cast(), len, stream.cu_stream())
                .result()
        }
        .op("cuMemcpyHtoDAsync")
    };
    let writes = SlotWrites::for_copy(src.len());
    staged.run(
        stream,
        |_| Ok(()),
        |ring, j| {
            let i = ring.plan.chunk_of(j);
            // The slot's previous chunk must have left it.
            if i >= ring.plan.slots && !ring.wait_landed(i - ring.plan.slots)? {
                return Ok(false);
            }
            let (at, len) = ring.plan.bytes(j, 1);
            // SAFETY: piece `j` is this thread's alone (claimed once); its
            // `len <= PIECE` bytes lie in `src` and in the slot (the lines
            // demoted too), whose earlier DMA has finished (waited above) or
            // which is fresh.
            unsafe {
                let (from, to) = (src.as_ptr().add(at), ring.slot_piece(i, j));
                match writes {
                    SlotWrites::Streaming => copy_streaming(from, to, len),
                    SlotWrites::Demoted => {
                        std::ptr::copy_nonoverlapping(from, to, len);
                        demote(to, len);
                    }
                    SlotWrites::Ordinary => std::ptr::copy_nonoverlapping(from, to, len),
                }
            }
            if ring.arrive(i) {
                ring.queue(i, stream, dma)?;
            }
            Ok(true)
        },
    )
}

/// The destination of a copy to the host, shared by the lanes.
struct HostOut(*mut u8);

// SAFETY: the lanes write disjoint pieces of the destination (each piece is
// claimed once), which the copy borrows mutably until every lane is done.
unsafe impl Sync for HostOut {}

impl HostOut {
    /// The destination's byte `offset`.
    fn at(&self, offset: usize) -> *mut u8 {
        self.0.wrapping_add(offset)
    }
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
    let out = HostOut(dst.as_mut_ptr());
    let dma = |offset: usize, host: *mut u8, len: usize| {
        // SAFETY: the slot is pinned, holds `len` bytes, and nothing reads
        // it until its event fires; the source lies inside the allocation
        // (`offset + len <= dst.len()`).
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(host.cast(), src + offset as u64, len, stream.cu_stream())
                .result()
        }
        .op("cuMemcpyDtoHAsync")
    };
    // Every chunk's DMA is waited for before its bytes are copied out, so
    // none is left when the copy returns.
    let start = |ring: &Ring<'_>| (0..ring.plan.slots).try_for_each(|i| ring.queue(i, stream, dma));
    staged.run(stream, start, |ring, j| {
        let i = ring.plan.chunk_of(j);
        if !ring.wait_landed(i)? {
            return Ok(false);
        }
        let (at, len) = ring.plan.bytes(j, 1);
        // SAFETY: chunk `i`'s DMA has finished (waited above), and the slot
        // holds piece `j`'s `len` bytes of it; the piece is this thread's
        // alone (claimed once), inside `dst`, borrowed mutably.
        unsafe { copy_streaming(ring.slot_piece(i, j), out.at(at), len) };
        // The last piece out frees the slot for the chunk `slots` on.
        let next = i + ring.plan.slots;
        if ring.arrive(i) && next < ring.plan.chunks() {
            ring.queue(next, stream, dma)?;
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lane that ends normally does not fail the copy, even when the
    /// whole copy runs in a `Drop` during a panic (it did: the lane's guard
    /// saw the thread unwinding, the other lanes stopped, and the copy
    /// returned `Ok` with pieces never copied); a lane that unwinds does.
    #[test]
    fn only_a_lane_that_unwinds_fails_the_copy() {
        let ring = Ring {
            plan: Plan::new(4 << 20),
            base: 0,
            events: &[],
            slots: Vec::new(),
            next: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            #[cfg(feature = "test-hooks")]
            recorder: None,
        };
        struct CopyInDrop<'r, 'a>(&'r Ring<'a>);
        impl Drop for CopyInDrop<'_, '_> {
            fn drop(&mut self) {
                assert!(std::thread::panicking());
                drop(FailOnUnwind::new(self.0));
            }
        }
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let _copy = CopyInDrop(&ring);
            panic!("the caller's panic");
        }));
        assert!(unwound.is_err());
        assert!(
            !ring.failed.load(Ordering::Relaxed),
            "a lane that ended normally failed the copy"
        );
        let unwound = catch_unwind(AssertUnwindSafe(|| {
            let _lane = FailOnUnwind::new(&ring);
            panic!("a lane's panic");
        }));
        assert!(unwound.is_err());
        assert!(ring.failed.load(Ordering::Relaxed));
    }

    /// Every piece lies in exactly one chunk, chunks are consecutive runs of
    /// pieces that fit a slot, growing from the ramp to the largest, and
    /// the bytes cover the copy.
    #[test]
    fn plans_cut_the_copy_into_consecutive_chunks() {
        let mut rng = crate::test_rng::Rng::new(0x5eed_57a9);
        let mut totals = vec![
            1,
            PIECE - 1,
            PIECE,
            PIECE + 1,
            RAMP,
            3 << 20,
            64 << 20,
            1 << 30,
        ];
        totals.extend((0..200).map(|_| 1 + rng.below(300 << 20)));
        for total in totals {
            let plan = Plan::new(total);
            let mut next_piece = 0;
            let mut bytes = 0;
            for i in 0..plan.chunks() {
                let (first, count) = plan.span(i);
                assert_eq!(
                    first,
                    next_piece,
                    "{total}: chunk {i} starts where {} ended",
                    i.max(1) - 1
                );
                assert!(
                    count >= 1 && count <= plan.max,
                    "{total}: chunk {i} has {count}"
                );
                if first + count < plan.pieces() {
                    assert_eq!(
                        count,
                        (plan.ramp << i.min(20)).min(plan.max),
                        "{total}: full chunk {i}"
                    );
                }
                for j in first..first + count {
                    assert_eq!(plan.chunk_of(j), i, "{total}: piece {j}");
                }
                let (offset, len) = plan.bytes(first, count);
                assert_eq!(offset, bytes);
                assert!(len <= plan.slot_bytes());
                bytes += len;
                next_piece += count;
            }
            assert_eq!((next_piece, bytes), (plan.pieces(), total), "{total}");
            assert!(plan.slots >= 1 && plan.slots <= plan.chunks().max(1));
            assert!(plan.lanes >= 1 && plan.lanes <= plan.pieces());
        }
    }
}
