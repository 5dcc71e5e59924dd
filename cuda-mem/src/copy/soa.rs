//! [`DeviceSoA`]: `#[repr(C)]` structs that cuda-mem can keep as a
//! structure of arrays (each field in an array of its own), with the table
//! of their fields ([`SoaField`]) and the generic pieces that
//! `#[derive(DeviceSoA)]` fills in: a struct of one handle per field for
//! any [`FieldFamily`] (host views, device slices), made by a
//! [`FieldMaker`], and a [`FieldVisitor`] over a value's fields. Shared by
//! the host and kernels (`no_std`).

use crate::copy::device_copy::DeviceCopy;

/// The most fields a [`DeviceSoA`] struct has (one transposition moves them
/// all).
pub const MAX_FIELDS: usize = 64;

/// One field of a [`DeviceSoA`] struct: its name, its offset in the struct,
/// and its type's size and alignment.
///
/// ```
/// use cuda_mem::soa::SoaField;
/// let f = SoaField::of::<[f32; 3]>("pos", 0);
/// assert_eq!((f.size, f.align), (12, 4));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoaField {
    /// The field's name.
    pub name: &'static str,
    /// Its offset in the struct, in bytes.
    pub offset: usize,
    /// `size_of` its type.
    pub size: usize,
    /// `align_of` its type.
    pub align: usize,
}

impl SoaField {
    /// The field `name` of type `F` at `offset`.
    ///
    /// ```
    /// let f = cuda_mem::soa::SoaField::of::<u64>("id", 8);
    /// assert_eq!(f.offset + f.size, 16);
    /// ```
    pub const fn of<F: DeviceCopy>(name: &'static str, offset: usize) -> Self {
        Self {
            name,
            offset,
            size: core::mem::size_of::<F>(),
            align: core::mem::align_of::<F>(),
        }
    }
}

impl SoaField {
    /// The field `name` at `offset` whose type is what `field` returns a
    /// reference to (`|s: &S| &s.name`, a closure over the struct itself):
    /// what `#[derive(DeviceSoA)]` builds its table with, so that each
    /// entry's size is the real field's, whatever its type's tokens expand
    /// to elsewhere.
    #[doc(hidden)]
    pub const fn __of_field<S, F: DeviceCopy>(
        name: &'static str,
        offset: usize,
        field: fn(&S) -> &F,
    ) -> Self {
        let _ = field;
        Self::of::<F>(name, offset)
    }
}

/// The handle of field `index` of `S`, of the type `field` returns a
/// reference to: `#[derive(DeviceSoA)]`'s `make_fields`, which names no
/// field type.
#[doc(hidden)]
pub fn __make_field<Fam: FieldFamily, S, F: DeviceCopy + 'static>(
    maker: &mut impl FieldMaker<Fam>,
    index: usize,
    field: fn(&S) -> &F,
) -> Fam::Of<F> {
    let _ = field;
    maker.field::<F>(index)
}

/// The `unsafe impl` of [`DeviceSoA`] that `#[derive(DeviceSoA)]` asks
/// for, through `$crate` (a `crate = "..."` path only locates it): the
/// table read off the struct `$name` itself, each field's offset by
/// `offset_of!` and its size and alignment by the type of `&s.field`, in
/// the order given, which `check_fields` (const-asserted here) holds to
/// memory order; every field listed once (`read_fields` builds the struct
/// with all of them). No field type is named, so none is expanded again.
///
/// ```
/// #[derive(Clone, Copy, cuda_mem::DeviceCopy)]
/// #[repr(C)]
/// struct P { pos: [f32; 3], mass: f32 }
/// #[derive(Clone, Copy)]
/// struct PFields<Fam: cuda_mem::soa::FieldFamily> {
///     pos: Fam::Of<[f32; 3]>,
///     mass: Fam::Of<f32>,
/// }
/// cuda_mem::__device_soa_impl!(P, PFields, [pos 0, mass 1]);
/// use cuda_mem::soa::DeviceSoA;
/// assert_eq!(P::FIELDS[1].offset, 12);
/// ```
///
/// A field left out, or in another order, does not compile:
///
/// ```compile_fail
/// #[derive(Clone, Copy, cuda_mem::DeviceCopy)]
/// #[repr(C)]
/// struct P { pos: [f32; 3], mass: f32 }
/// struct PFields<Fam: cuda_mem::soa::FieldFamily> { pos: Fam::Of<[f32; 3]>, mass: Fam::Of<f32> }
/// cuda_mem::__device_soa_impl!(P, PFields, [mass 0, pos 1]);
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __device_soa_impl {
    ($name:ident, $fields:ident, [$($field:ident $index:literal),+ $(,)?]) => {
        const _: () = {
            const FIELDS: &[$crate::soa::SoaField] = &[$(
                $crate::soa::SoaField::__of_field(
                    $crate::__private::core::stringify!($field),
                    $crate::__private::core::mem::offset_of!($name, $field),
                    |s: &$name| &s.$field,
                ),
            )+];
            $crate::__private::core::assert!(
                $crate::soa::check_fields(
                    FIELDS,
                    $crate::__private::core::mem::size_of::<$name>(),
                    $crate::__private::core::mem::align_of::<$name>(),
                )
                .is_none(),
                "`#[derive(DeviceSoA)]`: the struct's fields do not tile it in declaration order \
                 (it needs `#[repr(C)]`, no padding and no zero-sized fields)"
            );
            // SAFETY: `FIELDS` is read off `$name`'s own fields (offsets by
            // `offset_of!`, sizes and alignments by their types), so it is
            // the same in every build whose layout is the same (the launch
            // checks that by the layout fingerprint); it tiles the struct in
            // memory order (asserted above); each field is made, visited and
            // read as its own type, at its own index.
            unsafe impl $crate::soa::DeviceSoA for $name {
                const FIELDS: &'static [$crate::soa::SoaField] = FIELDS;
                type Fields<Fam: $crate::soa::FieldFamily> = $fields<Fam>;
                fn make_fields<Fam: $crate::soa::FieldFamily>(
                    maker: &mut impl $crate::soa::FieldMaker<Fam>,
                ) -> $fields<Fam> {
                    $fields {
                        $($field: $crate::soa::__make_field(maker, $index, |s: &$name| &s.$field),)+
                    }
                }
                fn visit_fields(&self, visitor: &mut impl $crate::soa::FieldVisitor) {
                    $($crate::soa::FieldVisitor::field(visitor, $index, &self.$field);)+
                }
                fn read_fields(reader: &mut impl $crate::soa::FieldReader) -> Self {
                    $name {
                        $($field: $crate::soa::FieldReader::field(reader, $index),)+
                    }
                }
            }
        };
    };
}

