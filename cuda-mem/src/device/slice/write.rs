//! [`DeviceSliceMut`]: a writable kernel parameter whose threads each own
//! their elements, with its loops ([`GridStrideMut`], and [`GridStrideZip`]
//! beside read-only inputs).

use core::marker::PhantomData;

use crate::device::grid_stride::Strided;
use crate::device::slice::zip::ZipInputs;
use crate::device::thread::linear;

/// A writable kernel parameter: `len` elements of `T` in device-accessible
/// memory that only this kernel uses while it runs.
///
/// `#[repr(C)] { ptr: *mut T, len: usize }`, like [`DeviceSlice`](crate::device::DeviceSlice). Every
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
    /// [`global_linear_idx()`](crate::device::global_linear_idx), or `None` when the
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
    /// `inputs` (a [`DeviceSlice`](crate::device::DeviceSlice) or a tuple of two or three) at the same
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
    /// ([`sync_threads`](crate::device::sync_threads) within a block) separates them;
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
