//! The allocator-API types: [`PinnedAllocator`] and [`UnifiedAllocator`] for
//! allocator-aware host code (`allocator_api2::alloc::Allocator`), and
//! [`CudaAllocator`] with its owned block [`DeviceAlloc`], a device byte
//! allocator that never yields a host reference. The memory itself comes from
//! `allocation`, like every buffer's.
//!
//! # Why device memory gets no `Allocator`
//!
//! Rust's allocator trait returns a `NonNull<[u8]>` that the caller may turn
//! into `&[u8]` / `&mut [u8]` and read or write at once: `Vec<T, A>`,
//! `Box<T, A>` and hashbrown all dereference what the allocator hands out, on
//! the host. A device address is not dereferenceable on the host (without
//! unified addressing of *host-reachable* memory, a load from it faults or
//! reads unrelated host memory), so an `Allocator` over `cuMemAlloc` memory
//! would let safe code produce a slice whose every access is undefined
//! behaviour. Pinned and managed memory *are* host-dereferenceable, so they
//! get the trait; device memory gets [`CudaAllocator`], which hands out
//! [`DevicePtr<u8>`] addresses (or an owning [`DeviceAlloc`]) that only
//! kernels and driver copies dereference.

use std::alloc::Layout;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::Arc;

use allocator_api2::alloc::{AllocError, Allocator};
use cudarc::driver::CudaContext;

use crate::context::ContextState;
use crate::copy::device_ptr::DevicePtr;
use crate::engine::{AsView, Elems, View, ViewMut};
use crate::error::{record_in, Error, Result};
use crate::memory::allocation;
use crate::memory::pinned_pages::{PinnedFlags, PinnedPages};
use crate::memory::raw::RawMemory;

/// The largest alignment [`PinnedAllocator`] serves: `cuMemHostAlloc` maps
/// whole pages, so its memory is page aligned (4096 bytes on every platform
/// CUDA supports). Each allocation is checked anyway; a misaligned one is
/// freed and reported as `AllocError`, never handed out.
pub const PINNED_MAX_ALIGN: usize = 4096;

/// The largest alignment [`UnifiedAllocator`] and [`CudaAllocator`] serve:
/// CUDA guarantees that memory from its allocation routines is aligned to at
/// least 256 bytes (CUDA C++ Programming Guide, "Device Memory Accesses").
pub const DEVICE_MAX_ALIGN: usize = 256;

/// What a layout asks of an allocator that guarantees `max_align`: `Ok(None)`
/// for a zero-size layout (no driver call), `Ok(Some(size))` for a real
/// allocation, `Err` for an alignment the allocator cannot promise.
fn host_request(layout: Layout, max_align: usize) -> Result<Option<usize>, AllocError> {
    if layout.size() == 0 {
        return Ok(None);
    }
    if layout.align() > max_align {
        return Err(AllocError);
    }
    Ok(Some(layout.size()))
}

/// A dangling, aligned, empty block for zero-size layouts.
fn dangling(layout: Layout) -> NonNull<[u8]> {
    let ptr = std::ptr::without_provenance_mut::<u8>(layout.align());
    // SAFETY: `align()` is a nonzero power of two, so the pointer is non-null.
    let ptr = unsafe { NonNull::new_unchecked(ptr) };
    NonNull::slice_from_raw_parts(ptr, 0)
}

/// Page-locked host memory for allocator-aware code:
/// `allocator_api2::vec::Vec<T, PinnedAllocator>`, `allocator_api2::boxed::Box`,
/// hashbrown maps. Data in it is copied to and from the device at full
/// bandwidth by the ordinary synchronous copies (`copy_from_host(&vec)`).
///
/// Every allocation is pinned on its own (on Linux: pages registered with
/// `cuMemHostRegister`, handed out through a second, unregistered mapping of
/// the same pages, so that cudarc's copies through a slice of it are
/// synchronous; not from [`PinnedCache`](crate::PinnedCache)). Pinning is
/// slow, milliseconds for large blocks: reserve capacity up front rather than
/// grow element by element. Blocks are zeroed before they are handed out.
/// Alignments up to [`PINNED_MAX_ALIGN`] are honoured; larger ones, and
/// driver failures, are `AllocError`. Zero-size layouts get a dangling
/// aligned pointer without a driver call. The allocator keeps its context
/// alive; clones share it and may free each other's blocks.
///
/// ```no_run
/// use allocator_api2::vec::Vec;
/// use cuda_mem::{DeviceBuffer, PinnedAllocator};
///
/// let ctx = cuda_mem::context(0)?;
/// let mut staging = Vec::with_capacity_in(1 << 20, PinnedAllocator::new(&ctx)?);
/// staging.extend((0..1u32 << 20).map(|i| i * 3));
/// let dev = DeviceBuffer::from_slice(&ctx, &staging)?; // pinned: a DMA copy
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[derive(Clone)]
pub struct PinnedAllocator {
    state: Arc<ContextState>,
    flags: PinnedFlags,
}

