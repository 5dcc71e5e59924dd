//! [`DeviceSlice`]: a read-only kernel parameter, its ranges, its
//! grid-stride loop ([`GridStrideRef`]) and its 16-byte aligned chunks
//! ([`Align16`]).

use core::marker::PhantomData;
use core::ops::{Bound, RangeBounds};

use crate::copy::checked::CheckedDeviceCopy;
use crate::copy::device_copy::DeviceCopy;
use crate::device::grid_stride::Strided;
use crate::device::thread::linear;

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
    pub(super) ptr: *const T,
    pub(super) len: usize,
    _borrow: PhantomData<&'a [T]>,
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

    /// Element `index` as a `C` (a [`CheckedDeviceCopy`] type stored as
    /// these bits): `Ok` with the value, `Err` with the raw bits when they
    /// are not a value of `C` (anything may have written them), `None`
    /// past the end. How a kernel reads `bool`s and enums: its parameter
    /// is a slice of their bits.
    ///
    /// ```
    /// use cuda_mem::device::DeviceSlice;
    /// let flags = [1u8, 0, 7];
    /// // SAFETY: `flags` outlives the slice and nothing writes it meanwhile.
    /// let s = unsafe { DeviceSlice::from_raw_parts(flags.as_ptr(), 3) };
    /// assert_eq!(s.get_checked::<bool>(0), Some(Ok(true)));
    /// assert_eq!(s.get_checked::<bool>(1), Some(Ok(false)));
    /// assert_eq!(s.get_checked::<bool>(2), Some(Err(7)));
    /// assert_eq!(s.get_checked::<bool>(3), None);
    /// ```
    #[inline(always)]
    pub fn get_checked<C>(&self, index: usize) -> Option<Result<C, T>>
    where
        T: DeviceCopy,
        C: CheckedDeviceCopy<Bits = T>,
    {
        self.get(index)
            .map(|&bits| C::try_from_bits(bits).ok_or(bits))
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
