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
/// # `DeviceCopy` and bytemuck
///
/// `DeviceCopy` is bytemuck's `Pod` (no padding, any bit pattern, `Copy`)
/// without Pod's `'static` bound, plus the device rules: a C-compatible
/// layout, no host pointers (bytemuck's raw-pointer impls are behind an
/// opt-in feature for the same reason) and `align <= 256`. bytemuck is the
/// byte-view foundation of cuda-mem:
///
/// * `#[derive(DeviceCopy)]` also implements `bytemuck::Zeroable` and, for
///   a struct without type or const parameters, `bytemuck::Pod` (for its
///   `'static` instantiations, which are all of them unless it has lifetime
///   parameters), so `bytemuck::bytes_of`, `cast_slice`, `pod_read_unaligned`
///   & co. work on derived structs with no second derive. A struct that also
///   derives `bytemuck::Pod` or `bytemuck::Zeroable` now gets a
///   conflicting-impl error (E0119): remove the bytemuck derives,
///   `DeviceCopy` brings them.
/// * A *generic* derived struct (`Vec3<T>`) is not `Pod`: its layout is
///   proved from its `repr` and re-checked for each instantiation where
///   cuda-mem views a value as bytes (`__LAYOUT`, below), which bytemuck's
///   functions would not do. Use [`bytes_of`] and [`bytes_of_slice`] for
///   its byte views.
/// * [`DevicePtr<T>`](crate::DevicePtr) is `Pod` (for `T: 'static`).
/// * A foreign type that is `Pod` but not `DeviceCopy` goes into device
///   memory wrapped in [`DevicePod<T>`].
///
/// `DeviceCopy` does **not** have `Pod` as a supertrait, for two reasons:
/// `Pod: 'static` would forbid lifetime-tagged device types (a handle
/// `DevRef<'buf>` that borrows the buffer it points into), and some types that
/// must be `DeviceCopy` cannot be `Pod`: mint's vectors and matrices (feature
/// `mint`) are not `Pod` (mint has no bytemuck feature), and the orphan rule
/// forbids cuda-mem to make them so. [`bytes_of`], [`bytes_of_slice`] stay
/// the byte views for every `T: DeviceCopy`, lifetime-tagged ones included
/// (bytemuck cannot name those, every one of its traits is `'static`); for
/// `'static` types they give exactly what bytemuck gives.
///
/// ```
/// use cuda_mem::DeviceCopy;
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)] // no bytemuck derive
/// #[repr(C)]
/// struct Vertex { pos: [f32; 3], color: u32 }
///
/// let vertices = [Vertex { pos: [1.0, 2.0, 3.0], color: 0xFF00_00FF }; 2];
/// let bytes: &[u8] = bytemuck::cast_slice(&vertices);
/// assert_eq!(bytes, cuda_mem::bytes_of_slice(&vertices));
/// let back: Vertex = bytemuck::pod_read_unaligned(&bytes[16..32]);
/// assert_eq!(back, vertices[1]);
/// ```
///
/// # Hidden items
///
/// Two associated constants with defaults, `#[doc(hidden)]`, that a
/// hand-written impl need not (and should not) define:
///
/// * `__LAYOUT: u64`, a layout fingerprint: a 64-bit FNV-1a hash of the size,
///   the alignment and, for derived structs, each field's name, offset and
///   fingerprint in declaration order (so two fields of one type swapped or
///   renamed change it; the struct's own name does not count). Integers, floats (`u32`, `i32` and
///   `f32` differ), arrays and `DevicePtr` have their own; hand-written impls
///   hash only size and alignment. It is the same on the host and on nvptx64
///   for the same struct, and typed kernel launches use it to detect a stale
///   PTX or a struct whose layout differs between host and device. For a
///   derived *generic* struct, evaluating it also re-checks the real layout
///   (no padding, fields in declaration order) of that instantiation.
/// * `__CHECK: ()`, the post-monomorphization check of a buffer element type:
///   `size_of::<Self>() > 0`, `align_of::<Self>() <= 256`, and `__LAYOUT`
///   evaluates. cuda-mem's buffers evaluate it (see
///   [`check_element`](crate::__private::check_element)); a `PhantomData<T>`
///   (`DeviceCopy`, so that it can be a marker field) or a `[T; 0]` element
///   fails it at build time.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not `DeviceCopy`, so it cannot be stored in device memory",
    label = "not `DeviceCopy`",
    note = "for your own struct: `#[derive(Clone, Copy, DeviceCopy)]` with `#[repr(C)]`, every field `DeviceCopy`",
    note = "`bool`, `char`, enums, `NonZero*`, `Option<_>`, tuples, references and raw pointers are never \
            `DeviceCopy`: use integers, floats, arrays `[T; N]` and `#[repr(C)]` structs, \
            and `cuda_mem::DevicePtr<T>` for a device address; a foreign `bytemuck::Pod` type goes in \
            `cuda_mem::DevicePod<T>`",
    note = "`bool`s, fieldless enums and structs of them go in checked memory: \
            `#[derive(CheckedDeviceCopy)]`, `cuda_mem::CheckedDeviceBuffer<T>`, and in kernels \
            `CheckedSlice<T>` / `CheckedSliceMut<T>`, whose reads check every value"
)]
pub unsafe trait DeviceCopy: Copy {
    /// The layout fingerprint (see "Hidden items" above). Do not override it
    /// in a hand-written impl.
    #[doc(hidden)]
    const __LAYOUT: u64 =
        crate::copy::layout::opaque(core::mem::size_of::<Self>(), core::mem::align_of::<Self>());

