//! [`Buffer<T, K>`]: one typed buffer type for every memory kind, with the
//! kind-specific parts (constructors, host access, prefetch and advice on
//! element ranges of managed memory, [`Location`], [`Advice`]) on each kind.

use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext, CudaStream};

use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::Elems;
use crate::error::{Error, Result};
use crate::memory::pinned_pages::PinnedFlags;
use crate::memory::pool::MemPool;
use crate::memory::raw::{byte_len, RawMemory};
use crate::order::Access;

mod sealed {
    pub trait Sealed {}
}

/// The kind of memory a [`Buffer`] holds: [`Device`], [`Pinned`],
/// [`Unified`] or [`Pool`]. Sealed.
///
/// ```
/// use cuda_mem::MemoryKind;
/// assert_eq!(cuda_mem::Pinned::NAME, "pinned host");
/// ```
pub trait MemoryKind: sealed::Sealed + 'static {
    /// A human-readable name of the kind.
    const NAME: &'static str;
}

/// Kinds whose memory the host may read and write ([`Pinned`], [`Unified`]);
/// they are the targets and sources of the asynchronous host copies.
///
/// ```
/// fn host_side<K: cuda_mem::HostAccessible>() {}
/// host_side::<cuda_mem::Pinned>();
/// ```
pub trait HostAccessible: MemoryKind {}

macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident = $name:literal;)*) => { $(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $kind;
        impl sealed::Sealed for $kind {}
        impl MemoryKind for $kind {
            const NAME: &'static str = $name;
        }
    )* };
}

kinds! {
    /// Device memory from `cuMemAlloc`: [`DeviceBuffer`].
    ///
    /// ```
    /// let _ = cuda_mem::Device;
    /// ```
    Device = "device";
    /// Page-locked host memory from `cuMemHostAlloc`: [`PinnedBuffer`].
    ///
    /// ```
    /// let _ = cuda_mem::Pinned;
    /// ```
    Pinned = "pinned host";
    /// Managed memory from `cuMemAllocManaged`: [`UnifiedBuffer`].
    ///
    /// ```
    /// let _ = cuda_mem::Unified;
    /// ```
    Unified = "unified";
    /// Stream-ordered memory from a pool (`cuMemAllocAsync`): [`PoolBuffer`].
    ///
    /// ```
    /// let _ = cuda_mem::Pool;
    /// ```
    Pool = "stream-ordered pool";
    /// Device memory another process exported, opened here (CUDA IPC):
    /// [`ImportedBuffer`](crate::ipc::ImportedBuffer).
    ///
    /// ```
    /// let _ = cuda_mem::Imported;
    /// ```
    Imported = "IPC-imported";
}
impl HostAccessible for Pinned {}
impl HostAccessible for Unified {}

