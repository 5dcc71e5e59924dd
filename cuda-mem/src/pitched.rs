//! [`PitchedBuffer<T>`]: a 2D array of `T` in pitched device memory
//! (`cuMemAllocPitch`), with 2D copies (`cuMemcpy2D`), memset and a fill that
//! skips the padding at the end of each row.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::context::ContextState;
use crate::engine::{Elems, View, ViewMut};
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::RawMemory;
use crate::order::{Access, StreamOrder};
use crate::{fill, Buffer, DeviceCopy, DevicePtr, HostAccessible, KernelArg};

/// `height` rows of `width` elements of `T` in pitched device memory.
///
/// Each row starts `pitch()` bytes after the previous one; the driver chooses
/// the pitch (`cuMemAllocPitch`) so that rows are aligned for coalesced
/// access. The bytes between the end of a row's `width` elements and the
/// start of the next row are padding: no operation of this type ever exposes
/// them as `T`, and [`fill`](Self::fill), [`memset`](Self::memset) and the
/// copies leave them untouched. The pitch is in bytes and need not be a
/// multiple of `size_of::<T>()` (a 12-byte `T` works).
///
/// Host data is always *tightly packed*: `width * height` elements, row after
/// row.
///
/// ```no_run
/// use cuda_mem::{DeviceCopy, PitchedBuffer};
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
/// #[repr(C)]
/// struct P3 { x: f32, y: f32, z: f32 }
///
/// let ctx = cuda_mem::context(0)?;
/// let mut image = PitchedBuffer::<P3>::new(&ctx, 1000, 300)?;
/// assert!(image.pitch() >= 1000 * 12);
/// image.fill(P3 { x: 1.0, y: 2.0, z: 3.0 })?;
/// image.row_mut(7)?.fill(P3 { x: 0.0, y: 0.0, z: 7.0 })?;
/// let host = image.to_vec()?; // 1000 * 300 elements, no padding
/// assert_eq!(host[7 * 1000].z, 7.0);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct PitchedBuffer<T> {
    mem: RawMemory,
    width: usize,
    height: usize,
    pitch: usize,
    _t: PhantomData<T>,
}

/// The element size `cuMemAllocPitch` is told about: it accepts only 4, 8 or
/// 16, and uses it for the alignment of the pitch. The largest of those that
/// divides `size` (or 4 when none does: the pitch is in bytes anyway, and our
/// fills and copies need no more than byte alignment of it).
pub(crate) fn element_size_hint(size: usize) -> u32 {
    [16u32, 8, 4]
        .into_iter()
        .find(|&h| size != 0 && size.is_multiple_of(h as usize))
        .unwrap_or(4)
}

/// `width * height * size`, the logical size, or `Err(SizeOverflow)`.
pub(crate) fn logical_bytes(width: usize, height: usize, size: usize) -> Result<(usize, usize)> {
    let overflow = Error::SizeOverflow {
        what: "width * height * size_of::<T>()",
    };
    let len = width.checked_mul(height).ok_or(overflow.clone())?;
    let row_bytes = width.checked_mul(size).ok_or(overflow.clone())?;
    len.checked_mul(size).ok_or(overflow)?;
    Ok((len, row_bytes))
}

/// One side of a 2D copy.
#[derive(Clone, Copy)]
enum Side {
    /// Device memory at this address.
    Device(u64),
    /// Any memory the driver can address through unified addressing (pinned, managed).
    Unified(u64),
    /// Pageable (or pinned) host memory, read from.
    HostSrc(*const c_void),
    /// Pageable (or pinned) host memory, written to.
    HostDst(*mut c_void),
}

/// `host`, or the registered mapping of the same pinned pages (see
/// `pinned_pages::registered_or_self`).
fn host_dma_or_self(host: *mut c_void, bytes: usize) -> *mut c_void {
    crate::pinned_pages::registered_or_self(host.cast(), bytes).cast()
}