    /// The post-monomorphization check of a buffer element type (see
    /// "Hidden items" above). Do not override it.
    #[doc(hidden)]
    const __CHECK: () = {
        assert!(
            core::mem::size_of::<Self>() > 0,
            "cuda-mem: a zero-sized type (`PhantomData<T>`, `[T; 0]`, ...) cannot be the element \
             type of a buffer: it has no bytes to allocate, copy or fill"
        );
        assert!(
            core::mem::align_of::<Self>() <= 256,
            "cuda-mem: the element type has an alignment over 256 bytes, more than device \
             allocations guarantee"
        );
        let _layout: u64 = Self::__LAYOUT;
    };
}

// cuda-mem assumes the 64-bit host ABI that CUDA itself requires: `usize` is
// `size_t` on both sides of a kernel launch.
const _: () = assert!(
    core::mem::size_of::<usize>() == 8 && core::mem::size_of::<isize>() == 8,
    "cuda-mem needs a 64-bit target: `usize`/`isize` must be 8 bytes like on the device"
);

use crate::copy::layout;

macro_rules! impl_primitives {
    ($($tag:ident: $($t:ty),*;)*) => { $($(
        // SAFETY: a primitive integer or float: no padding, every bit pattern
        // is a valid value (NaNs included), no pointers, the C layout of the
        // matching C type, alignment at most 16.
        unsafe impl DeviceCopy for $t {
            const __LAYOUT: u64 = layout::scalar(
                layout::$tag,
                core::mem::size_of::<$t>(),
                core::mem::align_of::<$t>(),
            );
        }
    )*)* };
}
impl_primitives! {
    UNSIGNED: u8, u16, u32, u64, u128, usize;
    SIGNED: i8, i16, i32, i64, i128, isize;
    FLOAT: f32, f64;
}

// SAFETY: array elements are laid out back to back with no gaps (the element
// size is a multiple of its alignment), so an array of `DeviceCopy` values has
// no padding, every bit pattern is valid, and the alignment is `T`'s.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const __LAYOUT: u64 = layout::array(T::__LAYOUT, N);
}

// SAFETY: `PhantomData<T>` is a zero-sized type with alignment 1: it has no
// bytes, so it has no padding and its (empty) bit pattern is valid, whatever
// `T` is. (It fails `__CHECK`: a marker field, never a buffer element.)
unsafe impl<T: ?Sized> DeviceCopy for PhantomData<T> {
    const __LAYOUT: u64 = layout::scalar(layout::PHANTOM, 0, 1);
}

// SAFETY: `Wrapping<T>` is `#[repr(transparent)]` over `T`, so it has `T`'s
// layout and bit validity.
unsafe impl<T: DeviceCopy> DeviceCopy for Wrapping<T> {
    const __LAYOUT: u64 = T::__LAYOUT;
}

#[cfg(feature = "half")]
// SAFETY: `half::f16` is `#[repr(transparent)]` over `u16`: 2 bytes, no padding,
// every bit pattern is some half-precision value (or NaN).
unsafe impl DeviceCopy for half::f16 {
    const __LAYOUT: u64 = layout::scalar(layout::FLOAT, 2, 2);
}

#[cfg(feature = "half")]
// SAFETY: `half::bf16` is `#[repr(transparent)]` over `u16`, as above.
unsafe impl DeviceCopy for half::bf16 {
    const __LAYOUT: u64 = layout::scalar(layout::BFLOAT, 2, 2);
}