impl PinnedAllocator {
    /// An allocator of cached, page-locked memory of `ctx`'s context.
    ///
    /// ```no_run
    /// let alloc = cuda_mem::PinnedAllocator::new(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        Self::with_flags(ctx, PinnedFlags::default())
    }

    /// An allocator with host-allocation flags (portable, mapped).
    ///
    /// `Err(NotSupported)` for write-combined memory, and for any flags off
    /// Linux: that memory has no unregistered alias, so a copy that cudarc
    /// queues through a slice of the `Vec` would still run after cudarc
    /// returns, while the `Vec`'s host code (which never waits) reads and
    /// writes the same bytes. A [`PinnedBuffer`](crate::PinnedBuffer) takes
    /// any flags: its host access waits for such copies.
    ///
    /// ```no_run
    /// let flags = cuda_mem::PinnedFlags { portable: true, ..Default::default() };
    /// let alloc = cuda_mem::PinnedAllocator::with_flags(&cuda_mem::context(0)?, flags)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn with_flags(ctx: &Arc<CudaContext>, flags: PinnedFlags) -> Result<Self> {
        allocator_flags(flags)?;
        Ok(Self {
            state: ContextState::of(ctx)?,
            flags,
        })
    }

    /// The context the memory is allocated in.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(a: &cuda_mem::PinnedAllocator) {
    /// let ctx = a.context().clone();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.state.ctx
    }
}

/// `Err(NotSupported)` for pinned flags a [`PinnedAllocator`] cannot hand
/// out: memory without an unregistered host alias (see
/// [`PinnedAllocator::with_flags`]).
fn allocator_flags(flags: PinnedFlags) -> Result<()> {
    if flags.aliased() {
        Ok(())
    } else {
        Err(Error::NotSupported(
            "a PinnedAllocator of write-combined pinned memory (or of any pinned memory off \
             Linux): its blocks have no unregistered host alias, so cudarc's copies through a \
             slice of the Vec would run unordered with its host code; use a PinnedBuffer with \
             these flags, whose host access waits for them",
        ))
    }
}

/// Hands out a fresh host-accessible allocation `host` of `size` bytes for
/// `layout`: zeroed, or freed with `free` and `AllocError` when it is null or
/// misaligned for `layout`.
///
/// # Safety
/// `host` is null or a fresh allocation of `size` bytes, writable from the
/// host and not yet visible to anyone; `free` releases it.
unsafe fn hand_out(
    host: *mut u8,
    size: usize,
    layout: Layout,
    free: impl FnOnce(),
) -> Result<NonNull<[u8]>, AllocError> {
    let Some(ptr) = NonNull::new(host) else {
        return Err(AllocError);
    };
    if !(host as usize).is_multiple_of(layout.align()) {
        free();
        return Err(AllocError);
    }
    // SAFETY: `host` points to `size` freshly allocated writable bytes (the
    // caller's promise).
    unsafe { std::ptr::write_bytes(host, 0, size) };
    Ok(NonNull::slice_from_raw_parts(ptr, size))
}

