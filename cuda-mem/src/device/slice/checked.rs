//! [`CheckedSlice`] and [`CheckedSliceMut`]: kernel parameters over
//! [`CheckedDeviceCopy`] elements (`bool`, fieldless enums, structs of
//! them), which the memory holds as their [`Bits`](CheckedDeviceCopy::Bits).
//! Every read checks the bits and yields the value or the raw bits
//! (`Result<C, C::Bits>`); every safe write stores a value's bits. No
//! reference to a `C` in device memory ever exists, so bits that another
//! writer left (a `memset`, an `unsafe` kernel) never become a value
//! unchecked. Ownership of a [`CheckedSliceMut`]'s elements is
//! [`DeviceSliceMut`]'s (see the [`slice`](super) docs).

use core::marker::PhantomData;
use core::ops::RangeBounds;

use crate::copy::checked::CheckedDeviceCopy;
use crate::device::slice::read::DeviceSlice;
use crate::device::slice::write::DeviceSliceMut;
use crate::device::slice::zip::ZipInputs;

/// The value of `bits`, or the bits themselves when they are not a value.
#[inline(always)]
fn checked<C: CheckedDeviceCopy>(bits: C::Bits) -> Result<C, C::Bits> {
    C::try_from_bits(bits).ok_or(bits)
}

/// A read-only kernel parameter of [`CheckedDeviceCopy`] elements: the host
/// passes `&` a [`Checked`](crate::Checked) buffer or view
/// (`&flags`, `flags.slice(..)?`). Reads check the bits:
/// [`get`](Self::get) yields `Some(Ok(value))`, `Some(Err(bits))` for bits
/// that are not a value, `None` past the end.
///
/// ```
/// use cuda_mem::device::{CheckedSlice, DeviceSlice};
/// let bytes = [1u8, 0, 7];
/// // SAFETY: `bytes` outlives the slice and nothing writes it meanwhile.
/// let flags = CheckedSlice::<bool>::from_bits(unsafe { DeviceSlice::from_raw_parts(bytes.as_ptr(), 3) });
/// assert_eq!(flags.get(0), Some(Ok(true)));
/// assert_eq!(flags.get(2), Some(Err(7))); // a byte some writer left: not a bool
/// assert_eq!(flags.get(3), None);
/// ```
#[repr(transparent)]
pub struct CheckedSlice<'a, C: CheckedDeviceCopy> {
    bits: DeviceSlice<'a, C::Bits>,
    _values: PhantomData<fn() -> C>,
}

impl<'a, C: CheckedDeviceCopy> CheckedSlice<'a, C> {
    /// The elements whose bits `bits` holds. Safe: every read checks.
    ///
    /// ```
    /// # let b = [0u8];
    /// # let bits = unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 1) };
    /// let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(bits);
    /// assert_eq!(s.get(0), Some(Ok(false)));
    /// ```
    #[inline(always)]
    pub const fn from_bits(bits: DeviceSlice<'a, C::Bits>) -> Self {
        Self {
            bits,
            _values: PhantomData,
        }
    }

