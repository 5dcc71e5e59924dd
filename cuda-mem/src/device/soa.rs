//! [`SoaSlice`] and [`SoaSliceMut`]: a structure of arrays
//! ([`SoaBuffer`](crate::soa::SoaBuffer)) as a kernel parameter,
//! `#[repr(C)] { base, len }`, exactly what the host pushes; each field's
//! array is found by [`region_offset`], as the host laid it out. Whole
//! structs come and go field by field ([`SoaSlice::get`],
//! [`SoaItemMut::set`]), or each field's array is a slice of its own
//! ([`SoaSlice::fields`] through [`Slices`], [`SoaSliceMut::fields_mut`]
//! through [`SlicesMut`]). A [`SoaSliceMut`]'s elements belong to threads
//! as a [`DeviceSliceMut`]'s do (element `i` to the thread whose
//! `global_linear_idx()` is `i % total_threads()`), in every field.

use core::marker::PhantomData;

use crate::copy::device_copy::DeviceCopy;
use crate::copy::soa::{
    check_fields, region_offset, DeviceSoA, FieldFamily, FieldMaker, FieldReader, FieldVisitor,
};
use crate::device::slice::{DeviceSlice, DeviceSliceMut};
use crate::device::thread::linear;

/// `T`'s field table describes `T`, at build time (a hand-written
/// [`DeviceSoA`] impl whose table does not fails the build here).
const fn checked_layout<T: DeviceSoA>() {
    assert!(
        check_fields(T::FIELDS, size_of::<T>(), align_of::<T>()).is_none(),
        "the DeviceSoA field table does not describe the struct (derive DeviceSoA)"
    );
}

/// The address of element `i` of field `index`, of type `F`, in the
/// structure of arrays of `len` `T`s at `base`.
///
/// # Panics
/// When `F` is not the table's size and alignment for field `index` (a
/// hand-written `DeviceSoA` impl): a trap on the device.
#[inline(always)]
fn field_ptr<T: DeviceSoA, F: DeviceCopy>(
    base: *mut u8,
    len: usize,
    index: usize,
    i: usize,
) -> *mut F {
    let fits = T::FIELDS
        .get(index)
        .is_some_and(|f| f.size == size_of::<F>() && f.align == align_of::<F>());
    assert!(
        fits,
        "a DeviceSoA field made with a type not of its table's size"
    );
    base.wrapping_add(region_offset(T::FIELDS, len, index))
        .cast::<F>()
        .wrapping_add(i)
}

/// The family of read-only slices: [`SoaSlice::fields`] gives each field's
/// array as a [`DeviceSlice`].
///
/// ```
/// fn masses<'a>(f: BodyFields<cuda_mem::soa::Slices<'a>>) -> cuda_mem::device::DeviceSlice<'a, f32> {
///     f.mass
/// }
/// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Body { pos: [f32; 3], mass: f32 }
/// ```
pub struct Slices<'a>(PhantomData<&'a ()>);

impl<'a> FieldFamily for Slices<'a> {
    type Of<F: DeviceCopy + 'static> = DeviceSlice<'a, F>;
}

/// The family of written slices: [`SoaSliceMut::fields_mut`] gives each
/// field's array as a [`DeviceSliceMut`], all at once (their arrays are
/// disjoint, and each follows the ownership rule).
///
/// ```
/// fn masses<'a>(f: BodyFields<cuda_mem::soa::SlicesMut<'a>>) -> cuda_mem::device::DeviceSliceMut<'a, f32> {
///     f.mass
/// }
/// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Body { pos: [f32; 3], mass: f32 }
/// ```
pub struct SlicesMut<'a>(PhantomData<&'a mut ()>);

impl<'a> FieldFamily for SlicesMut<'a> {
    type Of<F: DeviceCopy + 'static> = DeviceSliceMut<'a, F>;
}