// SAFETY: blocks are live, exclusively owned host memory of `layout.size()`
// bytes aligned to `layout.align()` (checked), zeroed, until `deallocate`;
// they stay valid while any clone lives (each holds the context); clones free
// them the same way (`PinnedPages::free`).
unsafe impl Allocator for PinnedAllocator {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let Some(size) = host_request(layout, PINNED_MAX_ALIGN)? else {
            return Ok(dangling(layout));
        };
        // Zeroed, and page aligned (`PINNED_MAX_ALIGN`); the host address is
        // the block's unregistered alias where there is one (`pinned_pages`).
        let pages = PinnedPages::new(&self.state, size, self.flags).map_err(|_| AllocError)?;
        if !(pages.host() as usize).is_multiple_of(layout.align()) {
            // Never handed out.
            let _ = pages.free();
            return Err(AllocError);
        }
        let host = NonNull::new(pages.into_host()).ok_or(AllocError)?;
        Ok(NonNull::slice_from_raw_parts(host, size))
    }

    fn allocate_zeroed(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        // Already zeroed.
        self.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        // SAFETY: the caller guarantees `ptr` came from `allocate` of this
        // allocator (or a clone), which handed it out with `into_host`, and is
        // no longer used.
        let pages = unsafe { PinnedPages::from_host(ptr.as_ptr()) };
        let result = (|| {
            if !pages.is_aliased() {
                // A copy cudarc queued through a slice of it may still run.
                crate::context::synchronize_all_contexts(&self.state)?;
            }
            self.state.bind()?;
            pages.free()
        })();
        record_in(&self.state.ctx, result);
    }
}

impl std::fmt::Debug for PinnedAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedAllocator")
            .field("flags", &self.flags)
            .finish_non_exhaustive()
    }
}

/// Managed memory (`cuMemAllocManaged`, global attachment) for allocator-aware
/// code: `allocator_api2::vec::Vec<T, UnifiedAllocator>` whose elements the
/// host reads and writes directly and a kernel can use through the same
/// address (`vec.as_ptr()`).
///
/// Every allocation is one `cuMemAllocManaged` call, zeroed (on the host)
/// before it is handed out, and freed with `cuMemFree`. Alignments up to
/// [`DEVICE_MAX_ALIGN`] (256) are honoured; larger ones, and driver
/// failures, are `AllocError`. Zero-size layouts get a dangling aligned
/// pointer without a driver call.
///
/// [`new`](Self::new) returns `Err(NotSupported)` on devices without managed
/// memory or without *concurrent* managed access (e.g. Windows, pre-Pascal
/// GPUs): there the host may not touch managed memory while any kernel runs,
/// which a `Vec` cannot know.
///
/// ```no_run
/// use allocator_api2::vec::Vec;
/// let ctx = cuda_mem::context(0)?;
/// let mut v = Vec::new_in(cuda_mem::UnifiedAllocator::new(&ctx)?);
/// v.extend_from_slice(&[1.0f32, 2.0, 3.0]);
/// let device_address = v.as_ptr() as u64; // valid on the device too
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[derive(Clone)]
pub struct UnifiedAllocator {
    state: Arc<ContextState>,
}

impl UnifiedAllocator {
    /// An allocator of managed memory of `ctx`'s context, or
    /// `Err(NotSupported)` (see the type's documentation).
    ///
    /// ```no_run
    /// let alloc = cuda_mem::UnifiedAllocator::new(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        state.require_managed_memory()?;
        Ok(Self { state })
    }

    /// The context the memory is allocated in.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(a: &cuda_mem::UnifiedAllocator) {
    /// let ctx = a.context().clone();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.state.ctx
    }
}

// SAFETY: blocks are live, exclusively owned, host-accessible memory (the
// device has concurrent managed access, checked in `new`) of `layout.size()`
// bytes aligned to `layout.align()` (checked), zeroed, until `deallocate`;
// valid while any clone lives (each holds the context).
unsafe impl Allocator for UnifiedAllocator {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        let Some(size) = host_request(layout, DEVICE_MAX_ALIGN)? else {
            return Ok(dangling(layout));
        };
        // Zeroed below before anyone reads it.
        let addr = allocation::managed(&self.state, size).map_err(|_| AllocError)?;
        let free = || {
            // SAFETY: allocated above and never handed out.
            let _ = unsafe { allocation::free_device(&self.state, addr) };
        };
        // SAFETY: managed memory is host-accessible at its own address (unified
        // addressing; concurrent managed access, so no kernel can forbid it):
        // `size` freshly allocated writable bytes; `free` is their free.
        unsafe { hand_out(addr as usize as *mut u8, size, layout, free) }
    }

    fn allocate_zeroed(&self, layout: Layout) -> Result<NonNull<[u8]>, AllocError> {
        // Already zeroed.
        self.allocate(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if layout.size() == 0 {
            return;
        }
        // A copy cudarc queued through a slice of it (managed memory is
        // device memory to the driver: the copy runs on after cudarc
        // returns) may still run; `cuMemFree`'s own synchronisation is not
        // the driver's promise for another context's queued work.
        let result = crate::context::synchronize_all_contexts(&self.state).and_then(|()| {
            // SAFETY: the caller guarantees `ptr` came from `allocate` of this
            // allocator or a clone (`allocation::managed`) and is no longer
            // used; every context's queued work is done (waited for above).
            unsafe { allocation::free_device(&self.state, ptr.as_ptr() as usize as u64) }
        });
        record_in(&self.state.ctx, result);
    }
}

