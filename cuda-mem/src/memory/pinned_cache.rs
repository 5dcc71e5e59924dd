//! [`PinnedCache`]: the per-context cache of pinned host blocks that
//! [`PinnedBuffer`](crate::PinnedBuffer)s and the staged pageable copies
//! (`staging`) draw from, as PyTorch's `CachingHostAllocator` does for
//! pinned tensors; its statistics ([`PinnedCacheUsage`]) and its pure
//! bookkeeping ([`Shelf`]: size classes, the cap, least-recently-returned
//! eviction).
//!
//! Pinning memory is slow (`cuMemHostRegister` of a fresh mapping: about
//! 0.8 ms for 4 KiB and 28 ms for 64 MiB on an H200 host), so a block freed
//! by its buffer goes back to its context's cache instead of to the driver,
//! and the next buffer of the same size class takes it.
//!
//! **Event guard.** A buffer dropped while asynchronous work on it may still
//! run does not wait for it: the block goes back to the cache with an event
//! recorded behind every queued use (the stream order's `stream_for_free`,
//! then `cuEventRecord`). The cache hands a block out again only once
//! `cuEventQuery` says that event has fired; a buffer allocation that finds
//! no finished block of its class pins a fresh one rather than wait. (A
//! staged copy, which reuses one large block, waits for it instead:
//! pinning 32 MiB again would cost more.) A block whose event fails is never
//! handed out or freed: it is leaked.
//!
//! **Size classes.** Requests are rounded up to a power of two (at least a
//! 4 KiB page) up to 4 MiB, and to whole 2 MiB above: at most 2x for small
//! blocks (at most 2 MiB each), at most 1.5x (and under 2 MiB) for large
//! ones. Buffers reuse blocks of exactly their class; a staged copy takes the
//! smallest cached block that is large enough.
//!
//! **Cap.** The cache keeps at most [`PinnedCache::release_threshold`] bytes
//! of unused blocks (default [`DEFAULT_PINNED_RELEASE_THRESHOLD`], 1 GiB); beyond it,
//! and on [`PinnedCache::trim_to`], the least recently returned blocks are
//! freed (after their event). Blocks larger than the threshold are never
//! kept.
//!
//! **What is cached.** Blocks with a host alias (`pinned_pages`: Linux, not
//! write-combined), one shelf per [`PinnedFlags`] combination. Write-combined
//! memory, other platforms, [`PinnedBuffer::uncached`](crate::PinnedBuffer::uncached)
//! and every buffer of a context whose cache is switched off
//! ([`PinnedCache::set_enabled`], or `CUDA_MEM_PINNED_CACHE=0` in the
//! environment for every context) are allocated and freed as before.
//!
//! **Exit.** Blocks live as long as their context's state (for a primary
//! context, the whole run), so every context's cached blocks are freed at
//! process exit (`atexit`), or compute-sanitizer's leak check would report
//! them.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{sys, CudaContext, CudaEvent, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::memory::pinned_pages::{PinnedFlags, PinnedPages};

/// The default [`PinnedCache::release_threshold`]: 1 GiB of unused blocks.
pub const DEFAULT_PINNED_RELEASE_THRESHOLD: u64 = 1 << 30;

/// Smallest class: one page.
const MIN_CLASS: usize = 4096;
/// Largest power-of-two class; larger requests round up to [`GRANULE`].
const POW2_MAX: usize = 4 << 20;
/// The rounding of large classes.
const GRANULE: usize = 2 << 20;

/// The size class of a request of `bytes > 0` bytes (see the module docs),
/// or `None` if it overflows.
pub(crate) fn size_class(bytes: usize) -> Option<usize> {
    if bytes <= POW2_MAX {
        Some(bytes.max(MIN_CLASS).next_power_of_two())
    } else {
        bytes.checked_next_multiple_of(GRANULE)
    }
}

/// Whether blocks with these flags are cached: those with a host alias
/// (`pinned_pages`), whose host slices the driver copies synchronously, so
/// that only cuda-mem's own (recorded) work can use them.
pub(crate) fn cacheable(flags: PinnedFlags) -> bool {
    cfg!(target_os = "linux") && !flags.write_combined
}

