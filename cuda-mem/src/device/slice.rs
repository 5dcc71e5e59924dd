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
//!
//! # Who owns which element of a `DeviceSliceMut`
//!
//! Element `i` belongs to the thread whose
//! [`global_linear_idx`] is `i % total_threads()`.
//! That rule depends only on the launch, never on what a thread did with its
//! copy of the parameter, so every safe method follows it:
//! [`this_thread_mut`](DeviceSliceMut::this_thread_mut) gives element
//! `global_linear_idx()` and [`grid_stride_mut`](DeviceSliceMut::grid_stride_mut)
//! the elements `global_linear_idx() + k * total_threads()`, and both borrow
//! the slice mutably, so a thread holds at most one `&mut` to each of its
//! elements. (A safe method that re-based indices, such as `split_at_mut`,
//! would break the rule: a thread that split its copy would reach elements
//! that another, which did not, also reaches. There is none.) Reading or
//! writing any other element is `unsafe`: [`read`](DeviceSliceMut::read),
//! [`write`](DeviceSliceMut::write), [`get_mut`](DeviceSliceMut::get_mut).

use core::marker::PhantomData;

use super::grid_stride::GridStride;
use super::thread::{global_linear_idx, total_threads};

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
    pub fn get(&self, index: usize) -> Option<&'a T> {
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
    pub fn as_slice(&self) -> &'a [T] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the constructor's contract: `len` readable, aligned,
        // initialised elements that nobody writes for `'a`.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The elements, in order.
    ///
    /// ```
    /// # let v = [1u16, 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 2) };
    /// assert_eq!(s.iter().sum::<u16>(), 3);
    /// ```
    #[inline(always)]
    pub fn iter(&self) -> core::slice::Iter<'a, T> {
        self.as_slice().iter()
    }
}

impl<T> Clone for DeviceSlice<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

/// Every thread may copy a read-only slice: nobody writes it.
impl<T> Copy for DeviceSlice<'_, T> {}

