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
use crate::pool::MemPool;

/// How an allocation was made, which decides how it is freed and whether the
/// host may touch it.
pub(crate) enum AllocKind {
    /// `cuMemAlloc` / `cuMemAllocPitch`.
    Device,
    /// `cuMemHostAlloc`: page-locked host memory, device-accessible through UVA.
    Pinned,
    /// `cuMemAllocManaged` with global attachment.
    Unified,
    /// `cuMemAllocAsync` / `cuMemAllocFromPoolAsync`; freed stream-ordered.
    /// Holds the pool (if any) so that it outlives its allocations.
    Pool(#[allow(dead_code)] Option<MemPool>),
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
    fn bits(self) -> u32 {
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
}

/// `len * size` in bytes, or `Err(SizeOverflow)`.
pub(crate) fn byte_len(len: usize, size: usize) -> Result<usize> {
    len.checked_mul(size).ok_or(Error::SizeOverflow {
        what: "len * size_of::<T>()",
    })
}

/// Pinned allocations up to this size are zeroed by the CPU; larger ones by a
/// device memset, which is faster for them.
const PINNED_HOST_ZEROED_MAX: usize = 64 << 10;

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

    /// `cuMemHostAlloc`, zeroed.
    pub(crate) fn pinned(
        state: Arc<ContextState>,
        bytes: usize,
        flags: PinnedFlags,
    ) -> Result<Self> {
        if bytes == 0 {
            return Ok(Self::empty(state, AllocKind::Pinned));
        }
        state.bind()?;
        // SAFETY: the context is current; we zero the memory before anyone reads it.
        let host = unsafe { result::malloc_host(bytes, flags.bits()) }
            .map_err(|e| Error::driver_sized("cuMemHostAlloc", e, bytes, "pinned host"))?
            .cast::<u8>();
        let addr = if flags.device_map {
            let mut dptr = MaybeUninit::uninit();
            // SAFETY: `host` was allocated with DEVICEMAP in the current context.
            let r = unsafe {
                sys::cuMemHostGetDevicePointer_v2(dptr.as_mut_ptr(), host.cast::<c_void>(), 0)
                    .result()
            };
            if let Err(e) = r {
                // SAFETY: allocated above and not handed out.
                let _ = unsafe { result::free_host(host.cast()) };
                return Err(Error::driver("cuMemHostGetDevicePointer", e));
            }
            // SAFETY: written by the successful call above.
            unsafe { dptr.assume_init() }
        } else {
            host as u64
        };
        let mem = Self::new(
            state,
            addr,
            host,
            bytes,
            AllocKind::Pinned,
            StreamOrder::default(),
        );
        if bytes <= PINNED_HOST_ZEROED_MAX {
            // SAFETY: `host` is `bytes` bytes of pinned memory allocated above,
            // writable from the host and not yet visible to anyone else.
            unsafe { std::ptr::write_bytes(host, 0, bytes) };
        } else {
            mem.zero_on_device()?;
        }
        Ok(mem)
    }

    /// Zeroes the whole allocation with a device memset on the default stream.
    /// (Pinned allocations up to [`PINNED_HOST_ZEROED_MAX`] are zeroed by the
    /// CPU instead: then there is no GPU round trip for the first host access
    /// or the drop to wait for.)
    /// Host access waits for it (stream order), so nobody sees uninitialised
    /// memory; for pinned memory it is 5× faster than a CPU memset, and for
    /// managed memory it keeps the pages on the device.
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
        matches!(self.kind, AllocKind::Device | AllocKind::Pool(_))
    }

    /// Whether this is a stream-ordered (pool) allocation.
    pub(crate) fn is_pool(&self) -> bool {
        matches!(self.kind, AllocKind::Pool(_))
    }

    /// The host pointer, when the host may access this memory.
    pub(crate) fn host_ptr(&self) -> *mut u8 {
        self.host
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
        self.state.bind()?;
        // SAFETY: no queued operation uses the memory (waited above; the owner
        // is dropping it, so every kernel argument has been launched).
        unsafe {
            match self.kind {
                AllocKind::Pinned => result::free_host(self.host.cast()).op("cuMemFreeHost"),
                _ => result::free_sync(self.addr).op("cuMemFree"),
            }
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
