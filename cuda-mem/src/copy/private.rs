//! Support items for the code that `#[derive(DeviceCopy)]` generates.
//!
//! Not part of the public API: everything here may change in any release.
//! Generated code reaches these items only as `$crate::__private::…` from
//! inside [`__derive_device_copy!`](crate::__derive_device_copy), a
//! `macro_rules!` macro of cuda-mem: `$crate` is the one path that user code
//! can neither shadow nor redirect, so the checks below are always cuda-mem's
//! own, whatever crate path the derive was given.
//!
//! Nothing here can create an impl or a value of a `DeviceCopy` type: the
//! functions only *check* (their bounds and argument types are the proof),
//! and the witnesses are sealed.

use crate::copy::device_copy::DeviceCopy;

/// `core`, for generated code (`…::__private::core::marker::Copy`).
pub use core;

/// `bytemuck`, for the `Zeroable` / `Pod` impls the derive emits.
pub use bytemuck;

/// `cudarc`, for the `DeviceRepr` / `ValidAsZeroBits` impls that
/// [`__device_copy_host_impls!`](crate::__device_copy_host_impls) emits on
/// host builds.
#[cfg(feature = "host")]
pub use cudarc;

mod sealed {
    /// Implemented only for `N = 0`. It lives in a private module, so no other
    /// crate can implement it, and therefore no other crate can implement
    /// [`NoPadding`](super::NoPadding) for any `N` but 0 (a downstream
    /// `impl NoPadding<Padded, 3> for ()` fails because `(): Sealed<Padded, 3>`
    /// does not hold). Without the seal the orphan rules would allow that
    /// forged impl for a local `Padded` and the derive would accept a padded
    /// struct (zerocopy#3614).
    pub trait Sealed<T: ?Sized, const N: usize> {}
    impl<T: ?Sized> Sealed<T, 0> for () {}

    /// Implemented for `OK = true` only; same seal.
    pub trait SealedAlign<T: ?Sized, const OK: bool> {}
    impl<T: ?Sized> SealedAlign<T, true> for () {}
}

/// The padding witness: `(): NoPadding<S, N>` holds only for `N = 0`.
///
/// The derive calls [`no_padding`]`::<S, { size_of::<S>() - Σ field sizes }>()`
/// in an anonymous constant next to a non-generic struct, so rustc evaluates
/// the number of padding bytes when it checks the struct's crate (`cargo
/// check` included) and reports it with the message below.
///
/// ```
/// use cuda_mem::__private::NoPadding;
/// fn no_padding<T, const N: usize>() where (): NoPadding<T, N> {}
/// no_padding::<u32, 0>();
/// ```
///
/// ```compile_fail
/// use cuda_mem::__private::NoPadding;
/// fn no_padding<T, const N: usize>() where (): NoPadding<T, N> {}
/// no_padding::<u32, 3>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{T}` has {N} byte(s) of padding, so it cannot be `DeviceCopy`",
    label = "`{T}` has padding bytes",
    note = "padding bytes are uninitialised: copying them to the device would leak host memory, \
            and `memset`/`fill` could not describe the value byte for byte",
    note = "add the padding as explicit fields (`_pad: [u8; N]`) where the compiler inserts it, \
            or reorder the fields from the largest alignment to the smallest",
    note = "`#[repr(C, packed)]` also removes padding, but then the fields are unaligned \
            (slow on the GPU, and a C++ mirror needs `__attribute__((packed))`)"
)]
pub trait NoPadding<T: ?Sized, const N: usize>: sealed::Sealed<T, N> {}
impl<T: ?Sized> NoPadding<T, 0> for () {}

/// The alignment witness: `(): AlignAtMost256<S, A, { A <= 256 }>` holds only
/// when the last argument is `true`; `A` is there for the message. 256 bytes
/// is the alignment that `cuMemAlloc` guarantees.
///
/// ```
/// use cuda_mem::__private::AlignAtMost256;
/// fn align_ok<T, const A: usize, const OK: bool>() where (): AlignAtMost256<T, A, OK> {}
/// align_ok::<u64, 8, true>();
/// ```
///
/// ```compile_fail
/// use cuda_mem::__private::AlignAtMost256;
/// fn align_ok<T, const A: usize, const OK: bool>() where (): AlignAtMost256<T, A, OK> {}
/// align_ok::<u64, 512, false>();
/// ```
#[diagnostic::on_unimplemented(
    message = "`{T}` has an alignment of {A} bytes, more than the 256 bytes device allocations guarantee",
    label = "alignment over 256",
    note = "`cuMemAlloc` and the other CUDA allocators only guarantee 256-byte alignment, so a \
            buffer of `{T}` could hold misaligned values",
    note = "lower the `#[repr(align(..))]` of the field types to 256 or less"
)]
pub trait AlignAtMost256<T: ?Sized, const A: usize, const OK: bool>:
    sealed::SealedAlign<T, OK>
{
}
impl<T: ?Sized, const A: usize> AlignAtMost256<T, A, true> for () {}

