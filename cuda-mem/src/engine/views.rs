//! The typed views that carry the engine to users ([`View`], [`ViewMut`],
//! [`AsView`]) and the kernel argument a buffer hands to a cudarc launch
//! ([`KernelArg`]).

use std::marker::PhantomData;

use crate::copy::device_ptr::DevicePtr;
use crate::engine::elems::Elems;

/// A shared view of `len` elements of a buffer: `buffer.slice(2..10)?`, or
/// of a rectangle of 2D memory: `pitched.region(3..9, 1..4)?`.
///
/// It borrows the buffer, has the read operations of a buffer
/// ([`Memory`](crate::Memory): copies out, `to_vec`, use as a source) and can
/// be narrowed further. A view of 2D memory has `height()` rows of `width()`
/// elements, `pitch()` bytes apart; its `len()` is `width() * height()` and
/// host data copied in or out of it is packed row after row.
///
/// ```no_run
/// use cuda_mem::prelude::*;
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

/// An exclusive view of `len` elements of a buffer: `buffer.slice_mut(2..10)?`,
/// or of a rectangle of 2D memory: `pitched.region_mut(3..9, 1..4)?`.
///
/// It borrows the buffer mutably and has every operation of a buffer
/// ([`Memory`](crate::Memory), [`MemoryMut`](crate::MemoryMut): memset, fill,
/// copies in and out); on 2D memory they touch only the rectangle.
///
/// ```no_run
/// use cuda_mem::prelude::*;
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
/// use cuda_mem::prelude::*;
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
    /// # use cuda_mem::prelude::*;
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

/// Anything that can be read as a [`View`]: every buffer kind, views,
/// exclusive views and pitched buffers (every type with the
/// [`Memory`](crate::Memory) operations), and [`DeviceAlloc`](crate::DeviceAlloc).
/// Used by `copy_from`.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, PinnedBuffer};
/// let ctx = cuda_mem::context(0)?;
/// let pinned = PinnedBuffer::from_slice(&ctx, &[1u8, 2, 3])?;
/// let mut dev = DeviceBuffer::<u8>::zeroed(&ctx, 3)?;
/// dev.copy_from(&pinned)?;
/// assert_eq!(pinned.as_view().len(), 3);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait AsView<T> {
    /// A shared view of all elements.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::DeviceBuffer<u32>) {
    /// let whole: cuda_mem::View<'_, u32> = b.as_view();
    /// # }
    /// ```
    fn as_view(&self) -> View<'_, T>;
}

impl<T> std::fmt::Debug for View<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "View<{}>({:#x}, len {}, {} x {}, pitch {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.shape.offset as u64,
            self.elems.shape.len(),
            self.elems.shape.width,
            self.elems.shape.rows,
            self.elems.shape.pitch
        )
    }
}

impl<T> std::fmt::Debug for ViewMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ViewMut<{}>({:#x}, len {}, {} x {}, pitch {})",
            std::any::type_name::<T>(),
            self.elems.mem.addr + self.elems.shape.offset as u64,
            self.elems.shape.len(),
            self.elems.shape.width,
            self.elems.shape.rows,
            self.elems.shape.pitch
        )
    }
}
