//! The memory the algorithm kernels work in: [`Temporary`], a block of the
//! stream-ordered pool for one call, and the state memory of the
//! one-launch reductions (an arrivals counter and
//! one slot per block, see `device::wide::reduce_across_blocks`), kept per
//! stream: the kernel leaves the counter at 0 when it ends, so the next
//! reduction on the same stream launches on the same memory, with no
//! allocation, zeroing or free queued around it (each of those costs
//! GPU time that a small reduction would otherwise spend waiting). The
//! single-pass scans and compactions take their tile states from the same
//! block, past the counter, and zero them first (no allocation or free).
//!
//! Why it is sound: a kept block belongs to one stream object (the
//! `Arc<CudaStream>`, held by the block, so its handle cannot be destroyed
//! and reused while the block lives) and is used only by kernels launched
//! on that stream, under the block's lock, which also covers replacing the
//! block. Launches on one stream run one after another, so no two
//! reductions use the block at once, and each finds the counter at 0.
//! The memory is freed on its stream, behind every launch that used it.
//!
//! While a stream records a graph (`Graph::capture`), a launch gets a
//! zeroed temporary instead: a recorded kernel replays later, where the
//! stream's order no longer covers it (and the temporary becomes a memory
//! node of the graph). Up to [`KEPT_STREAMS`] streams per context keep a
//! block; the one kept longest gives its block up for a new stream's (and
//! lets its stream go).
//!
//! What lets a block go:
//!
//! - its stream's last handle outside this module is dropped: the next
//!   reduction in the context (on any stream) frees the block on that
//!   stream and drops the stream (a kept block does not keep a stream the
//!   caller has let go for longer than that);
//! - the process exits: a handler registered with the C library's `atexit`
//!   when the first block is allocated frees every block still kept, on
//!   its stream, and waits for the stream, so that nothing cuda-mem
//!   allocated is left when the driver or a memory checker
//!   (compute-sanitizer's `--leak-check full`) looks at exit. It skips a
//!   block another thread holds at that moment, and does nothing in a
//!   process other than the one that registered it (a `fork` child).

use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::{sys, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::memory::allocation;
use crate::order::capture;

/// How many streams of a context keep a block.
const KEPT_STREAMS: usize = 16;
/// The largest block kept (a reduction's needs a few KB: 16 bytes per
/// resident block at most); a launch that needs more gets a temporary.
const MAX_KEPT_BYTES: usize = 1 << 20;

/// The bytes before the look-back state in a scan's or compaction's
/// temporary: the tile counter (`algo-kernels/`'s `COUNTER_BYTES`).
pub(super) const COUNTER_BYTES: usize = 16;

/// The kept blocks of one context, by stream, the oldest first.
#[derive(Default)]
pub(super) struct KeptStates(Mutex<Vec<Arc<Kept>>>);

/// One stream's block: its address and size (0, 0 before the first use).
struct Kept {
    stream: Arc<CudaStream>,
    block: Mutex<(u64, usize)>,
}

/// Every kept block of the process, for [`release_at_exit`]: the entries
/// [`KeptStates::of`] made, while they live.
static EVERY_KEPT: Mutex<Vec<Weak<Kept>>> = Mutex::new(Vec::new());

/// The process that registered [`release_at_exit`] with `atexit` (see the
/// module's notes), set when it did.
static AT_EXIT_PROCESS: OnceLock<u32> = OnceLock::new();

/// The `atexit` handler: frees every block still kept, on its stream, and
/// waits for the stream. Blocks whose locks another thread holds are left
/// alone, as is everything in a process other than the one that
/// registered the handler. Never unwinds (errors are dropped: the process
/// is ending).
extern "C" fn release_at_exit() {
    if AT_EXIT_PROCESS.get() != Some(&std::process::id()) {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        let Ok(every) = EVERY_KEPT.try_lock() else {
            return;
        };
        for kept in every.iter().filter_map(Weak::upgrade) {
            let Ok(mut block) = kept.block.try_lock() else {
                continue;
            };
            let (addr, _) = std::mem::take(&mut *block);
            if addr == 0 {
                continue;
            }
            // SAFETY: allocated by `pooled` on this stream; every launch
            // that used it was queued on this stream before (under the
            // block's lock, held here), and the block is taken out, so no
            // later launch uses it.
            if unsafe { allocation::free_on_stream(addr, &kept.stream) }.is_ok() {
                // SAFETY: a live stream (the entry holds it).
                let _ = unsafe { sys::cuStreamSynchronize(kept.stream.cu_stream()) };
            }
        }
    });
}