impl<T> core::ops::Deref for DeviceSlice<'_, T> {
    type Target = [T];

    /// The elements as a slice ([`DeviceSlice::as_slice`]).
    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<'a, T> IntoIterator for DeviceSlice<'a, T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<'a, T> IntoIterator for &DeviceSlice<'a, T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;

    #[inline(always)]
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl<T> core::ops::Index<usize> for DeviceSlice<'_, T> {
    type Output = T;

    /// Element `index`; panics past the end (a trap on the device).
    #[inline(always)]
    #[track_caller]
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
    /// The calling thread's own element, number
    /// [`global_linear_idx()`](super::global_linear_idx), or `None` when the
    /// slice is shorter: the one-element-per-thread kernel, without `unsafe`.
    ///
    /// ```
    /// # let mut v = [0u32; 3];
    /// # let mut s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 3) };
    /// if let Some(x) = s.this_thread_mut() {
    ///     *x = 7; // on the host, the one thread is thread 0
    /// }
    /// # drop(s);
    /// assert_eq!(v, [7, 0, 0]);
    /// ```
    #[inline(always)]
    pub fn this_thread_mut(&mut self) -> Option<&mut T> {
        let i = global_linear_idx();
        if i < self.len {
            // SAFETY: `i < len`, inside the slice (the constructor's
            // contract). Element `i` belongs to this thread alone (module
            // docs: `i % total_threads()` is this thread's index, as `i` is),
            // and the `&mut self` borrow keeps this thread from reaching it
            // again while the reference lives.
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }

    /// The calling thread's elements with their indices,
    /// `global_linear_idx() + k * total_threads()`: a grid-stride loop that
    /// covers the slice with any grid, without `unsafe`.
    ///
    /// ```
    /// # let mut v = [0u32; 4];
    /// # let mut s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 4) };
    /// for (i, x) in s.grid_stride_mut() {
    ///     *x = i as u32 * 10;
    /// }
    /// # drop(s);
    /// assert_eq!(v, [0, 10, 20, 30]); // one thread on the host: all of them
    /// ```
    #[inline(always)]
    pub fn grid_stride_mut(&mut self) -> GridStrideMut<'_, T> {
        GridStrideMut {
            ptr: self.ptr,
            indices: GridStride::new(global_linear_idx(), self.len, total_threads()),
            _borrow: PhantomData,
        }
    }

    /// The same parameter, borrowed: to pass it to a function and keep using
    /// it after. Indices and ownership are those of `self`.
    ///
    /// ```
    /// use cuda_mem::device::DeviceSliceMut;
    /// fn set_mine(mut s: DeviceSliceMut<'_, u8>) {
    ///     for (_, x) in s.grid_stride_mut() { *x = 1 }
    /// }
    /// # let mut v = [0u8; 2];
    /// # let mut s = unsafe { DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 2) };
    /// set_mine(s.reborrow());
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub fn reborrow(&mut self) -> DeviceSliceMut<'_, T> {
        DeviceSliceMut {
            ptr: self.ptr,
            len: self.len,
            _borrow: PhantomData,
        }
    }

    /// Reads element `index`, which may belong to another thread. Panics (a
    /// trap on the device) past the end.
    ///
    /// # Safety
    /// No other thread writes element `index` while this reads it: after it
    /// wrote it, a barrier or fence that orders the two accesses
    /// ([`sync_threads`](super::sync_threads) within a block) separates them;
    /// and no `&mut` reference to the element is alive in this thread.
    ///
    /// ```
    /// # let mut v = [5u32, 6];
    /// # let s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 2) };
    /// // SAFETY: one thread on the host; nothing else touches the slice.
    /// assert_eq!(unsafe { s.read(1) }, 6);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn read(&self, index: usize) -> T
    where
        T: Copy,
    {
        assert!(index < self.len, "DeviceSliceMut::read past the end");
        // SAFETY: in bounds (checked above); no concurrent write (the caller).
        unsafe { self.ptr.add(index).read() }
    }

    /// Writes element `index`, which may belong to another thread (without
    /// dropping the old value). Panics (a trap on the device) past the end.
    ///
    /// # Safety
    /// No other thread reads or writes element `index` while this writes it
    /// (accesses ordered by barriers or fences, as for [`read`](Self::read)),
    /// and no reference to the element is alive in this thread.
    ///
    /// ```
    /// # let mut v = [0u32; 2];
    /// # let s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 2) };
    /// // SAFETY: one thread on the host; nothing else touches the slice.
    /// unsafe { s.write(1, 9) };
    /// # drop(s);
    /// assert_eq!(v, [0, 9]);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, index: usize, value: T) {
        assert!(index < self.len, "DeviceSliceMut::write past the end");
        // SAFETY: in bounds (checked above); no concurrent access (the caller).
        unsafe { self.ptr.add(index).write(value) }
    }

    /// A mutable reference to element `index`, which may belong to another
    /// thread, or `None` past the end.
    ///
    /// # Safety
    /// While the reference lives, no other thread reads or writes the element
    /// (see [`write`](Self::write)).
    ///
    /// ```
    /// # let mut v = [0u32; 2];
    /// # let mut s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 2) };
    /// // SAFETY: one thread on the host; nothing else touches the slice.
    /// if let Some(x) = unsafe { s.get_mut(1) } {
    ///     *x += 3;
    /// }
    /// # drop(s);
    /// assert_eq!(v, [0, 3]);
    /// ```
    #[inline(always)]
    pub unsafe fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        if index < self.len {
            // SAFETY: in bounds; exclusive for the reference's life (the
            // caller), and `&mut self` stops this thread's safe methods.
            Some(unsafe { &mut *self.ptr.add(index) })
        } else {
            None
        }
    }
}

/// The iterator of [`DeviceSliceMut::grid_stride_mut`]: `(index, &mut
/// element)` for the calling thread's elements.
///
/// ```
/// # let mut v = [0u8; 3];
/// # let mut s = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(v.as_mut_ptr(), 3) };
/// let it: cuda_mem::device::GridStrideMut<'_, u8> = s.grid_stride_mut();
/// assert_eq!(it.count(), 3);
/// ```
pub struct GridStrideMut<'b, T> {
    ptr: *mut T,
    indices: GridStride,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T> Iterator for GridStrideMut<'b, T> {
    type Item = (usize, &'b mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.indices.next()?;
        // SAFETY: `i < len` (the indices end at `len`); element `i` belongs
        // to this thread (`i = global_linear_idx() + k * total_threads()`),
        // the indices strictly increase so no element is yielded twice, and
        // the slice stays mutably borrowed for `'b`.
        Some((i, unsafe { &mut *self.ptr.add(i) }))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

impl<T> ExactSizeIterator for GridStrideMut<'_, T> {}
