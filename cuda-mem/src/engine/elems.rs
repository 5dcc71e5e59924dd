//! [`Elems`]: `T`s of one allocation laid out as a [`Shape`] (a linear
//! buffer is one row), and the operations on them that are not copies:
//! ranges, regions and casts, the ordering of every operation on the
//! allocation, memset, fill, the addresses and lengths cudarc sees, claims
//! for kernel arguments and waits. Copies are `copy`'s; the views and kernel
//! arguments that carry `Elems` are `views`'.

use std::cell::Cell;
use std::marker::PhantomData;
use std::ops::{Range, RangeBounds};
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream};

use crate::copy::device_copy::{bytes_of, DeviceCopy};
use crate::copy::device_ptr::DevicePtr;
use crate::engine::fill;
use crate::engine::shape::Shape;
use crate::error::Result;
use crate::memory::raw::RawMemory;
use crate::order::completion::Completion;
use crate::order::StreamOrder;

/// `T`s of one allocation, laid out as `shape` (whose element size is
/// `size_of::<T>()`): what every buffer, view and pitched buffer hands the
/// engine.
///
/// `pub` inside a private module only so that the sealed supertrait of the
/// public operation traits (`ops::sealed::Engine`) can name it; nothing
/// outside the crate can name or use it.
pub struct Elems<'a, T> {
    pub(crate) mem: &'a RawMemory,
    pub(crate) shape: Shape,
    _t: PhantomData<T>,
}

impl<T> Clone for Elems<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Elems<'_, T> {}

thread_local! {
    /// Set when this thread asked a padded 2D value for its length at the
    /// cudarc boundary (`DeviceSlice::len`, see [`Elems::len_for_cudarc`]):
    /// such a value will get address 0 from `DevicePtr`, and
    /// `cuda_mem::nccl` refuses it with this reason before NCCL runs (NCCL
    /// does not check its pointers, so it must never see address 0).
    static PADDED_SEEN: Cell<Option<&'static str>> = const { Cell::new(None) };
}

/// Takes the reason recorded by [`Elems::len_for_cudarc`] on this thread
/// since the last call, if any.
#[cfg_attr(not(feature = "nccl"), allow(dead_code))]
pub(crate) fn take_cudarc_refusal() -> Option<&'static str> {
    PADDED_SEEN.with(Cell::take)
}

/// The message of a padded 2D view given to a cudarc call.
pub(crate) const PADDED_FOR_CUDARC: &str =
    "padded 2D memory (a PitchedBuffer whose pitch exceeds its row, or a region of one) is not one contiguous block, which cudarc calls and NCCL need; copy it into a packed buffer first (DeviceBuffer::copy_from)";

impl<'a, T: DeviceCopy> Elems<'a, T> {
    /// Every way to type memory as `T`s ends here, so `T` is checked as an
    /// element type (`__CHECK`: a size, an alignment of at most 256, and a
    /// derived generic struct's real layout) whatever path made the
    /// elements: a buffer's, a view's, or [`Elems::cast`]'s.
    fn new(mem: &'a RawMemory, shape: Shape) -> Self {
        const { crate::copy::private::check_element::<T>() };
        Self {
            mem,
            shape,
            _t: PhantomData,
        }
    }

    pub(crate) fn whole(mem: &'a RawMemory, len: usize) -> Self {
        Self::at(mem, 0, len)
    }

    /// `len` contiguous elements at byte `offset`: one row.
    pub(crate) fn at(mem: &'a RawMemory, offset: usize, len: usize) -> Self {
        Self::new(mem, Shape::linear(offset, len, size_of::<T>()))
    }

    /// `rows` rows of `width` elements, `pitch` bytes apart, at byte
    /// `offset`; the caller has checked that they lie inside `mem` and that
    /// `pitch >= width * size_of::<T>()` (for more than one row).
    pub(crate) fn rect(
        mem: &'a RawMemory,
        offset: usize,
        width: usize,
        rows: usize,
        pitch: usize,
    ) -> Self {
        let size = size_of::<T>();
        Self::new(
            mem,
            Shape {
                offset,
                width,
                rows,
                pitch,
                size,
            },
        )
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.shape.len()
    }

    pub(crate) fn byte_size(&self) -> usize {
        // Cannot overflow: the elements lie inside one allocation.
        self.shape.byte_size()
    }

    /// Whether the elements are one contiguous block.
    pub(crate) fn is_contiguous(&self) -> bool {
        self.shape.is_contiguous()
    }

    pub(crate) fn addr(&self) -> u64 {
        if self.mem.addr == 0 {
            0
        } else {
            self.mem.addr + self.shape.offset as u64
        }
    }