/// Makes each field's slice, or reads and writes each field of element
/// `i`. `made` has bit `f` set once field `f`'s written slice is made: a
/// second one would alias it (a hand-written `make_fields` that makes a
/// field twice traps).
struct Arrays<T> {
    base: *mut u8,
    len: usize,
    i: usize,
    made: u64,
    _t: PhantomData<T>,
}

impl<T> Arrays<T> {
    #[inline(always)]
    fn new(base: *mut u8, len: usize, i: usize) -> Self {
        Self {
            base,
            len,
            i,
            made: 0,
            _t: PhantomData,
        }
    }
}

impl<'a, T: DeviceSoA> FieldMaker<Slices<'a>> for Arrays<T> {
    #[inline(always)]
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> DeviceSlice<'a, F> {
        let at = field_ptr::<T, F>(self.base, self.len, index, 0);
        // SAFETY: the region of field `index` holds `len` `F`s (the host's
        // layout, `region_offset`, of an allocation that nothing writes for
        // `'a`: `SoaSlice`'s contract).
        unsafe { DeviceSlice::from_raw_parts(at, self.len) }
    }
}

impl<'a, T: DeviceSoA> FieldMaker<SlicesMut<'a>> for Arrays<T> {
    #[inline(always)]
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> DeviceSliceMut<'a, F> {
        let bit = 1u64 << (index % 64);
        assert!(self.made & bit == 0, "a DeviceSoA field's slice made twice");
        self.made |= bit;
        let at = field_ptr::<T, F>(self.base, self.len, index, 0);
        // SAFETY: as above, the region written only through this slice's
        // ownership rule (`SoaSliceMut`'s contract); the regions of two
        // fields are disjoint and each field's slice is made once (`made`;
        // `field_ptr` checked `index` against the table, which has at most
        // 64 fields), so the field slices alias nothing.
        unsafe { DeviceSliceMut::from_raw_parts(at, self.len) }
    }
}

impl<T: DeviceSoA> FieldReader for Arrays<T> {
    #[inline(always)]
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> F {
        // SAFETY: `i < len` (the callers check), inside field `index`'s
        // region, readable (no other thread writes it meanwhile: the
        // callers' contracts).
        unsafe { field_ptr::<T, F>(self.base, self.len, index, self.i).read() }
    }
}

impl<T: DeviceSoA> FieldVisitor for Arrays<T> {
    #[inline(always)]
    fn field<F: DeviceCopy>(&mut self, index: usize, value: &F) {
        // SAFETY: `i < len`, an element the calling thread owns in every
        // field (`SoaItemMut`'s contract).
        unsafe { field_ptr::<T, F>(self.base, self.len, index, self.i).write(*value) }
    }
}

/// What a structure-of-arrays slice borrows (`B`, the bytes, shared or
/// exclusive) and holds (`T`s).
type Borrow<B, T> = PhantomData<(B, fn() -> T)>;

/// A read-only kernel parameter over a structure of arrays of `T`s (a
/// `#[derive(DeviceSoA)]` struct; `{Name}Slice<'a>`): the host passes `&`
/// a [`SoaBuffer`](crate::soa::SoaBuffer). Any thread may read any struct.
///
/// ```
/// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Body { pos: [f32; 3], mass: f32 }
/// // On the host, the arrays of 2 bodies as the host lays them out:
/// let mut bytes = [0u8; 512];
/// bytes[..24].copy_from_slice(cuda_mem::bytes_of(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]]));
/// bytes[256..264].copy_from_slice(cuda_mem::bytes_of(&[7.0f32, 8.0]));
/// // SAFETY: `bytes` holds the arrays of 2 bodies and outlives the slice.
/// let bodies = unsafe { BodySlice::from_raw_parts(bytes.as_mut_ptr(), 2) };
/// assert_eq!(bodies.get(1), Some(Body { pos: [4.0, 5.0, 6.0], mass: 8.0 }));
/// assert_eq!(bodies.fields().mass.as_slice(), &[7.0, 8.0]);
/// assert_eq!(bodies.get(2), None);
/// ```
#[repr(C)]
pub struct SoaSlice<'a, T: DeviceSoA> {
    base: *mut u8,
    len: usize,
    _borrow: Borrow<&'a [u8], T>,
}