/// Usage statistics of a [`PinnedCache`], in bytes of whole blocks (size
/// classes) and in allocations.
///
/// ```
/// let u = cuda_mem::PinnedCacheUsage::default();
/// assert_eq!(u.hits + u.misses, 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedCacheUsage {
    /// Bytes of unused blocks the cache holds.
    pub cached_current: u64,
    /// High-water mark of `cached_current` since creation or the last reset.
    pub cached_high: u64,
    /// Bytes of blocks handed out (to buffers and staged copies) and not
    /// returned yet.
    pub used_current: u64,
    /// High-water mark of `used_current` since creation or the last reset.
    pub used_high: u64,
    /// Allocations served by a cached block.
    pub hits: u64,
    /// Allocations that pinned a fresh block.
    pub misses: u64,
    /// Unused blocks the cache holds.
    pub cached_blocks: u64,
}

/// The bookkeeping of one cache without the driver, generic over the block:
/// shelves of unused blocks per (flags, class), oldest first, a cap, and the
/// statistics. Every block that leaves (evicted, trimmed) is returned to the
/// caller to free.
pub(crate) struct Shelf<B> {
    free: BTreeMap<(u8, usize), VecDeque<(u64, B)>>,
    /// Stamp of the next returned block (least recently returned: lowest).
    next_stamp: u64,
    threshold: u64,
    usage: PinnedCacheUsage,
}

impl<B> Shelf<B> {
    pub(crate) fn new(threshold: u64) -> Self {
        Self {
            free: BTreeMap::new(),
            next_stamp: 0,
            threshold,
            usage: PinnedCacheUsage::default(),
        }
    }

    fn handed_out(&mut self, class: usize) {
        let u = &mut self.usage;
        u.used_current += class as u64;
        u.used_high = u.used_high.max(u.used_current);
    }

    /// The oldest block of `key` and exactly `class` for which `ready` holds
    /// (a hit), or `None` (the caller pins a fresh block: [`Shelf::missed`]).
    pub(crate) fn take(
        &mut self,
        key: u8,
        class: usize,
        mut ready: impl FnMut(&B) -> bool,
    ) -> Option<B> {
        let blocks = self.free.get_mut(&(key, class))?;
        let i = blocks.iter().position(|(_, b)| ready(b))?;
        // An emptied shelf stays (no allocation on the next return).
        let (_, block) = blocks.remove(i)?;
        self.usage.cached_current -= class as u64;
        self.usage.cached_blocks -= 1;
        self.usage.hits += 1;
        self.handed_out(class);
        Some(block)
    }

    /// The oldest block of the smallest class of `key` that holds at least
    /// `bytes`, whatever its event (a hit), with its class.
    pub(crate) fn take_at_least(&mut self, key: u8, bytes: usize) -> Option<(usize, B)> {
        let (&(_, class), _) = self
            .free
            .range((key, bytes)..(key + 1, 0))
            .find(|(_, blocks)| !blocks.is_empty())?;
        self.take(key, class, |_| true).map(|b| (class, b))
    }

    /// Counts a fresh block of `class` handed out (a miss).
    pub(crate) fn missed(&mut self, class: usize) {
        self.usage.misses += 1;
        self.handed_out(class);
    }

    /// Counts a block of `class` that was handed out and will not come back
    /// (leaked after a failure, or freed by its owner).
    pub(crate) fn forget(&mut self, class: usize) {
        self.usage.used_current -= (class as u64).min(self.usage.used_current);
    }

    /// Takes back a block of `class`; returns the blocks that no longer fit
    /// under the threshold (this one, if it alone is larger), least recently
    /// returned first.
    pub(crate) fn put(&mut self, key: u8, class: usize, block: B) -> Vec<B> {
        self.forget(class);
        if class as u64 > self.threshold {
            return vec![block];
        }
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        self.free
            .entry((key, class))
            .or_default()
            .push_back((stamp, block));
        self.usage.cached_current += class as u64;
        self.usage.cached_blocks += 1;
        let evicted = self.trim_to(self.threshold);
        let u = &mut self.usage;
        u.cached_high = u.cached_high.max(u.cached_current);
        evicted
    }