/// Compiles only when `N` is 0: the derive's padding check for a non-generic
/// struct, `no_padding::<S, { size_of::<S>() - Σ field sizes }>()`.
///
/// ```
/// cuda_mem::__private::no_padding::<[u16; 2], 0>();
/// ```
///
/// ```compile_fail
/// cuda_mem::__private::no_padding::<[u16; 2], 2>();
/// ```
#[inline(always)]
pub const fn no_padding<T: ?Sized, const N: usize>()
where
    (): NoPadding<T, N>,
{
}

/// Compiles only when `OK` is true: the derive's alignment check for a
/// non-generic struct.
///
/// ```
/// cuda_mem::__private::align_at_most_256::<u64, 8, true>();
/// ```
#[inline(always)]
pub const fn align_at_most_256<T: ?Sized, const A: usize, const OK: bool>()
where
    (): AlignAtMost256<T, A, OK>,
{
}

/// The size of the field that `field` reads.
///
/// The derive passes a non-capturing closure `|s: S| s.field`, which coerces
/// to a function pointer even in a constant: the field's type is inferred
/// from the *real* struct, never from the tokens the derive saw, so an
/// attribute macro that rewrites a field after the derive cannot make this
/// lie. (By value, because a reference to a field of a `repr(packed)` struct
/// is an error.)
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct S { a: u16, b: [u8; 6] }
/// const B: usize = cuda_mem::__private::size_of_field(|s: S| s.b);
/// assert_eq!(B, 6);
/// ```
#[must_use]
#[inline(always)]
pub const fn size_of_field<S, F>(field: fn(S) -> F) -> usize {
    let _ = field;
    core::mem::size_of::<F>()
}

/// The layout fingerprint ([`DeviceCopy::__LAYOUT`]) of the field that
/// `field` reads; see [`size_of_field`].
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct S { a: u16 }
/// use cuda_mem::DeviceCopy;
/// assert_eq!(cuda_mem::__private::layout_of_field(|s: S| s.a), <u16 as DeviceCopy>::__LAYOUT);
/// ```
#[must_use]
#[inline(always)]
pub const fn layout_of_field<S, F: DeviceCopy>(field: fn(S) -> F) -> u64 {
    let _ = field;
    F::__LAYOUT
}

/// Compiles only if the value's type is `DeviceCopy`: the derive calls it on
/// every field of the real struct, bound by value from an exhaustive pattern.
///
/// ```
/// cuda_mem::__private::assert_device_copy(1.0_f32);
/// ```
///
/// ```compile_fail
/// cuda_mem::__private::assert_device_copy(true);
/// ```
#[inline(always)]
pub fn assert_device_copy<F: DeviceCopy>(field: F) {
    let _ = field;
}

/// The never-called function that carries the derive's field checks.
///
/// The derive implements it for the struct, with the struct's generics and
/// the same `where` clause as the `DeviceCopy` impl; its body destructures
/// `self` with an exhaustive pattern (no `..`) and checks every field. The
/// impl only has to *type-check*; nothing relies on it otherwise, so an impl
/// written by hand proves and unlocks nothing.
pub trait DeriveProof {
    /// Type-checked, never called.
    fn proof(self);
}

/// Element checks of `repr(transparent)` generic structs.
pub mod transparent {
    use core::marker::PhantomData;

    /// A field that is not a marker (its `DeviceCopy` bound is checked for
    /// every field already).
    #[inline(always)]
    pub fn field<F>(field: F) {
        let _ = field;
    }

    /// Compiles only for a `PhantomData<_>` field.
    ///
    /// ```
    /// cuda_mem::__private::transparent::marker(core::marker::PhantomData::<str>);
    /// ```
    #[inline(always)]
    pub fn marker<X: ?Sized>(field: PhantomData<X>) {
        let _ = field;
    }
}