impl<'a, T: DeviceSoA> SoaSlice<'a, T> {
    /// The structure of arrays of `len` `T`s at `base`.
    ///
    /// # Safety
    /// `base` is 256-byte aligned and holds the arrays of `len` `T`s laid
    /// out by [`region_offset`], initialised and readable, which nobody
    /// writes for `'a`.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// let mut bytes = [0u8; 512];
    /// // SAFETY: zeroed arrays of one body, alive and unwritten meanwhile.
    /// let s = unsafe { BodySlice::from_raw_parts(bytes.as_mut_ptr(), 1) };
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(base: *mut u8, len: usize) -> Self {
        const { checked_layout::<T>() };
        Self {
            base,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of structs.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySlice::from_raw_parts(b.as_mut_ptr(), 1) };
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no structs.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySlice::from_raw_parts(b.as_mut_ptr(), 0) };
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Struct `i`, read field by field, or `None` past the end.
    ///
    /// ```
    /// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySlice::from_raw_parts(b.as_mut_ptr(), 1) };
    /// assert_eq!(s.get(0), Some(Body { pos: [0.0; 3], mass: 0.0 }));
    /// ```
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| T::read_fields(&mut Arrays::<T>::new(self.base, self.len, i)))
    }

    /// Each field's array, as a [`DeviceSlice`]: `bodies.fields().mass`.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySlice::from_raw_parts(b.as_mut_ptr(), 2) };
    /// let total: f32 = s.fields().mass.iter().sum();
    /// assert_eq!(total, 0.0);
    /// ```
    #[inline(always)]
    pub fn fields(&self) -> T::Fields<Slices<'a>> {
        T::make_fields(&mut Arrays::<T>::new(self.base, self.len, 0))
    }
}

impl<T: DeviceSoA> Clone for SoaSlice<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: DeviceSoA> Copy for SoaSlice<'_, T> {}

/// A written kernel parameter over a structure of arrays of `T`s
/// (`{Name}SliceMut<'a>`): the host passes `&mut` a
/// [`SoaBuffer`](crate::soa::SoaBuffer). Each thread reaches its own
/// structs, as with [`DeviceSliceMut`]: [`this_thread_mut`](Self::this_thread_mut)
/// and [`grid_stride_mut`](Self::grid_stride_mut) give [`SoaItemMut`]s,
/// [`fields_mut`](Self::fields_mut) each field's array as a
/// `DeviceSliceMut` under the same rule.
///
/// ```
/// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Body { pos: [f32; 3], mass: f32 }
/// let mut bytes = [0u8; 512];
/// // SAFETY: the arrays of 2 bodies, alive and used through `s` alone.
/// let mut s = unsafe { BodySliceMut::from_raw_parts(bytes.as_mut_ptr(), 2) };
/// for (i, mut body) in s.grid_stride_mut() {
///     body.set(Body { pos: [i as f32; 3], mass: 1.0 });
/// }
/// for (_, m) in s.fields_mut().mass.grid_stride_mut() {
///     *m *= 2.0;
/// }
/// assert_eq!(s.this_thread_mut().unwrap().get(), Body { pos: [0.0; 3], mass: 2.0 });
/// ```
#[repr(C)]
pub struct SoaSliceMut<'a, T: DeviceSoA> {
    base: *mut u8,
    len: usize,
    _borrow: Borrow<&'a mut [u8], T>,
}

