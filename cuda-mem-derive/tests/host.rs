//! Host-side behaviour of derived types: cudarc kernel arguments, byte views,
//! and the bytemuck impls the derive brings.

use cm_renamed::{DeviceCopy, DevicePtr};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Particle {
    position: [f32; 3],
    mass: f32,
    velocity: [f32; 3],
    id: u32,
    neighbours: DevicePtr<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vec3<T> {
    x: T,
    y: T,
    z: T,
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(transparent)]
struct Id<T>(T);

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Span<'a> {
    start: u64,
    len: u64,
    _buffer: core::marker::PhantomData<&'a [u8]>,
}

/// `DeviceCopy` brings bytemuck's `Pod` and `Zeroable` (no bytemuck derive).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vertex {
    position: [f32; 3],
    color: u32,
}

fn kernel_arg<T: DeviceRepr + ValidAsZeroBits + DeviceCopy>() {}

fn pod<T: bytemuck::Pod>() {}

#[test]
fn derived_types_are_cudarc_kernel_arguments() {
    kernel_arg::<Particle>();
    kernel_arg::<Vec3<f64>>();
    kernel_arg::<Vec3<Vec3<u8>>>();
    kernel_arg::<Id<u16>>();
    kernel_arg::<Span<'static>>();
    kernel_arg::<Vertex>();
    kernel_arg::<[Particle; 2]>();
}

/// Non-generic derived structs are `Pod` (their layout is proved exactly);
/// generic ones are `Zeroable` only (their layout is checked at each
/// instantiation cuda-mem uses, which bytemuck would not do: see
/// `ui/fail/attack_c_attribute_changes_generic_repr.rs` and
/// `direct_call_generic_plan_lies.rs`).
#[test]
fn derived_types_are_pod() {
    pod::<Particle>();
    pod::<Span<'static>>();
    pod::<Vertex>();
    let zero: Vec3<u32> = bytemuck::Zeroable::zeroed();
    assert_eq!(zero, Vec3 { x: 0, y: 0, z: 0 });
    let zero: Id<u16> = bytemuck::Zeroable::zeroed();
    assert_eq!(cm_renamed::bytes_of(&zero), &[0, 0]);
}

#[test]
fn byte_views_match_the_layout() {
    let particle = Particle {
        position: [1.0, 2.0, 3.0],
        mass: 4.0,
        velocity: [5.0, 6.0, 7.0],
        id: 0xDEAD_BEEF,
        neighbours: DevicePtr::from_addr(0x0102_0304_0506_0708),
    };
    let bytes = cm_renamed::bytes_of(&particle);
    assert_eq!(bytes.len(), 40);
    assert_eq!(&bytes[0..4], &1.0_f32.to_le_bytes());
    assert_eq!(&bytes[12..16], &4.0_f32.to_le_bytes());
    assert_eq!(&bytes[28..32], &0xDEAD_BEEF_u32.to_le_bytes());
    assert_eq!(&bytes[32..40], &0x0102_0304_0506_0708_u64.to_le_bytes());

    let points = [
        Vec3 {
            x: 1_u16,
            y: 2,
            z: 3,
        },
        Vec3 { x: 4, y: 5, z: 6 },
    ];
    let bytes = cm_renamed::bytes_of_slice(&points);
    assert_eq!(bytes, &[1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0]);
}

#[test]
fn bytemuck_and_device_copy_agree() {
    let vertex = Vertex {
        position: [0.5, -1.0, 2.0],
        color: 0xFF00_FF00,
    };
    assert_eq!(cm_renamed::bytes_of(&vertex), bytemuck::bytes_of(&vertex));
    let vertices = [vertex, bytemuck::Zeroable::zeroed()];
    assert_eq!(
        cm_renamed::bytes_of_slice(&vertices),
        bytemuck::cast_slice::<Vertex, u8>(&vertices)
    );
    // Every bit pattern is valid: bytes written "by the device" read back.
    let back: Vertex = bytemuck::pod_read_unaligned(cm_renamed::bytes_of(&vertex));
    assert_eq!(back, vertex);
}
