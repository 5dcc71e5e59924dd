//! The public operations of every buffer kind, view, `PitchedBuffer` and `DeviceVec`, each
//! defined once: [`Memory`] (the read side) and [`MemoryMut`] (the write
//! side), whose provided methods run on the engine
//! ([`Elems`](crate::engine::Elems)), and the blanket [`AsView`] impl.
//! cudarc's `DeviceSlice` / `DevicePtr` / `DevicePtrMut` at the boundary are
//! `cudarc_boundary`'s.

use std::ops::RangeBounds;
use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::buffers::awaitable::{Download, Upload};
use crate::buffers::buffer::{Buffer, HostAccessible, MemoryKind};
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::pitched::PitchedBuffer;
use crate::copy::device_copy::DeviceCopy;
use crate::copy::device_ptr::DevicePtr;
use crate::engine::{AsView, Elems, KernelArg, View, ViewMut};
use crate::error::{Error, Result};
use crate::order::completion::Completion;
use crate::order::streams::AsStream;

/// The seal of [`Memory`]: only cuda-mem's types carry the engine.
pub(crate) mod sealed {
    /// Yields the engine descriptor of a buffer or view. Not nameable outside
    /// the crate, so [`Memory`](crate::Memory) cannot be implemented there.
    pub trait Engine<T> {
        /// The elements this value stands for.
        fn elems(&self) -> crate::engine::Elems<'_, T>;
    }
}

impl<T: DeviceCopy, K: MemoryKind> sealed::Engine<T> for Buffer<T, K> {
    fn elems(&self) -> Elems<'_, T> {
        Buffer::elems(self)
    }
}
impl<T: DeviceCopy> sealed::Engine<T> for View<'_, T> {
    fn elems(&self) -> Elems<'_, T> {
        self.elems
    }
}
impl<T: DeviceCopy> sealed::Engine<T> for ViewMut<'_, T> {
    fn elems(&self) -> Elems<'_, T> {
        self.elems
    }
}
impl<T: DeviceCopy> sealed::Engine<T> for PitchedBuffer<T> {
    fn elems(&self) -> Elems<'_, T> {
        PitchedBuffer::elems(self)
    }
}
impl<T: DeviceCopy> sealed::Engine<T> for DeviceVec<T> {
    fn elems(&self) -> Elems<'_, T> {
        DeviceVec::elems(self)
    }
}

impl<T: DeviceCopy, K: MemoryKind> Memory<T> for Buffer<T, K> {}
impl<T: DeviceCopy, K: MemoryKind> MemoryMut<T> for Buffer<T, K> {}
impl<T: DeviceCopy> Memory<T> for View<'_, T> {}
impl<T: DeviceCopy> Memory<T> for ViewMut<'_, T> {}
impl<T: DeviceCopy> MemoryMut<T> for ViewMut<'_, T> {}
impl<T: DeviceCopy> Memory<T> for PitchedBuffer<T> {}
impl<T: DeviceCopy> MemoryMut<T> for PitchedBuffer<T> {}
impl<T: DeviceCopy> Memory<T> for DeviceVec<T> {}
impl<T: DeviceCopy> MemoryMut<T> for DeviceVec<T> {}

impl<T: DeviceCopy, M: Memory<T>> AsView<T> for M {
    fn as_view(&self) -> View<'_, T> {
        View {
            elems: self.elems(),
        }
    }
}

