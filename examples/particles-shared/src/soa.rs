//! A structure of arrays (example `particles_soa`): [`Body`], eight fields,
//! kept as an array of structs (`DeviceBuffer<Body>`) or as a structure of
//! arrays (`BodySoA`, by `#[derive(DeviceSoA)]`); the particle update in
//! both layouts ([`advance_aos`], [`advance_soa`]), and a kernel that reads
//! 2 of the 8 fields, the kinetic energy ([`kinetic_aos`],
//! [`kinetic_soa`]).

use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
use cuda_mem::{kernel, DeviceCopy, DeviceSoA};

use crate::{step, Particle};

/// A body of a simulation: eight fields, 48 bytes, no padding.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
#[repr(C)]
pub struct Body {
    /// Position (m).
    pub pos: [f32; 3],
    /// Velocity (m/s).
    pub vel: [f32; 3],
    /// Mass (kg); must be positive.
    pub mass: f32,
    /// Charge (C).
    pub charge: f32,
    /// Radius (m).
    pub radius: f32,
    /// Temperature (K).
    pub temperature: f32,
    /// Identifier.
    pub id: u32,
    /// Flags.
    pub flags: u32,
}

const _: () = assert!(core::mem::size_of::<Body>() == 48);

/// Advances `b` by `dt` seconds: the particle update ([`step`]) of its
/// position, velocity and mass; the other fields stay.
///
/// ```
/// use particles_shared::soa::{advance, Body};
/// let mut b = Body { pos: [0.0, 1.0, 0.0], vel: [0.0; 3], mass: 1.0, charge: 0.0, radius: 0.1, temperature: 300.0, id: 7, flags: 0 };
/// advance(&mut b, particles_shared::DT);
/// assert!(b.pos[1] < 1.0 && b.id == 7);
/// ```
#[inline]
pub fn advance(b: &mut Body, dt: f32) {
    let mut p = Particle {
        pos: b.pos,
        vel: b.vel,
        mass: b.mass,
    };
    step(&mut p, dt);
    b.pos = p.pos;
    b.vel = p.vel;
}

/// The kinetic energy `m |v|² / 2` (J): 2 of a body's 8 fields.
///
/// ```
/// assert_eq!(particles_shared::soa::kinetic([3.0, 4.0, 0.0], 2.0), 25.0);
/// ```
#[inline]
pub fn kinetic(vel: [f32; 3], mass: f32) -> f32 {
    let [x, y, z] = vel;
    0.5 * mass * (x * x + y * y + z * z)
}

/// `steps` updates of every body of an array of structs.
#[kernel]
pub fn advance_aos(mut bodies: DeviceSliceMut<Body>, dt: f32, steps: u32) {
    for (_, slot) in bodies.grid_stride_mut() {
        let mut b = *slot;
        for _ in 0..steps {
            advance(&mut b, dt);
        }
        *slot = b;
    }
}

/// `steps` updates of every body of a structure of arrays: the same
/// update, each body read and written field by field.
#[kernel]
pub fn advance_soa(mut bodies: BodySliceMut, dt: f32, steps: u32) {
    for (_, mut body) in bodies.grid_stride_mut() {
        let mut b = body.get();
        for _ in 0..steps {
            advance(&mut b, dt);
        }
        body.set(b);
    }
}

/// `energy[i] = kinetic(bodies[i])` from an array of structs: every byte of
/// every body passes through the memory system.
#[kernel]
pub fn kinetic_aos(bodies: DeviceSlice<Body>, mut energy: DeviceSliceMut<f32>) {
    for (_, e, b) in energy.grid_stride_zip(bodies) {
        *e = kinetic(b.vel, b.mass);
    }
}

/// `energy[i] = kinetic(bodies[i])` from a structure of arrays: only the
/// velocities and the masses are read.
#[kernel]
pub fn kinetic_soa(bodies: BodySlice, mut energy: DeviceSliceMut<f32>) {
    let fields = bodies.fields();
    for (_, e, (&vel, &mass)) in energy.grid_stride_zip((fields.vel, fields.mass)) {
        *e = kinetic(vel, mass);
    }
}