/// Registers [`release_at_exit`] (once per process).
fn release_blocks_at_exit() {
    AT_EXIT_PROCESS.get_or_init(|| {
        // SAFETY: `atexit` takes a plain function that lives as long as the
        // program; a failed registration (the C library's table full) only
        // leaves the blocks to the driver's own clean-up at exit.
        let _ = unsafe { libc::atexit(release_at_exit) };
        std::process::id()
    });
}

impl Drop for Kept {
    fn drop(&mut self) {
        let (addr, _) = *self.block.get_mut().unwrap_or_else(|p| p.into_inner());
        if addr != 0 {
            // SAFETY: allocated by `pooled` on this stream; every launch
            // that used it was queued on this stream before this free (under
            // the block's lock, which no one holds: this is the last `Arc`).
            let freed = unsafe { allocation::free_on_stream(addr, &self.stream) };
            crate::error::record_in(self.stream.context(), freed);
        }
    }
}

impl KeptStates {
    /// Runs `launch` with the address of at least `bytes` bytes (16-byte
    /// aligned) whose first [`COUNTER_BYTES`] are zero, for work on
    /// `stream` that leaves them zero when it ends: the stream's kept
    /// block (the rest as the last work left it), or a temporary with a
    /// zeroed counter (see the module's notes).
    ///
    /// # Safety
    /// `launch` queues work on `stream` only, which uses the memory only
    /// while it runs and leaves the counter at 0 (a one-launch reduction
    /// counts to 0 again; other work does not touch it); `stream` passed
    /// `state.check_stream`.
    pub(super) unsafe fn with<R>(
        &self,
        state: &ContextState,
        stream: &Arc<CudaStream>,
        bytes: usize,
        launch: impl FnOnce(u64) -> Result<R>,
    ) -> Result<R> {
        let bytes = bytes.max(COUNTER_BYTES);
        if bytes > MAX_KEPT_BYTES || capture::is_recording(stream) {
            let temporary = Temporary::new(state, stream, bytes)?;
            temporary.zero(COUNTER_BYTES)?;
            return launch(temporary.addr());
        }
        let kept = self.of(stream);
        let mut block = kept.block.lock().unwrap_or_else(|p| p.into_inner());
        if block.1 < bytes {
            let (old, _) = std::mem::take(&mut *block);
            if old != 0 {
                // SAFETY: allocated by `pooled` on this stream; the launches
                // that used it were queued before (under this lock).
                unsafe { allocation::free_on_stream(old, stream) }?;
            }
            // Room for larger grids later: the next size up, at least 4 KB.
            let size = bytes.next_power_of_two().max(4096);
            release_blocks_at_exit();
            let addr = allocation::pooled(state, size, stream, None)?;
            // SAFETY: `size >= bytes >= COUNTER_BYTES` bytes just allocated
            // on this stream, which nothing else knows yet.
            let zeroed = unsafe { Temporary::zero_at(addr, COUNTER_BYTES, stream) };
            if let Err(e) = zeroed {
                // SAFETY: just allocated on this stream; nothing uses it.
                let freed = unsafe { allocation::free_on_stream(addr, stream) };
                crate::error::record_in(&state.ctx, freed);
                return Err(e);
            }
            *block = (addr, size);
        }
        launch(block.0)
    }

