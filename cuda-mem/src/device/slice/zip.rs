//! [`ZipInputs`]: the read-only inputs a [`DeviceSliceMut`](crate::device::DeviceSliceMut)
//! loop walks beside its own elements, one slice or a tuple of them.

use crate::device::slice::read::DeviceSlice;

/// Read-only kernel parameters that a [`DeviceSliceMut`](crate::device::DeviceSliceMut) loop can walk
/// beside its own elements ([`DeviceSliceMut::grid_stride_zip`](crate::device::DeviceSliceMut::grid_stride_zip),
/// [`DeviceSliceMut::this_thread_zip`](crate::device::DeviceSliceMut::this_thread_zip)): a [`DeviceSlice`](crate::device::DeviceSlice) (or `&` one), or
/// a tuple of two or three. The loop runs over the indices all of them
/// have, so no access needs a bounds check.
///
/// ```
/// use cuda_mem::device::{DeviceSlice, ZipInputs};
/// # let (a, b) = ([1u8, 2, 3], [4u16, 5]);
/// # let (a, b) = unsafe { (DeviceSlice::from_raw_parts(a.as_ptr(), 3), DeviceSlice::from_raw_parts(b.as_ptr(), 2)) };
/// assert_eq!((a, b).len(), 2);
/// ```
pub trait ZipInputs: Copy {
    /// What the loop yields for one index: a reference per input.
    type Item;

    /// The number of indices every input has (the shortest length).
    fn len(&self) -> usize;

    /// Whether there are no such indices.
    ///
    /// ```
    /// use cuda_mem::device::{DeviceSlice, ZipInputs};
    /// # let s = unsafe { DeviceSlice::<u8>::from_raw_parts(core::ptr::null(), 0) };
    /// assert!(s.is_empty());
    /// ```
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements at `index`.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[doc(hidden)]
    unsafe fn __get_unchecked(&self, index: usize) -> Self::Item;
}

impl<'a, U> ZipInputs for DeviceSlice<'a, U> {
    type Item = &'a U;

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    unsafe fn __get_unchecked(&self, index: usize) -> &'a U {
        // SAFETY: `index < len` (the caller), readable for `'a`.
        unsafe { &*self.ptr.add(index) }
    }
}

impl<'a, U> ZipInputs for &DeviceSlice<'a, U> {
    type Item = &'a U;

    #[inline(always)]
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    unsafe fn __get_unchecked(&self, index: usize) -> &'a U {
        // SAFETY: forwarded.
        unsafe { (**self).__get_unchecked(index) }
    }
}

impl<A: ZipInputs, B: ZipInputs> ZipInputs for (A, B) {
    type Item = (A::Item, B::Item);

    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len().min(self.1.len())
    }

    #[inline(always)]
    unsafe fn __get_unchecked(&self, index: usize) -> Self::Item {
        // SAFETY: `index` is below both lengths (the caller).
        unsafe { (self.0.__get_unchecked(index), self.1.__get_unchecked(index)) }
    }
}

impl<A: ZipInputs, B: ZipInputs, C: ZipInputs> ZipInputs for (A, B, C) {
    type Item = (A::Item, B::Item, C::Item);

    #[inline(always)]
    fn len(&self) -> usize {
        self.0.len().min(self.1.len()).min(self.2.len())
    }

    #[inline(always)]
    unsafe fn __get_unchecked(&self, index: usize) -> Self::Item {
        // SAFETY: `index` is below every length (the caller).
        unsafe {
            (
                self.0.__get_unchecked(index),
                self.1.__get_unchecked(index),
                self.2.__get_unchecked(index),
            )
        }
    }
}