fn view<T>(elems: Elems<'_, T>) -> View<'_, T> {
    View { elems }
}

fn view_mut<T>(elems: Elems<'_, T>) -> ViewMut<'_, T> {
    ViewMut {
        elems,
        _exclusive: std::marker::PhantomData,
    }
}

/// The read operations of every buffer kind ([`DeviceBuffer`](crate::DeviceBuffer),
/// [`PinnedBuffer`](crate::PinnedBuffer), [`UnifiedBuffer`](crate::UnifiedBuffer),
/// [`PoolBuffer`](crate::PoolBuffer)), [`PitchedBuffer`], [`View`] and
/// [`ViewMut`]: one definition each. Bring them into scope with
/// `use cuda_mem::prelude::*;`. Sealed: implemented by cuda-mem's types only.
///
/// Memory has a shape: `height()` rows of `width()` elements, `pitch()` bytes
/// apart. A linear buffer or view is one row; a [`PitchedBuffer`] and its
/// regions have padded rows, which no operation ever reads or writes as
/// elements. Host data is packed row after row unless a method takes a host
/// pitch (`copy_to_host_2d`).
///
/// ```no_run
/// use cuda_mem::prelude::*;
///
/// fn checksum(data: &impl Memory<u32>) -> cuda_mem::Result<u64> {
///     Ok(data.to_vec()?.iter().map(|&v| u64::from(v)).sum())
/// }
/// let ctx = cuda_mem::context(0)?;
/// let linear = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4])?;
/// let image = cuda_mem::PitchedBuffer::from_slice(&ctx, &[1u32, 2, 3, 4], 2, 2)?;
/// assert_eq!(checksum(&linear)?, checksum(&image)?);
/// assert_eq!(checksum(&image.region(1..2, ..)?)?, 6);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait Memory<T: DeviceCopy>: sealed::Engine<T> {
    /// Number of elements (`width() * height()`).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// let n = x.len();
    /// # }
    /// ```
    fn len(&self) -> usize {
        self.elems().len()
    }

    /// Whether there are no elements.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// if x.is_empty() { return; }
    /// # }
    /// ```
    fn is_empty(&self) -> bool {
        self.elems().len() == 0
    }

    /// Size in bytes of the elements: `len() * size_of::<T>()` (without row
    /// padding; a pitched allocation is `pitch() * height()` bytes).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// assert_eq!(x.byte_size(), x.len() * 4);
    /// # }
    /// ```
    fn byte_size(&self) -> usize {
        self.elems().byte_size()
    }

    /// Elements per row: `len()` for linear memory (one row).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(image: &cuda_mem::PitchedBuffer<f32>) {
    /// let w = image.width();
    /// # }
    /// ```
    fn width(&self) -> usize {
        self.elems().shape.width
    }

    /// Number of rows: 1 for linear memory.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(image: &cuda_mem::PitchedBuffer<f32>) {
    /// let h = image.height();
    /// # }
    /// ```
    fn height(&self) -> usize {
        self.elems().shape.rows
    }

    /// Bytes from the start of one row to the start of the next: at least
    /// `width() * size_of::<T>()`, not necessarily a multiple of
    /// `size_of::<T>()`. Linear memory: its byte size; an empty
    /// [`PitchedBuffer`]: `width() * size_of::<T>()`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::PitchedBuffer<[f32; 3]>) {
    /// assert!(b.pitch() >= b.width() * 12);
    /// # }
    /// ```
    fn pitch(&self) -> usize {
        self.elems().shape.pitch
    }

    /// The device address of the first element, for use inside device
    /// structs (row `i` of 2D memory starts `i * pitch()` bytes after it).
    /// It stays valid while the memory lives; dereferencing it (in a kernel)
    /// is up to you.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// let p: cuda_mem::DevicePtr<u32> = x.as_device_ptr();
    /// # }
    /// ```
    fn as_device_ptr(&self) -> DevicePtr<T> {
        DevicePtr::from_addr(self.elems().addr())
    }

    /// The CUDA context the memory belongs to.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// let ctx = x.context().clone();
    /// # }
    /// ```
    fn context(&self) -> &Arc<CudaContext> {
        self.elems().context()
    }

    /// A shared view of the elements `range` (row-major), or
    /// `Err(OutOfRange)`. On 2D memory (several rows) the range must lie within one
    /// row or cover whole rows (else `Err(InvalidArgument)`; use
    /// [`region`](Self::region) for a rectangle).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// let middle = x.slice(1..3)?;
    /// # Ok(()) }
    /// ```
    fn slice(&self, range: impl RangeBounds<usize>) -> Result<View<'_, T>> {
        Ok(view(self.elems().sub(range)?))
    }

    /// Like [`slice`](Self::slice), with `None` for a range out of bounds.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) {
    /// assert!(x.get(x.len()..x.len() + 1).is_none());
    /// # }
    /// ```
    fn get(&self, range: impl RangeBounds<usize>) -> Option<View<'_, T>> {
        self.slice(range).ok()
    }

    /// A shared view of the rectangle of columns `cols` and rows `rows`, or
    /// `Err(OutOfRange)`. Linear memory is one row (`rows` is `..` or `0..1`).
    /// The view copies to and from any memory of the same shape, or any
    /// linear memory of `len()` elements (packed rows).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(image: &cuda_mem::PitchedBuffer<u8>) -> cuda_mem::Result<()> {
    /// let tile = image.region(16..48, 8..40)?; // 32 x 32
    /// let pixels: Vec<u8> = tile.to_vec()?;
    /// # Ok(()) }
    /// ```
    fn region(
        &self,
        cols: impl RangeBounds<usize>,
        rows: impl RangeBounds<usize>,
    ) -> Result<View<'_, T>> {
        Ok(view(self.elems().region(cols, rows)?))
    }

    /// The same memory seen as elements of another [`DeviceCopy`] type `U`
    /// (like `bytemuck::cast_slice`): for a struct of `f32`s handed to a
    /// library that knows only `f32` (NCCL, cuBLAS), or for bytes. Both types
    /// have no padding and accept every bit pattern, so the reinterpretation
    /// is always sound.
    ///
    /// `Err(InvalidArgument)` unless the byte size (of a row, for 2D
    /// memory) is a multiple of `size_of::<U>()` and the first element's
    /// address (and the pitch of 2D memory) is aligned for `U`. Both types
    /// must be `'static` (as in bytemuck), so a cast cannot turn a
    /// lifetime-tagged handle into one of another lifetime.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// let bytes = x.cast::<u8>()?;
    /// assert_eq!(bytes.len(), x.byte_size());
    /// # Ok(()) }
    /// ```
    ///
    /// `U` must be a type a buffer could hold, as for every other way to
    /// type memory: a zero-sized `U` (or one aligned to more than 256
    /// bytes) fails the build.
    ///
    /// ```compile_fail,E0080
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let x = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4)?;
    /// let nothing = x.cast::<[u32; 0]>()?; // error: zero-sized
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    fn cast<U: DeviceCopy + 'static>(&self) -> Result<View<'_, U>>
    where
        T: 'static,
    {
        Ok(view(self.elems().cast()?))
    }

    /// Copies every element into `dst`, packed row after row (lengths must
    /// match), and returns once the data is there. Large contiguous copies
    /// (1 MiB and up) into ordinary pageable memory are staged through a
    /// ring of pinned chunks on up to 12 persistent worker threads, faster
    /// than the driver's own pageable copy; the chunks are one block of the
    /// context's [`PinnedCache`](crate::PinnedCache), pinned by the first
    /// such copy (about 0.5 ms per MiB, at most 32 MiB) and reused by every
    /// later one.
    /// Padded rows go through one `cuMemcpy2D`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// let mut host = vec![0; x.len()];
    /// x.copy_to_host(&mut host)?;
    /// # Ok(()) }
    /// ```
    fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.elems().copy_to_host(dst, None)
    }

    /// Copies the rows into host memory whose rows are `dst_pitch` elements
    /// apart (at least `width()`, else `Err(InvalidArgument)`): row `i` goes
    /// to `dst[i * dst_pitch..][..width()]`, and the host elements between
    /// rows are left as they were. `dst` must hold at least
    /// `(height() - 1) * dst_pitch + width()` elements (else
    /// `Err(LengthMismatch)`). Returns once the data is there.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(tile: &cuda_mem::PitchedBuffer<u8>) -> cuda_mem::Result<()> {
    /// // Into the top-left corner of a 1920-wide host image.
    /// let mut frame = vec![0u8; 1920 * 1080];
    /// tile.copy_to_host_2d(&mut frame, 1920)?;
    /// # Ok(()) }
    /// ```
    fn copy_to_host_2d(&self, dst: &mut [T], dst_pitch: usize) -> Result<()> {
        self.elems().copy_to_host(dst, Some(dst_pitch))
    }

    /// Copies the elements into a new `Vec`, packed row after row.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// let v = x.to_vec()?;
    /// # Ok(()) }
    /// ```
    fn to_vec(&self) -> Result<Vec<T>> {
        self.elems().to_vec()
    }

    /// Queues a copy of every element into the host-accessible buffer `dst`
    /// (pinned or unified, of this context or another; lengths must match;
    /// rows packed) on `stream`. `dst`'s `as_slice` waits for it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
    /// let stream = ctx.new_stream()?;
    /// let mut host = cuda_mem::PinnedBuffer::new(ctx, x.len())?;
    /// x.copy_to_host_async(&mut host, &stream)?;
    /// let values = host.as_slice()?; // waits for the copy
    /// # Ok(()) }
    /// ```
    fn copy_to_host_async<H: HostAccessible>(
        &self,
        dst: &mut Buffer<T, H>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        dst.elems().copy_from(self.elems(), stream)
    }

    /// This memory as a kernel argument the kernel only reads, ordered on
    /// `stream` (see [`KernelArg`]): the first element's address (pass
    /// `pitch()` along for 2D memory).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let arg = x.kernel_arg(s)?;
    /// # Ok(()) }
    /// ```
    fn kernel_arg(&self, stream: &impl AsStream) -> Result<KernelArg<'_, T>> {
        let stream = crate::order::streams::cuda_stream(stream);
        Ok(KernelArg::new(self.elems().claim(stream)?))
    }

    /// A [`Completion`] of every operation queued on the allocation so far
    /// (kernels, async copies, fills, on any stream): `.await` it instead of
    /// [`synchronize`](Self::synchronize) to wait without blocking a
    /// thread. A kernel argument claimed and not launched yet is not waited
    /// for (its launch comes later).
    ///
    /// `Err(UnsupportedStream)` while a stream with a queued use is
    /// capturing a graph.
    ///
    /// ```no_run
    /// # async fn f(b: &mut cuda_mem::DeviceBuffer<u8>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// use cuda_mem::prelude::*;
    /// b.fill_async(1, s)?;
    /// b.completion()?.await?;
    /// # Ok(()) }
    /// ```
    fn completion(&self) -> Result<Completion> {
        self.elems().completion()
    }

    /// A [`Download`]: copies the elements (rows packed) into a pinned
    /// block on `stream` now, and resolves to a new `Vec` once the copy is
    /// done, without blocking a thread. The awaitable form of
    /// [`to_vec`](Self::to_vec) (which blocks) and of
    /// [`copy_to_host_async`](Self::copy_to_host_async) into a
    /// `PinnedBuffer` (which returns at once, with no future).
    ///
    /// ```no_run
    /// # async fn f(b: &cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// use cuda_mem::prelude::*;
    /// let values = b.download(s)?.await?;
    /// assert_eq!(values.len(), b.len());
    /// # Ok(()) }
    /// ```
    fn download(&self, stream: &impl AsStream) -> Result<Download<T>> {
        let stream = crate::order::streams::cuda_stream(stream);
        Download::start(self.context(), self.len(), stream, |staging| {
            self.copy_to_host_async(staging, stream)
        })
    }

    /// Waits for every queued operation on the allocation (kernels, async
    /// copies, fills).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceBuffer<u8>) -> cuda_mem::Result<()> {
    /// b.synchronize()?;
    /// # Ok(()) }
    /// ```
    fn synchronize(&self) -> Result<()> {
        self.elems().synchronize()
    }
}