/// Element checks of the homogeneous rule for generic `repr(C)` structs.
///
/// Each function takes one real field and returns an [`Elem`](homogeneous::Elem) of its element
/// type; the derive puts the results of all fields in one array literal, so
/// rustc must unify every element type with every other (a marker adopts
/// the others' element type). No element type is ever *named*, so macro
/// hygiene cannot make two spellings of `T` mean different types.
pub mod homogeneous {
    use core::marker::PhantomData;

    /// The element type of a field, for unification.
    pub struct Elem<E: ?Sized>(PhantomData<E>);

    /// A field of type `E`.
    ///
    /// ```
    /// use cuda_mem::__private::homogeneous::{elem0, elem1, elem2, marker};
    /// let _ = [elem0(1_u32), elem1([2_u32; 3]), elem2([[3_u32; 2]; 2]), marker(core::marker::PhantomData::<bool>)];
    /// ```
    ///
    /// ```compile_fail
    /// use cuda_mem::__private::homogeneous::{elem0, elem1};
    /// let _ = [elem0(1_u32), elem1([2_u8; 3])];
    /// ```
    #[inline(always)]
    pub fn elem0<E>(field: E) -> Elem<E> {
        let _ = field;
        Elem(PhantomData)
    }

    /// A field of type `[E; N]`.
    #[inline(always)]
    pub fn elem1<E, const N: usize>(field: [E; N]) -> Elem<E> {
        let _ = field;
        Elem(PhantomData)
    }

    /// A field of type `[[E; N]; M]`.
    #[inline(always)]
    pub fn elem2<E, const N: usize, const M: usize>(field: [[E; N]; M]) -> Elem<E> {
        let _ = field;
        Elem(PhantomData)
    }

    /// A `PhantomData<_>` marker field: no constraint on the element type.
    #[inline(always)]
    pub fn marker<X: ?Sized, E>(field: PhantomData<X>) -> Elem<E> {
        let _ = field;
        Elem(PhantomData)
    }
}

/// Checks that the non-zero-sized fields of a non-generic struct come in
/// declaration order: the `#[repr(C)]` order the derive saw. `fields` holds
/// `(offset, size)` of each field, in declaration order.
///
/// Reached only when something after the derive (an attribute macro) removed
/// the `repr(C)`, so the real layout is not the one the derive checked.
///
/// ```
/// cuda_mem::__private::fields_in_declaration_order(&[(0, 4), (4, 0), (4, 2)]);
/// ```
pub const fn fields_in_declaration_order(fields: &[(usize, usize)]) {
    let mut end = 0;
    let mut i = 0;
    while i < fields.len() {
        let (offset, size) = fields[i];
        if size > 0 {
            assert!(
                offset >= end,
                "`#[derive(DeviceCopy)]`: the fields of this struct are not in declaration order, \
                 so its layout is not the `#[repr(C)]` layout the derive checked (did an attribute \
                 macro after `#[derive(DeviceCopy)]` change the struct?)"
            );
            end = offset + size;
        }
        i += 1;
    }
}

/// Evaluates `T::__CHECK`: the post-monomorphization check that `T` can be
/// the element type of a buffer.
///
/// Call it as `const { check_element::<T>() }` (or just call it) in every
/// function that allocates or views memory as `[T]`. Without a GPU, the
/// check fails the *build* (`cargo build`, `cargo test`; `cargo check` does
/// not evaluate it) for a zero-sized `T`, an alignment over 256, or a derived
/// generic struct whose real layout has padding:
///
/// ```
/// cuda_mem::__private::check_element::<[f32; 4]>();
/// ```
///
/// ```compile_fail,E0080
/// // A zero-length array has no bytes: it cannot be a buffer element.
/// const { cuda_mem::__private::check_element::<[u32; 0]>() }
/// ```
///
/// ```compile_fail,E0080
/// // `PhantomData<T>` is `DeviceCopy` (a zero-sized marker field), but not an element.
/// const { cuda_mem::__private::check_element::<core::marker::PhantomData<u32>>() }
/// ```
#[inline(always)]
pub const fn check_element<T: DeviceCopy>() {
    let () = T::__CHECK;
}

/// Evaluates `T::__LAYOUT`, which fails (at build time) for a derived generic
/// struct whose real layout has padding; zero-sized types pass. The byte
/// views call it.
///
/// ```
/// cuda_mem::__private::check_layout::<core::marker::PhantomData<u32>>();
/// ```
#[inline(always)]
pub const fn check_layout<T: DeviceCopy>() {
    let _layout: u64 = T::__LAYOUT;
}

// The layout fingerprints (`copy::layout`) for generated code
// (`…::__private::layout::StructLayout`), which sees them here.
pub use crate::copy::layout;