/// The `CUDA_MEMCPY2D` of a copy of `height` rows of `width_bytes` bytes.
///
/// Built as a struct literal rather than `mem::zeroed()`: `CUmemorytype` is a
/// Rust enum without a zero variant, so an all-zero `CUDA_MEMCPY2D` is not a
/// valid value even for an instant.
fn memcpy2d(
    dst: Side,
    dst_pitch: usize,
    src: Side,
    src_pitch: usize,
    width_bytes: usize,
    height: usize,
) -> sys::CUDA_MEMCPY2D {
    use sys::CUmemorytype::{CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_UNIFIED};
    let parts = |side: Side| match side {
        Side::Device(a) => (CU_MEMORYTYPE_DEVICE, a, std::ptr::null_mut::<c_void>()),
        Side::Unified(a) => (CU_MEMORYTYPE_UNIFIED, a, std::ptr::null_mut()),
        Side::HostSrc(p) => (CU_MEMORYTYPE_HOST, 0, p.cast_mut()),
        Side::HostDst(p) => (CU_MEMORYTYPE_HOST, 0, p),
    };
    let (src_type, src_device, src_host) = parts(src);
    let (dst_type, dst_device, dst_host) = parts(dst);
    sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: src_type,
        srcHost: src_host.cast_const(),
        srcDevice: src_device,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: dst_type,
        dstHost: dst_host,
        dstDevice: dst_device,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width_bytes,
        Height: height,
    }
}

