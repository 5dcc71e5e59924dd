// Everything the derive accepts, compiled with no prelude, warnings denied
// and cuda-mem under another name (`cm_renamed`).
#![no_implicit_prelude]
#![deny(warnings)]

use ::cm_renamed::{DeviceCopy, DevicePtr};
use ::core::clone::Clone;
use ::core::marker::{Copy, PhantomData};
use ::core::mem::{align_of, size_of};

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Basic {
    a: u32,
    b: f32,
    c: [u16; 2],
}

// Explicit padding fields turn a padded layout into an accepted one.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct ExplicitPad {
    tag: u8,
    _pad: [u8; 7],
    value: u64,
}

// Nested derived structs and arrays of structs.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Nested {
    basic: Basic,
    _pad: u32,
    pads: [ExplicitPad; 3],
    grid: [[Basic; 2]; 2],
}

// `repr(C, packed)`: no padding, unaligned fields.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed)]
struct Packed {
    tag: u8,
    value: u64,
}

// `repr(C, align(16))` without padding: CUDA's `float4`.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(16))]
struct Float4 {
    x: f32,
    y: f32,
    z: f32,
    w: f32,
}

// `repr(C, align(256))`, the largest alignment allowed.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(256))]
struct Page {
    bytes: [u8; 256],
}

// Transparent wrappers, plain and generic.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(transparent)]
struct Meters(f32);

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(transparent)]
struct Tagged<T, Unit>(T, PhantomData<Unit>);

// Homogeneous generic structs.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vec3<T> {
    x: T,
    y: T,
    z: T,
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Matrix<T, const N: usize> {
    rows: [[T; N]; N],
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Samples<T, const N: usize> {
    first: T,
    rest: [T; N],
    _marker: PhantomData<T>,
}

// Homogeneous in a concrete element type, generic only in a length.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Buffer<const N: usize> {
    len: u32,
    data: [u32; N],
}

// Homogeneous and `packed(2)`.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed(2))]
struct PackedPair<T> {
    a: T,
    b: T,
}

// Generic `repr(C, packed)` with different field types.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed)]
struct PackedMixed<T> {
    tag: u8,
    value: T,
}

// A type parameter used only in `PhantomData` needs no `DeviceCopy` bound.
#[derive(DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Handle<T: ?::core::marker::Sized> {
    addr: u64,
    _points_to: PhantomData<*const T>,
}
impl<T: ?::core::marker::Sized> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: ?::core::marker::Sized> Copy for Handle<T> {}

// Lifetime parameters.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct DevRef<'a, 'b: 'a> {
    addr: u64,
    len: u64,
    _a: PhantomData<&'a ()>,
    _b: PhantomData<&'b mut [u8]>,
}

// Lifetime and type parameters together.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Window<'a, T> {
    start: [T; 2],
    end: [T; 2],
    _source: PhantomData<&'a [T]>,
}

// `DevicePtr<T>` fields.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Mesh {
    vertices: DevicePtr<Vec3<f32>>,
    indices: DevicePtr<[u32; 3]>,
    vertex_count: u32,
    triangle_count: u32,
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct PtrPair<T> {
    src: DevicePtr<T>,
    dst: DevicePtr<T>,
}

// Raw identifiers.
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct r#type {
    r#fn: u32,
    r#struct: [u8; 4],
}

// Where clauses, defaults and bounds on parameters.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Bounded<T: Copy + 'static = f32>
where
    T: ::core::default::Default,
{
    a: T,
    b: [T; 2],
}

// Wrapping, arrays of arrays, i128 and friends.
#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Numbers {
    wide: i128,
    wrapping: ::core::num::Wrapping<u64>,
    size: usize,
    offset: isize,
    table: [[f64; 2]; 4],
    _pad: u64,
}

fn device_copy<T: DeviceCopy>() {}

// A struct defined inside a function body.
fn local_struct() -> usize {
    #[derive(Clone, Copy, DeviceCopy)]
    #[device_copy(crate = "cm_renamed")]
    #[repr(C)]
    struct Local {
        a: u16,
        b: u16,
    }
    device_copy::<Local>();
    size_of::<Local>()
}

fn main() {
    device_copy::<Basic>();
    device_copy::<ExplicitPad>();
    device_copy::<Nested>();
    device_copy::<Packed>();
    device_copy::<Float4>();
    device_copy::<Page>();
    device_copy::<Meters>();
    device_copy::<Tagged<u64, Meters>>();
    device_copy::<Vec3<f32>>();
    device_copy::<Vec3<Vec3<u8>>>();
    device_copy::<Matrix<f64, 4>>();
    device_copy::<Samples<u16, 7>>();
    device_copy::<Buffer<5>>();
    device_copy::<PackedPair<u64>>();
    device_copy::<PackedMixed<u128>>();
    device_copy::<Handle<str>>();
    device_copy::<DevRef<'static, 'static>>();
    device_copy::<Window<'static, f32>>();
    device_copy::<Mesh>();
    device_copy::<PtrPair<Mesh>>();
    device_copy::<r#type>();
    device_copy::<Bounded>();
    device_copy::<Numbers>();

    ::core::assert_eq!(local_struct(), 4);

    // The layouts are what a C++ mirror would expect.
    ::core::assert_eq!(size_of::<Nested>(), 12 + 4 + 3 * 16 + 4 * 12);
    ::core::assert_eq!(size_of::<Packed>(), 9);
    ::core::assert_eq!((size_of::<Float4>(), align_of::<Float4>()), (16, 16));
    ::core::assert_eq!(size_of::<Mesh>(), 24);
    ::core::assert_eq!(size_of::<PackedMixed<u64>>(), 9);
    ::core::assert_eq!(size_of::<PackedPair<u64>>(), 16);

    // Byte views see every field.
    let basic = Basic { a: 0x0403_0201, b: 0.0, c: [0x0605, 0x0807] };
    ::core::assert_eq!(
        ::cm_renamed::bytes_of(&basic),
        &[1, 2, 3, 4, 0, 0, 0, 0, 5, 6, 7, 8]
    );
    let packed = Packed { tag: 0xAA, value: 0x0102_0304_0506_0708 };
    ::core::assert_eq!(
        ::cm_renamed::bytes_of(&packed),
        &[0xAA, 8, 7, 6, 5, 4, 3, 2, 1]
    );
    let metres = [Meters(1.0), Meters(-2.5)];
    ::core::assert_eq!(::cm_renamed::bytes_of_slice(&metres).len(), 8);
}
