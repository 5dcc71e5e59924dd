//! The [`DeviceCopy`] trait: types whose values can go to and come back from
//! device memory byte for byte, and the byte views [`bytes_of`] and
//! [`bytes_of_slice`] it makes sound.

use core::marker::PhantomData;
use core::num::Wrapping;

/// A type that can be copied to and from device memory byte for byte.
///
/// Every buffer of cuda-mem holds `T: DeviceCopy`. The contract is what makes
/// `memset`, `fill`, the copies and `to_vec` safe functions: device code and
/// `memset` can write *any* bytes into a buffer, and the host then reads them
/// back as `T`s.
///
/// Derive it on your own structs with [`#[derive(DeviceCopy)]`](macro@crate::DeviceCopy)
/// (the trait and the derive share one name, like serde's), which checks every
/// rule below at compile time and also makes the struct usable as a cudarc
/// kernel argument on host builds:
///
/// ```
/// use cuda_mem::{DeviceCopy, DevicePtr};
///
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
///     velocity: [f32; 3],
///     id: u32,
///     neighbours: DevicePtr<u32>, // a device address, not a `*const u32`
/// }
///
/// assert_eq!(core::mem::size_of::<Particle>(), 40);
/// let p = Particle { position: [0.0; 3], mass: 1.0, velocity: [0.0; 3], id: 7, neighbours: DevicePtr::null() };
/// assert_eq!(cuda_mem::bytes_of(&p).len(), 40);
/// ```
///
/// # Safety
///
/// Implementing `DeviceCopy` (by hand, rather than through the derive) promises
/// all of the following:
///
/// 1. **No padding.** Every byte of a value is part of some field; there are
///    no bytes that the compiler leaves uninitialised. (Padding bytes cannot be
///    read as `u8`, they would leak host memory to the device, and `fill`
///    could not describe the value as a byte pattern.)
/// 2. **Every bit pattern is a valid value.** Any `size_of::<Self>()` bytes,
///    including all zeros and all `0xFF`, are a valid `Self`, because a kernel
///    or `memset` may have written them and the host reads them back.
/// 3. **No host pointers or references**, nor anything else that only means
///    something in the host process (file descriptors, handles).
/// 4. **A C-compatible layout**: a primitive, an array, or a `#[repr(C)]` /
///    `#[repr(transparent)]` struct whose fields are all `DeviceCopy`, so that
///    host code, Rust kernels and CUDA C++ agree on the offset of every field.
/// 5. **`align_of::<Self>() <= 256`**, the alignment that `cuMemAlloc`
///    guarantees for every allocation.
///
/// `Copy` (the supertrait) already rules out `Drop` and interior mutability.
/// There is no `'static` bound: lifetime-tagged device handles are fine.
///
/// # What is deliberately *not* `DeviceCopy`
///
/// These types are `Copy`, and other CUDA crates (cust, cuda-oxide) accept
/// some of them, but each one breaks a rule above, so reading one back after a
/// kernel or a `memset` wrote it could be undefined behaviour:
///
/// | type | rule broken | use instead |
/// | --- | --- | --- |
/// | `bool` | only the bytes 0 and 1 are valid (2) | `u8` (0 or not), or a `u32` flag |
/// | `char` | surrogates and values over `0x10FFFF` are invalid (2) | `u32` |
/// | enums | most discriminant values are invalid (2) | an integer field with named constants |
/// | `NonZeroU32` & co. | zero is invalid (2) | the plain integer |
/// | `Option<T>` | the tag has invalid values and `Option<u32>` has padding (1, 2) | a separate flag field, or a sentinel value |
/// | tuples | `repr(Rust)`: unspecified layout, possible padding (`(u8, u32)`) (1, 4) | a `#[repr(C)]` struct, or an array |
/// | `&T`, `&mut T`, `*const T`, `*mut T`, `fn` pointers | host addresses mean nothing on the device (3); references also must not dangle (2) | [`DevicePtr<T>`](crate::DevicePtr) |
/// | `()` | a zero-sized tuple: no C counterpart | [`PhantomData<T>`] inside a struct |
///
/// ```compile_fail
/// use cuda_mem::DeviceCopy;
///
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Flags {
///     enabled: bool, // error: `bool` is not `DeviceCopy`; use `u8` or `u32`
/// }
/// ```
///
/// ```compile_fail
/// use cuda_mem::DeviceCopy;
///
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(u32)]
/// enum Kind { Gas, Liquid } // error: enums cannot derive `DeviceCopy`
/// ```
///
/// An enum becomes an integer field plus constants, which C++ mirrors with a
/// `uint32_t` (any value the device writes is a valid `Kind`):
///
/// ```
/// use cuda_mem::DeviceCopy;
///
/// #[derive(Clone, Copy, PartialEq, Eq, Debug, DeviceCopy)]
/// #[repr(transparent)]
/// struct Kind(u32);
/// impl Kind {
///     const GAS: Kind = Kind(0);
///     const LIQUID: Kind = Kind(1);
/// }
/// assert_ne!(Kind::GAS, Kind::LIQUID);
/// ```
///
/// # Implementations
///
/// All integers (`u8`…`u128`, `i8`…`i128`, and `usize`/`isize`, which cuda-mem
/// requires to be 64 bits wide like on the device), `f32`, `f64`, `[T; N]`,
/// [`PhantomData<T>`] for any `T: ?Sized`, [`Wrapping<T>`],
/// [`DevicePtr<T>`](crate::DevicePtr), and with the features `half` and
/// `num-complex`: `half::f16`, `half::bf16`, `num_complex::Complex<f32>` and
/// `num_complex::Complex<f64>` (`Complex` is `#[repr(C)] { re, im }`, the
/// layout of `cuComplex` / `cuDoubleComplex`).
///
/// `u128`/`i128` are 16-byte aligned on x86-64 hosts (since Rust 1.77); CUDA
/// C++ has no standard 128-bit integer, so a C++ mirror must spell out the
/// alignment.
///
/// # `DeviceCopy` and `bytemuck::Pod`
///
/// `DeviceCopy` is bytemuck's `Pod` (no padding, any bit pattern, `Copy`)
/// without Pod's `'static` bound, plus the device rules: a C-compatible layout,
/// no host pointers (bytemuck's raw-pointer impls are behind an opt-in feature
/// for the same reason) and `align <= 256`. So every `DeviceCopy` type could
/// soundly be `Pod`, and every `#[repr(C)]` `Pod` struct of integers, floats
/// and arrays can derive `DeviceCopy`.
///
/// cuda-mem does not depend on bytemuck: [`bytes_of`] and [`bytes_of_slice`]
/// give the byte views, and `#[derive(DeviceCopy)]` emits no bytemuck impl, so
/// a struct can derive both without conflict:
///
/// ```text
/// #[derive(Clone, Copy, cuda_mem::DeviceCopy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Vertex { pos: [f32; 3], color: u32 }
/// ```
///
/// (`cuda-mem-derive`'s test suite compiles exactly that, and checks that
/// `bytemuck::bytes_of` and [`bytes_of`] agree.)
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `DeviceCopy`, so it cannot be stored in device memory",
    label = "not `DeviceCopy`",
    note = "for your own struct: `#[derive(Clone, Copy, DeviceCopy)]` with `#[repr(C)]`, every field `DeviceCopy`",
    note = "`bool`, `char`, enums, `NonZero*`, `Option<_>`, tuples, references and raw pointers are never \
            `DeviceCopy`: use integers, floats, arrays `[T; N]` and `#[repr(C)]` structs, \
            and `cuda_mem::DevicePtr<T>` for a device address"
)]
pub unsafe trait DeviceCopy: Copy {
    /// A fingerprint of the type's layout, identical for the type on the host
    /// and on `nvptx64-nvidia-cuda`: kernel launches compare it (through the
    /// kernel's signature fingerprint) with the one compiled into the PTX.
    /// The default hashes the size and the alignment.
    #[doc(hidden)]
    const __LAYOUT: u64 =
        layout_default(core::mem::size_of::<Self>(), core::mem::align_of::<Self>());
}