/// What each field of a [`DeviceSoA`] struct becomes in one use of it: a
/// view of its array on the host ([`Views`](crate::soa::Views),
/// [`ViewsMut`](crate::soa::ViewsMut)), or something of your own.
///
/// ```
/// use cuda_mem::soa::FieldFamily;
/// /// Each field as its size.
/// struct Sizes;
/// impl FieldFamily for Sizes {
///     type Of<F: cuda_mem::DeviceCopy + 'static> = usize;
/// }
/// ```
pub trait FieldFamily {
    /// The handle of a field of type `F`.
    type Of<F: DeviceCopy + 'static>;
}

/// Makes the handle of each field, by index (the order of
/// [`DeviceSoA::FIELDS`]) and type.
///
/// ```
/// use cuda_mem::soa::{FieldFamily, FieldMaker};
/// struct Sizes;
/// impl FieldFamily for Sizes { type Of<F: cuda_mem::DeviceCopy + 'static> = usize; }
/// struct SizeOf;
/// impl FieldMaker<Sizes> for SizeOf {
///     fn field<F: cuda_mem::DeviceCopy + 'static>(&mut self, _index: usize) -> usize { size_of::<F>() }
/// }
/// ```
pub trait FieldMaker<Fam: FieldFamily> {
    /// The handle of field `index`, of type `F`.
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> Fam::Of<F>;
}

/// Reads each field of one struct, by index (the order of
/// [`DeviceSoA::FIELDS`]) and type: what [`DeviceSoA::read_fields`] puts
/// the struct together from.
///
/// ```
/// use cuda_mem::soa::{DeviceSoA, FieldReader};
/// use cuda_mem::{DeviceCopy, DeviceSoA};
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
///
/// /// Reads the fields of another particle, by index.
/// struct Fields(Particle);
/// impl FieldReader for Fields {
///     fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> F {
///         let field: &dyn std::any::Any = match index {
///             0 => &self.0.pos,
///             _ => &self.0.mass,
///         };
///         *field.downcast_ref::<F>().expect("the field's type")
///     }
/// }
/// let p = Particle { pos: [1.0, 2.0, 3.0], mass: 4.0 };
/// assert_eq!(Particle::read_fields(&mut Fields(p)), p);
/// ```
pub trait FieldReader {
    /// Field `index` of the struct, of type `F`.
    fn field<F: DeviceCopy + 'static>(&mut self, index: usize) -> F;
}

/// Visits a value's fields, by index (the order of [`DeviceSoA::FIELDS`]).
///
/// ```
/// use cuda_mem::soa::FieldVisitor;
/// struct Bytes(Vec<u8>);
/// impl FieldVisitor for Bytes {
///     fn field<F: cuda_mem::DeviceCopy>(&mut self, _index: usize, value: &F) {
///         self.0.extend_from_slice(cuda_mem::bytes_of(value));
///     }
/// }
/// ```
pub trait FieldVisitor {
    /// Field `index` of the value, of type `F`.
    fn field<F: DeviceCopy>(&mut self, index: usize, value: &F);
}