/// `len` elements of `T` in memory of kind `K`. Use the aliases:
/// [`DeviceBuffer`], [`PinnedBuffer`], [`UnifiedBuffer`], [`PoolBuffer`].
///
/// All kinds share one implementation of every operation, the traits
/// [`Memory`](crate::Memory) and [`MemoryMut`](crate::MemoryMut) (`use
/// cuda_mem::prelude::*;`): `len`, `byte_size`, `memset`, `fill`, copies to
/// and from the host and between any two kinds (pitched buffers included),
/// views (`slice`, `slice_mut`), kernel arguments; and cudarc's `DevicePtr`
/// traits. Dropping a buffer frees it after every queued use (waiting for
/// it, or stream-ordered for pool memory; a pinned buffer's block goes back
/// to its [`PinnedCache`](crate::PinnedCache), guarded by an event behind
/// that use); `Drop` never panics.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::DeviceBuffer;
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
///
/// let ctx = cuda_mem::context(0)?;
/// let mut buf = DeviceBuffer::<Particle>::new(&ctx, 1000)?;
/// buf.fill(Particle { pos: [0.0, 1.0, 2.0], mass: 1.5 })?;
/// assert_eq!(buf.to_vec()?[999].mass, 1.5);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// # Borrow rules that keep asynchronous work sound
///
/// Queued work is tracked per allocation (host access and `Drop` wait for it),
/// and the borrow checker closes the remaining holes. Each rule below is a
/// compile-fail test.
///
/// Asynchronous host copies take a [`PinnedBuffer`] or [`UnifiedBuffer`],
/// never a plain slice, which could be freed or changed while the copy runs:
///
/// ```compile_fail,E0308
/// # use cuda_mem::prelude::*;
/// # fn f(dev: &mut cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// let host = vec![1.0f32; dev.len()];
/// dev.copy_from_host_async(&host, s)?; // expected `&Buffer<f32, _>`, found `&Vec<f32>`
/// # Ok(()) }
/// ```
///
/// No host slice of a pinned buffer outlives the queuing of a copy that
/// writes it (the slice would change under the reader)...
///
/// ```compile_fail,E0502
/// # use cuda_mem::prelude::*;
/// # fn f(dev: &cuda_mem::DeviceBuffer<f32>, pinned: &mut cuda_mem::PinnedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// let view = pinned.as_slice()?;
/// dev.copy_to_host_async(pinned, s)?; // `pinned` is borrowed by `view`
/// println!("{}", view[0]);
/// # Ok(()) }
/// ```
///
/// ...or reads it (the host could write while the DMA reads):
///
/// ```compile_fail,E0502
/// # use cuda_mem::prelude::*;
/// # fn f(dev: &mut cuda_mem::DeviceBuffer<f32>, pinned: &mut cuda_mem::PinnedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// let host = pinned.as_mut_slice()?;
/// dev.copy_from_host_async(pinned, s)?; // `pinned` is mutably borrowed by `host`
/// host[0] = 1.0;
/// # Ok(()) }
/// ```
///
/// After the copy is queued, `as_slice` / `as_mut_slice` wait for it, so the
/// host always sees finished data:
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// # fn f(dev: &cuda_mem::DeviceBuffer<f32>, pinned: &mut cuda_mem::PinnedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// dev.copy_to_host_async(pinned, s)?;
/// let done: &[f32] = pinned.as_slice()?; // waits for the copy
/// # let _ = done; Ok(()) }
/// ```
///
/// A view borrows its buffer, so the buffer cannot be freed under it:
///
/// ```compile_fail,E0505
/// # use cuda_mem::prelude::*;
/// # fn f(buf: cuda_mem::DeviceBuffer<f32>) -> cuda_mem::Result<()> {
/// let head = buf.slice(0..4)?;
/// drop(buf); // cannot move out of `buf` while `head` borrows it
/// head.to_vec()?;
/// # Ok(()) }
/// ```
///
/// Mutable views are exclusive (use `split_at_mut` for disjoint halves):
///
/// ```compile_fail,E0499
/// # use cuda_mem::prelude::*;
/// # fn f(buf: &mut cuda_mem::DeviceBuffer<f32>) -> cuda_mem::Result<()> {
/// let mut a = buf.slice_mut(0..4)?;
/// let mut b = buf.slice_mut(2..6)?; // second mutable borrow of `buf`
/// a.fill(1.0)?;
/// b.fill(2.0)?;
/// # Ok(()) }
/// ```
///
/// A kernel argument borrows the buffer for as long as it can be passed to a
/// launch:
///
/// ```compile_fail,E0505
/// # use cuda_mem::prelude::*;
/// # fn f(mut buf: cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// let arg = buf.kernel_arg_mut(s)?;
/// drop(buf); // cannot move out of `buf` while `arg` borrows it
/// let _still_used = arg;
/// # Ok(()) }
/// ```
///
/// A pool buffer freed on a stream is gone:
///
/// ```compile_fail,E0382
/// # use cuda_mem::prelude::*;
/// # fn f(buf: cuda_mem::PoolBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// buf.free_on_stream(s)?;
/// buf.to_vec()?; // use of moved value
/// # Ok(()) }
/// ```
///
/// Zero-sized element types are refused when the buffer type is used (a
/// buffer of them has no bytes to tell its elements apart, so host slices,
/// copies and `to_vec` would have to invent them):
///
/// ```compile_fail,E0080
/// # use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let markers = cuda_mem::PinnedBuffer::<std::marker::PhantomData<u32>>::new(&ctx, 10)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// And only [`DeviceCopy`] types go in (a `bool` read back from memory the GPU
/// wrote could hold any byte):
///
/// ```compile_fail,E0599
/// # use cuda_mem::prelude::*;
/// # fn f(ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// let flags = cuda_mem::DeviceBuffer::<bool>::new(ctx, 8)?; // `bool: DeviceCopy` is not satisfied
/// # Ok(()) }
/// ```
pub struct Buffer<T, K: MemoryKind> {
    mem: RawMemory,
    len: usize,
    _marker: PhantomData<(T, K)>,
}

