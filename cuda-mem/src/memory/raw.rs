//! [`RawMemory`]: one allocation of any kind, untyped, as the typed buffers
//! hold it: its addresses, the context it belongs to, the stream order of its
//! operations, and the waits before its free. How each kind is allocated and
//! freed is `allocation`'s.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cudarc::driver::{result, CudaStream};

use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::allocation::{self, AllocKind};
use crate::memory::pinned_pages::PinnedFlags;
use crate::memory::pool::MemPool;
use crate::memory::vmm::Reservation;
use crate::order::{Access, StreamOrder};

/// One allocation. Zero-byte allocations hold no memory (address 0) and make
/// no driver call.
pub(crate) struct RawMemory {
    pub(crate) state: Arc<ContextState>,
    /// The address in the unified address space (device address; for pinned
    /// memory the same value as the host address).
    pub(crate) addr: u64,
    /// The host address of host-accessible memory (pinned, unified), else null.
    host: *mut u8,
    pub(crate) bytes: usize,
    /// Dropped by `RawMemory`'s drop ([`RawMemory::drop_parts`]), inline
    /// when it holds nothing to drop.
    pub(crate) kind: ManuallyDrop<AllocKind>,
    /// Dropped by `RawMemory`'s drop ([`RawMemory::drop_parts`]), inline
    /// in the common case.
    pub(crate) order: ManuallyDrop<StreamOrder>,
    freed: bool,
    /// Whether this process handed out a CUDA IPC handle of the memory
    /// (`export_ipc`): another process may use it from then on.
    exported: AtomicBool,
}

/// A stream-ordered allocation that [`RawMemory::pool_allocate`] made and
/// no [`RawMemory`] owns yet: [`RawMemory::pooled`] takes it, once (it is
/// neither `Clone` nor `Copy`). Its holder hands it on at once: dropped, it
/// would leave the memory allocated until the process exits.
#[must_use]
pub(crate) struct PoolAllocation<'s> {
    /// The state of the stream's context.
    state: Arc<ContextState>,
    addr: u64,
    bytes: usize,
    /// The stream it was allocated on.
    stream: &'s Arc<CudaStream>,
}