/// The default [`DeviceCopy::__LAYOUT`]: a 64-bit FNV-1a hash of `size` and
/// `align` (each as 8 little-endian bytes).
const fn layout_default(size: usize, align: usize) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let words = [size as u64, align as u64];
    let mut w = 0;
    while w < words.len() {
        let bytes = words[w].to_le_bytes();
        let mut i = 0;
        while i < bytes.len() {
            hash ^= bytes[i] as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
        w += 1;
    }
    hash
}

// cuda-mem assumes the 64-bit host ABI that CUDA itself requires: `usize` is
// `size_t` on both sides of a kernel launch.
const _: () = assert!(
    core::mem::size_of::<usize>() == 8 && core::mem::size_of::<isize>() == 8,
    "cuda-mem needs a 64-bit target: `usize`/`isize` must be 8 bytes like on the device"
);

macro_rules! impl_primitives {
    ($($t:ty),* $(,)?) => { $(
        // SAFETY: a primitive integer or float: no padding, every bit pattern
        // is a valid value (NaNs included), no pointers, the C layout of the
        // matching C type, alignment at most 16.
        unsafe impl DeviceCopy for $t {}
    )* };
}
impl_primitives!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);

// SAFETY: array elements are laid out back to back with no gaps (the element
// size is a multiple of its alignment), so an array of `DeviceCopy` values has
// no padding, every bit pattern is valid, and the alignment is `T`'s.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