/// Device memory (`cuMemAlloc`): the default home for data the GPU works on.
pub type DeviceBuffer<T> = Buffer<T, Device>;
/// Page-locked host memory (`cuMemHostAlloc`): fast, truly asynchronous
/// copies; the host reads and writes it through `as_slice` / `as_mut_slice`.
pub type PinnedBuffer<T> = Buffer<T, Pinned>;
/// Managed memory (`cuMemAllocManaged`): one address for host and device,
/// migrated on demand or by `prefetch_to_device` / `prefetch_to_host`.
pub type UnifiedBuffer<T> = Buffer<T, Unified>;
/// Stream-ordered pool memory (`cuMemAllocAsync`): allocation and free in
/// about a microsecond, ordered on a stream.
pub type PoolBuffer<T> = Buffer<T, Pool>;

impl<T: DeviceCopy, K: MemoryKind> Buffer<T, K> {
    pub(crate) fn from_raw(mem: RawMemory, len: usize) -> Self {
        Self {
            mem,
            len,
            _marker: PhantomData,
        }
    }

    /// The allocation, taken out of the buffer.
    pub(crate) fn into_raw(self) -> RawMemory {
        self.mem
    }

    pub(crate) fn elems(&self) -> Elems<'_, T> {
        Elems::whole(&self.mem, self.len)
    }
}

impl<T, K: MemoryKind> std::fmt::Debug for Buffer<T, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("kind", &K::NAME)
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("addr", &format_args!("{:#x}", self.mem.addr))
            .finish()
    }
}

fn state_of(ctx: &Arc<CudaContext>) -> Result<Arc<ContextState>> {
    ContextState::of(ctx)
}

impl<T: DeviceCopy> Buffer<T, Device> {
    /// Allocates `len` elements. The contents are unspecified (whatever bytes
    /// the memory held), which is sound because every bit pattern is a valid
    /// `T`; use [`zeroed`](Self::zeroed), [`fill`](crate::MemoryMut::fill) or
    /// [`from_slice`](Self::from_slice) for defined contents.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::DeviceBuffer::<f32>::new(&cuda_mem::context(0)?, 1 << 20)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::device(state_of(ctx)?, bytes)?,
            len,
        ))
    }

    /// Allocates `len` zeroed elements.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::DeviceBuffer::<u64>::zeroed(&cuda_mem::context(0)?, 16)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn zeroed(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let buf = Self::new(ctx, len)?;
        let e = buf.elems();
        e.memset(0, e.default_stream())?;
        Ok(buf)
    }

    /// Allocates a copy of `data`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::DeviceBuffer::from_slice(&cuda_mem::context(0)?, &[1.0f32, 2.0])?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        let buf = Self::new(ctx, data.len())?;
        buf.elems().copy_from_host(data, None)?;
        Ok(buf)
    }
}