    /// The raw bits, unchecked (every bit pattern of `C::Bits` is one).
    ///
    /// ```
    /// # let b = [2u8];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 1) });
    /// assert_eq!(s.bits().as_slice(), &[2]);
    /// ```
    #[inline(always)]
    pub const fn bits(&self) -> DeviceSlice<'a, C::Bits> {
        self.bits
    }

    /// The number of elements.
    ///
    /// ```
    /// # let b = [0u8; 3];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 3) });
    /// assert_eq!(s.len(), 3);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.bits.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(core::ptr::null(), 0) });
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.bits.len == 0
    }

    /// Element `index`: `Some(Ok(value))`, `Some(Err(bits))` when its bits
    /// are not a value of `C`, `None` past the end.
    ///
    /// ```
    /// # let b = [1u8, 9];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 2) });
    /// assert_eq!(s.get(0), Some(Ok(true)));
    /// assert_eq!(s.get(1), Some(Err(9)));
    /// ```
    #[inline(always)]
    pub fn get(&self, index: usize) -> Option<Result<C, C::Bits>> {
        self.bits.get(index).map(|&bits| checked::<C>(bits))
    }

    /// The elements `range` as a slice of their own, or `None` when the
    /// range is out of bounds or decreasing (see [`DeviceSlice::slice`]).
    ///
    /// ```
    /// # let b = [1u8, 0, 1];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 3) });
    /// assert_eq!(s.slice(1..).unwrap().get(1), Some(Ok(true)));
    /// ```
    #[inline(always)]
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Option<Self> {
        self.bits.slice(range).map(Self::from_bits)
    }

    /// The elements in order, each checked.
    ///
    /// ```
    /// # let b = [1u8, 0, 3];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 3) });
    /// assert_eq!(s.iter().filter(|v| *v == Ok(true)).count(), 1);
    /// ```
    #[inline(always)]
    pub fn iter(&self) -> impl Iterator<Item = Result<C, C::Bits>> + 'a {
        self.bits.as_slice().iter().map(|&bits| checked::<C>(bits))
    }

    /// The calling thread's elements in a grid-stride loop, checked, with
    /// their indices (see [`DeviceSlice::grid_stride`]).
    ///
    /// ```
    /// # let b = [1u8, 1, 0];
    /// # let s = cuda_mem::device::CheckedSlice::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSlice::from_raw_parts(b.as_ptr(), 3) });
    /// let set = s.grid_stride().filter(|(_, v)| *v == Ok(true)).count();
    /// assert_eq!(set, 2); // one thread on the host: every element
    /// ```
    #[inline(always)]
    pub fn grid_stride(&self) -> impl Iterator<Item = (usize, Result<C, C::Bits>)> + 'a {
        self.bits
            .grid_stride()
            .map(|(i, &bits)| (i, checked::<C>(bits)))
    }
}

impl<C: CheckedDeviceCopy> Clone for CheckedSlice<'_, C> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: CheckedDeviceCopy> Copy for CheckedSlice<'_, C> {}

impl<C: CheckedDeviceCopy> ZipInputs for CheckedSlice<'_, C> {
    type Item = Result<C, C::Bits>;

    #[inline(always)]
    fn len(&self) -> usize {
        self.bits.len
    }

    #[inline(always)]
    unsafe fn __get_unchecked(&self, index: usize) -> Self::Item {
        // SAFETY: `index < len` (the caller's contract, passed on).
        checked::<C>(*unsafe { self.bits.__get_unchecked(index) })
    }
}

/// A written kernel parameter of [`CheckedDeviceCopy`] elements: the host
/// passes `&mut` a [`Checked`](crate::Checked) buffer or an exclusive view.
/// A thread reaches its own elements, as with [`DeviceSliceMut`], through a
/// [`CheckedMut`], which reads checked and writes values.
///
/// ```
/// use cuda_mem::device::{CheckedSliceMut, DeviceSliceMut};
/// let mut bytes = [5u8, 0];
/// // SAFETY: `bytes` outlives the slice, which is its only user.
/// let mut flags = CheckedSliceMut::<bool>::from_bits(unsafe { DeviceSliceMut::from_raw_parts(bytes.as_mut_ptr(), 2) });
/// for (_, mut flag) in flags.grid_stride_mut() {
///     let was = flag.get(); // Err(5) for the first, Ok(false) for the second
///     flag.set(was.is_err());
/// }
/// # drop(flags);
/// assert_eq!(bytes, [1, 0]); // one thread on the host: every element
/// ```
#[repr(transparent)]
pub struct CheckedSliceMut<'a, C: CheckedDeviceCopy> {
    bits: DeviceSliceMut<'a, C::Bits>,
    _values: PhantomData<fn() -> C>,
}