// SAFETY: the raw host pointer is only turned into references by the typed
// buffers under Rust's borrow rules (and after waiting for queued device work);
// the stream order is behind a mutex; the driver handles are thread-safe.
unsafe impl Send for RawMemory {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for RawMemory {}

/// `size_of::<T>()`, for an element type a buffer may hold. `T::__CHECK` is
/// evaluated where the buffer type is used (a post-monomorphization error):
/// a zero-sized `T` is refused (a buffer of them has no bytes to tell its
/// elements apart, so its host slices, copies and `to_vec` would have to
/// invent them), and so are an alignment over 256 and a derived generic
/// struct whose real layout has padding (see `DeviceCopy`'s hidden items).
pub(crate) const fn element_size<T: DeviceCopy>() -> usize {
    const { crate::copy::private::check_element::<T>() };
    size_of::<T>()
}

/// `len * size_of::<T>()` in bytes, or `Err(SizeOverflow)`; zero-sized `T`
/// are refused at compile time (see [`element_size`]).
pub(crate) fn byte_len<T: DeviceCopy>(len: usize) -> Result<usize> {
    len.checked_mul(element_size::<T>())
        .ok_or(Error::SizeOverflow {
            what: "len * size_of::<T>()",
        })
}

/// Whether memory of `kind` is shared with another process: imported from
/// one, or `exported` by this one.
fn interprocess(kind: &AllocKind, exported: bool) -> bool {
    #[cfg(target_os = "linux")]
    if matches!(kind, AllocKind::Imported { .. }) {
        return true;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = kind;
    exported
}

impl RawMemory {
    #[inline]
    fn new(
        state: Arc<ContextState>,
        addr: u64,
        host: *mut u8,
        bytes: usize,
        kind: AllocKind,
        order: StreamOrder,
    ) -> Self {
        Self {
            state,
            addr,
            host,
            bytes,
            kind: ManuallyDrop::new(kind),
            order: ManuallyDrop::new(order),
            freed: false,
            exported: AtomicBool::new(false),
        }
    }

    /// Marks the memory as shared with another process: this process
    /// handed out an IPC handle of it (see `ipc`).
    #[cfg(target_os = "linux")]
    pub(crate) fn mark_exported(&self) {
        self.exported.store(true, Ordering::Release);
    }

    /// Whether another process may use this memory (imported from one, or
    /// exported by this process), so that no kernel of this one may take it
    /// as a slice (see `cuda_mem::ipc`, "Kernels and shared memory").
    pub(crate) fn is_interprocess(&self) -> bool {
        interprocess(&self.kind, self.exported.load(Ordering::Acquire))
    }

    fn empty(state: Arc<ContextState>, kind: AllocKind) -> Self {
        Self::new(
            state,
            0,
            std::ptr::null_mut(),
            0,
            kind,
            StreamOrder::default(),
        )
    }

    /// Memory of `bytes` bytes at `addr` that `ipc` imported from another
    /// process (`kind` is an [`AllocKind::Imported`]).
    #[cfg(target_os = "linux")]
    pub(crate) fn imported(
        state: Arc<ContextState>,
        addr: u64,
        bytes: usize,
        kind: AllocKind,
    ) -> Self {
        if bytes == 0 {
            return Self::empty(state, kind);
        }
        Self::new(
            state,
            addr,
            std::ptr::null_mut(),
            bytes,
            kind,
            StreamOrder::default(),
        )
    }

    /// `cuMemAlloc` of `bytes` bytes (contents unspecified).
    pub(crate) fn device(state: Arc<ContextState>, bytes: usize) -> Result<Self> {
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Device));
        }
        let addr = allocation::device(&state, bytes)?;
        Ok(Self::new(
            state,
            addr,
            std::ptr::null_mut(),
            bytes,
            AllocKind::Device,
            StreamOrder::default(),
        ))
    }

    /// `cuMemAllocPitch`: `height` rows of at least `row_bytes` bytes; returns
    /// the memory and the pitch.
    pub(crate) fn pitched(
        state: Arc<ContextState>,
        row_bytes: usize,
        height: usize,
        element_size_hint: u32,
    ) -> Result<(Self, usize)> {
        if row_bytes == 0 || height == 0 {
            return Ok((Self::empty(state, AllocKind::Device), row_bytes));
        }
        let (addr, pitch) = allocation::pitched(&state, row_bytes, height, element_size_hint)?;
        let bytes = pitch * height;
        Ok((
            Self::new(
                state,
                addr,
                std::ptr::null_mut(),
                bytes,
                AllocKind::Device,
                StreamOrder::default(),
            ),
            pitch,
        ))
    }

    /// Page-locked host memory (see `pinned_pages`), from the context's
    /// pinned cache when `cached` and the cache takes these flags (see
    /// `pinned_cache`). Zeroed when `zeroed`; otherwise the contents are
    /// zero for a fresh block and whatever bytes the block's previous buffer
    /// left for a reused one (always initialised bytes, the kernel's zeroes
    /// or bytes written since).
    pub(crate) fn pinned(
        state: Arc<ContextState>,
        bytes: usize,
        flags: PinnedFlags,
        cached: bool,
        zeroed: bool,
    ) -> Result<Self> {
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Pinned(None)));
        }
        if !(cached && crate::memory::pinned_cache::use_for(&state, flags)) {
            let (pages, addr) = allocation::pinned(&state, bytes, flags)?;
            let host = pages.host();
            return Ok(Self::new(
                state,
                addr,
                host,
                bytes,
                AllocKind::Pinned(Some(pages)),
                StreamOrder::default(),
            ));
        }
        let (block, addr) = allocation::pinned_cached(&state, bytes, flags)?;
        let host = block.pages().host();
        if zeroed && !block.is_fresh() {
            // SAFETY: `host` is the host view of the block's at least `bytes`
            // bytes, which nothing else uses: the cache hands a block out
            // only once its last use has finished.
            unsafe { std::ptr::write_bytes(host, 0, bytes) };
        }
        Ok(Self::new(
            state,
            addr,
            host,
            bytes,
            AllocKind::CachedPinned(Some(block)),
            StreamOrder::default(),
        ))
    }

    /// Zeroes the whole allocation with a device memset on the default stream.
    /// Host access waits for it (stream order), so nobody sees uninitialised
    /// memory; for managed memory it also keeps the pages on the device.
    fn zero_on_device(&self) -> Result<()> {
        let stream = self.state.default_stream.clone();
        let (addr, bytes) = (self.addr, self.bytes);
        self.order.run(0..bytes, &stream, || {
            // SAFETY: the whole live allocation, on its context's default stream.
            unsafe { result::memset_d8_async(addr, 0, bytes, stream.cu_stream()) }
                .op("cuMemsetD8Async")
        })
    }

    /// `cuMemAllocManaged` (global attachment), zeroed.
    pub(crate) fn unified(state: Arc<ContextState>, bytes: usize) -> Result<Self> {
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Unified));
        }
        let addr = allocation::managed(&state, bytes)?;
        let mem = Self::new(
            state,
            addr,
            addr as usize as *mut u8,
            bytes,
            AllocKind::Unified,
            StreamOrder::default(),
        );
        mem.zero_on_device()?;
        Ok(mem)
    }

    /// A stream-ordered allocation of `bytes` bytes on `stream`, from `pool`
    /// or the device's current pool, for [`RawMemory::pooled`] to own:
    /// refused on a stream recording a graph, checked and made out of line
    /// (see [`RawMemory::pool_address`]), with the state of the stream's
    /// context.
    #[inline(never)]
    pub(crate) fn pool_allocate<'s>(
        bytes: usize,
        stream: &'s Arc<CudaStream>,
        pool: Option<&MemPool>,
    ) -> Result<PoolAllocation<'s>> {
        let state = ContextState::of(stream.context())?;
        if crate::order::capture::is_recording(stream) {
            return Err(Self::pooled_while_recording());
        }
        let addr = Self::pool_address(&state, bytes, stream, pool)?;
        Ok(PoolAllocation {
            state,
            addr,
            bytes,
            stream,
        })
    }

    /// The memory of `allocation`, made by [`RawMemory::pool_allocate`]
    /// with this `pool` (which it holds so that the pool outlives it); its
    /// first use must come after work already queued on the allocation's
    /// stream. Infallible and inline, so that the caller's buffer is built
    /// in place rather than moved out of a `Result`.
    #[inline]
    pub(crate) fn pooled(allocation: PoolAllocation<'_>, pool: Option<MemPool>) -> Self {
        let PoolAllocation {
            state,
            addr,
            bytes,
            stream,
        } = allocation;
        // The order first: its making could unwind (an `Arc` dropped), and
        // nothing after the kind may, or the kind would be made on the
        // stack and copied (see `host-cost`).
        Self {
            order: ManuallyDrop::new(StreamOrder::after(stream, bytes)),
            kind: ManuallyDrop::new(AllocKind::Pool(pool)),
            state,
            addr,
            host: std::ptr::null_mut(),
            bytes,
            freed: false,
            exported: AtomicBool::new(false),
        }
    }

    /// [`RawMemory::pool_allocate`]'s refusal of a stream recording a graph.
    #[cold]
    #[inline(never)]
    fn pooled_while_recording() -> Error {
        Error::UnsupportedStream(
            "it is recording a graph, where a pool allocation is a node of the graph; \
             allocate inside a capture with Recorder::temporary (freed inside the graph) or \
             Recorder::output (kept until the next launch)",
        )
    }

    /// A graph memory node: `cuMemAllocAsync` of `bytes` bytes from the
    /// device's current pool on `stream`, which is recording a graph for
    /// cuda-mem (the caller checked). The address exists from the node's
    /// execution at every launch; nothing runs now, so the order starts
    /// empty. If no launch ever allocates it, [`RawMemory::never_allocated`]
    /// drops it without a free.
    pub(crate) fn graph_node(
        state: Arc<ContextState>,
        bytes: usize,
        stream: &CudaStream,
    ) -> Result<Self> {
        let addr = Self::pool_address(&state, bytes, stream, None)?;
        Ok(Self::new(
            state,
            addr,
            std::ptr::null_mut(),
            bytes,
            AllocKind::Pool(None),
            StreamOrder::default(),
        ))
    }

    /// The address of `bytes` bytes of stream-ordered memory on `stream`
    /// (checked), from `pool` or the device's current pool; 0, and no
    /// driver call, for zero bytes.
    #[inline(always)]
    fn pool_address(
        state: &ContextState,
        bytes: usize,
        stream: &CudaStream,
        pool: Option<&MemPool>,
    ) -> Result<u64> {
        allocation::check_pooled(state, stream, pool)?;
        if bytes == 0 {
            return Ok(0);
        }
        allocation::pooled(state, bytes, stream, pool)
    }

    /// Drops a graph memory node's memory that no launch of its graph
    /// allocated: there is nothing to free.
    pub(crate) fn never_allocated(mut self) {
        self.freed = true;
    }

    /// An address range for a [`DeviceVec`](crate::DeviceVec), with nothing
    /// mapped yet: the memory starts at the range's base, `bytes` follows
    /// the mapped prefix as the vector grows and shrinks.
    pub(crate) fn mapped(state: Arc<ContextState>, reservation: Reservation) -> Self {
        let addr = reservation.base();
        Self::new(
            state,
            addr,
            std::ptr::null_mut(),
            0,
            AllocKind::Mapped(reservation),
            StreamOrder::default(),
        )
    }

    /// Whether the memory lives on its device (device, pool, pitched,
    /// mapped or IPC-imported memory), not in host or managed memory.
    pub(crate) fn is_device_resident(&self) -> bool {
        match *self.kind {
            AllocKind::Device | AllocKind::Pool(_) | AllocKind::Mapped(_) => true,
            #[cfg(target_os = "linux")]
            AllocKind::Imported { .. } => true,
            _ => false,
        }
    }

    /// Whether this is memory of a stream-ordered pool: a pool allocation,
    /// or a pointer imported from another process's pool (whose access
    /// other devices need granted on the pool, like a pool allocation's).
    pub(crate) fn is_pool(&self) -> bool {
        match &*self.kind {
            AllocKind::Pool(_) => true,
            #[cfg(target_os = "linux")]
            AllocKind::Imported { pool, .. } => pool.is_some(),
            _ => false,
        }
    }

    /// The host pointer, when the host may access this memory.
    pub(crate) fn host_ptr(&self) -> *mut u8 {
        self.host
    }

    /// Whether a host slice of this memory is memory the driver copies
    /// asynchronously (managed memory, or pinned memory without a host alias:
    /// write-combined, or not on Linux), so that cudarc's safe copies, which
    /// treat every slice as pageable, could leave a DMA running on it.
    /// Host access to such memory waits for every context (see `Buffer::as_slice`).
    pub(crate) fn host_view_is_registered(&self) -> bool {
        match &*self.kind {
            AllocKind::Unified => true,
            AllocKind::Pinned(Some(pages)) => !pages.is_aliased(),
            _ => false,
        }
    }

    /// Frees a memory node of a graph being recorded on `stream` (a free
    /// node: nothing runs now). Never freed again, whatever the result: on
    /// a failure the recording fails and its graph, which alone would have
    /// allocated the memory, is discarded.
    pub(crate) fn free_graph_node(mut self, stream: &CudaStream) -> Result<()> {
        self.freed = true;
        if self.bytes == 0 {
            return Ok(());
        }
        // SAFETY: recorded after every recorded use of the node (one
        // stream, in order); the node is consumed.
        unsafe { allocation::free_on_stream(self.addr, stream) }
    }

    /// Frees a stream-ordered allocation on `stream`, after its queued
    /// work, for its owner, which drops it right after this call whatever
    /// the result (`PoolBuffer::free_on_stream` consumes the buffer): on
    /// success the drop frees nothing more, on failure it frees the memory
    /// as any drop does. Borrowed, not consumed, so that the allocation is
    /// not moved on the way (see `host-cost`).
    #[inline]
    pub(crate) fn free_on_stream(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        self.state.check_stream(stream)?;
        if self.bytes == 0 {
            return Ok(());
        }
        let addr = self.addr;
        let result = self.order.free_owned(stream, || {
            // SAFETY: stream-ordered free after every queued use (the order
            // above); the owner drops the memory right after this call
            // (`freed` set below keeps the drop from freeing it again), so
            // nothing uses it afterwards.
            unsafe { allocation::free_on_stream(addr, stream) }
        });
        if result.is_ok() {
            self.freed = true;
        }
        result
    }

    fn release(&mut self) -> Result<()> {
        // A reservation is freed even with nothing mapped.
        let reserved = matches!(&*self.kind, AllocKind::Mapped(r) if r.size() > 0);
        if self.freed || (self.bytes == 0 && !reserved) {
            return Ok(());
        }
        self.freed = true;
        // The waits below may leave another context current (an event of a
        // peer's stream binds its own context), so bind this one after them.
        if let AllocKind::Pool(_) = *self.kind {
            // Stream-ordered: free behind the latest use, no host wait.
            let stream = self.order.stream_for_free(&self.state.default_stream)?;
            // SAFETY: queued after every use of the memory: `stream` is the
            // latest stream in its order and waits for every deferred use;
            // nothing can use the memory after the drop.
            return unsafe { allocation::free_on_stream(self.addr, &stream) };
        }
        if let AllocKind::CachedPinned(block) = &mut *self.kind {
            // Back to the cache without waiting: an event behind every
            // queued use guards the block until that work has finished.
            let Some(block) = block.take() else {
                return Ok(());
            };
            return match self.order.stream_to_guard(&self.state.default_stream) {
                Ok(guard) => {
                    crate::memory::pinned_cache::give_back(&self.state, block, guard.as_deref())
                }
                Err(e) => {
                    // Work that cannot be ordered may still use it: leaked.
                    crate::memory::pinned_cache::leak(&self.state, block);
                    Err(e)
                }
            };
        }
        self.order.wait(Access::Exclusive)?;
        if self.host_view_is_registered() {
            // A DMA that cudarc queued through a host slice is not in the order.
            crate::context::synchronize_all_contexts(&self.state)?;
        }
        // SAFETY: no queued operation uses the memory (waited above; the
        // owner is dropping it, so every kernel argument has been launched);
        // `kind` and `addr` describe this allocation, made in `allocation`.
        unsafe { allocation::free_now(&self.state, &mut self.kind, self.addr) }
    }
}