impl<T: DeviceCopy> PitchedBuffer<T> {
    /// Allocates `height` rows of `width` elements (`cuMemAllocPitch`). The
    /// contents are unspecified (any bytes are a valid `T`); use
    /// [`zeroed`](Self::zeroed), [`fill`](Self::fill) or
    /// [`from_slice`](Self::from_slice) for defined contents.
    ///
    /// `width * height * size_of::<T>()` overflowing `usize` is
    /// `Err(SizeOverflow)`; a width or height of 0 gives a working empty
    /// buffer (no allocation).
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::<f32>::new(&ctx, 1920, 1080)?;
    /// assert_eq!(buf.len(), 1920 * 1080);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, width: usize, height: usize) -> Result<Self> {
        let (_, row_bytes) = logical_bytes(width, height, crate::memory::element_size::<T>())?;
        let state = ContextState::of(ctx)?;
        let (mem, pitch) =
            RawMemory::pitched(state, row_bytes, height, element_size_hint(size_of::<T>()))?;
        if height > 1 && row_bytes > 0 && (pitch < row_bytes || !pitch.is_multiple_of(16)) {
            // cuMemAllocPitch promises neither; our fill kernels need both.
            return Err(Error::InvalidArgument(
                "cuMemAllocPitch returned a pitch that is not a multiple of 16 bytes",
            ));
        }
        Ok(Self {
            mem,
            width,
            height,
            pitch,
            _t: PhantomData,
        })
    }

    /// Allocates `height` rows of `width` elements, every byte zero.
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::<u32>::zeroed(&ctx, 17, 3)?;
    /// assert!(buf.to_vec()?.iter().all(|&v| v == 0));
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn zeroed(ctx: &Arc<CudaContext>, width: usize, height: usize) -> Result<Self> {
        let mut buf = Self::new(ctx, width, height)?;
        buf.memset(0)?;
        Ok(buf)
    }

    /// Allocates `height` rows of `width` elements holding `data`, which is
    /// tightly packed (row after row, `width * height` elements, else
    /// `Err(LengthMismatch)`).
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::from_slice(&ctx, &[1u16, 2, 3, 4, 5, 6], 3, 2)?;
    /// assert_eq!(buf.row(1)?.to_vec()?, [4, 5, 6]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(
        ctx: &Arc<CudaContext>,
        data: &[T],
        width: usize,
        height: usize,
    ) -> Result<Self> {
        let (len, _) = logical_bytes(width, height, size_of::<T>())?;
        if data.len() != len {
            return Err(Error::LengthMismatch {
                expected: len,
                actual: data.len(),
            });
        }
        let mut buf = Self::new(ctx, width, height)?;
        buf.copy_from_host(data)?;
        Ok(buf)
    }

    /// Elements per row.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// let w = b.width();
    /// # }
    /// ```
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// let h = b.height();
    /// # }
    /// ```
    pub fn height(&self) -> usize {
        self.height
    }

    /// Bytes from the start of one row to the start of the next (at least
    /// `width() * size_of::<T>()`; not necessarily a multiple of
    /// `size_of::<T>()`). For an empty buffer, `width() * size_of::<T>()`.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<[f32; 3]>) {
    /// assert!(b.pitch() >= b.width() * 12);
    /// # }
    /// ```
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Number of elements: `width() * height()`.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// assert_eq!(b.len(), b.width() * b.height());
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// Whether there are no elements (width or height 0).
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// if b.is_empty() { return; }
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Logical size in bytes, `width() * height() * size_of::<T>()` (without
    /// the row padding; the allocation is `pitch() * height()` bytes).
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<u64>) {
    /// assert_eq!(b.byte_size(), b.len() * 8);
    /// # }
    /// ```
    pub fn byte_size(&self) -> usize {
        self.len() * size_of::<T>()
    }

    /// The device address of the first element of row 0. Row `i` starts at
    /// byte `i * pitch()`.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// let base: cuda_mem::DevicePtr<f32> = b.as_device_ptr();
    /// # }
    /// ```
    pub fn as_device_ptr(&self) -> DevicePtr<T> {
        DevicePtr::from_addr(self.mem.addr)
    }

    /// The CUDA context the memory belongs to.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) {
    /// let ctx = b.context().clone();
    /// # }
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.mem.state.ctx
    }

    fn row_bytes(&self) -> usize {
        self.width * size_of::<T>()
    }

    fn row_elems(&self, i: usize) -> Result<Elems<'_, T>> {
        if i >= self.height {
            return Err(Error::OutOfRange {
                start: i,
                end: i.saturating_add(1),
                len: self.height,
            });
        }
        Ok(Elems::at(&self.mem, i * self.pitch, self.width))
    }

    /// Row `i` as a shared view of `width()` elements (never its padding), or
    /// `Err(OutOfRange)`. Views have every 1D read operation.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// let first_row: Vec<f32> = b.row(0)?.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn row(&self, i: usize) -> Result<View<'_, T>> {
        Ok(View {
            elems: self.row_elems(i)?,
        })
    }

    /// Row `i` as an exclusive view of `width()` elements, or
    /// `Err(OutOfRange)`. Views have every 1D operation (fill, memset, copies).
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.row_mut(3)?.fill(1.5)?;
    /// # Ok(()) }
    /// ```
    pub fn row_mut(&mut self, i: usize) -> Result<ViewMut<'_, T>> {
        Ok(ViewMut {
            elems: self.row_elems(i)?,
            _exclusive: PhantomData,
        })
    }

    /// Runs `enqueue` on `stream` after earlier work on this buffer.
    fn run<R>(&self, stream: &Arc<CudaStream>, enqueue: impl FnOnce() -> Result<R>) -> Result<R> {
        self.mem.state.check_stream(stream)?;
        self.mem.order.run(stream, enqueue)
    }

    /// Sets every byte of every element to `byte` (`cuMemsetD2D8` over
    /// `width() * size_of::<T>()` bytes per row; the padding is untouched), on
    /// the context's default stream.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<u32>) -> cuda_mem::Result<()> {
    /// b.memset(0xff)?;
    /// # Ok(()) }
    /// ```
    pub fn memset(&mut self, byte: u8) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.memset_async(byte, &stream)
    }

    /// Like [`memset`](Self::memset), queued on `stream`.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.memset_async(0, s)?;
    /// # Ok(()) }
    /// ```
    pub fn memset_async(&mut self, byte: u8, stream: &Arc<CudaStream>) -> Result<()> {
        self.memset_rows(byte, self.row_bytes(), stream)
    }

    fn memset_rows(&self, byte: u8, row_bytes: usize, stream: &Arc<CudaStream>) -> Result<()> {
        if row_bytes == 0 || self.height == 0 {
            return self.mem.state.check_stream(stream);
        }
        let (addr, pitch, height) = (self.mem.addr, self.pitch, self.height);
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: `height` rows of `row_bytes <= pitch` bytes, `pitch` apart,
            // lie inside the allocation of `pitch * height` bytes; any bytes are a
            // valid `T`; ordered after earlier work by `run`.
            unsafe {
                sys::cuMemsetD2D8Async(addr, pitch, byte, row_bytes, height, stream.cu_stream())
                    .result()
            }
            .op("cuMemsetD2D8Async")
        })
    }

    /// Sets every element to `value`, row by row over the logical width only
    /// (the padding is untouched), at memory bandwidth (a 2D driver memset when
    /// the value's bytes repeat with period 1, 2 or 4, else cuda-mem's fill
    /// kernels), on the context's default stream.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<[f32; 3]>) -> cuda_mem::Result<()> {
    /// b.fill([1.0, 2.0, 3.0])?;
    /// # Ok(()) }
    /// ```
    pub fn fill(&mut self, value: T) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.fill_async(value, &stream)
    }

    /// Like [`fill`](Self::fill), queued on `stream`.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<u64>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.fill_async(42, s)?;
    /// # Ok(()) }
    /// ```
    pub fn fill_async(&mut self, value: T, stream: &Arc<CudaStream>) -> Result<()> {
        if self.is_empty() || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        if self.height > 1 && !self.pitch.is_multiple_of(16) {
            return Err(Error::InvalidArgument(
                "the fill of several rows needs a pitch that is a multiple of 16 bytes",
            ));
        }
        let region = fill::Region {
            addr: self.mem.addr,
            pitch: self.pitch as u64,
            row_bytes: self.row_bytes() as u64,
            rows: self.height as u64,
        };
        self.run(stream, || {
            fill::enqueue(&self.mem.state, stream, crate::bytes_of(&value), region)
        })
    }

    /// Copies tightly packed host data in (`src.len()` must be
    /// `width() * height()`, else `Err(LengthMismatch)`) with `cuMemcpy2D`;
    /// returns once `src` may be reused.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// let host = vec![0.5f32; b.len()];
    /// b.copy_from_host(&host)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: src.len(),
            });
        }
        if self.byte_size() == 0 {
            return Ok(());
        }
        let row = self.row_bytes();
        let p = memcpy2d(
            Side::Device(self.mem.addr),
            self.pitch,
            Side::HostSrc(
                host_dma_or_self(src.as_ptr().cast_mut().cast(), size_of_val(src)).cast_const(),
            ),
            row,
            row,
            self.height,
        );
        // Why `p` is valid: `src` is a live slice of `height` packed rows of
        // `row` bytes (or the registered mapping of the same pinned pages),
        // which the synchronous copy has read when it returns; the
        // destination rows lie inside the allocation.
        self.copy_2d_sync(&p)
    }

    /// Copies the elements out into tightly packed host memory (`dst.len()`
    /// must be `width() * height()`, else `Err(LengthMismatch)`) with
    /// `cuMemcpy2D`; returns once the data is there.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// let mut host = vec![0f32; b.len()];
    /// b.copy_to_host(&mut host)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: dst.len(),
                actual: self.len(),
            });
        }
        if self.byte_size() == 0 {
            return Ok(());
        }
        let row = self.row_bytes();
        let p = memcpy2d(
            Side::HostDst(host_dma_or_self(dst.as_mut_ptr().cast(), size_of_val(dst))),
            row,
            Side::Device(self.mem.addr),
            self.pitch,
            row,
            self.height,
        );
        // Why `p` is valid: `dst` is a live, exclusive slice of `height` packed
        // rows of `row` bytes, complete when the synchronous copy returns, and
        // any bytes are a valid `T`; only the logical width of each device row
        // is read (never the padding).
        self.copy_2d_sync(&p)
    }

    /// Runs the synchronous 2D copy `p` between this buffer and host memory
    /// on the legacy default stream, after earlier work on the buffer.
    ///
    /// The caller guarantees that `p` describes this buffer's rows and host
    /// memory that stays valid (and, if written, exclusively borrowed) for
    /// the call.
    fn copy_2d_sync(&self, p: &sys::CUDA_MEMCPY2D) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.run(&stream, || {
            self.mem.state.bind()?;
            // SAFETY: the caller vouches for both sides of `p`; the copy is
            // synchronous and ordered after earlier work on the buffer by `run`.
            unsafe { sys::cuMemcpy2D_v2(p).result() }.op("cuMemcpy2D")
        })
    }

    /// Copies the elements into a new, tightly packed `Vec` of
    /// `width() * height()` elements.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// let host: Vec<f32> = b.to_vec()?;
    /// assert_eq!(host.len(), b.width() * b.height());
    /// # Ok(()) }
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let len = self.len();
        let mut out = Vec::<T>::with_capacity(len);
        // SAFETY: the capacity holds `len` elements; all-zero bytes are a valid
        // `T` (DeviceCopy), so after zeroing every element is initialised.
        unsafe {
            std::ptr::write_bytes(out.as_mut_ptr(), 0, len);
            out.set_len(len);
        }
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Queues a copy of the tightly packed host-accessible buffer `src`
    /// (pinned or unified, `width() * height()` elements, else
    /// `Err(LengthMismatch)`) into this buffer on `stream`
    /// (`cuMemcpy2DAsync`). `src` cannot be changed from the host until the
    /// copy is done (its `as_mut_slice` waits).
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<f32>, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> Result<(), Box<dyn std::error::Error>> {
    /// let stream = ctx.new_stream()?;
    /// let host = cuda_mem::PinnedBuffer::from_slice(ctx, &vec![1.0f32; b.len()])?;
    /// b.copy_from_host_async(&host, &stream)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host_async<H: HostAccessible>(
        &mut self,
        src: &Buffer<T, H>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let src = src.elems();
        if src.len != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: src.len,
            });
        }
        crate::peer::check_copy_stream(&self.mem, src.mem, stream)?;
        if self.byte_size() == 0 {
            return Ok(());
        }
        let row = self.row_bytes();
        let p = memcpy2d(
            Side::Device(self.mem.addr),
            self.pitch,
            Side::Unified(src.addr()),
            row,
            row,
            self.height,
        );
        // Why `p` is valid: the source is `len` packed elements of a live host-accessible
        // allocation (a unified address), the destination rows lie inside this
        // allocation; both are ordered after earlier work and recorded as used
        // by `stream`, so host access and frees wait for the copy.
        self.copy_2d_ordered(&self.mem.order, &src.mem.order, &p, stream)
    }

    /// Queues a copy of the elements into the tightly packed host-accessible
    /// buffer `dst` (pinned or unified, `width() * height()` elements, else
    /// `Err(LengthMismatch)`) on `stream` (`cuMemcpy2DAsync`). `dst`'s
    /// `as_slice` waits for it.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> Result<(), Box<dyn std::error::Error>> {
    /// let stream = ctx.new_stream()?;
    /// let mut host = cuda_mem::PinnedBuffer::<f32>::new(ctx, b.len())?;
    /// b.copy_to_host_async(&mut host, &stream)?;
    /// let values = host.as_slice()?; // waits for the copy
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host_async<H: HostAccessible>(
        &self,
        dst: &mut Buffer<T, H>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let dst = dst.elems();
        if dst.len != self.len() {
            return Err(Error::LengthMismatch {
                expected: dst.len,
                actual: self.len(),
            });
        }
        crate::peer::check_copy_stream(&self.mem, dst.mem, stream)?;
        if self.byte_size() == 0 {
            return Ok(());
        }
        let row = self.row_bytes();
        let p = memcpy2d(
            Side::Unified(dst.addr()),
            row,
            Side::Device(self.mem.addr),
            self.pitch,
            row,
            self.height,
        );
        // Why `p` is valid: the destination is `len` packed elements of a live
        // host-accessible allocation, exclusively borrowed, and any bytes are
        // a valid `T`; only the logical width of each row is read; both are
        // ordered and recorded on `stream`, so `as_slice` waits for the copy.
        self.copy_2d_ordered(&dst.mem.order, &self.mem.order, &p, stream)
    }

    /// Queues the 2D copy `p` on `stream` after earlier work on both
    /// allocations it touches, recording `stream` as their latest user.
    ///
    /// The caller guarantees that `p` describes rows inside the two live
    /// allocations whose orders are `dst` and `src`.
    fn copy_2d_ordered(
        &self,
        dst: &StreamOrder,
        src: &StreamOrder,
        p: &sys::CUDA_MEMCPY2D,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        StreamOrder::run_pair(dst, src, stream, || {
            stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
            // SAFETY: the caller vouches for both sides of `p`; the copy is
            // ordered after earlier work on both allocations and recorded on
            // `stream`, so host access and frees wait for it.
            unsafe { sys::cuMemcpy2DAsync_v2(p, stream.cu_stream()).result() }.op("cuMemcpy2DAsync")
        })
    }

    /// Copies `src` (same width and height, else `Err(LengthMismatch)` or
    /// `Err(InvalidArgument)`) into this buffer, device to device, on the
    /// context's default stream.
    ///
    /// ```no_run
    /// # fn f(a: &mut cuda_mem::PitchedBuffer<f32>, b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// a.copy_from(b)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from(&mut self, src: &PitchedBuffer<T>) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.copy_from_async(src, &stream)
    }

    /// Like [`copy_from`](Self::copy_from), queued on `stream`
    /// (`cuMemcpy2DAsync`).
    ///
    /// ```no_run
    /// # fn f(a: &mut cuda_mem::PitchedBuffer<f32>, b: &cuda_mem::PitchedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// a.copy_from_async(b, s)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_async(
        &mut self,
        src: &PitchedBuffer<T>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: self.len(),
                actual: src.len(),
            });
        }
        if src.width != self.width || src.height != self.height {
            return Err(Error::InvalidArgument(
                "2D copy between buffers of different width and height",
            ));
        }
        crate::peer::check_copy_stream(&self.mem, &src.mem, stream)?;
        if self.byte_size() == 0 {
            return Ok(());
        }
        let row = self.row_bytes();
        if self.mem.state.ctx.cu_ctx() != src.mem.state.ctx.cu_ctx() {
            return self.copy_from_peer(src, stream);
        }
        let p = memcpy2d(
            Side::Device(self.mem.addr),
            self.pitch,
            Side::Device(src.mem.addr),
            src.pitch,
            row,
            self.height,
        );
        // Why `p` is valid: two distinct live allocations of this context (`&mut self`
        // and `&src` cannot alias), each `height` rows of at least `row`
        // bytes; both ordered after earlier work on `stream`.
        self.copy_2d_ordered(&self.mem.order, &src.mem.order, &p, stream)
    }

    /// [`copy_from_async`](Self::copy_from_async) from a buffer of another
    /// context: `cuMemcpy3DPeerAsync`, one slice deep.
    fn copy_from_peer(&mut self, src: &PitchedBuffer<T>, stream: &Arc<CudaStream>) -> Result<()> {
        let _peer_copy = crate::peer::prepare_copy(&self.mem, &src.mem)?;
        use sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
        let p = sys::CUDA_MEMCPY3D_PEER {
            srcXInBytes: 0,
            srcY: 0,
            srcZ: 0,
            srcLOD: 0,
            srcMemoryType: CU_MEMORYTYPE_DEVICE,
            srcHost: std::ptr::null(),
            srcDevice: src.mem.addr,
            srcArray: std::ptr::null_mut(),
            srcContext: src.mem.state.ctx.cu_ctx(),
            srcPitch: src.pitch,
            srcHeight: src.height,
            dstXInBytes: 0,
            dstY: 0,
            dstZ: 0,
            dstLOD: 0,
            dstMemoryType: CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: self.mem.addr,
            dstArray: std::ptr::null_mut(),
            dstContext: self.mem.state.ctx.cu_ctx(),
            dstPitch: self.pitch,
            dstHeight: self.height,
            WidthInBytes: self.row_bytes(),
            Height: self.height,
            Depth: 1,
        };
        StreamOrder::run_pair(&self.mem.order, &src.mem.order, stream, || {
            stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
            // SAFETY: two live allocations of two contexts, named with their
            // contexts, each `height` rows of at least `WidthInBytes` bytes at
            // their pitches; only the logical width of each row is written.
            // Both are ordered after earlier work and recorded on `stream`.
            unsafe { sys::cuMemcpy3DPeerAsync(&p, stream.cu_stream()).result() }
                .op("cuMemcpy3DPeerAsync")
        })
    }

    /// This buffer's base address as a kernel argument the kernel only reads,
    /// ordered on `stream` (see [`KernelArg`]); pass `pitch()` along.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let arg = b.kernel_arg(s)?;
    /// # Ok(()) }
    /// ```
    pub fn kernel_arg(&self, stream: &Arc<CudaStream>) -> Result<KernelArg<'_, T>> {
        Ok(KernelArg::new(self.claim(stream)?))
    }

    /// This buffer's base address as a kernel argument the kernel may write,
    /// ordered on `stream` (see [`KernelArg`]); pass `pitch()` along.
    ///
    /// ```no_run
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let out = b.kernel_arg_mut(s)?;
    /// # Ok(()) }
    /// ```
    pub fn kernel_arg_mut(&mut self, stream: &Arc<CudaStream>) -> Result<KernelArg<'_, T>> {
        Ok(KernelArg::new(self.claim(stream)?))
    }

    /// Orders `stream` after earlier work and records it as a deferred user
    /// (a kernel argument launched later; see `order`).
    pub(crate) fn claim(&self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.state.check_stream(stream)?;
        self.mem
            .order
            .run_deferred(stream, || Ok(self.as_device_ptr()))
    }

    /// Waits for every queued operation on this buffer.
    ///
    /// ```no_run
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.synchronize()?;
    /// # Ok(()) }
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.mem.order.wait(Access::Shared)
    }

    /// Test helper (feature `test-hooks`): the whole allocation, `pitch() *
    /// height()` bytes, padding included (as bytes, never as `T`).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn raw_padded_bytes(&self) -> Result<Vec<u8>> {
        let bytes = self.mem.bytes;
        let mut out = vec![0u8; bytes];
        if bytes == 0 {
            return Ok(out);
        }
        let (addr, stream) = (self.mem.addr, self.mem.state.default_stream.clone());
        self.run(&stream, || {
            self.mem.state.bind()?;
            // SAFETY: `out` holds `bytes` bytes, the size of the allocation at
            // `addr`; the synchronous copy is complete when it returns.
            unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), addr, bytes).result() }
                .op("cuMemcpyDtoH")
        })?;
        Ok(out)
    }

    /// Test helper (feature `test-hooks`): sets every byte of the
    /// allocation, padding included, to `byte`.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn raw_memset_padded(&mut self, byte: u8) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.memset_rows(
            byte,
            if self.mem.bytes == 0 { 0 } else { self.pitch },
            &stream,
        )
    }
}