    /// Removes the least recently returned blocks until at most `keep`
    /// bytes stay cached; returns them.
    pub(crate) fn trim_to(&mut self, keep: u64) -> Vec<B> {
        let mut out = Vec::new();
        while self.usage.cached_current > keep {
            let oldest = self
                .free
                .iter()
                .filter_map(|(k, blocks)| blocks.front().map(|(stamp, _)| (*stamp, *k)))
                .min();
            let Some((_, key)) = oldest else { break };
            let blocks = self.free.get_mut(&key).expect("found above");
            let (_, block) = blocks.pop_front().expect("found above");
            if blocks.is_empty() {
                self.free.remove(&key);
            }
            self.usage.cached_current -= key.1 as u64;
            self.usage.cached_blocks -= 1;
            out.push(block);
        }
        out
    }

    pub(crate) fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Sets the threshold; returns the blocks beyond it.
    pub(crate) fn set_threshold(&mut self, threshold: u64) -> Vec<B> {
        self.threshold = threshold;
        self.trim_to(threshold)
    }

    pub(crate) fn usage(&self) -> PinnedCacheUsage {
        self.usage
    }

    pub(crate) fn reset_high_water(&mut self) {
        self.usage.cached_high = self.usage.cached_current;
        self.usage.used_high = self.usage.used_current;
    }
}

/// The shelf key of a flag combination.
fn key(flags: PinnedFlags) -> u8 {
    u8::from(flags.portable) | (u8::from(flags.device_map) << 1)
}

/// A block the cache handed out: pinned pages of a whole size class, and the
/// event that guards its last asynchronous use once it is back.
pub(crate) struct Block {
    pages: PinnedPages,
    class: usize,
    key: u8,
    /// Created on the first guarded return, then reused.
    event: Option<CudaEvent>,
    /// Whether `event` was recorded behind work that may still run.
    armed: bool,
    /// Never handed out before: its bytes are still the kernel's zeroes.
    fresh: bool,
}

impl Block {
    pub(crate) fn pages(&self) -> &PinnedPages {
        &self.pages
    }

    /// Whether the block's bytes are still all zero (never handed out).
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Whether every use guarded by the event has finished (a failed query
    /// counts as not finished: the block is never reused then).
    fn is_ready(&self) -> bool {
        match (&self.event, self.armed) {
            // SAFETY: a live event of the block's context.
            (Some(e), true) => unsafe { sys::cuEventQuery(e.cu_event()) }.result().is_ok(),
            _ => true,
        }
    }

    /// Waits for the guarded uses.
    fn wait(&mut self) -> Result<()> {
        if let (Some(e), true) = (&self.event, self.armed) {
            // SAFETY: a live event of the block's context (bound by the caller).
            unsafe { sys::cuEventSynchronize(e.cu_event()) }
                .result()
                .op("cuEventSynchronize")?;
        }
        self.armed = false;
        Ok(())
    }

    /// Records the event behind the work queued on `stream` so far. The raw
    /// call, because cudarc's `record` first returns any error another
    /// thread stored in the context, which would leave the work unguarded.
    fn arm(&mut self, ctx: &Arc<CudaContext>, stream: &CudaStream) -> Result<()> {
        if self.event.is_none() {
            let flags = Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
            self.event = Some(ctx.new_event(flags).op("cuEventCreate")?);
        }
        let event = self.event.as_ref().expect("created above");
        // SAFETY: a live event and a live stream of the context bound by the
        // caller.
        unsafe { sys::cuEventRecord(event.cu_event(), stream.cu_stream()) }
            .result()
            .op("cuEventRecord")?;
        self.armed = true;
        Ok(())
    }

    /// Frees the block after its guarded uses; on a failed wait it is leaked.
    fn free(mut self) -> Result<()> {
        self.wait()?;
        self.pages.free()
    }
}

/// One context's cache (kept in the context's state).
struct Cache {
    /// Keeps the context alive while blocks of it are cached.
    ctx: Arc<CudaContext>,
    shelf: Mutex<Shelf<Block>>,
    enabled: AtomicBool,
}

impl Cache {
    fn shelf(&self) -> MutexGuard<'_, Shelf<Block>> {
        self.shelf.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Frees `blocks` (after their events), returning the first error.
    fn free(&self, blocks: Vec<Block>) -> Result<()> {
        if blocks.is_empty() {
            return Ok(());
        }
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")?;
        blocks
            .into_iter()
            .map(Block::free)
            .fold(Ok(()), Result::and)
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        // The state of a context other than a primary one is being dropped
        // with its last buffer: its cached blocks go with it.
        let blocks = self.shelf().trim_to(0);
        let _ = self.free(blocks);
    }
}

/// Whether `CUDA_MEM_PINNED_CACHE` (read once) leaves caching on.
fn enabled_by_environment() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("CUDA_MEM_PINNED_CACHE")
            .map(|v| !matches!(v.trim(), "0" | "off" | "false" | "no"))
            .unwrap_or(true)
    })
}