impl RawMemory {
    /// The drop of memory not freed yet (out of line): frees it after its
    /// queued work, or hands it to the capture that records on a stream
    /// with such work.
    #[inline(never)]
    fn release_or_defer(&mut self) {
        if let Some(stream) = self.order.recording_stream() {
            // Dropped inside a `Graph::capture` while work queued on the
            // capturing stream before the capture may still use it: nothing
            // can be ordered after that work until the capture ends, so the
            // capture keeps the memory and releases it (as below, behind
            // that work) as soon as it has ended.
            let moved = std::mem::replace(self, Self::empty(self.state.clone(), AllocKind::Device));
            crate::order::capture::defer(&stream, Box::new(moved));
            return;
        }
        // Never panics: a failure (say, a context poisoned by a faulting kernel)
        // leaks the memory instead and is reported to the context, as cudarc does.
        let result = self.release();
        crate::error::record_in(&self.state.ctx, result);
    }

    /// Drops `kind` and `order`, the last thing `drop` does. Inline when
    /// there is little to drop (a kind that holds nothing; an order that
    /// [`StreamOrder::empty_cheaply`] emptied, which is then forgotten:
    /// it holds nothing left to free), instead of their drop glue's calls.
    #[inline]
    fn drop_parts(&mut self) {
        // A pool allocation's first: the common case of one comparison.
        let holds_nothing = matches!(*self.kind, AllocKind::Pool(None))
            || matches!(
                *self.kind,
                AllocKind::Device
                    | AllocKind::Unified
                    | AllocKind::Pinned(None)
                    | AllocKind::CachedPinned(None)
            );
        if !holds_nothing {
            // SAFETY: dropped once, here, at the end of `RawMemory`'s drop;
            // nothing uses `kind` afterwards.
            unsafe { ManuallyDrop::drop(&mut self.kind) };
        }
        if !self.order.empty_cheaply() {
            // SAFETY: as above, for `order`.
            unsafe { ManuallyDrop::drop(&mut self.order) };
        }
    }
}

impl Drop for RawMemory {
    #[inline]
    fn drop(&mut self) {
        // Memory freed already (`free_on_stream`) needs neither.
        if !self.freed {
            self.release_or_defer();
        }
        self.drop_parts();
    }
}

#[cfg(test)]
mod tests {
    use super::interprocess;
    use crate::memory::allocation::AllocKind;

    /// Memory imported from another process, or exported by this one, is
    /// shared with that process: no `#[kernel]` launch takes it as a slice
    /// (issue 29, class 6).
    #[test]
    fn imported_and_exported_memory_is_interprocess() {
        assert!(!interprocess(&AllocKind::Device, false));
        assert!(!interprocess(&AllocKind::Unified, false));
        assert!(interprocess(&AllocKind::Device, true));
        #[cfg(target_os = "linux")]
        assert!(interprocess(
            &AllocKind::Imported {
                pool: None,
                exporter: crate::memory::exporter::Exporter::this_process(),
            },
            false,
        ));
    }
}
