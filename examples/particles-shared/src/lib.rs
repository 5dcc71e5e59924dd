//! The structs and kernels of the examples, defined once and compiled twice:
//! for the host (the CPU checks and the typed launchers of the examples) and,
//! by `examples/build.rs` with `cuda_mem::build::KernelCrate`, for
//! `nvptx64-nvidia-cuda` (the PTX the examples launch from).
//!
//! - [`Particle`], its update [`step`] and the kernel [`particles_step`]
//!   (example `particles`);
//! - the kernel [`scale_f32`] (example `pipeline`);
//! - [`reduce::Sample`] and the kernel [`reduce::reduce_samples`] (example
//!   `reduce`);
//! - [`jacobi::relax`] and the kernel [`jacobi::jacobi_sweep`] (example
//!   `graph`);
//! - [`soa::Body`] (`#[derive(DeviceSoA)]`) and the kernels
//!   [`soa::advance_aos`], [`soa::advance_soa`], [`soa::kinetic_aos`],
//!   [`soa::kinetic_soa`] (example `particles_soa`: the same update and a
//!   2-of-8-fields read in each layout);
//! - [`heaviest::Heaviest`], its operator and the kernel
//!   [`heaviest::heaviest_particle`] (example `heaviest`: the device std's
//!   device-wide blocks on a user's own type).
//!
//! The kernels are safe fns (`#[kernel]`): each thread writes only its own
//! elements (`grid_stride_mut`), reads through `DeviceSlice`s and updates
//! shared results atomically, so their launches need no `unsafe`.
//!
//! # Why the CPU and the GPU agree bit for bit
//!
//! The `particles` example compares the GPU's particles with the CPU's
//! exactly, not within a tolerance. That holds because every floating-point
//! operation in [`step`] is rounded the same way on both sides:
//!
//! - `+`, `-`, `*` and `/` on `f32` are IEEE-754 operations, correctly rounded
//!   to nearest on x86-64 (SSE) and in PTX (`add.rn`, `mul.rn`, `div.rn`; rustc
//!   asks for neither fast-math, approximate division nor flush-to-zero).
//! - The one freedom a GPU compiler takes is *contraction*: turning `a * b + c`
//!   into one fused multiply-add, which rounds once instead of twice. In `step`
//!   the only products that feed an addition are `accel * dt` and `vel * dt`,
//!   and the time step is a power of two ([`DT`] = 1/256), so those products
//!   are exact: rounding them changes nothing, and the fused and unfused forms
//!   give the same bits. (The other product, `vel * RESTITUTION`, feeds no
//!   addition.) The unit tests check this against `f32::mul_add`, and the
//!   `kernels_ptx` test of the examples crate checks the PTX for IEEE
//!   division and the absence of flush-to-zero.
//!
//! With a `dt` that is not a power of two the results may differ in the last
//! bit after contraction; compare with a relative tolerance then.
#![no_std]

use cuda_mem::device::DeviceSliceMut;
use cuda_mem::{kernel, DeviceCopy};

pub mod heaviest;
pub mod jacobi;
pub mod reduce;
pub mod soa;

/// A point mass: position and velocity in metres and metres per second, mass
/// in kilograms. 28 bytes, no padding (the derive proves it), the layout of
/// `struct { float pos[3]; float vel[3]; float mass; }` in CUDA C++.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Particle {
    /// Position (m).
    pub pos: [f32; 3],
    /// Velocity (m/s).
    pub vel: [f32; 3],
    /// Mass (kg); must be positive.
    pub mass: f32,
}

// The host and the device agree on the layout (a C++ mirror would assert the same).
const _: () =
    assert!(core::mem::size_of::<Particle>() == 28 && core::mem::align_of::<Particle>() == 4);

/// The time step of the example, in seconds: a power of two, so that the CPU
/// and the GPU agree bit for bit (see the crate docs).
pub const DT: f32 = 1.0 / 256.0;

/// Gravitational acceleration (m/s²).
pub const GRAVITY: [f32; 3] = [0.0, -9.81, 0.0];

/// A constant force (N) on every particle: light particles drift further.
pub const WIND: [f32; 3] = [0.5, 0.0, -0.25];

/// Height of the floor the particles bounce on (m).
pub const FLOOR: f32 = 0.0;

/// Fraction of the vertical speed a particle keeps when it bounces.
pub const RESTITUTION: f32 = 0.75;

/// Advances `p` by `dt` seconds: semi-implicit Euler under [`GRAVITY`] and
/// [`WIND`], then a bounce off the [`FLOOR`].
///
/// ```
/// use particles_shared::{step, Particle, DT};
/// let mut p = Particle { pos: [0.0, 1.0, 0.0], vel: [0.0; 3], mass: 1.0 };
/// step(&mut p, DT);
/// assert!(p.vel[1] < 0.0 && p.pos[1] < 1.0);
/// ```
#[inline]
pub fn step(p: &mut Particle, dt: f32) {
    for axis in 0..3 {
        let accel = GRAVITY[axis] + WIND[axis] / p.mass;
        p.vel[axis] += accel * dt;
        p.pos[axis] += p.vel[axis] * dt;
    }
    if p.pos[1] < FLOOR {
        // Reflect the position about the floor and reverse the vertical
        // velocity, losing some of it.
        p.pos[1] = FLOOR + (FLOOR - p.pos[1]);
        p.vel[1] = -p.vel[1] * RESTITUTION;
    }
}