/// `state`'s cache, created on first use.
fn cache(state: &ContextState) -> Result<&Cache> {
    state.lazy(&state.pinned_cache, || {
        release_at_exit();
        Ok(Cache {
            ctx: state.ctx.clone(),
            shelf: Mutex::new(Shelf::new(DEFAULT_PINNED_RELEASE_THRESHOLD)),
            enabled: AtomicBool::new(enabled_by_environment()),
        })
    })
}

/// Whether buffers of `state`'s context with `flags` go through the cache.
pub(crate) fn use_for(state: &ContextState, flags: PinnedFlags) -> bool {
    cacheable(flags) && cache(state).is_ok_and(|c| c.enabled.load(Ordering::Relaxed))
}

/// A block for a buffer of `bytes > 0` bytes with `flags` (cacheable): a
/// cached block of its class whose last use has finished, else a fresh one.
pub(crate) fn take(state: &ContextState, bytes: usize, flags: PinnedFlags) -> Result<Block> {
    let class = size_class(bytes).ok_or(crate::error::Error::OutOfMemory {
        requested: bytes,
        kind: "pinned host",
    })?;
    let cache = cache(state)?;
    let key = key(flags);
    // The event queries of `is_ready` run in the block's context.
    state.bind()?;
    let hit = cache.shelf().take(key, class, Block::is_ready);
    if let Some(mut block) = hit {
        block.armed = false;
        block.fresh = false;
        return Ok(block);
    }
    fresh(state, cache, key, class, flags)
}

/// A freshly pinned block of `class` bytes, counted as a miss.
fn fresh(
    state: &ContextState,
    cache: &Cache,
    key: u8,
    class: usize,
    flags: PinnedFlags,
) -> Result<Block> {
    let pages = match PinnedPages::new(state, class, flags) {
        Ok(pages) => pages,
        Err(e) => {
            // Pinned memory may be short because the cache holds it: give
            // the unused blocks back and try once more.
            let unused = cache.shelf().trim_to(0);
            if unused.is_empty() {
                return Err(e);
            }
            cache.free(unused)?;
            PinnedPages::new(state, class, flags)?
        }
    };
    cache.shelf().missed(class);
    Ok(Block {
        pages,
        class,
        key,
        event: None,
        armed: false,
        fresh: true,
    })
}

/// A block of at least `bytes` bytes with the default flags for a staged
/// copy, whose earlier uses have finished (waited for).
pub(crate) fn take_for_staging(state: &ContextState, bytes: usize) -> Result<Block> {
    let cache = cache(state)?;
    let key = key(PinnedFlags::default());
    let hit = cache.shelf().take_at_least(key, bytes);
    match hit {
        Some((_, mut block)) => {
            if let Err(e) = state.bind().and_then(|()| block.wait()) {
                cache.shelf().forget(block.class);
                return Err(e);
            }
            block.fresh = false;
            Ok(block)
        }
        None => {
            let class = size_class(bytes).ok_or(crate::error::Error::OutOfMemory {
                requested: bytes,
                kind: "pinned host",
            })?;
            fresh(state, cache, key, class, PinnedFlags::default())
        }
    }
}

/// Gives `block` back to `state`'s cache. With `guard`, work queued on that
/// stream (a stream of `state`'s context, ordered after every use of the
/// block) may still use it: an event recorded there guards it. If that event
/// cannot be recorded, the block is kept only once `guard` has been waited
/// for, and leaked when that fails too.
pub(crate) fn give_back(
    state: &ContextState,
    mut block: Block,
    guard: Option<&CudaStream>,
) -> Result<()> {
    let cache = cache(state)?;
    if let Some(stream) = guard {
        if let Err(e) = state.bind() {
            cache.shelf().forget(block.class);
            return Err(e);
        }
        if let Err(e) = block.arm(&state.ctx, stream) {
            // SAFETY: a live stream of the context bound above.
            let waited = unsafe { sys::cuStreamSynchronize(stream.cu_stream()) }.result();
            if waited.is_err() {
                cache.shelf().forget(block.class);
                return Err(e);
            }
            block.armed = false;
        }
    }
    let (key, class) = (block.key, block.class);
    let evicted = cache.shelf().put(key, class, block);
    cache.free(evicted)
}

