//! [`RawMemory`]: one allocation of any kind, untyped. Allocation, the matching
//! free, the context it belongs to and the stream order of its operations live
//! here, once, for every buffer kind.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};
use crate::order::{Access, StreamOrder};
use crate::pinned_pages::PinnedPages;
use crate::pool::MemPool;
use crate::DeviceCopy;

/// How an allocation was made, which decides how it is freed and whether the
/// host may touch it.
pub(crate) enum AllocKind {
    /// `cuMemAlloc` / `cuMemAllocPitch`.
    Device,
    /// Page-locked host memory, device-accessible through UVA (see
    /// `pinned_pages`); `None` once freed, or for zero bytes.
    Pinned(Option<PinnedPages>),
    /// `cuMemAllocManaged` with global attachment.
    Unified,
    /// `cuMemAllocAsync` / `cuMemAllocFromPoolAsync`; freed stream-ordered.
    /// Holds the pool (if any) so that it outlives its allocations.
    Pool(#[allow(dead_code)] Option<MemPool>),
    /// Memory another process exported (see `ipc`). `pool` is `None` for
    /// `cuIpcOpenMemHandle` (closed with `cuIpcCloseMemHandle`) and the
    /// imported pool of a pointer from `cuMemPoolImportPointer` (freed with
    /// `cuMemFree`), held so that it outlives the pointer.
    #[cfg(target_os = "linux")]
    Imported {
        #[allow(dead_code)]
        pool: Option<MemPool>,
        exporter: crate::ipc::exporter::Exporter,
    },
}

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
    pub(crate) kind: AllocKind,
    pub(crate) order: StreamOrder,
    freed: bool,
}

// SAFETY: the raw host pointer is only turned into references by the typed
// buffers under Rust's borrow rules (and after waiting for queued device work);
// the stream order is behind a mutex; the driver handles are thread-safe.
unsafe impl Send for RawMemory {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for RawMemory {}

/// Host-allocation flags of [`PinnedBuffer`](crate::PinnedBuffer).
///
/// The default (all off) is plain cached page-locked memory, good for copies
/// in both directions. Write-combined memory is faster for the device to read
/// but very slow for the CPU to read, so it is off unless asked for.
///
/// ```
/// let flags = cuda_mem::PinnedFlags { portable: true, ..Default::default() };
/// assert!(!flags.write_combined);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedFlags {
    /// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not just this one.
    pub portable: bool,
    /// `CU_MEMHOSTALLOC_DEVICEMAP`: map into the device address space and read
    /// the device address with `cuMemHostGetDevicePointer`. (With unified
    /// addressing, which every 64-bit platform has, the memory is
    /// device-accessible anyway.)
    pub device_map: bool,
    /// `CU_MEMHOSTALLOC_WRITECOMBINED`: faster device reads over PCIe, very slow
    /// CPU reads.
    pub write_combined: bool,
}

impl PinnedFlags {
    /// The `cuMemHostAlloc` flag bits.
    pub(crate) fn alloc_bits(self) -> u32 {
        let mut bits = 0;
        if self.portable {
            bits |= sys::CU_MEMHOSTALLOC_PORTABLE;
        }
        if self.device_map {
            bits |= sys::CU_MEMHOSTALLOC_DEVICEMAP;
        }
        if self.write_combined {
            bits |= sys::CU_MEMHOSTALLOC_WRITECOMBINED;
        }
        bits
    }

    /// The `cuMemHostRegister` flag bits (registration knows no
    /// write-combining; see `pinned_pages`).
    pub(crate) fn register_bits(self) -> u32 {
        let mut bits = 0;
        if self.portable {
            bits |= sys::CU_MEMHOSTREGISTER_PORTABLE;
        }
        if self.device_map {
            bits |= sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        }
        bits
    }
}