impl<'a, T: DeviceSoA> SoaSliceMut<'a, T> {
    /// The structure of arrays of `len` `T`s at `base`, written by the
    /// ownership rule.
    ///
    /// # Safety
    /// As for [`SoaSlice::from_raw_parts`], writable, and nothing but this
    /// slice (and the threads of the kernel that received it) touches it
    /// for `'a`.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// let mut bytes = [0u8; 512];
    /// // SAFETY: the arrays of one body, used through `s` alone.
    /// let s = unsafe { BodySliceMut::from_raw_parts(bytes.as_mut_ptr(), 1) };
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(base: *mut u8, len: usize) -> Self {
        const { checked_layout::<T>() };
        Self {
            base,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of structs.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
    /// assert_eq!(s.len(), 1);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no structs.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 0) };
    /// assert!(s.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn item(&mut self, i: usize) -> SoaItemMut<'_, T> {
        SoaItemMut {
            arrays: Arrays::new(self.base, self.len, i),
            _borrow: PhantomData,
        }
    }

    /// The calling thread's own struct, number
    /// [`global_linear_idx()`](crate::device::global_linear_idx), or `None`
    /// when there are fewer.
    ///
    /// ```
    /// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
    /// if let Some(mut body) = s.this_thread_mut() {
    ///     body.set(Body { pos: [1.0; 3], mass: 2.0 });
    /// }
    /// ```
    #[inline(always)]
    pub fn this_thread_mut(&mut self) -> Option<SoaItemMut<'_, T>> {
        let i = linear().0;
        (i < self.len).then(|| self.item(i))
    }

    /// The calling thread's structs with their indices,
    /// `global_linear_idx() + k * total_threads()`: a grid-stride loop.
    ///
    /// ```
    /// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 3) };
    /// for (i, mut body) in s.grid_stride_mut() {
    ///     let mut v = body.get();
    ///     v.mass = i as f32;
    ///     body.set(v);
    /// }
    /// ```
    #[inline(always)]
    pub fn grid_stride_mut(&mut self) -> impl Iterator<Item = (usize, SoaItemMut<'_, T>)> {
        let (first, threads) = linear();
        let (base, len) = (self.base, self.len);
        (first..len).step_by(threads.max(1)).map(move |i| {
            (
                i,
                SoaItemMut {
                    arrays: Arrays::new(base, len, i),
                    _borrow: PhantomData,
                },
            )
        })
    }

    /// Each field's array as a [`DeviceSliceMut`], all at once, each with
    /// the ownership rule: `bodies.fields_mut().mass`.
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 2) };
    /// let mut f = s.fields_mut();
    /// for (_, m) in f.mass.grid_stride_mut() {
    ///     *m = 1.0;
    /// }
    /// ```
    #[inline(always)]
    pub fn fields_mut(&mut self) -> T::Fields<SlicesMut<'_>> {
        T::make_fields(&mut Arrays::<T>::new(self.base, self.len, 0))
    }

    /// The same structs, read-only for the rest of the borrow: any thread
    /// may read any of them only once no thread writes (after a barrier
    /// that orders the writes: `unsafe` for that reason).
    ///
    /// # Safety
    /// While the returned slice is used, no thread of the kernel writes the
    /// structs (the writes before it are ordered by a grid-wide barrier).
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 2) };
    /// // SAFETY: one thread on the host, nothing writes meanwhile.
    /// let r = unsafe { s.as_shared() };
    /// assert_eq!(r.len(), 2);
    /// ```
    #[inline(always)]
    pub unsafe fn as_shared(&self) -> SoaSlice<'_, T> {
        SoaSlice {
            base: self.base,
            len: self.len,
            _borrow: PhantomData,
        }
    }

    /// The same parameter, borrowed (see [`DeviceSliceMut::reborrow`]).
    ///
    /// ```
    /// # #[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 2) };
    /// let again = s.reborrow();
    /// assert_eq!(again.len(), 2);
    /// ```
    #[inline(always)]
    pub fn reborrow(&mut self) -> SoaSliceMut<'_, T> {
        SoaSliceMut {
            base: self.base,
            len: self.len,
            _borrow: PhantomData,
        }
    }
}