impl<T: DeviceCopy> Buffer<T, Pinned> {
    /// Allocates `len` zeroed elements of pinned host memory (cached, not
    /// write-combined), from the context's [`PinnedCache`](crate::PinnedCache).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::<u8>::new(&cuda_mem::context(0)?, 4096)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        Self::with_flags(ctx, len, PinnedFlags::default())
    }

    /// Allocates `len` zeroed elements with the given [`PinnedFlags`], from
    /// the context's [`PinnedCache`](crate::PinnedCache) (write-combined
    /// memory is never cached).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::{PinnedBuffer, PinnedFlags};
    /// let flags = PinnedFlags { write_combined: true, ..Default::default() };
    /// let upload_only = PinnedBuffer::<f32>::with_flags(&cuda_mem::context(0)?, 1024, flags)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn with_flags(ctx: &Arc<CudaContext>, len: usize, flags: PinnedFlags) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, flags, true, true)?,
            len,
        ))
    }

    /// Allocates `len` elements from the context's
    /// [`PinnedCache`](crate::PinnedCache) without zeroing them: the
    /// contents are unspecified, as for [`DeviceBuffer::new`]. A freshly
    /// pinned block holds zeroes; a reused one holds the bytes its previous
    /// user left: a buffer's, or a chunk of a staged `Vec` copy of this
    /// context (never uninitialised memory, and every bit pattern is a
    /// valid `T`). Use it when every element is written before it is read
    /// (a download target, a buffer filled by the host): it skips the
    /// memset that [`new`](Self::new) does on a reused block (about 1 ms for
    /// 16 MiB), so an allocation and free of any size after warm-up costs
    /// a few microseconds.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(dev: &cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let mut download = cuda_mem::PinnedBuffer::<f32>::new_unspecified(dev.context(), dev.len())?;
    /// dev.copy_to_host_async(&mut download, s)?; // overwrites every element
    /// let first = download.as_slice()?[0];
    /// # Ok(()) }
    /// ```
    pub fn new_unspecified(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, PinnedFlags::default(), true, false)?,
            len,
        ))
    }

    /// Allocates `len` zeroed elements with `flags`, bypassing the
    /// [`PinnedCache`](crate::PinnedCache): the memory is pinned now
    /// (`cuMemHostRegister` / `cuMemHostAlloc`, milliseconds for large
    /// buffers) and unpinned and freed when the buffer is dropped, after
    /// its queued work. For memory that must not outlive the buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::{PinnedBuffer, PinnedFlags};
    /// let own = PinnedBuffer::<u8>::uncached(&cuda_mem::context(0)?, 1 << 20, PinnedFlags::default())?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn uncached(ctx: &Arc<CudaContext>, len: usize, flags: PinnedFlags) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, flags, false, true)?,
            len,
        ))
    }

    /// Allocates pinned memory (from the context's
    /// [`PinnedCache`](crate::PinnedCache)) holding a copy of `data`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::from_slice(&cuda_mem::context(0)?, &[1u16, 2, 3])?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        // Every element is overwritten: no memset first.
        let mut buf = Self::new_unspecified(ctx, data.len())?;
        buf.as_mut_slice()?.copy_from_slice(data);
        Ok(buf)
    }
}

