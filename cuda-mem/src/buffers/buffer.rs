//! [`Buffer<T, K>`]: one typed buffer type for every memory kind, with the
//! kind-specific parts on each kind: here the kinds, the buffer and its
//! device and pool constructors; the kinds the host may touch (pinned and
//! managed memory: constructors, host access, prefetch and advice, with
//! [`Location`](crate::Location) and [`Advice`](crate::Advice)) are
//! `host_access`'s.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::Elems;
use crate::error::{Error, Result};
use crate::memory::pool::MemPool;
use crate::memory::raw::{byte_len, RawMemory};
use crate::order::streams::AsStream;

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
    pub(super) mem: RawMemory,
    pub(super) len: usize,
    pub(super) _marker: PhantomData<(T, K)>,
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
    #[inline]
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

#[inline]
pub(super) fn state_of(ctx: &Arc<CudaContext>) -> Result<Arc<ContextState>> {
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
    #[inline]
    pub fn new(len: usize, stream: &impl AsStream) -> Result<Self> {
        let stream = crate::order::streams::cuda_stream(stream);
        let bytes = byte_len::<T>(len)?;
        let allocation = RawMemory::pool_allocate(bytes, stream, None)?;
        Ok(Self::from_raw(RawMemory::pooled(allocation, None), len))
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
    pub fn from_pool(pool: &MemPool, len: usize, stream: &impl AsStream) -> Result<Self> {
        let stream = crate::order::streams::cuda_stream(stream);
        let bytes = byte_len::<T>(len)?;
        let allocation = RawMemory::pool_allocate(bytes, stream, Some(pool))?;
        Ok(Self::from_raw(
            RawMemory::pooled(allocation, Some(pool.clone())),
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
    #[inline]
    pub fn free_on_stream(mut self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        if crate::order::capture::is_recording(stream) {
            // Recorded, the free would be a free node of the graph: one of
            // memory that no graph allocated (which the driver requires),
            // run again at every launch.
            return Err(Error::UnsupportedStream(
                "it is recording a graph (Graph::capture), where a free would run at every \
                 launch; free the buffer on another stream",
            ));
        }
        // Freed in place, then dropped here (nothing more to free on success).
        self.mem.free_on_stream(stream)
    }
}
