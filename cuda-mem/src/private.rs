//! Support items for the code that `#[derive(DeviceCopy)]` generates.
//!
//! Not part of the public API: everything here may change in any release.
//! The derive reaches it as `<crate path>::__private::…`, so generated code
//! never names `::core` or `::std` itself and keeps working under
//! `#![no_implicit_prelude]`, in `#![no_std]` crates and when `cuda-mem` is
//! renamed.

/// `core`, for generated code (`…::__private::core::marker::Sized`).
pub use core;

/// `cudarc`, for the `DeviceRepr` / `ValidAsZeroBits` impls that
/// [`__impl_host_traits!`](crate::__impl_host_traits) emits on host builds.
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
/// The derive puts `(): NoPadding<S, { size_of::<S>() - Σ size_of::<Field>() }>`
/// in the `where` clause of a non-generic function, so rustc evaluates the
/// number of padding bytes when it checks the struct's crate (`cargo check`
/// included) and reports it with the message below.
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

/// `T::Type` is `T`. The derive bounds `Elem: Identity<Type = First>` so that
/// rustc, not the derive's reading of tokens, confirms that the fields of a
/// generic struct share one element type (the "homogeneous" padding rule).
///
/// ```
/// use cuda_mem::__private::Identity;
/// fn same<A: Identity<Type = B>, B>() {}
/// same::<u32, u32>();
/// ```
pub trait Identity {
    /// Always `Self`.
    type Type: ?Sized;
}
impl<T: ?Sized> Identity for T {
    type Type = T;
}

/// `core::mem::size_of`, reachable through the crate path.
///
/// ```
/// assert_eq!(cuda_mem::__private::size_of::<[u16; 3]>(), 6);
/// ```
#[must_use]
#[inline(always)]
pub const fn size_of<T>() -> usize {
    core::mem::size_of::<T>()
}

/// `core::mem::align_of`, reachable through the crate path.
///
/// ```
/// assert_eq!(cuda_mem::__private::align_of::<u32>(), 4);
/// ```
#[must_use]
#[inline(always)]
pub const fn align_of<T>() -> usize {
    core::mem::align_of::<T>()
}

/// Emits cudarc's `DeviceRepr` and `ValidAsZeroBits` for a type that the
/// derive has just made `DeviceCopy`, on host builds (feature `host`); emits
/// nothing without it, so the same derive works in `no_std` kernel crates.
///
/// Input: `[impl generics] [type] [where clause]`, each as written by
/// `syn::Generics::split_for_impl`.
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Pair { a: u32, b: u32 }
/// // SAFETY: `Pair` is `repr(C)`, has no padding, and its fields are `DeviceCopy`.
/// unsafe impl cuda_mem::DeviceCopy for Pair {}
/// cuda_mem::__impl_host_traits!([] [Pair] []);
///
/// fn kernel_arg<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>() {}
/// kernel_arg::<Pair>();
/// ```
#[cfg(feature = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_host_traits {
    ([$($generics:tt)*] [$($ty:tt)*] [$($where_clause:tt)*]) => {
        // SAFETY: `$($ty)*: DeviceCopy` holds under the same generics and
        // bounds (the derive emits that impl next to this one): C-compatible
        // layout, no padding, every bit pattern valid, no host pointers. That
        // is what cudarc needs to pass it by value as a kernel parameter.
        #[automatically_derived]
        unsafe impl $($generics)* $crate::__private::cudarc::driver::DeviceRepr
            for $($ty)* $($where_clause)* {}
        // SAFETY: every bit pattern of a `DeviceCopy` type is a valid value,
        // the all-zero one included.
        #[automatically_derived]
        unsafe impl $($generics)* $crate::__private::cudarc::driver::ValidAsZeroBits
            for $($ty)* $($where_clause)* {}
    };
}

/// Emits cudarc's `DeviceRepr` and `ValidAsZeroBits` for a type that the
/// derive has just made `DeviceCopy`, on host builds (feature `host`); emits
/// nothing without it, so the same derive works in `no_std` kernel crates.
#[cfg(not(feature = "host"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __impl_host_traits {
    ([$($generics:tt)*] [$($ty:tt)*] [$($where_clause:tt)*]) => {};
}