impl<T: DeviceCopy> Buffer<T, Unified> {
    /// Allocates `len` zeroed elements of managed memory, attached globally.
    /// `Err(NotSupported)` on a device without managed memory.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::UnifiedBuffer::<f64>::new(&cuda_mem::context(0)?, 1000)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::unified(state_of(ctx)?, bytes)?,
            len,
        ))
    }

    /// Allocates managed memory holding a copy of `data`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::UnifiedBuffer::from_slice(&cuda_mem::context(0)?, &[1i32, -1])?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        let buf = Self::new(ctx, data.len())?;
        buf.elems().copy_from_host(data, None)?;
        Ok(buf)
    }

    /// Queues a migration of the elements in `range` to `to` (any device,
    /// or the host) on `stream` (`cuMemPrefetchAsync`). Like every operation
    /// on the buffer, it runs after the work queued on those elements before
    /// it and before the work queued after it; host access waits for it.
    /// Prefetching moves pages, never contents.
    ///
    /// `range` counts elements (`..`, `a..b`, `a..=b`, ...); one outside the
    /// buffer is `Err(OutOfRange)`. The driver migrates whole pages, so the
    /// pages around an unaligned range may move too. An ordinal that names
    /// no device is `Err(InvalidArgument)`; a device that cannot take managed
    /// memory (no concurrent managed access) is `Err(NotSupported)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::Location;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch(..b.len() / 2, Location::Device, s)?; // the first half to the GPU
    /// b.prefetch(b.len() / 2.., Location::Host, s)?; // the second half to the host
    /// b.prefetch(.., Location::DeviceOrdinal(1), s)?; // everything to GPU 1
    /// # Ok(()) }
    /// ```
    pub fn prefetch(
        &self,
        range: impl RangeBounds<usize>,
        to: Location,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let e = self.elems().sub(range)?;
        self.mem.state.check_stream(stream)?;
        let location = self.location(to)?;
        if e.byte_size() == 0 {
            return Ok(());
        }
        self.mem.order.run(e.span(), stream, || {
            self.mem.state.bind()?;
            // SAFETY: a range inside the live allocation (checked by `sub`);
            // prefetching moves pages, never changes contents.
            unsafe {
                result::mem_prefetch_async(e.addr(), e.byte_size(), location, stream.cu_stream())
            }
            .map_err(|err| {
                refused(
                    err,
                    "cuMemPrefetchAsync",
                    "prefetching managed memory to that device (it has no concurrent managed \
                     access); prefetch to Location::Device or Location::Host instead",
                )
            })
        })
    }

    /// Queues a migration of the whole buffer to its device's memory on
    /// `stream`: `prefetch(.., Location::Device, stream)`.
    /// `Err(NotSupported)` without concurrent managed access.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch_to_device(s)?;
    /// # Ok(()) }
    /// ```
    pub fn prefetch_to_device(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.prefetch(.., Location::Device, stream)
    }

    /// Queues a migration of the whole buffer to host memory on `stream`:
    /// `prefetch(.., Location::Host, stream)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch_to_host(s)?;
    /// # Ok(()) }
    /// ```
    pub fn prefetch_to_host(&self, stream: &Arc<CudaStream>) -> Result<()> {
        self.prefetch(.., Location::Host, stream)
    }

    /// Gives the driver a hint about how the whole buffer is used
    /// (`cuMemAdvise`): `advise_range(.., advice)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::Advice;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.advise(Advice::ReadMostly(true))?;
    /// b.advise(Advice::PreferredLocation(Some(cuda_mem::Location::Device)))?;
    /// # Ok(()) }
    /// ```
    pub fn advise(&self, advice: Advice) -> Result<()> {
        self.advise_range(.., advice)
    }

    /// Gives the driver a hint about how the elements in `range` are used
    /// (`cuMemAdvise`; it applies to the whole pages the range touches).
    /// Advice is not an operation on the stream order: it takes effect at
    /// once. `range` counts elements; one outside the buffer is
    /// `Err(OutOfRange)`; an ordinal that names no device is
    /// `Err(InvalidArgument)`, advice the device cannot take `Err(NotSupported)`.
    ///
    /// ```no_run
    /// use cuda_mem::{Advice, Location};
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.advise_range(..1024, Advice::ReadMostly(true))?;
    /// b.advise_range(1024.., Advice::PreferredLocation(Some(Location::Host)))?;
    /// # Ok(()) }
    /// ```
    pub fn advise_range(&self, range: impl RangeBounds<usize>, advice: Advice) -> Result<()> {
        use sys::CUmem_advise::*;
        let e = self.elems().sub(range)?;
        // The location of the advice that takes none (the driver ignores it).
        let device = self.location(Location::Device)?;
        let (advice, loc) = match advice {
            Advice::ReadMostly(true) => (CU_MEM_ADVISE_SET_READ_MOSTLY, device),
            Advice::ReadMostly(false) => (CU_MEM_ADVISE_UNSET_READ_MOSTLY, device),
            Advice::PreferredLocation(Some(l)) => {
                (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, self.location(l)?)
            }
            Advice::PreferredLocation(None) => (CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, device),
            Advice::AccessedBy(l, true) => (CU_MEM_ADVISE_SET_ACCESSED_BY, self.location(l)?),
            Advice::AccessedBy(l, false) => (CU_MEM_ADVISE_UNSET_ACCESSED_BY, self.location(l)?),
        };
        if e.byte_size() == 0 {
            return Ok(());
        }
        self.mem.state.bind()?;
        // SAFETY: a range inside the live allocation (checked by `sub`);
        // advice never changes contents.
        unsafe { result::mem_advise(e.addr(), e.byte_size(), advice, loc) }.map_err(|err| {
            refused(
                err,
                "cuMemAdvise",
                "this memory advice on this device (it needs concurrent managed access on the \
                 device it names); leave the advice out",
            )
        })
    }

    /// The driver's form of `to`, for this buffer.
    fn location(&self, to: Location) -> Result<sys::CUmemLocation> {
        use sys::CUmemLocationType::*;
        let (type_, id) = match to {
            Location::Device => (CU_MEM_LOCATION_TYPE_DEVICE, self.mem.state.ctx.ordinal()),
            Location::DeviceOrdinal(ordinal) => {
                if ordinal >= crate::context::device_count()? {
                    return Err(Error::InvalidArgument(
                        "Location::DeviceOrdinal names no device (it is not below \
                         cuda_mem::device_count()); use an ordinal of a visible device",
                    ));
                }
                (CU_MEM_LOCATION_TYPE_DEVICE, ordinal)
            }
            Location::Host => (CU_MEM_LOCATION_TYPE_HOST, 0),
        };
        Ok(sys::CUmemLocation {
            type_,
            id: i32::try_from(id).map_err(|_| {
                Error::InvalidArgument("a device ordinal above i32::MAX; use a visible device")
            })?,
        })
    }
}

