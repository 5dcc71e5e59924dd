//! How each kind of memory is allocated and freed, once for the whole crate:
//! device (`cuMemAlloc`), pitched (`cuMemAllocPitch`), pinned (through
//! `pinned_pages`), managed (`cuMemAllocManaged`) and stream-ordered
//! (`cuMemAllocAsync`) (and the free of memory `ipc` imported), and [`AllocKind`], the record of how an allocation
//! was made, which decides how it is freed. The typed buffers (through
//! `memory::RawMemory`) and the allocators (`alloc`) both allocate here.
//!
//! Every function takes a nonzero size: zero-byte allocations make no driver
//! call, and their callers never get here.

use std::ffi::c_void;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::pinned_cache::{self, Block};
use crate::memory::pinned_pages::{PinnedFlags, PinnedPages};
use crate::memory::pool::MemPool;
use crate::memory::vmm::Reservation;

/// How an allocation was made, which decides how it is freed and whether the
/// host may touch it.
pub(crate) enum AllocKind {
    /// `cuMemAlloc` / `cuMemAllocPitch`.
    Device,
    /// Page-locked host memory, device-accessible through UVA (see
    /// `pinned_pages`); `None` once freed, or for zero bytes.
    Pinned(Option<PinnedPages>),
    /// A block of the context's pinned cache (`pinned_cache`), given back
    /// to it (event-guarded) rather than freed; `None` once given back.
    CachedPinned(Option<Block>),
    /// `cuMemAllocManaged` with global attachment.
    Unified,
    /// `cuMemAllocAsync` / `cuMemAllocFromPoolAsync`; freed stream-ordered.
    /// Holds the pool (if any) so that it outlives its allocations.
    Pool(#[allow(dead_code)] Option<MemPool>),
    /// An address range with physical chunks mapped at its start
    /// (`cuMemAddressReserve` + `cuMemCreate` / `cuMemMap`): a
    /// [`DeviceVec`](crate::DeviceVec). `bytes` is the mapped prefix.
    Mapped(Reservation),
    /// Memory another process exported (see `ipc`). `pool` is `None` for
    /// `cuIpcOpenMemHandle` (closed with `cuIpcCloseMemHandle`) and the
    /// imported pool of a pointer from `cuMemPoolImportPointer` (freed with
    /// `cuMemFree`), held so that it outlives the pointer.
    #[cfg(target_os = "linux")]
    Imported {
        #[allow(dead_code)]
        pool: Option<MemPool>,
        exporter: crate::memory::exporter::Exporter,
    },
}

/// `cuMemAlloc` of `bytes > 0` bytes in `state`'s context (contents
/// unspecified); returns the device address.
pub(crate) fn device(state: &ContextState, bytes: usize) -> Result<u64> {
    state.bind()?;
    // SAFETY: the context is current; the memory is only handed out as
    // `DeviceCopy` values or device addresses, for which any bytes are valid.
    unsafe { result::malloc_sync(bytes) }
        .map_err(|e| Error::driver_sized("cuMemAlloc", e, bytes, "device"))
}

/// `cuMemAllocPitch`: `height > 0` rows of at least `row_bytes > 0` bytes;
/// returns the address and the pitch. `element_size_hint` is 4, 8 or 16.
pub(crate) fn pitched(
    state: &ContextState,
    row_bytes: usize,
    height: usize,
    element_size_hint: u32,
) -> Result<(u64, usize)> {
    let requested = row_bytes.checked_mul(height).ok_or(Error::SizeOverflow {
        what: "width * height * size_of::<T>()",
    })?;
    state.bind()?;
    let mut addr = MaybeUninit::uninit();
    let mut pitch = 0usize;
    // SAFETY: valid out-pointers; the context is current; the element size
    // hint is 4, 8 or 16 (the caller's promise).
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
    Ok((unsafe { addr.assume_init() }, pitch))
}

/// `bytes > 0` zeroed bytes of page-locked host memory and the address the
/// device uses for them (see [`device_address`]).
pub(crate) fn pinned(
    state: &ContextState,
    bytes: usize,
    flags: PinnedFlags,
) -> Result<(PinnedPages, u64)> {
    let pages = PinnedPages::new(state, bytes, flags)?;
    match device_address(&pages, flags) {
        Ok(addr) => Ok((pages, addr)),
        Err(e) => {
            // Never handed out.
            let _ = pages.free();
            Err(e)
        }
    }
}

/// A block of at least `bytes > 0` bytes of page-locked host memory from
/// `state`'s pinned cache (`flags` are cacheable), and the address the
/// device uses for it. Its contents are zero only if it
/// [is fresh](Block::is_fresh).
pub(crate) fn pinned_cached(
    state: &ContextState,
    bytes: usize,
    flags: PinnedFlags,
) -> Result<(Block, u64)> {
    let block = pinned_cache::take(state, bytes, flags)?;
    match device_address(block.pages(), flags) {
        Ok(addr) => Ok((block, addr)),
        Err(e) => {
            pinned_cache::give_back(state, block, None)?;
            Err(e)
        }
    }
}

/// The address the device uses for `pages`: the mapped device pointer with
/// [`PinnedFlags::device_map`], else the registered host address, which
/// unified addressing makes a device address too.
fn device_address(pages: &PinnedPages, flags: PinnedFlags) -> Result<u64> {
    if !flags.device_map {
        return Ok(pages.dma() as u64);
    }
    let mut dptr = MaybeUninit::uninit();
    // SAFETY: `pages.dma()` was registered (or allocated) with DEVICEMAP in
    // the current context.
    unsafe {
        sys::cuMemHostGetDevicePointer_v2(dptr.as_mut_ptr(), pages.dma().cast::<c_void>(), 0)
            .result()
    }
    .map_err(|e| Error::driver("cuMemHostGetDevicePointer", e))?;
    // SAFETY: written by the successful call above.
    Ok(unsafe { dptr.assume_init() })
}

/// `cuMemAllocManaged` of `bytes > 0` bytes, attached globally (contents
/// unspecified: the caller zeroes them before anyone reads them).
/// `Err(NotSupported)` on a device whose managed memory the host may not
/// touch while kernels run.
pub(crate) fn managed(state: &ContextState, bytes: usize) -> Result<u64> {
    state.require_managed_memory()?;
    state.bind()?;
    // SAFETY: the context is current; the caller zeroes the memory before any read.
    unsafe { result::malloc_managed(bytes, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL) }
        .map_err(|e| Error::driver_sized("cuMemAllocManaged", e, bytes, "unified"))
}

/// Checks that a stream-ordered allocation can be made in `state`'s context
/// on `stream` from `pool` (the device's current pool when `None`).
#[inline]
pub(crate) fn check_pooled(
    state: &ContextState,
    stream: &CudaStream,
    pool: Option<&MemPool>,
) -> Result<()> {
    state.check_stream(stream)?;
    match pool {
        Some(pool) if pool.context_handle() != state.ctx.cu_ctx() as usize => {
            Err(Error::ContextMismatch("the memory pool"))
        }
        _ => Ok(()),
    }
}

/// Stream-ordered allocation of `bytes > 0` bytes on `stream` (checked with
/// [`check_pooled`]), from `pool` or the device's current pool, whose release
/// threshold is raised the first time (see `pool`). The memory may be used
/// only by work ordered after `stream`'s current position.
#[inline]
pub(crate) fn pooled(
    state: &ContextState,
    bytes: usize,
    stream: &CudaStream,
    pool: Option<&MemPool>,
) -> Result<u64> {
    if !state.ctx.has_async_alloc() {
        return Err(Error::NotSupported(
            "stream-ordered allocation (memory pools) is not supported by this device or \
             driver; use a DeviceBuffer instead",
        ));
    }
    if pool.is_none() {
        crate::memory::pool::prepare_default_pool(state)?;
    }
    // No context bind: stream-ordered calls act in the stream's context
    // (seen on driver 580 with no context current at all), and the bind's
    // `cuCtxGetCurrent` was a tenth of this call's cost over the raw one.
    // The driver's call itself rather than cudarc's `result::malloc_async`
    // (the same call and check, which is not inlined across crates).
    // SAFETY: the stream belongs to the context (checked by the caller); the
    // caller orders every use after this allocation; `addr` is read only
    // once the call has succeeded, which wrote it.
    unsafe {
        match pool {
            Some(p) => result::mem_pool::alloc_async(p.handle(), bytes, stream.cu_stream()),
            None => {
                let mut addr = MaybeUninit::uninit();
                sys::cuMemAllocAsync(addr.as_mut_ptr(), bytes, stream.cu_stream())
                    .result()
                    .map(|()| addr.assume_init())
            }
        }
    }
    .map_err(|e| Error::driver_sized("cuMemAllocAsync", e, bytes, "stream-ordered pool"))
}

/// `cuMemFree` of device, pitched or managed memory.
///
/// # Safety
/// `addr` comes from [`device`], [`pitched`] or [`managed`] in `state`'s
/// context and is not freed yet; no queued or running work uses it, and
/// nothing uses it afterwards.
pub(crate) unsafe fn free_device(state: &ContextState, addr: u64) -> Result<()> {
    state.bind()?;
    // SAFETY: the caller's promise.
    unsafe { result::free_sync(addr) }.op("cuMemFree")
}

/// `cuMemFreeAsync` of a stream-ordered allocation on `stream`.
///
/// # Safety
/// `addr` comes from [`pooled`] and is not freed yet; `stream` belongs to
/// the allocation's context and is ordered after every use of the memory;
/// nothing uses it afterwards.
#[inline]
pub(crate) unsafe fn free_on_stream(addr: u64, stream: &CudaStream) -> Result<()> {
    // No bind: a stream-ordered call acts in the stream's context (see
    // `pooled`). The driver's call itself, as cudarc's `result::free_async`
    // makes it (which is not inlined across crates).
    // SAFETY: the caller's promise.
    unsafe { sys::cuMemFreeAsync(addr, stream.cu_stream()) }
        .result()
        .op("cuMemFreeAsync")
}

/// Frees an allocation of kind `kind` at `addr` now (a pool allocation on
/// the context's default stream); a pinned block is taken out of `kind`, so
/// a second call frees nothing.
///
/// # Safety
/// `addr` and `kind` describe one live allocation of `state`'s context, made
/// here; no queued or running work uses it (the caller waited), and nothing
/// uses it afterwards.
pub(crate) unsafe fn free_now(state: &ContextState, kind: &mut AllocKind, addr: u64) -> Result<()> {
    match kind {
        AllocKind::Pinned(pages) => {
            state.bind()?;
            pages.take().map_or(Ok(()), PinnedPages::free)
        }
        // Nothing uses the block any more (the caller waited): no guard.
        AllocKind::CachedPinned(block) => block
            .take()
            .map_or(Ok(()), |b| pinned_cache::give_back(state, b, None)),
        AllocKind::Mapped(reservation) => {
            state.bind()?;
            reservation.release()
        }
        // SAFETY: the caller's promise.
        AllocKind::Device | AllocKind::Unified => unsafe { free_device(state, addr) },
        #[cfg(target_os = "linux")]
        AllocKind::Imported { pool: None, .. } => {
            state.bind()?;
            // SAFETY: the caller's promise: `addr` was opened by
            // `cuIpcOpenMemHandle` in this context and nothing uses it.
            unsafe { sys::cuIpcCloseMemHandle(addr).result() }.op("cuIpcCloseMemHandle")?;
            // Forgotten only once closed (as for pool imports below).
            crate::memory::open_imports::closed(state.ctx.cu_ctx() as usize, addr);
            Ok(())
        }
        // A pointer imported from a pool is freed like a pool allocation
        // (`cuMemFreeAsync`), and waited for: the exporter may free the
        // allocation once this returns.
        #[cfg(target_os = "linux")]
        AllocKind::Imported { pool: Some(_), .. } => {
            let stream: &Arc<CudaStream> = &state.default_stream;
            // SAFETY: the caller's promise; nothing is queued on the memory,
            // so any stream of the context is ordered after its uses.
            unsafe { free_on_stream(addr, stream) }?;
            stream.synchronize().op("cuStreamSynchronize")?;
            // Forgotten only once freed: an import of the same allocation
            // before this point is refused rather than handed this address.
            crate::memory::open_imports::closed(state.ctx.cu_ctx() as usize, addr);
            Ok(())
        }
        AllocKind::Pool(_) => {
            let stream: &Arc<CudaStream> = &state.default_stream;
            // SAFETY: the caller's promise; nothing is queued on the memory,
            // so any stream of the context is ordered after its uses.
            unsafe { free_on_stream(addr, stream) }
        }
    }
}