// SAFETY: `PhantomData<T>` is a zero-sized type with alignment 1: it has no
// bytes, so it has no padding and its (empty) bit pattern is valid, whatever
// `T` is.
unsafe impl<T: ?Sized> DeviceCopy for PhantomData<T> {}

// SAFETY: `Wrapping<T>` is `#[repr(transparent)]` over `T`, so it has `T`'s
// layout and bit validity.
unsafe impl<T: DeviceCopy> DeviceCopy for Wrapping<T> {}

#[cfg(feature = "half")]
// SAFETY: `half::f16` is `#[repr(transparent)]` over `u16`: 2 bytes, no padding,
// every bit pattern is some half-precision value (or NaN).
unsafe impl DeviceCopy for half::f16 {}

#[cfg(feature = "half")]
// SAFETY: `half::bf16` is `#[repr(transparent)]` over `u16`, as above.
unsafe impl DeviceCopy for half::bf16 {}

#[cfg(feature = "num-complex")]
// SAFETY: `num_complex::Complex<T>` is `#[repr(C)] struct { re: T, im: T }`;
// with two `f32` (or two `f64`) fields it has no padding, every bit pattern is
// valid, and it matches `cuComplex` (`cuDoubleComplex`).
unsafe impl DeviceCopy for num_complex::Complex<f32> {}

#[cfg(feature = "num-complex")]
// SAFETY: as above, for `f64`.
unsafe impl DeviceCopy for num_complex::Complex<f64> {}

#[cfg(feature = "num-complex")]
const _: () = {
    // `Complex` is documented `#[repr(C)]`; check the consequence we rely on.
    use core::mem::{align_of, size_of};
    assert!(
        size_of::<num_complex::Complex<f32>>() == 8 && align_of::<num_complex::Complex<f32>>() == 4
    );
    assert!(
        size_of::<num_complex::Complex<f64>>() == 16
            && align_of::<num_complex::Complex<f64>>() == 8
    );
};

