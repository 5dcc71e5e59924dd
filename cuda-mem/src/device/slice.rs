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
//! [`global_linear_idx`](super::global_linear_idx) is `i % total_threads()`.
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

use core::ops::{Bound, RangeBounds};

use super::grid_stride::Strided;
use super::thread::linear;

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
            // `len` elements readable and unchanging for `'a` (so the
            // address is not null).
            Some(unsafe {
                let element = self.ptr.add(index);
                core::hint::assert_unchecked(!element.is_null());
                &*element
            })
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

impl<'a, T> DeviceSlice<'a, T> {
    /// The elements `range` (any range of `usize`: `a..b`, `a..`, `..b`,
    /// `..=b`, `..`) as a slice of their own, or `None` when the range is
    /// out of bounds or decreasing. A read-only slice can be cut anywhere:
    /// nobody writes it.
    ///
    /// ```
    /// # let v = [1u16, 2, 3, 4];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 4) };
    /// let middle = s.slice(1..3).unwrap();
    /// assert_eq!(middle.as_slice(), &[2, 3]);
    /// assert_eq!(s.slice(2..).unwrap().len(), 2);
    /// assert!(s.slice(3..5).is_none());
    /// ```
    #[inline(always)]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Option<DeviceSlice<'a, T>> {
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s.checked_add(1)?,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e.checked_add(1)?,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        if start <= end && end <= self.len {
            Some(DeviceSlice {
                // SAFETY: `start <= len`: at most one past the end.
                ptr: unsafe { self.ptr.add(start) },
                len: end - start,
                _borrow: PhantomData,
            })
        } else {
            None
        }
    }

    /// The calling thread's elements in a grid-stride loop, with their
    /// indices: `(i, &self[i])` for `i = global_linear_idx() + k *
    /// total_threads()` below `len`. In bounds by construction: the loop has
    /// one compare per element and no bounds check. Every thread may read
    /// every element; this is the share of a loop in which each element is
    /// read once (a reduction, say).
    ///
    /// ```
    /// # let v = [1u32, 2, 3];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 3) };
    /// let sum: u32 = s.grid_stride().map(|(_, &x)| x).sum();
    /// assert_eq!(sum, 6); // one thread on the host: every element
    /// ```
    #[inline(always)]
    pub fn grid_stride(&self) -> GridStrideRef<'a, T> {
        let (index, threads) = linear();
        GridStrideRef {
            ptr: self.ptr,
            indices: Strided::new(index, self.len, threads),
            _borrow: PhantomData,
        }
    }

    /// The elements as `N`-element chunks aligned to 16 bytes, for 16-byte
    /// (vector) loads: `(head, chunks, tail)`, where `head` holds the
    /// elements before the first 16-byte boundary, `chunks` the aligned
    /// chunks ([`Align16<[T; N]>`](Align16), whose loads compile to one
    /// `ld.global.v4`, `.v2` or 16-byte load), and `tail` what is left. `N`
    /// elements must be 16 bytes (`N = 4` for `f32` and `u32`, `2` for
    /// `f64`, `16` for `u8`); another `N` fails the build.
    ///
    /// ```
    /// # let v = [1u32; 11];
    /// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 11) };
    /// let (head, chunks, tail) = s.aligned_chunks::<4>();
    /// assert_eq!(head.len() + 4 * chunks.len() + tail.len(), 11);
    /// let sum: u32 = head.iter().chain(tail.iter()).sum::<u32>()
    ///     + chunks.iter().map(|c| c.0.iter().sum::<u32>()).sum::<u32>();
    /// assert_eq!(sum, 11);
    /// ```
    #[inline(always)]
    pub fn aligned_chunks<const N: usize>(
        &self,
    ) -> (
        DeviceSlice<'a, T>,
        DeviceSlice<'a, Align16<[T; N]>>,
        DeviceSlice<'a, T>,
    ) {
        const {
            assert!(
                size_of::<[T; N]>() == 16,
                "aligned_chunks::<N>: N elements must be 16 bytes (4 of a 4-byte type, 2 of an \
                 8-byte one, 16 bytes)"
            );
        }
        let head = match self.ptr.align_offset(16) {
            offset if offset <= self.len => offset,
            _ => self.len,
        };
        let chunks = (self.len - head) / N;
        let tail = head + chunks * N;
        let cut = |start: usize, len: usize| DeviceSlice {
            // SAFETY: `start <= len` (all three parts are inside the slice).
            ptr: unsafe { self.ptr.add(start) },
            len,
            _borrow: PhantomData,
        };
        (
            cut(0, head),
            DeviceSlice {
                // The aligned chunks: `N` elements each, 16 bytes, starting
                // on a 16-byte boundary, all inside the slice.
                ptr: cut(head, 0).ptr.cast(),
                len: chunks,
                _borrow: PhantomData,
            },
            cut(tail, self.len - tail),
        )
    }
}