impl<'a, C: CheckedDeviceCopy> CheckedSliceMut<'a, C> {
    /// The elements whose bits `bits` holds. Safe: reads check, writes store
    /// values' bits, and the ownership rule is `bits`'.
    ///
    /// ```
    /// # let mut b = [0u8];
    /// # let bits = unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
    /// let s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(bits);
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline(always)]
    pub const fn from_bits(bits: DeviceSliceMut<'a, C::Bits>) -> Self {
        Self {
            bits,
            _values: PhantomData,
        }
    }

    /// The raw bits, borrowed, with the same ownership rule: for a writer of
    /// bits (any bits are allowed: every read checks).
    ///
    /// ```
    /// # let mut b = [0u8];
    /// # let mut s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 1) });
    /// if let Some(x) = s.bits_mut().this_thread_mut() { *x = 3 }
    /// assert_eq!(s.this_thread_mut().unwrap().get(), Err(3));
    /// ```
    #[inline(always)]
    pub fn bits_mut(&mut self) -> DeviceSliceMut<'_, C::Bits> {
        self.bits.reborrow()
    }

    /// The number of elements.
    ///
    /// ```
    /// # let mut b = [0u8; 2];
    /// # let s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 2) });
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(core::ptr::null_mut(), 0) });
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The calling thread's own element, number
    /// [`global_linear_idx()`](crate::device::global_linear_idx), or `None`
    /// when the slice is shorter (see [`DeviceSliceMut::this_thread_mut`]).
    ///
    /// ```
    /// # let mut b = [0u8; 2];
    /// # let mut s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 2) });
    /// if let Some(mut x) = s.this_thread_mut() {
    ///     x.set(true);
    /// }
    /// # drop(s);
    /// assert_eq!(b, [1, 0]); // thread 0 on the host
    /// ```
    #[inline(always)]
    pub fn this_thread_mut(&mut self) -> Option<CheckedMut<'_, C>> {
        self.bits.this_thread_mut().map(CheckedMut::new)
    }

    /// The calling thread's elements with their indices, in a grid-stride
    /// loop (see [`DeviceSliceMut::grid_stride_mut`]).
    ///
    /// ```
    /// # let mut b = [0u8; 3];
    /// # let mut s = cuda_mem::device::CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 3) });
    /// for (i, mut x) in s.grid_stride_mut() {
    ///     x.set(i % 2 == 0);
    /// }
    /// # drop(s);
    /// assert_eq!(b, [1, 0, 1]);
    /// ```
    #[inline(always)]
    pub fn grid_stride_mut(&mut self) -> impl Iterator<Item = (usize, CheckedMut<'_, C>)> {
        self.bits
            .grid_stride_mut()
            .map(|(i, bits)| (i, CheckedMut::new(bits)))
    }

    /// The calling thread's elements with the elements of `inputs` at the
    /// same indices (see [`DeviceSliceMut::grid_stride_zip`]); a
    /// [`CheckedSlice`] input yields checked values.
    ///
    /// ```
    /// use cuda_mem::device::{CheckedSliceMut, DeviceSlice, DeviceSliceMut};
    /// let (mut out, x) = ([0u8; 3], [1.0f32, -2.0, 3.0]);
    /// # let mut out_s = CheckedSliceMut::<bool>::from_bits(unsafe { DeviceSliceMut::from_raw_parts(out.as_mut_ptr(), 3) });
    /// # let xs = unsafe { DeviceSlice::from_raw_parts(x.as_ptr(), 3) };
    /// for (_, mut positive, &x) in out_s.grid_stride_zip(xs) {
    ///     positive.set(x > 0.0);
    /// }
    /// # drop(out_s);
    /// assert_eq!(out, [1, 0, 1]);
    /// ```
    #[inline(always)]
    pub fn grid_stride_zip<I: ZipInputs>(
        &mut self,
        inputs: I,
    ) -> impl Iterator<Item = (usize, CheckedMut<'_, C>, I::Item)> {
        self.bits
            .grid_stride_zip(inputs)
            .map(|(i, bits, input)| (i, CheckedMut::new(bits), input))
    }

    /// The calling thread's own element with the elements of `inputs` at
    /// the same index, or `None` past the end of any (see
    /// [`DeviceSliceMut::this_thread_zip`]).
    ///
    /// ```
    /// # use cuda_mem::device::{CheckedSliceMut, CheckedSlice, DeviceSlice, DeviceSliceMut};
    /// # let (mut out, inp) = ([0u8; 2], [1u8, 0]);
    /// # let mut out_s = CheckedSliceMut::<bool>::from_bits(unsafe { DeviceSliceMut::from_raw_parts(out.as_mut_ptr(), 2) });
    /// # let flags = CheckedSlice::<bool>::from_bits(unsafe { DeviceSlice::from_raw_parts(inp.as_ptr(), 2) });
    /// if let Some((mut not, Ok(flag))) = out_s.this_thread_zip(flags) {
    ///     not.set(!flag);
    /// }
    /// # drop(out_s);
    /// assert_eq!(out, [0, 0]); // thread 0: !true
    /// ```
    #[inline(always)]
    pub fn this_thread_zip<I: ZipInputs>(
        &mut self,
        inputs: I,
    ) -> Option<(CheckedMut<'_, C>, I::Item)> {
        self.bits
            .this_thread_zip(inputs)
            .map(|(bits, input)| (CheckedMut::new(bits), input))
    }

    /// The same parameter, borrowed (see [`DeviceSliceMut::reborrow`]).
    ///
    /// ```
    /// use cuda_mem::device::CheckedSliceMut;
    /// fn clear(mut s: CheckedSliceMut<'_, bool>) {
    ///     for (_, mut x) in s.grid_stride_mut() { x.set(false) }
    /// }
    /// # let mut b = [1u8; 2];
    /// # let mut s = CheckedSliceMut::<bool>::from_bits(unsafe { cuda_mem::device::DeviceSliceMut::from_raw_parts(b.as_mut_ptr(), 2) });
    /// clear(s.reborrow());
    /// assert_eq!(s.len(), 2);
    /// ```
    #[inline(always)]
    pub fn reborrow(&mut self) -> CheckedSliceMut<'_, C> {
        CheckedSliceMut::from_bits(self.bits.reborrow())
    }
}

