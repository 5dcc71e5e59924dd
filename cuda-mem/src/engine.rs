//! Typed views ([`View`], [`ViewMut`]) and [`Elems`], the one implementation of
//! every buffer operation (lengths, range checks, ordering, copies, memset,
//! fill) that all buffer kinds and views forward to.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::device_copy::bytes_of_slice_mut;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::RawMemory;
use crate::order::StreamOrder;
use crate::{bytes_of_slice, fill, peer, staging, DeviceCopy, DevicePtr};

/// `len` elements of `T` at byte `offset` of one allocation.
pub(crate) struct Elems<'a, T> {
    pub(crate) mem: &'a RawMemory,
    pub(crate) offset: usize,
    pub(crate) len: usize,
    _t: PhantomData<T>,
}

impl<T> Clone for Elems<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Elems<'_, T> {}

/// Resolves `range` against `len`, or says why it does not fit.
pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(s), Some(e)) if s <= e && e <= len => Ok((s, e)),
        (s, e) => Err(Error::OutOfRange {
            start: s.unwrap_or(usize::MAX),
            end: e.unwrap_or(usize::MAX),
            len,
        }),
    }
}

impl<'a, T: DeviceCopy> Elems<'a, T> {
    pub(crate) fn whole(mem: &'a RawMemory, len: usize) -> Self {
        Self {
            mem,
            offset: 0,
            len,
            _t: PhantomData,
        }
    }

    pub(crate) fn at(mem: &'a RawMemory, offset: usize, len: usize) -> Self {
        Self {
            mem,
            offset,
            len,
            _t: PhantomData,
        }
    }

    pub(crate) fn byte_size(&self) -> usize {
        // Cannot overflow: the elements lie inside one allocation.
        self.len * size_of::<T>()
    }

    pub(crate) fn addr(&self) -> u64 {
        if self.mem.addr == 0 {
            0
        } else {
            self.mem.addr + self.offset as u64
        }
    }