/// The error of a managed-memory call `op` that failed with `err`: the
/// driver's refusal (`NOT_SUPPORTED`, `INVALID_DEVICE`) is `NotSupported`
/// with `refusal`, anything else the driver error.
fn refused(err: cudarc::driver::DriverError, op: &'static str, refusal: &'static str) -> Error {
    match err.0 {
        sys::CUresult::CUDA_ERROR_NOT_SUPPORTED | sys::CUresult::CUDA_ERROR_INVALID_DEVICE => {
            Error::NotSupported(refusal)
        }
        _ => Error::driver(op, err),
    }
}

/// Where managed memory should live or be moved: for
/// [`UnifiedBuffer::prefetch`] and [`Advice`].
///
/// ```
/// use cuda_mem::Location;
/// assert_ne!(Location::Device, Location::Host);
/// assert_ne!(Location::Device, Location::DeviceOrdinal(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The buffer's device (the device of its context).
    Device,
    /// Host memory.
    Host,
    /// The device with this ordinal (as in [`context`](crate::context())),
    /// which may be another than the buffer's.
    DeviceOrdinal(usize),
}

/// A usage hint for [`UnifiedBuffer::advise`] (CUDA 12/13 location form).
///
/// ```
/// use cuda_mem::{Advice, Location};
/// let hints = [Advice::ReadMostly(true), Advice::AccessedBy(Location::Host, true)];
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// Set (`true`) or clear read-mostly: the driver may keep read-only copies.
    ReadMostly(bool),
    /// Set (`Some`) or clear (`None`) the preferred location.
    PreferredLocation(Option<Location>),
    /// Set (`true`) or clear that this processor accesses the memory, so it stays mapped there.
    AccessedBy(Location, bool),
}

