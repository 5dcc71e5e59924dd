//! `soa/`: structures of arrays. It owns [`SoaBuffer<T, K>`] (the fields of
//! `len` structs, each field in an array of its own, in memory of any kind),
//! the field families of its views ([`Views`], [`ViewsMut`]) and the
//! transpositions between it and an array of structs on the GPU; and it is
//! the public face of the layout pieces that live in `copy/`
//! ([`DeviceSoA`], [`SoaField`], [`FieldFamily`], [`FieldMaker`],
//! [`FieldVisitor`]), which kernels share.
//!
//! Why it is sound: a `SoaBuffer` is one allocation of bytes cut into one
//! region per field (256-byte aligned, `len` elements of the field's type
//! each); every field's view is a typed view of its region, the mutable
//! ones of disjoint regions, and every field is a `DeviceCopy` type (any
//! bits are a value), so no layout a `DeviceSoA` impl declares can make a
//! value that is not one. The transposition kernels move bytes by the
//! field table only after [`check_fields`] accepted it against the struct's
//! size and alignment: inside the struct and inside each region.
//!
//! May use: `algo/` (the transposition kernels ship with the algorithms'
//! PTX), `buffers/`, `engine/`, `memory/`, `context`, `order/`, `copy/`,
//! `error`.

#[cfg(feature = "host")]
mod buffer;
#[cfg(feature = "host")]
mod transpose;

#[doc(hidden)]
pub use crate::engine::soa_table as __table;

pub use crate::copy::soa::{
    check_fields, region_offset, DeviceSoA, FieldFamily, FieldMaker, FieldReader, FieldVisitor,
    SoaField, MAX_FIELDS, REGION_ALIGN,
};

#[doc(hidden)]
pub use crate::copy::soa::__make_field;
pub use crate::device::{Slices, SlicesMut, SoaItemMut, SoaSlice, SoaSliceMut};

#[cfg(feature = "host")]
pub use buffer::{SoaBuffer, Views, ViewsMut};

/// `#[derive(DeviceSoA)]`'s alias `{Name}SoA` of
/// [`SoaBuffer<{Name}, Device>`](SoaBuffer) (other kinds:
/// `SoaBuffer<{Name}, Pinned>`, ...): on host builds only (a kernel crate
/// built for the device has no buffers). Not part of the public API.
#[cfg(feature = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __soa_alias {
    ($vis:vis $name:ident = $t:ty) => {
        #[doc = $crate::__private::core::concat!(
            "The structure of arrays of [`", $crate::__private::core::stringify!($t), "`] (`#[derive(DeviceSoA)]`): ",
            "a `cuda_mem::soa::SoaBuffer` in device memory (`SoaBuffer<", $crate::__private::core::stringify!($t),
            ", Pinned>`, ... for the other kinds)."
        )]
        $vis type $name = $crate::soa::SoaBuffer<$t, $crate::Device>;
    };
}

/// `#[derive(DeviceSoA)]`'s alias, on a device build: nothing.
#[cfg(not(feature = "host"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __soa_alias {
    ($vis:vis $name:ident = $t:ty) => {};
}