    pub(crate) fn context(&self) -> &'a Arc<CudaContext> {
        &self.mem.state.ctx
    }

    pub(crate) fn sub(self, range: impl RangeBounds<usize>) -> Result<Self> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(Self::at(
            self.mem,
            self.offset + start * size_of::<T>(),
            end - start,
        ))
    }

    /// The same bytes as elements of `U`: sound because both types are
    /// `DeviceCopy` (no padding, every bit pattern valid), once the size and
    /// the address fit `U`.
    pub(crate) fn cast<U: DeviceCopy>(self) -> Result<Elems<'a, U>> {
        let to = size_of::<U>();
        if to == 0 {
            return Err(Error::InvalidArgument(
                "cast to a zero-sized type; cast to a type with a size",
            ));
        }
        let bytes = self.byte_size();
        if !bytes.is_multiple_of(to) {
            return Err(Error::InvalidArgument(
                "cast: the byte size is not a multiple of the new element size; cast a slice of whole elements",
            ));
        }
        if !self.addr().is_multiple_of(align_of::<U>() as u64) {
            return Err(Error::InvalidArgument(
                "cast: the address is not aligned for the new element type; cast a slice that starts at an aligned element",
            ));
        }
        Ok(Elems::at(self.mem, self.offset, bytes / to))
    }

    pub(crate) fn default_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.default_stream
    }

    /// Runs `enqueue` on `stream` after earlier work on this memory.
    fn run<R>(&self, stream: &Arc<CudaStream>, enqueue: impl FnOnce() -> Result<R>) -> Result<R> {
        self.mem.state.check_stream(stream)?;
        self.mem.order.run(stream, enqueue)
    }

    pub(crate) fn memset(self, byte: u8, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        let (addr, bytes) = (self.addr(), self.byte_size());
        self.run(stream, || {
            self.mem.state.bind()?;
            // SAFETY: `addr..addr + bytes` lies inside the allocation; any bytes
            // are a valid `T` (DeviceCopy).
            unsafe { sys::cuMemsetD8Async(addr, byte, bytes, stream.cu_stream()).result() }
                .op("cuMemsetD8Async")
        })
    }

    pub(crate) fn fill(self, value: &T, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        let region = fill::Region::linear(self.addr(), self.byte_size() as u64);
        self.run(stream, || {
            fill::enqueue(&self.mem.state, stream, crate::bytes_of(value), region)
        })
    }

    /// Synchronous copy from host memory (returns once `src` may be reused).
    pub(crate) fn copy_from_host(self, src: &[T]) -> Result<()> {
        if src.len() != self.len {
            return Err(Error::LengthMismatch {
                expected: self.len,
                actual: src.len(),
            });
        }
        if self.len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        self.run(stream, || {
            self.mem.state.bind()?;
            // The destination lies inside the allocation and `run` ordered the
            // legacy default stream after earlier work on it.
            staging::copy_from_host(&self.mem.state, stream, self.addr(), bytes_of_slice(src))
        })
    }

    /// Synchronous copy to host memory (returns once the data is there).
    pub(crate) fn copy_to_host(self, dst: &mut [T]) -> Result<()> {
        if dst.len() != self.len {
            return Err(Error::LengthMismatch {
                expected: dst.len(),
                actual: self.len,
            });
        }
        if self.len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let stream = self.default_stream();
        self.run(stream, || {
            self.mem.state.bind()?;
            // The source lies inside the allocation and `run` ordered the legacy
            // default stream after earlier work on it; any bytes written into
            // `dst` make valid `T`s (DeviceCopy).
            staging::copy_to_host(
                &self.mem.state,
                stream,
                bytes_of_slice_mut(dst),
                self.addr(),
            )
        })
    }

    pub(crate) fn to_vec(self) -> Result<Vec<T>> {
        let mut out = Vec::<T>::with_capacity(self.len);
        // SAFETY: the capacity holds `len` elements (`T` is not zero-sized:
        // buffers refuse those); they are zeroed through the raw pointer
        // before any reference to them exists, and all-zero bytes are a valid
        // `T` (DeviceCopy), so `set_len` exposes initialised values only.
        unsafe {
            std::ptr::write_bytes(out.as_mut_ptr(), 0, self.len);
            out.set_len(self.len);
        }
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Copies `src` into `self` (any kinds, any contexts) on `stream`, which
    /// must belong to the destination's or the source's context.
    pub(crate) fn copy_from(self, src: Elems<'_, T>, stream: &Arc<CudaStream>) -> Result<()> {
        if src.len != self.len {
            return Err(Error::LengthMismatch {
                expected: self.len,
                actual: src.len,
            });
        }
        peer::check_copy_stream(self.mem, src.mem, stream)?;
        let (dst_state, src_state) = (&self.mem.state, &src.mem.state);
        let same_context = dst_state.ctx.cu_ctx() == src_state.ctx.cu_ctx();
        if self.len == 0 || size_of::<T>() == 0 {
            return Ok(());
        }
        let (dst_addr, src_addr, bytes) = (self.addr(), src.addr(), self.byte_size());
        let overlap = self.mem.addr == src.mem.addr
            && dst_addr < src_addr + bytes as u64
            && src_addr < dst_addr + bytes as u64;
        if overlap && dst_addr != src_addr {
            return Err(Error::InvalidArgument(
                "source and destination overlap; copy through a temporary buffer",
            ));
        }
        // Device memory of two contexts: a peer copy. Anything else (one
        // context, or pinned / unified memory, which every context addresses)
        // is a unified-addressing copy.
        let _peer_copy = if same_context {
            None
        } else {
            Some(peer::prepare_copy(self.mem, src.mem)?)
        };
        let peer = !same_context && self.mem.is_device_resident() && src.mem.is_device_resident();
        StreamOrder::run_pair(&self.mem.order, &src.mem.order, stream, || {
            stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
            // SAFETY: both ranges lie inside live allocations and do not
            // partially overlap; both are ordered after earlier work on them
            // and recorded on `stream`, so host access and frees wait for the
            // copy. A peer copy names each side's own context.
            unsafe {
                if peer {
                    sys::cuMemcpyPeerAsync(
                        dst_addr,
                        dst_state.ctx.cu_ctx(),
                        src_addr,
                        src_state.ctx.cu_ctx(),
                        bytes,
                        stream.cu_stream(),
                    )
                    .result()
                    .op("cuMemcpyPeerAsync")
                } else {
                    sys::cuMemcpyAsync(dst_addr, src_addr, bytes, stream.cu_stream())
                        .result()
                        .op("cuMemcpyAsync")
                }
            }
        })
    }

    /// The address to give a cudarc call (`DevicePtr` / `DevicePtrMut`,
    /// which cannot fail) that uses the memory on `stream` and synchronises
    /// `stream` before it returns: `stream` first waits for earlier work on
    /// the memory (or, if that fails, the host does).
    ///
    /// Returns address 0, so that the driver rejects the cudarc call with an
    /// error, when the use cannot be ordered:
    /// - `stream` is the stream buffers report to cudarc
    ///   (`DeviceSlice::stream`): cudarc passes it back only when the work runs
    ///   on a stream it does not name (`memcpy_dtod` between two contexts
    ///   queues on the destination's stream, then synchronises the source's),
    ///   so the copy could still read the memory when cudarc returns;
    /// - `stream` is capturing a CUDA graph: the work would replay later,
    ///   untracked;
    /// - the earlier work cannot be waited for (a stream that used the memory
    ///   is now capturing, or the context is broken; the error is recorded in
    ///   the context, where cudarc's next call reports it).
    pub(crate) fn address_for_cudarc(self, stream: &CudaStream) -> u64 {
        let state = &self.mem.state;
        if std::ptr::eq(stream, &*state.cudarc_stream)
            || crate::context::is_capturing(stream).unwrap_or(true)
        {
            return 0;
        }
        if self.mem.order.wait_on(stream).is_err() {
            let waited = self.mem.order.wait(crate::order::Access::Shared);
            if waited.is_err() {
                crate::error::record_in(&state.ctx, waited);
                return 0;
            }
        }
        self.addr()
    }

    /// The stream buffers report to cudarc (`DeviceSlice::stream`); see
    /// [`Elems::address_for_cudarc`].
    pub(crate) fn cudarc_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.cudarc_stream
    }

    /// Orders `stream` after earlier work on this memory and records it as a
    /// deferred user, for work the caller queues on `stream` later (see
    /// `order`).
    pub(crate) fn claim(self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.state.check_stream(stream)?;
        self.mem
            .order
            .run_deferred(stream, || Ok(DevicePtr::from_addr(self.addr())))
    }
}