impl<T> std::fmt::Debug for PitchedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PitchedBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .field("addr", &format_args!("{:#x}", self.mem.addr))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_size_hint_is_the_largest_accepted_divisor() {
        assert_eq!(element_size_hint(1), 4);
        assert_eq!(element_size_hint(2), 4);
        assert_eq!(element_size_hint(4), 4);
        assert_eq!(element_size_hint(8), 8);
        assert_eq!(element_size_hint(12), 4);
        assert_eq!(element_size_hint(16), 16);
        assert_eq!(element_size_hint(24), 8);
        assert_eq!(element_size_hint(48), 16);
        assert_eq!(element_size_hint(255), 4);
        assert_eq!(element_size_hint(0), 4);
    }

    #[test]
    fn logical_bytes_checks_every_product() {
        assert_eq!(logical_bytes(1000, 7, 12).unwrap(), (7000, 12_000));
        assert_eq!(logical_bytes(0, 7, 12).unwrap(), (0, 0));
        assert_eq!(logical_bytes(7, 0, 12).unwrap(), (0, 84));
        assert!(matches!(
            logical_bytes(usize::MAX, 2, 1),
            Err(Error::SizeOverflow { .. })
        ));
        assert!(matches!(
            logical_bytes(usize::MAX / 2, 1, 4),
            Err(Error::SizeOverflow { .. })
        ));
        assert!(matches!(
            logical_bytes(1 << 20, 1 << 20, 1 << 30),
            Err(Error::SizeOverflow { .. })
        ));
    }

    #[test]
    fn memcpy2d_sets_both_sides() {
        let host = [0u8; 8];
        let p = memcpy2d(
            Side::Device(0x1000),
            512,
            Side::HostSrc(host.as_ptr().cast()),
            8,
            8,
            1,
        );
        assert_eq!(p.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!(p.dstDevice, 0x1000);
        assert!(p.dstHost.is_null());
        assert_eq!(p.srcMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(p.srcHost, host.as_ptr().cast());
        assert_eq!(
            (p.srcPitch, p.dstPitch, p.WidthInBytes, p.Height),
            (8, 512, 8, 1)
        );
        let q = memcpy2d(Side::Unified(0x2000), 8, Side::Device(0x3000), 256, 8, 4);
        assert_eq!(q.dstMemoryType, sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED);
        assert_eq!((q.dstDevice, q.srcDevice), (0x2000, 0x3000));
    }
}