/// One element of a [`CheckedSliceMut`] that the calling thread owns: its
/// bits, read checked ([`get`](Self::get)) and written as a value
/// ([`set`](Self::set)) or raw ([`bits_mut`](Self::bits_mut)).
///
/// ```
/// use cuda_mem::device::CheckedMut;
/// let mut byte = 4u8;
/// let mut flag = CheckedMut::<bool>::new(&mut byte);
/// assert_eq!(flag.get(), Err(4));
/// flag.set(true);
/// assert_eq!(flag.get(), Ok(true));
/// ```
pub struct CheckedMut<'b, C: CheckedDeviceCopy> {
    bits: &'b mut C::Bits,
}

impl<'b, C: CheckedDeviceCopy> CheckedMut<'b, C> {
    /// The element whose bits `bits` are. Safe: reads check.
    ///
    /// ```
    /// let mut b = 0u8;
    /// assert_eq!(cuda_mem::device::CheckedMut::<bool>::new(&mut b).get(), Ok(false));
    /// ```
    #[inline(always)]
    pub fn new(bits: &'b mut C::Bits) -> Self {
        Self { bits }
    }

    /// The value, or the raw bits when they are not one.
    ///
    /// ```
    /// let mut b = 1u8;
    /// assert_eq!(cuda_mem::device::CheckedMut::<bool>::new(&mut b).get(), Ok(true));
    /// ```
    #[inline(always)]
    pub fn get(&self) -> Result<C, C::Bits> {
        checked::<C>(*self.bits)
    }

    /// Stores `value`'s bits.
    ///
    /// ```
    /// let mut b = 7u8;
    /// cuda_mem::device::CheckedMut::<bool>::new(&mut b).set(false);
    /// assert_eq!(b, 0);
    /// ```
    #[inline(always)]
    pub fn set(&mut self, value: C) {
        *self.bits = value.into_bits();
    }

    /// The raw bits, unchecked.
    ///
    /// ```
    /// let mut b = 9u8;
    /// assert_eq!(cuda_mem::device::CheckedMut::<bool>::new(&mut b).bits(), 9);
    /// ```
    #[inline(always)]
    pub fn bits(&self) -> C::Bits {
        *self.bits
    }

    /// The raw bits, to write any pattern (reads check).
    ///
    /// ```
    /// let mut b = 0u8;
    /// *cuda_mem::device::CheckedMut::<bool>::new(&mut b).bits_mut() = 2;
    /// assert_eq!(b, 2);
    /// ```
    #[inline(always)]
    pub fn bits_mut(&mut self) -> &mut C::Bits {
        self.bits
    }
}