    /// `stream`'s entry, made (and the oldest let go, past
    /// [`KEPT_STREAMS`]) if it has none. Lets go of every entry whose
    /// stream no one else holds any more (see the module's notes).
    fn of(&self, stream: &Arc<CudaStream>) -> Arc<Kept> {
        let mut all = self.0.lock().unwrap_or_else(|p| p.into_inner());
        // An entry's stream held by the entry alone: its caller has let
        // it go, and no launch can come (each holds the stream too). No
        // one can clone it from here but this lock's holder.
        let unused = |k: &Arc<Kept>| Arc::strong_count(&k.stream) == 1;
        let mut gone: Vec<Arc<Kept>> = Vec::new();
        // Looked for first: `extract_if` costs more than the scan.
        if all.iter().any(unused) {
            gone.extend(all.extract_if(.., |k| unused(k)));
        }
        let kept = match all.iter().find(|k| Arc::ptr_eq(&k.stream, stream)) {
            Some(kept) => kept.clone(),
            None => {
                let kept = Arc::new(Kept {
                    stream: stream.clone(),
                    block: Mutex::new((0, 0)),
                });
                if all.len() >= KEPT_STREAMS {
                    gone.push(all.remove(0));
                }
                all.push(kept.clone());
                let mut every = EVERY_KEPT.lock().unwrap_or_else(|p| p.into_inner());
                every.retain(|k| k.strong_count() > 0);
                every.push(Arc::downgrade(&kept));
                kept
            }
        };
        drop(all);
        // Freed outside the lock (behind the launches that used them),
        // their streams dropped with them: cudarc's stream drop makes its
        // context current, which a reduction does not otherwise do.
        if !gone.is_empty() {
            // SAFETY: dropping the entries frees their blocks and drops
            // their streams, which are of this context (the caller's
            // `state` keeps it) or of the handle `Stream`s use, which
            // cuda-mem keeps for the whole run: no context is destroyed.
            unsafe { crate::current::keeping_current(|| drop(gone)) };
        }
        kept
    }
}

/// A temporary of the stream-ordered pool: allocated on `stream`, freed
/// on it when dropped (after the work queued meanwhile). Inside a graph
/// capture both are memory nodes of the graph.
pub(super) struct Temporary<'s> {
    addr: u64,
    stream: &'s CudaStream,
    state: &'s ContextState,
}

impl<'s> Temporary<'s> {
    /// `bytes` bytes (at least one) on `stream`, 256-byte aligned.
    pub(super) fn new(
        state: &'s ContextState,
        stream: &'s CudaStream,
        bytes: usize,
    ) -> Result<Self> {
        allocation::check_pooled(state, stream, None)?;
        let addr = allocation::pooled(state, bytes.max(1), stream, None)?;
        Ok(Self {
            addr,
            stream,
            state,
        })
    }

    pub(super) fn addr(&self) -> u64 {
        self.addr
    }

    /// Zeroes the first `bytes` bytes, on the stream.
    pub(super) fn zero(&self, bytes: usize) -> Result<()> {
        // SAFETY: the temporary holds at least `bytes` bytes, allocated on
        // this stream before the memset.
        unsafe { Self::zero_at(self.addr, bytes, self.stream) }
    }

    /// Zeroes `bytes` bytes at `addr` on `stream`.
    ///
    /// # Safety
    /// `addr` starts `bytes` bytes of live memory of the stream's context,
    /// allocated by work ordered before on `stream`, that nothing else uses
    /// meanwhile.
    pub(super) unsafe fn zero_at(addr: u64, bytes: usize, stream: &CudaStream) -> Result<()> {
        // SAFETY: the caller's contract: `bytes` bytes of live memory at
        // `addr`, ordered on `stream`.
        unsafe { sys::cuMemsetD8Async(addr, 0, bytes, stream.cu_stream()).result() }
            .op("cuMemsetD8Async")
    }

    /// Queues a copy of `value.len()` bytes from the temporary into
    /// `value`, then waits for the stream.
    pub(super) fn read_into(&self, value: &mut [u8]) -> Result<()> {
        // SAFETY: the temporary holds at least `value.len()` bytes written
        // by the work queued before; `value` is a live host slice, and the
        // synchronize below returns only once the copy is done.
        unsafe {
            sys::cuMemcpyDtoHAsync_v2(
                value.as_mut_ptr().cast(),
                self.addr,
                value.len(),
                self.stream.cu_stream(),
            )
            .result()
        }
        .op("cuMemcpyDtoHAsync")?;
        // SAFETY: a stream of this context.
        unsafe { sys::cuStreamSynchronize(self.stream.cu_stream()).result() }
            .op("cuStreamSynchronize")
    }
}

impl Drop for Temporary<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated by `pooled` on `stream`; every use of it was
        // queued on `stream` before this free, and nothing uses it after.
        let freed = unsafe { allocation::free_on_stream(self.addr, self.stream) };
        crate::error::record_in(&self.state.ctx, freed);
    }
}