impl std::fmt::Debug for UnifiedAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnifiedAllocator").finish_non_exhaustive()
    }
}

/// Checks a device allocation request: nonzero size, alignment at most 256.
fn device_request(layout: Layout) -> Result<usize> {
    if layout.size() == 0 {
        return Err(Error::InvalidArgument(
            "zero-size device allocation (a device address needs at least one byte)",
        ));
    }
    if layout.align() > DEVICE_MAX_ALIGN {
        return Err(Error::InvalidArgument(
            "device allocations are aligned to 256 bytes; a larger alignment was asked for",
        ));
    }
    Ok(layout.size())
}

/// A device memory byte allocator (`cuMemAlloc`), the counterpart of
/// cuda.zig's `CudaAllocator`: it hands out device *addresses*, never host
/// references.
///
/// # Why this is not an `Allocator`
///
/// Rust's allocator trait (`allocator_api2::alloc::Allocator`, and the
/// unstable `core::alloc::Allocator`) returns a `NonNull<[u8]>` that callers
/// may turn into `&[u8]` / `&mut [u8]` and dereference at once: `Vec<T, A>`,
/// `Box<T, A>` and hashbrown all read and write what the allocator hands
/// out, on the host. A `cuMemAlloc` address is not dereferenceable on the
/// host (a load from it faults, or reads unrelated host memory), so an
/// `Allocator` over device memory would let safe code build a slice whose
/// every access is undefined behaviour. Pinned and managed memory *are*
/// host-dereferenceable, so [`PinnedAllocator`] and [`UnifiedAllocator`]
/// implement the trait; device memory gets this allocator, whose blocks only
/// kernels and driver copies dereference.
///
/// Two interfaces:
/// - [`allocate`](Self::allocate) returns a [`DeviceAlloc`] that owns the
///   block and frees it on drop, after any queued work that uses it through
///   cuda-mem (its views and kernel arguments). Use this one.
/// - [`alloc`](Self::alloc) / [`dealloc`](Self::dealloc) are the raw pair
///   (like `std::alloc::alloc` / `dealloc`): the address leaks unless you
///   free it, and freeing is `unsafe`.
///
/// Alignments up to 256 bytes are honoured (what `cuMemAlloc` guarantees);
/// larger ones and zero-size layouts are `Err(InvalidArgument)`; a failed
/// allocation is `Err(OutOfMemory)` with the size asked for. Nothing panics.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// use std::alloc::Layout;
/// let ctx = cuda_mem::context(0)?;
/// let alloc = cuda_mem::CudaAllocator::new(&ctx)?;
/// let mut block = alloc.allocate(Layout::from_size_align(1000, 128).unwrap())?;
/// assert_eq!(block.as_device_ptr().addr() % 128, 0);
/// block.view_mut().memset(0)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[derive(Clone)]
pub struct CudaAllocator {
    state: Arc<ContextState>,
}