/// Leaks `block`, handed out by `state`'s cache, which queued work may
/// still use and which can be neither guarded nor waited for (after an
/// error): it is never handed out or freed, and no longer counted as used.
pub(crate) fn leak(state: &ContextState, block: Block) {
    if let Some(cache) = state.pinned_cache.get::<Cache>() {
        cache.shelf().forget(block.class);
    }
}

/// Frees every context's cached blocks when the process exits (see the
/// module docs).
fn release_at_exit() {
    static PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    extern "C" fn release_all() {
        // A forked child inherits the handler but must not call the driver.
        if PID.get() != Some(&std::process::id()) {
            return;
        }
        for state in ContextState::all_live() {
            let Some(cache) = state.pinned_cache.get::<Cache>() else {
                continue;
            };
            // A thread that holds the shelf at exit keeps its blocks.
            let Ok(mut shelf) = cache.shelf.try_lock() else {
                continue;
            };
            let blocks = shelf.trim_to(0);
            drop(shelf);
            let _ = cache.free(blocks);
        }
    }
    extern "C" {
        fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
    }
    PID.get_or_init(|| {
        // SAFETY: `atexit` (C standard library, linked by std) stores a plain
        // function pointer; `release_all` does not unwind (nothing in it
        // panics: `try_lock` only, and every driver error is ignored). It
        // runs before the shared libraries' ELF destructors, so the driver
        // is still loaded. If registration fails, the blocks are merely not
        // freed.
        unsafe { atexit(release_all) };
        std::process::id()
    });
}

/// The cache of pinned host blocks of one context (see the crate docs,
/// "Pinned memory is cached"): [`PinnedBuffer`](crate::PinnedBuffer)s take
/// blocks from it and give them back when dropped, event-guarded, so that an
/// allocation after warm-up costs a few microseconds instead of a
/// `cuMemHostRegister`; large pageable copies stage through a block of it.
///
/// A handle: every `PinnedCache` of one context is the same cache.
///
/// - A block is handed out again only after every asynchronous use queued
///   before its buffer was dropped has finished (an event recorded then).
/// - At most [`release_threshold`](Self::release_threshold) bytes of unused
///   blocks stay cached (default 1 GiB); [`trim_to`](Self::trim_to) frees
///   more. Blocks are size classes: powers of two up to 4 MiB, whole 2 MiB
///   above.
/// - Opt out per buffer with [`PinnedBuffer::uncached`](crate::PinnedBuffer::uncached),
///   per context with [`set_enabled(false)`](Self::set_enabled), or for the
///   whole process with the environment variable `CUDA_MEM_PINNED_CACHE=0`.
///   Write-combined memory (and pinned memory on platforms other than
///   Linux) is never cached.
///
/// ```no_run
/// use cuda_mem::{PinnedBuffer, PinnedCache};
/// let ctx = cuda_mem::context(0)?;
/// let cache = PinnedCache::of(&ctx)?;
/// drop(PinnedBuffer::<u8>::new(&ctx, 1 << 20)?); // pinned once...
/// let again = PinnedBuffer::<u8>::new(&ctx, 1 << 20)?; // ...then reused
/// assert!(cache.usage().hits >= 1);
/// cache.trim_to(0)?; // free every unused block now
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[derive(Clone)]
pub struct PinnedCache {
    state: Arc<ContextState>,
}

