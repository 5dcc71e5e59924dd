//! [`DeviceAtomicSlice`]: a kernel parameter through which every thread may
//! update any element, atomically. The host passes an exclusive buffer (no
//! other work uses the memory while the kernel runs); inside the kernel all
//! access is atomic, so it is safe for any thread to touch any element.
//!
//! The ABI is that of [`DeviceSliceMut`](super::DeviceSliceMut):
//! `#[repr(C)] { ptr: *mut T, len: usize }`, 16 bytes.
//!
//! A reduction accumulates into one element: each thread sums its share,
//! each warp combines its lanes, and one lane per warp adds the warp's sum.
//!
//! ```
//! use cuda_mem::device::{grid_stride, warp, DeviceAtomicSlice, DeviceSlice, Scope};
//!
//! // On nvptx64: #[no_mangle] pub extern "ptx-kernel" fn sum(...)
//! fn sum(input: DeviceSlice<'_, u32>, total: DeviceAtomicSlice<'_, u64>) {
//!     let mine: u64 = grid_stride(input.len()).map(|i| input[i] as u64).sum();
//!     let warp_sum = warp::sum(mine);
//!     if warp::lane_id() == 0 {
//!         total[0].fetch_add(warp_sum, Scope::Device);
//!     }
//! }
//! # let (data, mut out) = ([1u32, 2, 3, 4], [10u64]);
//! # let (i, o) = unsafe { (DeviceSlice::from_raw_parts(data.as_ptr(), 4), DeviceAtomicSlice::from_raw_parts(out.as_mut_ptr(), 1)) };
//! sum(i, o); // the one-thread model on the host
//! assert_eq!(out, [20]);
//! ```

use core::marker::PhantomData;

use super::atomic::{AtomicValue, DeviceAtomic};

/// `len` elements of `T` that the kernel's threads update with atomic
/// operations (a histogram, a sum, a counter), `#[repr(C)] { ptr, len }`.
/// `Copy`: sharing it is what it is for.
///
/// ```
/// use cuda_mem::device::{DeviceAtomicSlice, Scope};
/// let mut bins = [0u32; 4];
/// // SAFETY: `bins` is live, and only accessed through the slice meanwhile.
/// let hist = unsafe { DeviceAtomicSlice::from_raw_parts(bins.as_mut_ptr(), 4) };
/// for x in [1usize, 3, 3, 9] {
///     if let Some(bin) = hist.get(x) {
///         bin.fetch_add(1, Scope::Device);
///     }
/// }
/// hist[0].fetch_add(5, Scope::Device);
/// assert_eq!(bins, [5, 1, 0, 2]);
/// ```
#[repr(C)]
pub struct DeviceAtomicSlice<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a [DeviceAtomic<T>]>,
}

impl<T> Clone for DeviceAtomicSlice<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for DeviceAtomicSlice<'_, T> {}

impl<'a, T> DeviceAtomicSlice<'a, T> {
    /// A slice of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned and points to `len` initialised elements of `T`,
    /// valid for reads and writes for `'a`, which are only accessed
    /// atomically (through this slice, by any number of threads) meanwhile.
    ///
    /// ```
    /// let mut v = [0u64; 2];
    /// // SAFETY: `v` is live and only used through the slice.
    /// let s = unsafe { cuda_mem::device::DeviceAtomicSlice::from_raw_parts(v.as_mut_ptr(), 2) };
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Self {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    ///
    /// ```
    /// # let mut v = [0u64; 2];
    /// # let s = unsafe { cuda_mem::device::DeviceAtomicSlice::from_raw_parts(v.as_mut_ptr(), 2) };
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let s = unsafe { cuda_mem::device::DeviceAtomicSlice::<u32>::from_raw_parts(core::ptr::null_mut(), 0) };
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element.
    ///
    /// ```
    /// # let mut v = [0u64; 2];
    /// # let s = unsafe { cuda_mem::device::DeviceAtomicSlice::from_raw_parts(v.as_mut_ptr(), 2) };
    /// assert_eq!(s.as_ptr(), v.as_mut_ptr());
    /// ```
    #[inline(always)]
    pub const fn as_ptr(&self) -> *mut T {
        self.ptr
    }
}

impl<'a, T: AtomicValue> DeviceAtomicSlice<'a, T> {
    /// Element `index` as an atomic, or `None` past the end.
    ///
    /// ```
    /// use cuda_mem::device::Scope;
    /// # let mut v = [0u64; 2];
    /// # let s = unsafe { cuda_mem::device::DeviceAtomicSlice::from_raw_parts(v.as_mut_ptr(), 2) };
    /// assert_eq!(s.get(1).map(|a| a.fetch_add(1, Scope::Device)), Some(0));
    /// assert!(s.get(2).is_none());
    /// ```
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<&'a DeviceAtomic<T>> {
        self.as_slice().get(index)
    }

    /// The elements as a slice of atomics.
    ///
    /// ```
    /// use cuda_mem::device::Scope;
    /// # let mut v = [1u32, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceAtomicSlice::from_raw_parts(v.as_mut_ptr(), 2) };
    /// let total: u32 = s.as_slice().iter().map(|a| a.load(Scope::Device)).sum();
    /// assert_eq!(total, 3);
    /// ```
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [DeviceAtomic<T>] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `DeviceAtomic<T>` is `#[repr(transparent)]` over `T`; the
        // `len` elements are valid for `'a` and only accessed atomically
        // (the constructor's contract).
        unsafe { core::slice::from_raw_parts(self.ptr as *const DeviceAtomic<T>, self.len) }
    }
}

impl<T: AtomicValue> core::ops::Index<usize> for DeviceAtomicSlice<'_, T> {
    type Output = DeviceAtomic<T>;

    /// Element `index`; panics (a trap on the device) past the end.
    #[inline(always)]
    #[track_caller]
    fn index(&self, index: usize) -> &DeviceAtomic<T> {
        &self.as_slice()[index]
    }
}