impl CudaAllocator {
    /// A device allocator for `ctx`'s context.
    ///
    /// ```no_run
    /// let alloc = cuda_mem::CudaAllocator::new(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        Ok(Self {
            state: ContextState::of(ctx)?,
        })
    }

    /// The context the memory is allocated in.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(a: &cuda_mem::CudaAllocator) {
    /// let ctx = a.context().clone();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.state.ctx
    }

    /// Allocates an owned block of `layout.size()` device bytes aligned to
    /// `layout.align()`, freed when the [`DeviceAlloc`] is dropped. Contents
    /// unspecified.
    ///
    /// ```no_run
    /// # fn f(a: &cuda_mem::CudaAllocator) -> cuda_mem::Result<()> {
    /// let block = a.allocate(std::alloc::Layout::new::<[f64; 64]>())?;
    /// # Ok(()) }
    /// ```
    pub fn allocate(&self, layout: Layout) -> Result<DeviceAlloc> {
        let size = device_request(layout)?;
        let mem = RawMemory::device(self.state.clone(), size)?;
        if !mem.addr.is_multiple_of(layout.align() as u64) {
            // Dropping `mem` frees it.
            return Err(Error::InvalidArgument(
                "cuMemAlloc returned memory below the requested alignment",
            ));
        }
        Ok(DeviceAlloc { mem, layout })
    }

    /// Allocates `layout.size()` device bytes aligned to `layout.align()` and
    /// returns their address. The block is never freed unless passed to
    /// [`dealloc`](Self::dealloc). Contents unspecified.
    ///
    /// ```no_run
    /// # fn f(a: &cuda_mem::CudaAllocator) -> cuda_mem::Result<()> {
    /// let layout = std::alloc::Layout::from_size_align(4096, 256).unwrap();
    /// let ptr = a.alloc(layout)?;
    /// // ... hand `ptr` to kernels ...
    /// unsafe { a.dealloc(ptr, layout)? };
    /// # Ok(()) }
    /// ```
    pub fn alloc(&self, layout: Layout) -> Result<DevicePtr<u8>> {
        let size = device_request(layout)?;
        // Only handed out as an address, never as a host reference.
        let addr = allocation::device(&self.state, size)?;
        if !addr.is_multiple_of(layout.align() as u64) {
            // SAFETY: allocated above and never handed out.
            let _ = unsafe { allocation::free_device(&self.state, addr) };
            return Err(Error::InvalidArgument(
                "cuMemAlloc returned memory below the requested alignment",
            ));
        }
        Ok(DevicePtr::from_addr(addr))
    }

    /// Frees a block from [`alloc`](Self::alloc) (`cuMemFree`).
    ///
    /// # Safety
    /// `ptr` must come from `alloc` of this allocator or a clone (the same
    /// context), with this `layout`, and not have been freed; no queued or
    /// running device work may still use it, and it must not be used after.
    ///
    /// ```no_run
    /// # fn f(a: &cuda_mem::CudaAllocator) -> cuda_mem::Result<()> {
    /// let layout = std::alloc::Layout::new::<u64>();
    /// let ptr = a.alloc(layout)?;
    /// unsafe { a.dealloc(ptr, layout)? };
    /// # Ok(()) }
    /// ```
    pub unsafe fn dealloc(&self, ptr: DevicePtr<u8>, layout: Layout) -> Result<()> {
        if layout.size() == 0 || ptr.is_null() {
            return Ok(());
        }
        // SAFETY: guaranteed by the caller (`alloc` allocates with `allocation::device`).
        unsafe { allocation::free_device(&self.state, ptr.addr()) }
    }
}

impl std::fmt::Debug for CudaAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CudaAllocator").finish_non_exhaustive()
    }
}

/// An owned block of device bytes from [`CudaAllocator::allocate`]; freed on
/// drop after every queued operation that used it through cuda-mem. It gives
/// no host reference: use [`view`](Self::view) / [`view_mut`](Self::view_mut)
/// for copies, memset, fill and kernel arguments, or
/// [`as_device_ptr`](Self::as_device_ptr) for the raw address.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let alloc = cuda_mem::CudaAllocator::new(&ctx)?;
/// let mut block = alloc.allocate(std::alloc::Layout::array::<u32>(256).unwrap())?;
/// block.view_mut().fill(0xab)?;
/// assert!(block.view().to_vec()?.iter().all(|&b| b == 0xab));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct DeviceAlloc {
    mem: RawMemory,
    layout: Layout,
}

impl DeviceAlloc {
    /// The device address of the first byte (aligned to `layout().align()`).
    /// Work you queue with it yourself is not tracked: prefer
    /// `view_mut().kernel_arg_mut(&stream)` so that the drop waits for it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceAlloc) {
    /// let addr = b.as_device_ptr().addr();
    /// # }
    /// ```
    pub fn as_device_ptr(&self) -> DevicePtr<u8> {
        DevicePtr::from_addr(self.mem.addr)
    }