impl PinnedCache {
    /// The cache of `ctx`'s context.
    ///
    /// ```no_run
    /// let cache = cuda_mem::PinnedCache::of(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn of(ctx: &Arc<CudaContext>) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        cache(&state)?;
        Ok(Self { state })
    }

    fn cache(&self) -> &Cache {
        cache(&self.state).expect("set up in `of`")
    }

    /// The most bytes of unused blocks the cache keeps.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// assert_eq!(cache.release_threshold(), cuda_mem::DEFAULT_PINNED_RELEASE_THRESHOLD);
    /// ```
    pub fn release_threshold(&self) -> u64 {
        self.cache().shelf().threshold()
    }

    /// Sets the most bytes of unused blocks the cache keeps, freeing the
    /// least recently returned blocks beyond it (after their last use). A
    /// threshold below the staging block of large pageable copies (a ring
    /// of 8 chunks of 4 MiB, 32 MiB) makes every such copy pin it again.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// cache.set_release_threshold(256 << 20)?; // keep at most 256 MiB unused
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        let cache = self.cache();
        let evicted = cache.shelf().set_threshold(bytes);
        cache.free(evicted)
    }

    /// Frees unused blocks, least recently returned first (each after its
    /// last use), until at most `keep_bytes` stay cached.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// cache.trim_to(0)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn trim_to(&self, keep_bytes: usize) -> Result<()> {
        let cache = self.cache();
        let evicted = cache.shelf().trim_to(keep_bytes as u64);
        cache.free(evicted)
    }

    /// Cached and used bytes (current and high-water), hits and misses.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// let u = cache.usage();
    /// println!("{} of {} allocations reused a block", u.hits, u.hits + u.misses);
    /// ```
    pub fn usage(&self) -> PinnedCacheUsage {
        self.cache().shelf().usage()
    }

    /// Resets both high-water marks to the current values.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// cache.reset_high_water();
    /// ```
    pub fn reset_high_water(&self) {
        self.cache().shelf().reset_high_water();
    }

    /// Whether new [`PinnedBuffer`](crate::PinnedBuffer)s of this context
    /// use the cache.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// assert!(cache.is_enabled()); // unless CUDA_MEM_PINNED_CACHE=0
    /// ```
    pub fn is_enabled(&self) -> bool {
        self.cache().enabled.load(Ordering::Relaxed)
    }

    /// Switches caching for new buffers of this context on or off. Off,
    /// every buffer pins its own memory and frees it when dropped (after
    /// waiting for its work), as [`PinnedBuffer::uncached`](crate::PinnedBuffer::uncached)
    /// does, and the unused blocks are freed now. Buffers allocated from the
    /// cache before still return their blocks to it; staged pageable copies
    /// keep using it.
    ///
    /// ```no_run
    /// # let cache: cuda_mem::PinnedCache = unimplemented!();
    /// cache.set_enabled(false)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn set_enabled(&self, on: bool) -> Result<()> {
        self.cache().enabled.store(on, Ordering::Relaxed);
        if on {
            Ok(())
        } else {
            self.trim_to(0)
        }
    }
}