/// Advances each particle by `steps` steps of `dt` seconds with [`step`],
/// the function the host's check uses. Each thread keeps its particles in
/// registers for all the steps: one load and one store per particle. Any
/// grid covers any number of particles (a grid-stride loop).
#[kernel]
pub fn particles_step(mut particles: DeviceSliceMut<Particle>, dt: f32, steps: u32) {
    for (_, slot) in particles.grid_stride_mut() {
        let mut p = *slot;
        for _ in 0..steps {
            step(&mut p, dt);
        }
        *slot = p;
    }
}

/// Multiplies every float by `factor`, in place (example `pipeline`).
#[kernel]
pub fn scale_f32(mut data: DeviceSliceMut<f32>, factor: f32) {
    for (_, x) in data.grid_stride_mut() {
        *x *= factor;
    }
}

#[cfg(test)]
mod tests {
    extern crate std;

    use super::*;

    /// [`step`] with each `a * dt + b` fused into one rounding, as a GPU
    /// compiler may contract it.
    fn step_contracted(p: &mut Particle, dt: f32) {
        for axis in 0..3 {
            let accel = GRAVITY[axis] + WIND[axis] / p.mass;
            p.vel[axis] = accel.mul_add(dt, p.vel[axis]);
            p.pos[axis] = p.vel[axis].mul_add(dt, p.pos[axis]);
        }
        if p.pos[1] < FLOOR {
            p.pos[1] = FLOOR + (FLOOR - p.pos[1]);
            p.vel[1] = -p.vel[1] * RESTITUTION;
        }
    }

    fn bits(p: &Particle) -> [u32; 7] {
        let [x, y, z] = p.pos;
        let [u, v, w] = p.vel;
        [x, y, z, u, v, w, p.mass].map(f32::to_bits)
    }

    /// A deterministic spread of particles (xorshift), heavy and light, high and low.
    fn particles() -> impl Iterator<Item = Particle> {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut unit = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32
        };
        (0..500).map(move |_| Particle {
            pos: [unit() * 20.0 - 10.0, unit() * 10.0, unit() * 20.0 - 10.0],
            vel: [unit() * 2.0 - 1.0, unit() * 4.0 - 2.0, unit() * 2.0 - 1.0],
            mass: 0.5 + unit() * 1.5,
        })
    }

    #[test]
    fn contraction_does_not_change_any_step() {
        for start in particles() {
            let (mut plain, mut fused) = (start, start);
            for i in 0..2000 {
                step(&mut plain, DT);
                step_contracted(&mut fused, DT);
                assert_eq!(
                    bits(&plain),
                    bits(&fused),
                    "step {i} of {start:?}: {plain:?} vs {fused:?}"
                );
            }
        }
    }

    /// The kernel's body on the CPU (the one-thread model of
    /// `cuda_mem::device`) is [`step`] applied `steps` times to each particle.
    #[test]
    fn the_kernel_body_runs_step_on_every_particle() {
        let start: [Particle; 3] = core::array::from_fn(|i| Particle {
            pos: [i as f32, 2.0, 0.5],
            vel: [0.25, -1.0, 0.0],
            mass: 1.0 + i as f32,
        });
        let mut gpu_model = start;
        // SAFETY: the array outlives the slice, which is its only user.
        let slice = unsafe { DeviceSliceMut::from_raw_parts(gpu_model.as_mut_ptr(), 3) };
        particles_step::on_host(slice, DT, 10);
        for (p, mut expected) in gpu_model.iter().zip(start) {
            for _ in 0..10 {
                step(&mut expected, DT);
            }
            assert_eq!(bits(p), bits(&expected));
        }
    }

    #[test]
    fn particles_fall_bounce_and_stay_above_the_floor() {
        let mut p = Particle {
            pos: [0.0, 1.0, 0.0],
            vel: [0.0; 3],
            mass: 2.0,
        };
        let mut bounces = 0;
        for _ in 0..2000 {
            let falling = p.vel[1] < 0.0;
            step(&mut p, DT);
            assert!(p.pos[1] >= FLOOR, "{p:?} is below the floor");
            if falling && p.vel[1] > 0.0 {
                bounces += 1;
            }
        }
        assert!(bounces >= 2, "only {bounces} bounces");
        // The wind pushes along +x and -z, half as far for twice the mass.
        assert!(p.pos[0] > 0.0 && p.pos[2] < 0.0);
    }
}