/// A shared view of `len` elements of a buffer: `buffer.slice(2..10)?`.
///
/// It borrows the buffer, has the read operations of a buffer (copies out,
/// `to_vec`, use as a source) and can be narrowed further.
///
/// ```no_run
/// use cuda_mem::DeviceBuffer;
/// let ctx = cuda_mem::context(0)?;
/// let buf = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4, 5])?;
/// assert_eq!(buf.slice(1..4)?.to_vec()?, [2, 3, 4]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct View<'a, T> {
    pub(crate) elems: Elems<'a, T>,
}

impl<T> Clone for View<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for View<'_, T> {}

/// An exclusive view of `len` elements of a buffer: `buffer.slice_mut(2..10)?`.
///
/// It borrows the buffer mutably and has every operation of a buffer: memset,
/// fill, copies in and out.
///
/// ```no_run
/// use cuda_mem::DeviceBuffer;
/// let ctx = cuda_mem::context(0)?;
/// let mut buf = DeviceBuffer::<u16>::zeroed(&ctx, 8)?;
/// buf.slice_mut(2..5)?.fill(7)?;
/// assert_eq!(buf.to_vec()?, [0, 0, 7, 7, 7, 0, 0, 0]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct ViewMut<'a, T> {
    pub(crate) elems: Elems<'a, T>,
    pub(crate) _exclusive: PhantomData<&'a mut T>,
}