impl<T: DeviceCopy, K: HostAccessible> Buffer<T, K> {
    /// Waits for queued work that uses the buffer. When the host view is
    /// memory the driver copies asynchronously (managed memory; pinned
    /// memory without a host alias), also for every context: a copy cudarc
    /// queued through an earlier slice of it is in no allocation's order
    /// (see the crate docs, "Soundness").
    fn wait_for_host_access(&self, access: Access) -> Result<()> {
        self.mem.order.wait(access)?;
        if self.mem.host_view_is_registered() {
            crate::context::synchronize_all_contexts(&self.mem.state)?;
        }
        Ok(())
    }

    /// The elements, after waiting for every queued operation on the buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::from_slice(&cuda_mem::context(0)?, &[1u8, 2])?;
    /// assert_eq!(buf.as_slice()?, &[1, 2]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait_for_host_access(Access::Shared)?;
        let host = self.mem.host_ptr().cast::<T>();
        if self.len == 0 || size_of::<T>() == 0 || host.is_null() {
            return Ok(&[]);
        }
        // SAFETY: `host` points to `len` initialised (zeroed or copied-into)
        // elements of host-accessible memory, suitably aligned (page or 256-byte
        // aligned allocation, align_of::<T>() <= 256); no queued operation
        // touches it (waited above) and none can start while `&self` is
        // borrowed by the slice except reads.
        Ok(unsafe { std::slice::from_raw_parts(host, self.len) })
    }

    /// The elements, mutably, after waiting for every queued operation.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let mut buf = cuda_mem::PinnedBuffer::<u8>::new(&cuda_mem::context(0)?, 2)?;
    /// buf.as_mut_slice()?.copy_from_slice(&[3, 4]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait_for_host_access(Access::Exclusive)?;
        let host = self.mem.host_ptr().cast::<T>();
        if self.len == 0 || size_of::<T>() == 0 || host.is_null() {
            return Ok(&mut []);
        }
        // SAFETY: as in `as_slice`, and `&mut self` excludes every other access.
        Ok(unsafe { std::slice::from_raw_parts_mut(host, self.len) })
    }
}

impl<T: DeviceCopy> Buffer<T, Pool> {
    /// Allocates `len` elements from the device's current pool, ordered on
    /// `stream`. Contents unspecified (see [`DeviceBuffer::new`]).
    /// `Err(NotSupported)` without memory pools; never a silent fall-back.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = ctx.new_stream()?;
    /// let buf = cuda_mem::PoolBuffer::<f32>::new(1024, &stream)?;
    /// buf.free_on_stream(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(len: usize, stream: &Arc<CudaStream>) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        let state = state_of(stream.context())?;
        Ok(Self::from_raw(
            RawMemory::pooled(state, bytes, stream, None)?,
            len,
        ))
    }

    /// Allocates `len` elements from `pool`, ordered on `stream`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let pool = cuda_mem::MemPool::new(&ctx)?;
    /// let buf = cuda_mem::PoolBuffer::<u8>::from_pool(&pool, 64, &ctx.new_stream()?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_pool(pool: &MemPool, len: usize, stream: &Arc<CudaStream>) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        let state = state_of(stream.context())?;
        Ok(Self::from_raw(
            RawMemory::pooled(state, bytes, stream, Some(pool.clone()))?,
            len,
        ))
    }

    /// Frees the memory on `stream`, after every queued use (stream-ordered).
    /// Dropping the buffer does the same on the stream that used it last.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: cuda_mem::PoolBuffer<u8>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.free_on_stream(s)?;
    /// # Ok(()) }
    /// ```
    pub fn free_on_stream(self, stream: &Arc<CudaStream>) -> Result<()> {
        if crate::order::capture::is_recording(stream) {
            // Recorded, the free would be a free node of the graph: one of
            // memory that no graph allocated (which the driver requires),
            // run again at every launch.
            return Err(Error::UnsupportedStream(
                "it is recording a graph (Graph::capture), where a free would run at every \
                 launch; free the buffer on another stream",
            ));
        }
        self.mem.free_on_stream(stream)
    }
}
