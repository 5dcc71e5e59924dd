// A `#![no_std]` crate that forbids unsafe code can still derive: the only
// `unsafe impl`s come from the macros, not from its own tokens.
#![no_std]
#![forbid(unsafe_code)]
#![no_implicit_prelude]
#![deny(warnings)]

use ::cm_renamed::DeviceCopy;

#[derive(::core::clone::Clone, ::core::marker::Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Particle {
    position: [f32; 3],
    mass: f32,
    next: ::cm_renamed::DevicePtr<Particle>,
}

#[derive(::core::clone::Clone, ::core::marker::Copy, DeviceCopy)]
#[device_copy(crate = "::cm_renamed")]
#[repr(C)]
struct Vec2<T> {
    x: T,
    y: T,
}

fn device_copy<T: DeviceCopy>() {}

fn main() {
    device_copy::<Particle>();
    device_copy::<Vec2<f64>>();
}