/// One struct of a [`SoaSliceMut`] that the calling thread owns: read
/// ([`get`](Self::get)) and written ([`set`](Self::set)) field by field.
///
/// ```
/// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
/// # #[repr(C)]
/// # struct Body { pos: [f32; 3], mass: f32 }
/// # let mut b = [0u8; 512];
/// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
/// let mut body: cuda_mem::soa::SoaItemMut<'_, Body> = s.this_thread_mut().unwrap();
/// body.set(Body { pos: [1.0; 3], mass: 3.0 });
/// assert_eq!(body.get().mass, 3.0);
/// ```
pub struct SoaItemMut<'b, T: DeviceSoA> {
    arrays: Arrays<T>,
    _borrow: PhantomData<&'b mut T>,
}

impl<T: DeviceSoA> SoaItemMut<'_, T> {
    /// The struct, read field by field.
    ///
    /// ```
    /// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
    /// assert_eq!(s.this_thread_mut().unwrap().get().mass, 0.0);
    /// ```
    #[inline(always)]
    pub fn get(&self) -> T {
        T::read_fields(&mut Arrays::<T>::new(
            self.arrays.base,
            self.arrays.len,
            self.arrays.i,
        ))
    }

    /// Writes `value`, field by field.
    ///
    /// ```
    /// # #[derive(Clone, Copy, Debug, PartialEq, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
    /// # #[repr(C)]
    /// # struct Body { pos: [f32; 3], mass: f32 }
    /// # let mut b = [0u8; 512];
    /// # let mut s = unsafe { BodySliceMut::from_raw_parts(b.as_mut_ptr(), 1) };
    /// s.this_thread_mut().unwrap().set(Body { pos: [0.5; 3], mass: 1.0 });
    /// ```
    #[inline(always)]
    pub fn set(&mut self, value: T) {
        value.visit_fields(&mut self.arrays);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::soa::SoaField;

    #[derive(Clone, Copy, crate::DeviceCopy)]
    #[repr(C)]
    struct Pair {
        a: u32,
        b: u32,
    }

    /// A hand-written impl whose `make_fields` makes field 0 twice: two
    /// written slices of one array would alias.
    // SAFETY: the table is a constant, the same in every build (making a
    // field twice is checked, not promised).
    unsafe impl DeviceSoA for Pair {
        const FIELDS: &'static [SoaField] =
            &[SoaField::of::<u32>("a", 0), SoaField::of::<u32>("b", 4)];
        type Fields<Fam: FieldFamily> = (Fam::Of<u32>, Fam::Of<u32>);
        fn make_fields<Fam: FieldFamily>(maker: &mut impl FieldMaker<Fam>) -> Self::Fields<Fam> {
            (maker.field::<u32>(0), maker.field::<u32>(0))
        }
        fn visit_fields(&self, visitor: &mut impl FieldVisitor) {
            visitor.field(0, &self.a);
            visitor.field(1, &self.b);
        }
        fn read_fields(reader: &mut impl FieldReader) -> Self {
            Pair {
                a: reader.field(0),
                b: reader.field(1),
            }
        }
    }

    #[test]
    #[should_panic(expected = "made twice")]
    fn a_field_made_twice_for_writing_is_refused() {
        let mut bytes = [0u8; 512];
        // SAFETY: the arrays of one pair, used through `s` alone.
        let mut s = unsafe { SoaSliceMut::<Pair>::from_raw_parts(bytes.as_mut_ptr(), 1) };
        let _aliased = s.fields_mut();
    }

    #[test]
    fn a_field_made_twice_for_reading_is_fine() {
        let mut bytes = [0u8; 512];
        bytes[..4].copy_from_slice(&7u32.to_ne_bytes());
        // SAFETY: the arrays of one pair, unwritten while `s` lives.
        let s = unsafe { SoaSlice::<Pair>::from_raw_parts(bytes.as_mut_ptr(), 1) };
        let (x, y) = s.fields();
        assert_eq!((x.as_slice(), y.as_slice()), (&[7][..], &[7][..]));
    }
}