/// A `#[repr(C)]` struct of named [`DeviceCopy`] fields that cuda-mem can
/// keep as a structure of arrays: derive it with
/// [`#[derive(DeviceSoA)]`](macro@crate::DeviceSoA) (next to
/// `DeviceCopy`), which also makes `{Name}Fields<Fam>`, a struct of one
/// handle per field, and `{Name}SoA`, its
/// [`SoaBuffer`](crate::soa::SoaBuffer) in device memory.
///
/// cuda-mem checks [`FIELDS`](Self::FIELDS) against the struct (the fields
/// in order, each starting where the last ended, ending at
/// `size_of::<Self>()`) before it moves any bytes by it, a handle made for
/// a field whose type does not have the table's size and alignment panics,
/// and a fill or a visit of such a field is an `Err`.
///
/// # Safety
///
/// `FIELDS` is the same table in every build of the struct, the host's and
/// every kernel crate's: a kernel finds each field's array by its own
/// build's table (`region_offset`) in memory the host laid out by the
/// host's, so a table that differs between builds (a `cfg!` in it) puts a
/// kernel's reads and writes outside the arrays. (A launch also compares a
/// fingerprint of the two tables, but a fingerprint can be made to
/// collide.) The derive reads the table off the struct's own fields, which
/// are the same in every build whose layout fingerprint matches; write the
/// impl by hand only to split a field into parts, and keep it free of
/// `cfg`.
///
/// ```
/// use cuda_mem::soa::DeviceSoA;
/// use cuda_mem::{DeviceCopy, DeviceSoA};
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
///
/// assert_eq!(Particle::FIELDS.len(), 2);
/// assert_eq!(Particle::FIELDS[1].name, "mass");
/// assert_eq!(Particle::FIELDS[1].offset, 12);
/// ```
pub unsafe trait DeviceSoA: DeviceCopy {
    /// The fields, in declaration (and memory) order.
    const FIELDS: &'static [SoaField];

    /// A struct of one [`FieldFamily::Of`] per field, named like them
    /// (`{Name}Fields<Fam>`).
    type Fields<Fam: FieldFamily>;

    /// The handles of every field, each made by `maker`.
    fn make_fields<Fam: FieldFamily>(maker: &mut impl FieldMaker<Fam>) -> Self::Fields<Fam>;

    /// Visits every field of `self`.
    fn visit_fields(&self, visitor: &mut impl FieldVisitor);

    /// The struct whose fields `reader` reads.
    fn read_fields(reader: &mut impl FieldReader) -> Self;
}

/// The byte alignment of each field's array in a structure of arrays.
pub const REGION_ALIGN: usize = 256;

/// Where the array of field `index` starts in a structure of arrays of
/// `len` structs of `fields`, in bytes from the start of the allocation:
/// each field's array right after the one before, rounded up to
/// [`REGION_ALIGN`]. The host lays a `SoaBuffer` out by it and kernels find
/// the arrays by it (the host checks that the whole layout fits `usize`).
///
/// ```
/// use cuda_mem::soa::{region_offset, SoaField};
/// let fields = [SoaField::of::<[f32; 3]>("pos", 0), SoaField::of::<f32>("mass", 12)];
/// assert_eq!(region_offset(&fields, 100, 0), 0);
/// assert_eq!(region_offset(&fields, 100, 1), 1280); // 1200 bytes of positions, rounded up
/// ```
#[inline(always)]
pub const fn region_offset(fields: &[SoaField], len: usize, index: usize) -> usize {
    let mut at = 0;
    let mut f = 0;
    while f < index && f < fields.len() {
        at = (at + len * fields[f].size).next_multiple_of(REGION_ALIGN);
        f += 1;
    }
    at
}

/// Why `fields` is not the table of a struct of `size` bytes and alignment
/// `align`, or `None` when it is: the fields in order, the first at 0, each
/// starting where the last ended (no padding, as `DeviceCopy` requires),
/// the last ending at `size`, each aligned, at most
/// [`MAX_FIELDS`] of them.
///
/// ```
/// use cuda_mem::soa::{check_fields, SoaField};
/// let good = [SoaField::of::<u32>("a", 0), SoaField::of::<f32>("b", 4)];
/// assert_eq!(check_fields(&good, 8, 4), None);
/// let gap = [SoaField::of::<u32>("a", 0), SoaField::of::<f32>("b", 8)];
/// assert!(check_fields(&gap, 12, 4).is_some());
/// ```
pub const fn check_fields(fields: &[SoaField], size: usize, align: usize) -> Option<&'static str> {
    if fields.is_empty() {
        return Some("a DeviceSoA struct has no fields");
    }
    if fields.len() > MAX_FIELDS {
        return Some("a DeviceSoA struct has more than 64 fields");
    }
    let mut end = 0;
    let mut i = 0;
    while i < fields.len() {
        let f = fields[i];
        if f.offset != end {
            return Some("a DeviceSoA field does not start where the one before ends");
        }
        if f.align == 0
            || !f.align.is_power_of_two()
            || !f.offset.is_multiple_of(f.align)
            || f.align > align
        {
            return Some("a DeviceSoA field is not aligned in its struct");
        }
        if f.size == 0 {
            return Some("a DeviceSoA field has no bytes");
        }
        end += f.size;
        i += 1;
    }
    if end != size {
        return Some("the DeviceSoA fields do not end where the struct does");
    }
    None
}