/// `size_of::<T>()`, for an element type a buffer may hold. `T::__CHECK` is
/// evaluated where the buffer type is used (a post-monomorphization error):
/// a zero-sized `T` is refused (a buffer of them has no bytes to tell its
/// elements apart, so its host slices, copies and `to_vec` would have to
/// invent them), and so are an alignment over 256 and a derived generic
/// struct whose real layout has padding (see `DeviceCopy`'s hidden items).
pub(crate) const fn element_size<T: DeviceCopy>() -> usize {
    const { crate::private::check_element::<T>() };
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

impl RawMemory {
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
            kind,
            order,
            freed: false,
        }
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
        state.bind()?;
        // SAFETY: the context is current; the memory is only handed out as
        // `DeviceCopy` values, for which any bytes are valid.
        let addr = unsafe { result::malloc_sync(bytes) }
            .map_err(|e| Error::driver_sized("cuMemAlloc", e, bytes, "device"))?;
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
        let requested = row_bytes.checked_mul(height).ok_or(Error::SizeOverflow {
            what: "width * height * size_of::<T>()",
        })?;
        state.bind()?;
        let mut addr = MaybeUninit::uninit();
        let mut pitch = 0usize;
        // SAFETY: valid out-pointers; the context is current; element size is 4, 8 or 16.
        unsafe {
            sys::cuMemAllocPitch_v2(
                addr.as_mut_ptr(),
                &mut pitch,
                row_bytes,
                height,
                element_size_hint,
            )
            .result()
        }
        .map_err(|e| Error::driver_sized("cuMemAllocPitch", e, requested, "pitched device"))?;
        // SAFETY: written by the successful call above.
        let addr = unsafe { addr.assume_init() };
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

    /// Page-locked host memory, zeroed (see `pinned_pages`).
    pub(crate) fn pinned(
        state: Arc<ContextState>,
        bytes: usize,
        flags: PinnedFlags,
    ) -> Result<Self> {
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Pinned(None)));
        }
        let pages = PinnedPages::new(&state, bytes, flags)?;
        let addr = if flags.device_map {
            let mut dptr = MaybeUninit::uninit();
            // SAFETY: `pages.dma()` was registered (or allocated) with
            // DEVICEMAP in the current context.
            let r = unsafe {
                sys::cuMemHostGetDevicePointer_v2(
                    dptr.as_mut_ptr(),
                    pages.dma().cast::<c_void>(),
                    0,
                )
                .result()
            };
            if let Err(e) = r {
                // Never handed out.
                let _ = pages.free();
                return Err(Error::driver("cuMemHostGetDevicePointer", e));
            }
            // SAFETY: written by the successful call above.
            unsafe { dptr.assume_init() }
        } else {
            pages.dma() as u64
        };
        let host = pages.host();
        Ok(Self::new(
            state,
            addr,
            host,
            bytes,
            AllocKind::Pinned(Some(pages)),
            StreamOrder::default(),
        ))
    }

    /// Zeroes the whole allocation with a device memset on the default stream.
    /// Host access waits for it (stream order), so nobody sees uninitialised
    /// memory; for managed memory it also keeps the pages on the device.
    fn zero_on_device(&self) -> Result<()> {
        let stream = self.state.default_stream.clone();
        let (addr, bytes) = (self.addr, self.bytes);
        self.order.run(&stream, || {
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
        state.require_managed_memory()?;
        state.bind()?;
        // SAFETY: the context is current; zeroed below before any read.
        let addr =
            unsafe { result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
                .map_err(|e| Error::driver_sized("cuMemAllocManaged", e, bytes, "unified"))?;
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

    /// Stream-ordered allocation on `stream`, from `pool` or the device's current pool.
    pub(crate) fn pooled(
        state: Arc<ContextState>,
        bytes: usize,
        stream: &Arc<CudaStream>,
        pool: Option<MemPool>,
    ) -> Result<Self> {
        state.check_stream(stream)?;
        if let Some(pool) = &pool {
            if pool.context_handle() != state.ctx.cu_ctx() as usize {
                return Err(Error::ContextMismatch("the memory pool"));
            }
        }
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Pool(pool)));
        }
        if !state.ctx.has_async_alloc() {
            return Err(Error::NotSupported("stream-ordered allocation (memory pools) is not supported by this device or driver"));
        }
        if pool.is_none() {
            state.prepare_default_pool()?;
        }
        state.bind()?;
        // SAFETY: the context is current and the stream belongs to it; the memory is
        // only used after this allocation through the stream order set below.
        let addr = unsafe {
            match &pool {
                Some(p) => result::mem_pool::alloc_async(p.handle(), bytes, stream.cu_stream()),
                None => result::malloc_async(stream.cu_stream(), bytes),
            }
        }
        .map_err(|e| Error::driver_sized("cuMemAllocAsync", e, bytes, "stream-ordered pool"))?;
        Ok(Self::new(
            state,
            addr,
            std::ptr::null_mut(),
            bytes,
            AllocKind::Pool(pool),
            StreamOrder::after(stream),
        ))
    }

    /// Whether the memory lives on its device (device, pool or pitched
    /// memory), not in host or managed memory.
    pub(crate) fn is_device_resident(&self) -> bool {
        match self.kind {
            AllocKind::Device | AllocKind::Pool(_) => true,
            #[cfg(target_os = "linux")]
            AllocKind::Imported { .. } => true,
            _ => false,
        }
    }

    /// Whether this is a stream-ordered (pool) allocation.
    pub(crate) fn is_pool(&self) -> bool {
        matches!(self.kind, AllocKind::Pool(_))
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
        match &self.kind {
            AllocKind::Unified => true,
            AllocKind::Pinned(Some(pages)) => !pages.is_aliased(),
            _ => false,
        }
    }

    /// Frees a stream-ordered allocation on `stream`, after its queued work.
    pub(crate) fn free_on_stream(mut self, stream: &Arc<CudaStream>) -> Result<()> {
        self.state.check_stream(stream)?;
        if self.bytes == 0 {
            return Ok(());
        }
        let addr = self.addr;
        let state = &self.state;
        let result = self.order.run(stream, || {
            state.bind()?;
            // SAFETY: stream-ordered free after every queued use (the order above);
            // the buffer is consumed, so nothing uses it afterwards.
            unsafe { result::free_async(addr, stream.cu_stream()) }.op("cuMemFreeAsync")
        });
        if result.is_ok() {
            self.freed = true;
        }
        result
    }

    fn release(&mut self) -> Result<()> {
        if self.freed || self.bytes == 0 {
            return Ok(());
        }
        self.freed = true;
        // The waits below may leave another context current (an event of a
        // peer's stream binds its own context), so bind this one after them.
        if let AllocKind::Pool(_) = self.kind {
            // Stream-ordered: free behind the latest use, no host wait.
            let stream = self.order.stream_for_free(&self.state.default_stream)?;
            self.state.bind()?;
            // SAFETY: queued after every use of the memory: `stream` is the
            // latest stream in its order and waits for every deferred use;
            // nothing can use the memory after the drop.
            return unsafe { result::free_async(self.addr, stream.cu_stream()) }
                .op("cuMemFreeAsync");
        }
        self.order.wait(Access::Exclusive)?;
        if self.host_view_is_registered() {
            // A DMA that cudarc queued through a host slice is not in the order.
            crate::context::synchronize_all_contexts(&self.state)?;
        }
        self.state.bind()?;
        match &mut self.kind {
            // No queued operation uses the pages (waited above).
            AllocKind::Pinned(pages) => pages.take().map_or(Ok(()), PinnedPages::free),
            #[cfg(target_os = "linux")]
            AllocKind::Imported { pool: None, .. } => {
                // SAFETY: opened by `cuIpcOpenMemHandle` in this context; no
                // queued operation uses it (waited above).
                unsafe { sys::cuIpcCloseMemHandle(self.addr).result() }.op("cuIpcCloseMemHandle")
            }
            // SAFETY: no queued operation uses the memory (waited above; the
            // owner is dropping it, so every kernel argument has been launched).
            _ => unsafe { result::free_sync(self.addr) }.op("cuMemFree"),
        }
    }
}

impl Drop for RawMemory {
    fn drop(&mut self) {
        // Never panics: a failure (say, a context poisoned by a faulting kernel)
        // leaks the memory instead and is reported to the context, as cudarc does.
        let result = self.release();
        crate::error::record_in(&self.state.ctx, result);
    }
}