/// `N` elements (16 bytes in all) on a 16-byte boundary: what
/// [`DeviceSlice::aligned_chunks`] yields. A load of one is a single 16-byte
/// load.
///
/// ```
/// let c = cuda_mem::device::Align16([1u32, 2, 3, 4]);
/// assert_eq!(core::mem::align_of_val(&c), 16);
/// assert_eq!(c.0[3], 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Align16<A>(pub A);

/// The iterator of [`DeviceSlice::grid_stride`]: `(index, &element)` for
/// the calling thread's elements.
///
/// ```
/// # let v = [5u8; 3];
/// # let s = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(v.as_ptr(), 3) };
/// let it: cuda_mem::device::GridStrideRef<'_, u8> = s.grid_stride();
/// assert_eq!(it.len(), 3);
/// ```
#[derive(Clone)]
pub struct GridStrideRef<'a, T> {
    ptr: *const T,
    indices: Strided,
    _borrow: PhantomData<&'a [T]>,
}

impl<'a, T> Iterator for GridStrideRef<'a, T> {
    type Item = (usize, &'a T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.indices.next()?;
        // SAFETY: `i < len` (the indices end at `len`), and the slice's
        // elements are readable for `'a`.
        Some((i, unsafe { &*self.ptr.add(i) }))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

impl<T> ExactSizeIterator for GridStrideRef<'_, T> {}
impl<T> core::iter::FusedIterator for GridStrideRef<'_, T> {}

/// Read-only kernel parameters that a [`DeviceSliceMut`] loop can walk
/// beside its own elements ([`DeviceSliceMut::grid_stride_zip`],
/// [`DeviceSliceMut::this_thread_zip`]): a [`DeviceSlice`] (or `&` one), or
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

impl<T, I: core::slice::SliceIndex<[T]>> core::ops::Index<I> for DeviceSlice<'_, T> {
    type Output = I::Output;

    /// Element `index` (a `usize`), or the elements of a range (`s[a..b]`);
    /// panics out of bounds (a trap on the device).
    #[inline(always)]
    #[track_caller]
    fn index(&self, index: I) -> &I::Output {
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
        let i = linear().0;
        if i < self.len {
            // SAFETY: `i < len`, inside the slice (the constructor's
            // contract), so not at null. Element `i` belongs to this thread
            // alone (module docs: `i % total_threads()` is this thread's
            // index, as `i` is), and the `&mut self` borrow keeps this
            // thread from reaching it again while the reference lives.
            Some(unsafe {
                let element = self.ptr.add(i);
                core::hint::assert_unchecked(!element.is_null());
                &mut *element
            })
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
        let (index, threads) = linear();
        GridStrideMut {
            ptr: self.ptr,
            indices: Strided::new(index, self.len, threads),
            _borrow: PhantomData,
        }
    }

    /// The calling thread's elements together with the elements of
    /// `inputs` (a [`DeviceSlice`] or a tuple of two or three) at the same
    /// indices: `(i, &mut self[i], inputs[i])` for the indices of
    /// [`grid_stride_mut`](Self::grid_stride_mut) that every input has too.
    /// In bounds by construction: one compare per element, no bounds check
    /// (where `input.get(i)` in a `grid_stride_mut` loop checks every
    /// index).
    ///
    /// ```
    /// # let (mut y, x) = ([1.0f32, 2.0, 3.0], [10.0f32, 20.0]);
    /// # let mut ys = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(y.as_mut_ptr(), 3) };
    /// # let xs = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(x.as_ptr(), 2) };
    /// for (_, y, &x) in ys.grid_stride_zip(xs) {
    ///     *y = cuda_mem::device::math::fma(2.0f32, x, *y); // y = 2x + y, one `fma.rn`
    /// }
    /// # drop(ys);
    /// assert_eq!(y, [21.0, 42.0, 3.0]); // index 2 has no `x`
    /// ```
    #[inline(always)]
    pub fn grid_stride_zip<I: ZipInputs>(&mut self, inputs: I) -> GridStrideZip<'_, T, I> {
        let (index, threads) = linear();
        GridStrideZip {
            ptr: self.ptr,
            indices: Strided::new(index, self.len.min(inputs.len()), threads),
            inputs,
            _borrow: PhantomData,
        }
    }

    /// The calling thread's own element ([`this_thread_mut`](Self::this_thread_mut))
    /// with the elements of `inputs` at the same index, or `None` when the
    /// index is past the end of any of them: the one-element-per-thread
    /// kernel with one compare.
    ///
    /// ```
    /// # let (mut y, x) = ([1u32, 2], [5u32, 6]);
    /// # let mut ys = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(y.as_mut_ptr(), 2) };
    /// # let xs = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(x.as_ptr(), 2) };
    /// if let Some((y, &x)) = ys.this_thread_zip(xs) {
    ///     *y += x;
    /// }
    /// # drop(ys);
    /// assert_eq!(y, [6, 2]); // thread 0 on the host
    /// ```
    #[inline(always)]
    pub fn this_thread_zip<I: ZipInputs>(&mut self, inputs: I) -> Option<(&mut T, I::Item)> {
        let i = linear().0;
        if i < self.len && i < inputs.len() {
            // SAFETY: `i` is below both lengths; element `i` of `self`
            // belongs to this thread (see `this_thread_mut`), borrowed
            // through `&mut self`. The address of an element is not null
            // (telling the compiler so drops the `Option`'s null test).
            Some(unsafe {
                let element = self.ptr.add(i);
                core::hint::assert_unchecked(!element.is_null());
                (&mut *element, inputs.__get_unchecked(i))
            })
        } else {
            None
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
    indices: Strided,
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
impl<T> core::iter::FusedIterator for GridStrideMut<'_, T> {}

/// The iterator of [`DeviceSliceMut::grid_stride_zip`]: `(index, &mut
/// element, inputs' elements)` for the calling thread's indices.
///
/// ```
/// # let (mut y, x) = ([0u8; 3], [1u8; 3]);
/// # let mut ys = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(y.as_mut_ptr(), 3) };
/// # let xs = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(x.as_ptr(), 3) };
/// let it: cuda_mem::device::GridStrideZip<'_, u8, _> = ys.grid_stride_zip(xs);
/// assert_eq!(it.count(), 3);
/// ```
pub struct GridStrideZip<'b, T, I> {
    ptr: *mut T,
    indices: Strided,
    inputs: I,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T, I: ZipInputs> Iterator for GridStrideZip<'b, T, I> {
    type Item = (usize, &'b mut T, I::Item);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let i = self.indices.next()?;
        // SAFETY: `i` is below the slice's length and every input's (the
        // indices end at the least of them); element `i` belongs to this
        // thread, yielded once (the indices increase), borrowed for `'b`.
        Some(unsafe { (i, &mut *self.ptr.add(i), self.inputs.__get_unchecked(i)) })
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

impl<T, I: ZipInputs> ExactSizeIterator for GridStrideZip<'_, T, I> {}