/// The write operations of every buffer kind, [`PitchedBuffer`] and
/// [`ViewMut`]: one definition each, on top of [`Memory`]. On 2D memory
/// they touch only the elements of each row, never the padding or anything
/// outside a region. Bring them into scope with `use cuda_mem::prelude::*;`.
/// Sealed.
///
/// ```no_run
/// use cuda_mem::prelude::*;
///
/// fn reset(data: &mut impl MemoryMut<f32>) -> cuda_mem::Result<()> {
///     data.fill(1.0)
/// }
/// let ctx = cuda_mem::context(0)?;
/// let mut image = cuda_mem::PitchedBuffer::<f32>::new(&ctx, 640, 480)?;
/// reset(&mut image)?;
/// reset(&mut image.region_mut(100..200, 50..60)?)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait MemoryMut<T: DeviceCopy>: Memory<T> {
    /// Sets every byte of every element to `byte` (`cuMemsetD8`, or
    /// `cuMemsetD2D8` over padded rows), on the context's default stream:
    /// later operations through cuda-mem are ordered after it and host
    /// access waits for it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// x.memset(0)?;
    /// # Ok(()) }
    /// ```
    fn memset(&mut self, byte: u8) -> Result<()> {
        let e = self.elems();
        e.memset(byte, e.default_stream())
    }

    /// Like [`memset`](Self::memset), queued on `stream`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// x.memset_async(0xff, s)?;
    /// # Ok(()) }
    /// ```
    #[inline]
    fn memset_async(&mut self, byte: u8, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.elems().memset(byte, stream)
    }

    /// Sets every element to `value`, at memory bandwidth for every element
    /// size (a driver memset when the value's bytes repeat with period 1, 2
    /// or 4, else cuda-mem's fill kernels; padded rows row by row over their
    /// elements only), on the context's default stream.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, v: u32) -> cuda_mem::Result<()> {
    /// x.fill(v)?;
    /// # Ok(()) }
    /// ```
    fn fill(&mut self, value: T) -> Result<()> {
        let e = self.elems();
        e.fill(&value, e.default_stream())
    }

    /// Like [`fill`](Self::fill), queued on `stream`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, v: u32, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// x.fill_async(v, s)?;
    /// # Ok(()) }
    /// ```
    #[inline]
    fn fill_async(&mut self, value: T, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.elems().fill(&value, stream)
    }

    /// Copies `src`, packed row after row, in (lengths must match); returns
    /// once `src` may be reused (as with `cuMemcpyHtoD`, the last part of
    /// the transfer may still be on its way: every later operation on the
    /// memory, host access included, comes after it). Large contiguous
    /// copies (2 MiB and up) from ordinary pageable memory are staged
    /// through a ring of pinned chunks on up to 12 persistent worker
    /// threads, several times faster than the driver's own pageable copy
    /// from 16 MiB (up to the copy engine's 55 GB/s); the chunks are one
    /// block of the context's [`PinnedCache`](crate::PinnedCache), pinned by
    /// the first such copy and reused by every later one (it goes back to
    /// the cache guarded by an event behind the copy's last DMA). Padded
    /// rows go through one `cuMemcpy2D`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, data: &[u32]) -> cuda_mem::Result<()> {
    /// x.copy_from_host(data)?;
    /// # Ok(()) }
    /// ```
    fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        self.elems().copy_from_host(src, None)
    }

    /// Copies rows in from host memory whose rows are `src_pitch` elements
    /// apart (at least `width()`, else `Err(InvalidArgument)`): row `i`
    /// comes from `src[i * src_pitch..][..width()]`. `src` must hold at
    /// least `(height() - 1) * src_pitch + width()` elements (else
    /// `Err(LengthMismatch)`). Returns once `src` may be reused.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(tile: &mut cuda_mem::PitchedBuffer<u8>, frame: &[u8]) -> cuda_mem::Result<()> {
    /// // The top-left corner of a 1920-wide host image.
    /// tile.copy_from_host_2d(frame, 1920)?;
    /// # Ok(()) }
    /// ```
    fn copy_from_host_2d(&mut self, src: &[T], src_pitch: usize) -> Result<()> {
        self.elems().copy_from_host(src, Some(src_pitch))
    }

    /// Queues a copy from the host-accessible buffer `src` (pinned or
    /// unified; lengths must match; rows packed) on `stream`. `src` cannot
    /// be changed from the host until the copy is done (`as_mut_slice`
    /// waits).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
    /// let stream = ctx.new_stream()?;
    /// let host = cuda_mem::PinnedBuffer::<u32>::new(ctx, x.len())?;
    /// x.copy_from_host_async(&host, &stream)?;
    /// # Ok(()) }
    /// ```
    fn copy_from_host_async<H: HostAccessible>(
        &mut self,
        src: &Buffer<T, H>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.elems().copy_from(src.elems(), stream)
    }

    /// An [`Upload`]: copies `data` into a pinned block (on this thread),
    /// queues its copy into `self` on `stream`, and resolves to `data`,
    /// handed back for reuse, once the copy is done, without blocking a
    /// thread. The awaitable form of
    /// [`copy_from_host`](Self::copy_from_host) (which blocks) and of
    /// [`copy_from_host_async`](Self::copy_from_host_async) from a
    /// `PinnedBuffer`.
    ///
    /// `Err(LengthMismatch)` unless `data.len() == self.len()`.
    ///
    /// ```no_run
    /// # async fn f(b: &mut cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// use cuda_mem::prelude::*;
    /// let data = vec![0.5f32; b.len()];
    /// let data = b.upload(data, s)?.await?;
    /// # Ok(()) }
    /// ```
    fn upload(&mut self, data: Vec<T>, stream: &impl AsStream) -> Result<Upload<T>> {
        let stream = crate::order::streams::cuda_stream(stream);
        if data.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: data.len(),
            });
        }
        let ctx = self.context().clone();
        Upload::start(&ctx, data, stream, |staging| {
            self.copy_from_host_async(staging, stream)
        })
    }

    /// Copies from any buffer kind, pitched buffer or view (lengths must
    /// match; two sides of several rows must have the same width and height, and
    /// a linear side is read as packed rows), on the context's default
    /// stream. The source may belong to another context or device: that is
    /// a peer copy (`cuMemcpyPeerAsync`, or `cuMemcpy3DPeerAsync` for padded
    /// rows, between device memory), which enables peer access the first
    /// time two devices exchange data; see [`peer_path`](crate::peer_path).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, y: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// x.copy_from(y)?;
    /// # Ok(()) }
    /// ```
    fn copy_from(&mut self, src: &impl AsView<T>) -> Result<()> {
        let e = self.elems();
        e.copy_from(src.as_view().elems, e.default_stream())
    }

    /// Like [`copy_from`](Self::copy_from), queued on `stream`. For a copy
    /// between two contexts, `stream` may belong to either (else
    /// `Err(ContextMismatch)`); work on both sides is ordered around it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, y: &cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// x.copy_from_async(y, s)?;
    /// # Ok(()) }
    /// ```
    fn copy_from_async(&mut self, src: &impl AsView<T>, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.elems().copy_from(src.as_view().elems, stream)
    }

    /// An exclusive view of the elements `range` (row-major), or
    /// `Err(OutOfRange)`; on 2D memory within one row or of whole
    /// rows (see [`slice`](Memory::slice)).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, v: u32) -> cuda_mem::Result<()> {
    /// x.slice_mut(1..3)?.fill(v)?;
    /// # Ok(()) }
    /// ```
    fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<ViewMut<'_, T>> {
        Ok(view_mut(self.elems().sub(range)?))
    }

    /// Like [`slice_mut`](Self::slice_mut), with `None` for a range out of bounds.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>) {
    /// assert!(x.get_mut(..0).is_some());
    /// # }
    /// ```
    fn get_mut(&mut self, range: impl RangeBounds<usize>) -> Option<ViewMut<'_, T>> {
        self.slice_mut(range).ok()
    }

    /// An exclusive view of the rectangle of columns `cols` and rows `rows`
    /// (see [`region`](Memory::region)): fill, memset and copies into it
    /// touch nothing outside it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(image: &mut cuda_mem::PitchedBuffer<u8>) -> cuda_mem::Result<()> {
    /// image.region_mut(16..48, 8..40)?.fill(255)?;
    /// # Ok(()) }
    /// ```
    fn region_mut(
        &mut self,
        cols: impl RangeBounds<usize>,
        rows: impl RangeBounds<usize>,
    ) -> Result<ViewMut<'_, T>> {
        Ok(view_mut(self.elems().region(cols, rows)?))
    }

    /// Like [`cast`](Memory::cast), as an exclusive view that can be written:
    /// every write leaves valid `T`s behind.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// x.cast_mut::<u8>()?.memset(0)?;
    /// # Ok(()) }
    /// ```
    fn cast_mut<U: DeviceCopy + 'static>(&mut self) -> Result<ViewMut<'_, U>>
    where
        T: 'static,
    {
        Ok(view_mut(self.elems().cast()?))
    }

    /// Splits into two exclusive views at element `mid` (on 2D
    /// memory, both halves must be slices [`slice_mut`](Self::slice_mut)
    /// accepts).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// let (mut a, b) = x.split_at_mut(1)?;
    /// # Ok(()) }
    /// ```
    fn split_at_mut(&mut self, mid: usize) -> Result<(ViewMut<'_, T>, ViewMut<'_, T>)> {
        let e = self.elems();
        let (a, b) = (e.sub(..mid)?, e.sub(mid..)?);
        Ok((view_mut(a), view_mut(b)))
    }

    /// This memory as a kernel argument the kernel may write, ordered on
    /// `stream` (see [`KernelArg`]): the first element's address (pass
    /// `pitch()` along for 2D memory).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(x: &mut cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let out = x.kernel_arg_mut(s)?;
    /// # Ok(()) }
    /// ```
    fn kernel_arg_mut(&mut self, stream: &impl AsStream) -> Result<KernelArg<'_, T>> {
        let stream = crate::order::streams::cuda_stream(stream);
        Ok(KernelArg::new(self.elems().claim(stream)?))
    }
}