    /// The layout the block was allocated with.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::DeviceAlloc) {
    /// let align = b.layout().align();
    /// # }
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Size in bytes (`layout().size()`, never 0).
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::DeviceAlloc) {
    /// assert_eq!(b.size(), b.layout().size());
    /// # }
    /// ```
    pub fn size(&self) -> usize {
        self.layout.size()
    }

    /// The context the block belongs to.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceAlloc) {
    /// let ctx = b.context().clone();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.mem.state.ctx
    }

    /// The bytes as a shared view (copies out, `to_vec`, kernel arguments).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceAlloc) -> cuda_mem::Result<()> {
    /// let bytes: Vec<u8> = b.view().to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn view(&self) -> View<'_, u8> {
        View {
            elems: Elems::whole(&self.mem, self.layout.size()),
        }
    }

    /// The bytes as an exclusive view (memset, fill, copies in, kernel arguments).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &mut cuda_mem::DeviceAlloc) -> cuda_mem::Result<()> {
    /// b.view_mut().memset(0)?;
    /// # Ok(()) }
    /// ```
    pub fn view_mut(&mut self) -> ViewMut<'_, u8> {
        ViewMut {
            elems: Elems::whole(&self.mem, self.layout.size()),
            _exclusive: PhantomData,
        }
    }

    /// Waits for every queued operation on the block.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceAlloc) -> cuda_mem::Result<()> {
    /// b.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.mem.order.wait(crate::order::Access::Shared)
    }
}

impl AsView<u8> for DeviceAlloc {
    fn as_view(&self) -> View<'_, u8> {
        self.view()
    }
}

impl std::fmt::Debug for DeviceAlloc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceAlloc")
            .field("addr", &format_args!("{:#x}", self.mem.addr))
            .field("size", &self.layout.size())
            .field("align", &self.layout.align())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    /// Every flag combination: the allocator takes exactly the ones whose
    /// blocks have an unregistered alias (cudarc's copies through them are
    /// synchronous), and says why for the others.
    #[test]
    fn the_allocator_takes_only_aliased_pinned_memory() {
        for bits in 0..8u8 {
            let flags = PinnedFlags {
                portable: bits & 1 != 0,
                device_map: bits & 2 != 0,
                write_combined: bits & 4 != 0,
            };
            let aliased = cfg!(target_os = "linux") && !flags.write_combined;
            match allocator_flags(flags) {
                Ok(()) => assert!(aliased, "{flags:?} has no alias"),
                Err(e) => {
                    assert!(!aliased, "{flags:?} refused");
                    let text = e.to_string();
                    assert!(
                        text.contains("write-combined") && text.contains("PinnedBuffer"),
                        "{text}"
                    );
                }
            }
        }
    }

    #[test]
    fn host_requests_honour_the_guaranteed_alignment() {
        assert_eq!(host_request(layout(0, 1), 256), Ok(None));
        assert_eq!(
            host_request(layout(0, 1 << 20), 256),
            Ok(None),
            "zero size: dangling, any alignment"
        );
        assert_eq!(host_request(layout(10, 256), 256), Ok(Some(10)));
        assert_eq!(host_request(layout(10, 512), 256), Err(AllocError));
        assert_eq!(
            host_request(layout(10, 4096), PINNED_MAX_ALIGN),
            Ok(Some(10))
        );
        assert_eq!(
            host_request(layout(10, 8192), PINNED_MAX_ALIGN),
            Err(AllocError)
        );
    }

    #[test]
    fn dangling_blocks_are_aligned_and_empty() {
        for shift in 0..16 {
            let l = layout(0, 1 << shift);
            let block = dangling(l);
            assert_eq!(block.len(), 0);
            assert_eq!(block.cast::<u8>().as_ptr() as usize % l.align(), 0);
        }
    }

    #[test]
    fn device_requests_reject_zero_size_and_large_alignment() {
        assert!(matches!(
            device_request(layout(0, 1)),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            device_request(layout(1, 512)),
            Err(Error::InvalidArgument(_))
        ));
        for shift in 0..=8 {
            assert_eq!(device_request(layout(3, 1 << shift)).unwrap(), 3);
        }
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<PinnedAllocator>();
        send_sync::<UnifiedAllocator>();
        send_sync::<CudaAllocator>();
        send_sync::<DeviceAlloc>();
        send_sync::<crate::buffers::pitched::PitchedBuffer<[f32; 3]>>();
    }
}
