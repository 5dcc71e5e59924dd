//! [`DeviceSlice`] and [`DeviceSliceMut`]: a buffer or view as a kernel
//! parameter, `#[repr(C)] { ptr, len }`, exactly what the host pushes.
//!
//! A kernel runs its body once per thread, and every thread receives the same
//! parameter values. So a [`DeviceSliceMut`] in a kernel is seen by all
//! threads at once: its safe API only reaches elements that belong to the
//! calling thread, and reaching any other element is `unsafe`. A
//! [`DeviceSlice`] is read-only for everyone while the kernel runs (the host
//! side holds a shared borrow of the memory and no other queued work writes
//! it), so any thread may read any element.

use core::marker::PhantomData;

/// A read-only kernel parameter: `len` elements of `T` in device-accessible
/// memory, which nothing writes while the kernel runs.
///
/// `#[repr(C)] { ptr: *const T, len: usize }`: 16 bytes, the layout of
/// `struct { const T* ptr; size_t len; }` in CUDA C++.
///
/// ```
/// use cuda_mem::device::DeviceSlice;
/// let data = [1u32, 2, 3];
/// // SAFETY: `data` outlives the slice and nothing writes it meanwhile.
/// let s = unsafe { DeviceSlice::from_raw_parts(data.as_ptr(), data.len()) };
/// assert_eq!(s.get(1), Some(&2));
/// assert_eq!(s.get(3), None);
/// ```
#[repr(C)]
pub struct DeviceSlice<'a, T> {
    ptr: *const T,
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

/// A writable kernel parameter: `len` elements of `T` in device-accessible
/// memory that only this kernel uses while it runs.
///
/// `#[repr(C)] { ptr: *mut T, len: usize }`, like [`DeviceSlice`]. Every
/// thread of the grid holds the same `DeviceSliceMut`; the safe methods only
/// give a thread elements no other thread can reach, so two threads never
/// write one element.
///
/// ```
/// use cuda_mem::device::DeviceSliceMut;
/// let mut data = [0u32; 4];
/// // SAFETY: `data` outlives the slice, which is its only user.
/// let s = unsafe { DeviceSliceMut::from_raw_parts(data.as_mut_ptr(), data.len()) };
/// assert_eq!(s.len(), 4);
/// ```
#[repr(C)]
pub struct DeviceSliceMut<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> DeviceSlice<'a, T> {
    /// A slice of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned and points to `len` initialised elements of `T`, valid
    /// for reads and written by nobody for `'a`.
    ///
    /// ```
    /// let v = [7u8];
    /// // SAFETY: `v` is live and unchanged while `s` is.
    /// let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 1) };
    /// assert_eq!(s.len(), 1);
    /// ```
    pub const unsafe fn from_raw_parts(ptr: *const T, len: usize) -> Self {
        Self {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    ///
    /// ```
    /// # let v = [1u16, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 2) };
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::<u8>::from_raw_parts(core::ptr::null(), 0) };
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element.
    ///
    /// ```
    /// # let v = [1u16, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 2) };
    /// assert_eq!(s.as_ptr(), v.as_ptr());
    /// ```
    #[inline(always)]
    pub const fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Element `index`, or `None` past the end.
    ///
    /// ```
    /// # let v = [1u16, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 2) };
    /// assert_eq!(s.get(0), Some(&1));
    /// ```
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<&T> {
        if index < self.len {
            // SAFETY: `index < len`, and the constructor's contract makes the
            // `len` elements readable and unchanging for `'a`.
            Some(unsafe { &*self.ptr.add(index) })
        } else {
            None
        }
    }

    /// The elements as a slice.
    ///
    /// ```
    /// # let v = [1u16, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 2) };
    /// assert_eq!(s.as_slice(), &[1, 2]);
    /// ```
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the constructor's contract: `len` readable, aligned,
        // initialised elements that nobody writes for `'a`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T> core::ops::Index<usize> for DeviceSlice<'_, T> {
    type Output = T;

    /// Element `index`; panics past the end (a trap on the device).
    #[inline(always)]
    fn index(&self, index: usize) -> &T {
        &self.as_slice()[index]
    }
}

impl<'a, T> DeviceSliceMut<'a, T> {
    /// A slice of `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` is aligned and points to `len` initialised elements of `T`, valid
    /// for reads and writes, which nothing but this slice (and the threads of
    /// the kernel that received it) touches for `'a`.
    ///
    /// ```
    /// let mut v = [0u8; 3];
    /// // SAFETY: `v` is live and only used through `s`.
    /// let s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(s.len(), 3);
    /// ```
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
    /// # let mut v = [0u8; 3];
    /// # let s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(s.len(), 3);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let s = unsafe { cuda_mem::device::DeviceSliceMut::<u8>::from_raw_parts(core::ptr::null_mut(), 0) };
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element. Writing through it from several
    /// threads is up to you (`unsafe`).
    ///
    /// ```
    /// # let mut v = [0u8; 3];
    /// # let s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(s.as_mut_ptr(), v.as_mut_ptr());
    /// ```
    #[inline(always)]
    pub const fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}