#[cfg(feature = "num-complex")]
macro_rules! impl_complex {
    ($($t:ty),*) => { $(
        // SAFETY: `num_complex::Complex<T>` is `#[repr(C)] struct { re: T, im: T }`;
        // with two `f32` (or two `f64`) fields it has no padding, every bit
        // pattern is valid, and it matches `cuComplex` (`cuDoubleComplex`).
        unsafe impl DeviceCopy for num_complex::Complex<$t> {
            // The fingerprint of a derived `#[repr(C)] struct { re: T, im: T }`.
            const __LAYOUT: u64 = layout::StructLayout::new(
                core::mem::size_of::<Self>(),
                core::mem::align_of::<Self>(),
            )
            .field("re", core::mem::offset_of!(Self, re), core::mem::size_of::<$t>(), <$t>::__LAYOUT)
            .field("im", core::mem::offset_of!(Self, im), core::mem::size_of::<$t>(), <$t>::__LAYOUT)
            .finish();
        }
    )* };
}
#[cfg(feature = "num-complex")]
impl_complex!(f32, f64);

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

/// A foreign `bytemuck::Pod` type, made `DeviceCopy`.
///
/// `#[repr(transparent)]`: a `DevicePod<T>` has exactly `T`'s layout, so a
/// buffer of `DevicePod<T>` holds `T`s, and C++ sees a `T`. Use it for a type
/// from another crate that is `Pod` (no padding, every bit pattern valid)
/// but that cuda-mem does not know; your own structs derive `DeviceCopy`
/// instead (which makes them `Pod` too). `Pod`'s rules are `DeviceCopy`'s
/// except two that only the device cares about and that cuda-mem checks
/// where it uses the type (the `__CHECK` of every buffer): the alignment
/// must be at most 256, and the size more than 0. The type should also have
/// a C-compatible layout if device code reads its fields, and hold no host
/// addresses (bytemuck's opt-in `unsound_ptr_pod_impl` feature makes raw
/// pointers `Pod`; their values mean nothing on the device).
///
/// ```
/// use cuda_mem::{DeviceCopy, DevicePod};
///
/// // A `Pod` type from some other crate (here: defined with bytemuck's derive).
/// #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
/// #[repr(C)]
/// struct Rgba { r: u8, g: u8, b: u8, a: u8 }
///
/// // Inside a derived struct, or as the element of a buffer:
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Pixel { color: DevicePod<Rgba>, depth: f32 }
///
/// let pixel = Pixel { color: DevicePod(Rgba { r: 1, g: 2, b: 3, a: 4 }), depth: 0.5 };
/// assert_eq!(&cuda_mem::bytes_of(&pixel)[..4], &[1, 2, 3, 4]);
/// assert_eq!(pixel.color.0.a, 4);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct DevicePod<T>(pub T);