/// Views a `DeviceCopy` value as its bytes, without copying.
///
/// Sound for every `T: DeviceCopy` because such a type has no padding: every
/// byte is initialised. The bytes are in the host's (little-endian) order,
/// which is also the device's.
///
/// ```
/// let bytes = cuda_mem::bytes_of(&0x0403_0201_u32);
/// assert_eq!(bytes, &[1, 2, 3, 4]);
/// ```
#[must_use]
pub fn bytes_of<T: DeviceCopy>(value: &T) -> &[u8] {
    // SAFETY: `value` is a valid reference, so its `size_of::<T>()` bytes are
    // readable for the returned lifetime (tied to `value`'s), and `u8` has
    // alignment 1. `T: DeviceCopy` has no padding, so all those bytes are
    // initialised; `Copy` rules out interior mutability, so they cannot change
    // while the shared borrow lives.
    unsafe {
        core::slice::from_raw_parts((value as *const T).cast::<u8>(), core::mem::size_of::<T>())
    }
}

/// Views a slice of `DeviceCopy` values as bytes, without copying.
///
/// The result is `size_of_val(values)` bytes long: elements back to back, no
/// gaps (an element's size is a multiple of its alignment).
///
/// ```
/// let words = [0x0201_u16, 0x0403];
/// assert_eq!(cuda_mem::bytes_of_slice(&words), &[1, 2, 3, 4]);
/// assert!(cuda_mem::bytes_of_slice::<u64>(&[]).is_empty());
/// ```
#[must_use]
pub fn bytes_of_slice<T: DeviceCopy>(values: &[T]) -> &[u8] {
    // SAFETY: the slice's `size_of_val(values)` bytes are one readable
    // allocation (or a dangling, aligned pointer with length 0, which is
    // fine for `from_raw_parts`); the length cannot exceed `isize::MAX`
    // because `values` itself is a valid slice. `T: DeviceCopy` has no
    // padding, so every byte is initialised, and `Copy` rules out interior
    // mutability during the borrow.
    unsafe {
        core::slice::from_raw_parts(values.as_ptr().cast::<u8>(), core::mem::size_of_val(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_device_copy<T: DeviceCopy>() {}

    #[test]
    fn impls() {
        is_device_copy::<u8>();
        is_device_copy::<i128>();
        is_device_copy::<usize>();
        is_device_copy::<f64>();
        is_device_copy::<[[f32; 4]; 4]>();
        is_device_copy::<PhantomData<str>>();
        is_device_copy::<PhantomData<&'static mut u8>>();
        is_device_copy::<Wrapping<u32>>();
        is_device_copy::<crate::DevicePtr<u8>>();
    }

    #[cfg(feature = "half")]
    #[test]
    fn half_impls() {
        is_device_copy::<half::f16>();
        is_device_copy::<[half::bf16; 8]>();
        assert_eq!(bytes_of(&half::f16::ONE), &0x3C00_u16.to_le_bytes());
    }

    #[cfg(feature = "num-complex")]
    #[test]
    fn complex_impls() {
        is_device_copy::<num_complex::Complex<f32>>();
        is_device_copy::<num_complex::Complex<f64>>();
        let z = num_complex::Complex::new(1.0_f32, -2.0);
        let mut expected = [0_u8; 8];
        expected[..4].copy_from_slice(&1.0_f32.to_le_bytes());
        expected[4..].copy_from_slice(&(-2.0_f32).to_le_bytes());
        assert_eq!(bytes_of(&z), &expected);
    }

    #[test]
    fn layout_fingerprints_tell_sizes_and_alignments_apart() {
        assert_ne!(u32::__LAYOUT, u64::__LAYOUT);
        assert_ne!(<[u8; 4]>::__LAYOUT, u32::__LAYOUT);
        assert_eq!(<[u32; 2]>::__LAYOUT, <[u32; 2]>::__LAYOUT);
    }

    #[test]
    fn byte_views() {
        assert_eq!(bytes_of(&-1_i16), &[0xFF, 0xFF]);
        assert_eq!(bytes_of(&1.0_f32), &1.0_f32.to_le_bytes());
        assert_eq!(bytes_of(&PhantomData::<u64>), &[] as &[u8]);
        let arrays = [[1_u8, 2], [3, 4], [5, 6]];
        assert_eq!(bytes_of_slice(&arrays), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(bytes_of_slice(&[1.5_f64, -2.0]).len(), 16);
    }
}