/// A buffer or view's address, ordered for use by a kernel on one stream; pass
/// it to a cudarc launch with `.arg(&arg)` (it is a `DeviceRepr`, the layout
/// of a `T*`).
///
/// Made by `kernel_arg(&stream)` (the kernel may only read) or
/// `kernel_arg_mut(&stream)` (the kernel may write), which make `stream` wait
/// for earlier work on the memory and record it as the memory's latest user:
/// later host access, copies on other streams and the free wait for the
/// kernel. It borrows the buffer, so the buffer cannot be dropped or touched
/// from the host while the argument exists.
///
/// ```no_run
/// use cudarc::driver::{LaunchConfig, PushKernelArg};
/// # fn f(func: &cudarc::driver::CudaFunction) -> Result<(), Box<dyn std::error::Error>> {
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut buf = cuda_mem::DeviceBuffer::<f32>::zeroed(&ctx, 1024)?;
/// let n = buf.len() as u32;
/// let out = buf.kernel_arg_mut(&stream)?;
/// unsafe { stream.launch_builder(func).arg(&out).arg(&n).launch(LaunchConfig::for_num_elems(n))? };
/// # Ok(()) }
/// ```
#[repr(transparent)]
pub struct KernelArg<'a, T> {
    ptr: DevicePtr<T>,
    _borrow: PhantomData<&'a T>,
}

impl<'a, T> KernelArg<'a, T> {
    pub(crate) fn new(ptr: DevicePtr<T>) -> Self {
        Self {
            ptr,
            _borrow: PhantomData,
        }
    }

    /// The device address.
    ///
    /// ```no_run
    /// # let arg: cuda_mem::KernelArg<'_, u8> = unimplemented!();
    /// println!("{:?}", arg.device_ptr());
    /// ```
    pub fn device_ptr(&self) -> DevicePtr<T> {
        self.ptr
    }
}

// SAFETY: `#[repr(transparent)]` over `DevicePtr<T>`, itself a transparent u64:
// exactly the `CUdeviceptr` a kernel's `T*` parameter expects.
unsafe impl<T> cudarc::driver::DeviceRepr for KernelArg<'_, T> {}

/// Anything that can be read as a [`View`]: every buffer kind, views, and
/// exclusive views. Used by `copy_from`.
///
/// ```no_run
/// use cuda_mem::{AsView, DeviceBuffer, PinnedBuffer};
/// let ctx = cuda_mem::context(0)?;
/// let pinned = PinnedBuffer::from_slice(&ctx, &[1u8, 2, 3])?;
/// let mut dev = DeviceBuffer::<u8>::zeroed(&ctx, 3)?;
/// dev.copy_from(&pinned)?;
/// assert_eq!(pinned.as_view().len(), 3);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait AsView<T> {
    /// A shared view of all elements.
    fn as_view(&self) -> View<'_, T>;
}

impl<T> AsView<T> for View<'_, T> {
    fn as_view(&self) -> View<'_, T> {
        *self
    }
}

impl<T> AsView<T> for ViewMut<'_, T> {
    fn as_view(&self) -> View<'_, T> {
        View { elems: self.elems }
    }
}

impl<T> std::fmt::Debug for View<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "View<{}>({:#x}, len {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.offset as u64,
            self.elems.len
        )
    }
}

impl<T> std::fmt::Debug for ViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ViewMut<{}>({:#x}, len {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.offset as u64,
            self.elems.len
        )
    }
}