impl<T> DevicePod<T> {
    /// The wrapped value.
    ///
    /// ```
    /// assert_eq!(cuda_mem::DevicePod(7_u32).into_inner(), 7);
    /// ```
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for DevicePod<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

// SAFETY: `#[repr(transparent)]` over a `Pod` `T`: `Copy`, no padding, every
// bit pattern valid (bytemuck's contract); `Pod` also requires `repr(C)` or
// `repr(transparent)` for structs. Size above 0 and alignment at most 256 are
// checked by `__CHECK` wherever cuda-mem allocates `DevicePod<T>`s.
unsafe impl<T: bytemuck::Pod> DeviceCopy for DevicePod<T> {}

// SAFETY: `#[repr(transparent)]` over a `Zeroable` `T`.
unsafe impl<T: bytemuck::Zeroable> bytemuck::Zeroable for DevicePod<T> {}
// SAFETY: `#[repr(transparent)]` over a `Pod` `T`.
unsafe impl<T: bytemuck::Pod> bytemuck::Pod for DevicePod<T> {}
// SAFETY: `#[repr(transparent)]` with `T` as its only field.
unsafe impl<T> bytemuck::TransparentWrapper<T> for DevicePod<T> {}

#[cfg(feature = "host")]
// SAFETY: `DeviceCopy` (above): no padding, every bit pattern valid.
unsafe impl<T: bytemuck::Pod> cudarc::driver::DeviceRepr for DevicePod<T> {}
#[cfg(feature = "host")]
// SAFETY: `Pod` implies `Zeroable`: all zeros is a valid `T`.
unsafe impl<T: bytemuck::Pod> cudarc::driver::ValidAsZeroBits for DevicePod<T> {}

/// Views a `DeviceCopy` value as its bytes, without copying.
///
/// Sound for every `T: DeviceCopy` because such a type has no padding: every
/// byte is initialised. The bytes are in the host's (little-endian) order,
/// which is also the device's. For a `'static` type this is
/// `bytemuck::bytes_of`; this function also takes lifetime-tagged types.
///
/// ```
/// let bytes = cuda_mem::bytes_of(&0x0403_0201_u32);
/// assert_eq!(bytes, &[1, 2, 3, 4]);
/// ```
#[must_use]
pub fn bytes_of<T: DeviceCopy>(value: &T) -> &[u8] {
    bytes_of_slice(core::slice::from_ref(value))
}

/// Views a slice of `DeviceCopy` values as bytes, without copying.
///
/// The result is `size_of_val(values)` bytes long: elements back to back, no
/// gaps (an element's size is a multiple of its alignment). For a `'static`
/// type this is `bytemuck::cast_slice::<T, u8>`.
///
/// A derived generic struct's layout is re-checked for `T` when this is
/// built (`T::__LAYOUT`), so it fails to build rather than read padding.
///
/// ```
/// let words = [0x0201_u16, 0x0403];
/// assert_eq!(cuda_mem::bytes_of_slice(&words), &[1, 2, 3, 4]);
/// assert!(cuda_mem::bytes_of_slice::<u64>(&[]).is_empty());
/// ```
#[must_use]
pub fn bytes_of_slice<T: DeviceCopy>(values: &[T]) -> &[u8] {
    // Fails the build for a derived generic struct whose layout has padding.
    let _layout: u64 = T::__LAYOUT;
    // bytemuck would do this cast for `T: Pod`, but `Pod` is `'static` and
    // `T` may have lifetime parameters (they never affect the layout or the
    // bytes); `DeviceCopy` is `Pod` minus `'static`, so the cast is the one
    // `bytemuck::cast_slice` does.
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

/// Views a mutable slice of `DeviceCopy` values as bytes, without copying:
/// the target of a copy from the device. For a `'static` type this is
/// `bytemuck::cast_slice_mut::<T, u8>`.
#[cfg(feature = "host")]
pub(crate) fn bytes_of_slice_mut<T: DeviceCopy>(values: &mut [T]) -> &mut [u8] {
    // Fails the build for a derived generic struct whose layout has padding.
    let _layout: u64 = T::__LAYOUT;
    // SAFETY: the slice's bytes are one exclusive, writable allocation of
    // `size_of_val(values)` bytes (the length fits `isize` as above); `T:
    // DeviceCopy` has no padding, so every byte is initialised, and every bit
    // pattern is a valid `T`, so any bytes written through the view leave
    // valid values behind.
    unsafe {
        core::slice::from_raw_parts_mut(
            values.as_mut_ptr().cast::<u8>(),
            core::mem::size_of_val(values),
        )
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

    /// Two versions of one struct whose fields have the same types, swapped
    /// or renamed: the same size, alignment and offsets, but a kernel built
    /// with one reads the other's fields. A stale PTX must not match
    /// (issue 29, class 3).
    #[test]
    fn layout_fingerprints_cover_field_names_and_order() {
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Range {
            start: u32,
            end: u32,
        }
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Swapped {
            end: u32,
            start: u32,
        }
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Renamed {
            first: u32,
            end: u32,
        }
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Same {
            start: u32,
            end: u32,
        }
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Raw {
            r#start: u32,
            end: u32,
        }
        assert_ne!(Range::__LAYOUT, Swapped::__LAYOUT);
        assert_ne!(Range::__LAYOUT, Renamed::__LAYOUT);
        // The struct's own name does not count, nor does a raw identifier's `r#`.
        assert_eq!(Range::__LAYOUT, Same::__LAYOUT);
        assert_eq!(Range::__LAYOUT, Raw::__LAYOUT);
        // Nested: the outer fingerprint sees the inner struct's names.
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Outer<R: DeviceCopy> {
            range: R,
        }
        assert_ne!(<Outer<Range>>::__LAYOUT, <Outer<Swapped>>::__LAYOUT);
        // Tuple structs: positions are the names.
        #[derive(Clone, Copy, crate::DeviceCopy)]
        #[repr(C)]
        struct Pair(u32, u32);
        assert_ne!(Pair::__LAYOUT, Range::__LAYOUT);
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