    /// The bytes of the allocation these elements occupy, row padding
    /// between them included (for `order`).
    pub(crate) fn span(&self) -> Range<usize> {
        self.shape.offset..self.shape.offset + self.shape.span_bytes()
    }

    /// The allocation's order and [`Elems::span`], for a copy.
    pub(super) fn ordered(&self) -> (&'a StreamOrder, Range<usize>) {
        (&self.mem.order, self.span())
    }

    pub(crate) fn context(&self) -> &'a Arc<CudaContext> {
        &self.mem.state.ctx
    }

    /// The elements `range` (row-major; see [`Shape::sub`]).
    pub(crate) fn sub(self, range: impl RangeBounds<usize>) -> Result<Self> {
        Ok(Self::new(self.mem, self.shape.sub(range)?))
    }

    /// The sub-rectangle of columns `cols` and rows `rows` (a linear view is
    /// one row), or `Err(OutOfRange)`.
    pub(crate) fn region(
        self,
        cols: impl RangeBounds<usize>,
        rows: impl RangeBounds<usize>,
    ) -> Result<Self> {
        Ok(Self::new(self.mem, self.shape.region(cols, rows)?))
    }

    /// The same bytes as elements of `U`: sound because both types are
    /// `DeviceCopy` (no padding, every bit pattern valid), once the sizes,
    /// the address and the pitch fit `U` (see [`Shape::cast`]). `U` is
    /// checked as an element type like every buffer's (`__CHECK`, in
    /// [`Elems::new`]): a derived generic struct whose real layout has
    /// padding at this instantiation fails the build here, not only at the
    /// byte paths behind it.
    ///
    /// ```compile_fail,E0080
    /// use cuda_mem::prelude::*;
    /// #[derive(Clone, Copy)]
    /// #[repr(C, align(8))] // not `transparent`: `W<u8>` has 7 bytes of padding
    /// struct W<T>(T);
    /// cuda_mem::__derive_device_copy! {
    ///     @__cuda_mem_derive_device_copy
    ///     struct W
    ///     generics {
    ///         lifetimes [] types [T] consts [] args [T] outlives [] bounds [] device_copy [T]
    ///     }
    ///     plan transparent
    ///     fields [0 => __field0: field]
    /// }
    /// let ctx = cuda_mem::context(0)?;
    /// let x = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 4)?;
    /// let padded = x.cast::<W<u8>>()?; // error: `W<u8>` is not an element type
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub(crate) fn cast<U: DeviceCopy>(self) -> Result<Elems<'a, U>> {
        let shape = self
            .shape
            .cast(self.addr(), size_of::<U>(), align_of::<U>())?;
        Ok(Elems::new(self.mem, shape))
    }

    pub(crate) fn default_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.default_stream
    }

    /// Runs `enqueue` on `stream` after earlier work on this memory, and
    /// enters it (the engine's operations, and `cuda_mem::algo`'s over one
    /// memory).
    pub(crate) fn run<R>(
        &self,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.mem.state.check_stream(stream)?;
        self.mem.order.run(self.span(), stream, enqueue)
    }

    /// Runs `enqueue` (work on `stream` that reads these elements and
    /// writes `out`, a kernel of `cuda_mem::algo`) after earlier work on
    /// both, and enters it in both, as a copy from `self` into `out` is
    /// (either may be the other: the same allocation is locked once).
    pub(crate) fn run_with<U: DeviceCopy, R>(
        &self,
        out: &Elems<'_, U>,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.mem.state.check_stream(stream)?;
        out.mem.state.check_stream(stream)?;
        StreamOrder::run_pair(out.ordered(), self.ordered(), stream, enqueue)
    }

    /// Sets every byte of every element to `byte`: `cuMemsetD8Async` over
    /// contiguous memory, `cuMemsetD2D8Async` over padded rows (the padding
    /// and everything outside the rectangle stay untouched).
    pub(crate) fn memset(self, byte: u8, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len() == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        // A fill with a one-byte value: one memset, 1D or 2D, queued as the
        // stream's context's work. `fill`'s guarantees hold: the region is
        // these elements, inside the allocation, and any bytes are a valid
        // `T` (DeviceCopy); `run` orders `stream` after earlier work on the
        // memory.
        let region = self.fill_region();
        let state = &self.mem.state;
        self.run(stream, || {
            fill::enqueue_planned(
                state,
                stream,
                &[byte],
                region,
                fill::FillPlan::Memset8(byte),
            )
        })
    }

    /// The bytes of the elements as a fill region.
    fn fill_region(&self) -> fill::Region {
        if self.is_contiguous() {
            fill::Region::linear(self.addr(), self.byte_size() as u64)
        } else {
            fill::Region {
                addr: self.addr(),
                pitch: self.shape.pitch as u64,
                row_bytes: self.shape.row_bytes() as u64,
                rows: self.shape.rows as u64,
            }
        }
    }

    /// How [`Elems::fill`] would write `value` here.
    pub(crate) fn fill_plan(&self, value: &T) -> fill::FillPlan {
        fill::plan(bytes_of(value), &self.fill_region())
    }

    /// Sets every element to `value` (only the elements: never row padding).
    pub(crate) fn fill(self, value: &T, stream: &Arc<CudaStream>) -> Result<()> {
        if self.len() == 0 || size_of::<T>() == 0 {
            return self.mem.state.check_stream(stream);
        }
        let region = self.fill_region();
        // Chosen here, where the value's length is a constant.
        let plan = fill::plan(bytes_of(value), &region);
        let state = &self.mem.state;
        if plan.is_memset() && region.rows == 1 {
            // The common fill, one memset, in a closure of its own: all it
            // carries is the row and the plan.
            let (addr, bytes) = (region.addr, region.row_bytes as usize);
            return self.run(stream, move || fill::memset_row(stream, addr, bytes, plan));
        }
        if plan == fill::FillPlan::SmallKernel && region.rows == 1 {
            // The small kernel over one row (elements of up to 256 bytes
            // whose bytes do not repeat), in a closure of its own too.
            return self.run(stream, move || {
                fill::small_kernel_row(state, stream, bytes_of(value), region)
            });
        }
        // By value: nothing of the fill need stay addressable in this frame.
        self.run(stream, move || {
            fill::enqueue_planned(state, stream, bytes_of(value), region, plan)
        })
    }

    /// The address to give a cudarc call (`DevicePtr` / `DevicePtrMut`,
    /// which cannot fail) that uses the memory on `stream` and synchronises
    /// `stream` before it returns: `stream` first waits for earlier work on
    /// the memory (or, if that fails, the host does).
    ///
    /// Returns address 0, so that the driver rejects the cudarc call with an
    /// error, when the use cannot be ordered or described:
    /// - the memory is padded 2D: cudarc sees `len` contiguous elements,
    ///   which would read or write the row padding and miss the last rows
    ///   (`cuda_mem::nccl` refuses such memory before it gets here);
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
        if !self.is_contiguous() {
            return 0;
        }
        let state = &self.mem.state;
        if std::ptr::eq(stream, &*state.cudarc_stream)
            || crate::order::streams::is_capturing(stream).unwrap_or(true)
        {
            return 0;
        }
        if self.mem.order.wait_on(self.span(), stream).is_err() {
            let waited = self.mem.order.wait(crate::order::Access::Shared);
            if waited.is_err() {
                crate::error::record_in(&state.ctx, waited);
                return 0;
            }
        }
        self.addr()
    }

    /// `DeviceSlice::len`: the number of elements; for padded 2D memory
    /// also records, for this thread, that it is no contiguous block (see
    /// [`take_cudarc_refusal`]).
    pub(crate) fn len_for_cudarc(&self) -> usize {
        if !self.is_contiguous() {
            PADDED_SEEN.with(|r| r.set(Some(PADDED_FOR_CUDARC)));
        }
        self.len()
    }

    /// The stream buffers report to cudarc (`DeviceSlice::stream`); see
    /// [`Elems::address_for_cudarc`].
    pub(crate) fn cudarc_stream(&self) -> &'a Arc<CudaStream> {
        &self.mem.state.cudarc_stream
    }

    /// Orders `stream` after earlier work on this memory and records it as a
    /// deferred user, for work the caller queues on `stream` later (see
    /// `order`). Returns the first element's address.
    #[inline]
    pub(crate) fn claim(self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.state.check_stream(stream)?;
        self.claim_unchecked_stream(stream)
    }

    /// [`claim`](Self::claim) on a stream that a claim of the same launch
    /// has checked a moment ago (`check_stream`): only its context is
    /// compared with the memory's.
    #[inline]
    pub(crate) fn claim_on_checked(self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.state.check_context(stream)?;
        self.claim_unchecked_stream(stream)
    }

    /// The claim's ordering, the stream checked by the caller.
    #[inline(always)]
    fn claim_unchecked_stream(self, stream: &Arc<CudaStream>) -> Result<DevicePtr<T>> {
        self.mem.order.run_deferred(self.span(), stream, || {
            Ok(DevicePtr::from_addr(self.addr()))
        })
    }

    /// Waits for every queued operation on the allocation.
    pub(crate) fn synchronize(self) -> Result<()> {
        self.mem.order.wait(crate::order::Access::Shared)
    }

    /// The completion of every operation queued on the allocation so far:
    /// one stream callback per stream with a queued use.
    pub(crate) fn completion(self) -> Result<Completion> {
        Completion::of_streams(&self.mem.order.queued_streams()?)
    }
}