impl std::fmt::Debug for PinnedCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedCache")
            .field("usage", &self.usage())
            .field("release_threshold", &self.release_threshold())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_rng::Rng;

    /// A fresh seed, printed (`PINNED_CACHE_SEED` replays it).
    fn seed() -> u64 {
        crate::test_rng::seed("PINNED_CACHE_SEED")
    }

    #[test]
    fn size_classes_round_up_with_bounded_waste() {
        assert_eq!(size_class(1), Some(4096));
        assert_eq!(size_class(4096), Some(4096));
        assert_eq!(size_class(4097), Some(8192));
        assert_eq!(size_class(1 << 20), Some(1 << 20));
        assert_eq!(size_class((4 << 20) + 1), Some(6 << 20));
        assert_eq!(size_class(64 << 20), Some(64 << 20));
        assert_eq!(size_class(usize::MAX), None);
        let mut rng = Rng::new(seed());
        for _ in 0..10_000 {
            let bits = 1 + rng.below(31);
            let bytes = 1 + rng.below(1 << bits);
            let class = size_class(bytes).unwrap();
            assert!(
                class >= bytes && class.is_multiple_of(4096),
                "{bytes} -> {class}"
            );
            let waste = class - bytes;
            if bytes > POW2_MAX {
                assert!(
                    waste < GRANULE && class * 2 <= bytes * 3,
                    "{bytes} -> {class}"
                );
            } else {
                assert!(waste < bytes.max(4096), "{bytes} -> {class}");
            }
            // Monotone: a larger request never gets a smaller class.
            assert!(size_class(bytes + 1).unwrap() >= class);
        }
    }

    #[test]
    fn exact_class_reuse_skips_unfinished_blocks() {
        let mut shelf = Shelf::<(u32, bool)>::new(1 << 30);
        shelf.missed(4096);
        shelf.missed(4096);
        assert!(shelf.put(0, 4096, (1, false)).is_empty()); // still in flight
        assert!(shelf.put(0, 4096, (2, true)).is_empty());
        // The unfinished block is never handed out.
        assert_eq!(shelf.take(0, 4096, |b| b.1), Some((2, true)));
        assert_eq!(shelf.take(0, 4096, |b| b.1), None);
        // Other classes and flag sets are other shelves.
        assert_eq!(shelf.take(0, 8192, |_| true), None);
        assert_eq!(shelf.take(1, 4096, |_| true), None);
        let u = shelf.usage();
        assert_eq!((u.hits, u.misses, u.cached_blocks), (1, 2, 1));
        assert_eq!((u.cached_current, u.used_current), (4096, 4096));
        assert_eq!(shelf.take(0, 4096, |_| true), Some((1, false)));
    }

    #[test]
    fn the_cap_evicts_the_least_recently_returned() {
        let mut shelf = Shelf::<usize>::new(3 << 20);
        for i in 0..4 {
            shelf.missed(1 << 20);
            assert!(shelf.put(0, 1 << 20, i).len() <= 1);
        }
        let u = shelf.usage();
        assert_eq!(
            (u.cached_current, u.cached_blocks, u.used_current),
            (3 << 20, 3, 0)
        );
        // Block 0 went first; a block larger than the cap is never kept.
        shelf.missed(4 << 20);
        assert_eq!(shelf.put(0, 4 << 20, 9), vec![9]);
        assert_eq!(shelf.trim_to(1 << 20), vec![1, 2]);
        assert_eq!(shelf.set_threshold(0), vec![3]);
        assert_eq!(shelf.usage().cached_current, 0);
        assert_eq!(shelf.usage().cached_high, 3 << 20);
        shelf.reset_high_water();
        assert_eq!(shelf.usage().cached_high, 0);
    }

    #[test]
    fn staging_takes_the_smallest_large_enough_block() {
        let mut shelf = Shelf::<usize>::new(1 << 30);
        for (class, id) in [(64 << 20, 64), (32 << 20, 32), (8 << 20, 8)] {
            shelf.missed(class);
            shelf.put(0, class, id);
        }
        shelf.missed(16 << 20);
        shelf.put(1, 16 << 20, 16); // other flags: never for staging
        assert_eq!(shelf.take_at_least(0, 10 << 20), Some((32 << 20, 32)));
        assert_eq!(shelf.take_at_least(0, 40 << 20), Some((64 << 20, 64)));
        assert_eq!(shelf.take_at_least(0, 40 << 20), None);
    }

    #[test]
    fn random_sequences_keep_the_statistics_consistent() {
        let mut rng = Rng::new(seed());
        let mut shelf = Shelf::<usize>::new(8 << 20);
        let mut out: Vec<usize> = Vec::new(); // classes handed out
        let (mut freed, mut fresh) = (0u64, 0u64);
        for _ in 0..20_000 {
            match rng.below(5) {
                0 | 1 => {
                    let class = size_class(1 + rng.below(3 << 20)).unwrap();
                    if shelf.take(0, class, |_| rng.below(4) != 0).is_none() {
                        shelf.missed(class);
                        fresh += class as u64;
                    }
                    out.push(class);
                }
                2 | 3 if !out.is_empty() => {
                    let class = out.swap_remove(rng.below(out.len()));
                    freed += shelf
                        .put(0, class, class)
                        .iter()
                        .map(|&c| c as u64)
                        .sum::<u64>();
                }
                _ => {
                    let keep = rng.below(10 << 20) as u64;
                    freed += shelf.trim_to(keep).iter().map(|&c| c as u64).sum::<u64>();
                    assert!(shelf.usage().cached_current <= keep);
                }
            }
            let u = shelf.usage();
            assert!(u.cached_current <= shelf.threshold());
            assert_eq!(u.used_current, out.iter().map(|&c| c as u64).sum::<u64>());
            // Every byte pinned is in use, cached or freed.
            assert_eq!(fresh, u.used_current + u.cached_current + freed);
            assert!(u.cached_high >= u.cached_current && u.used_high >= u.used_current);
        }
    }
}
