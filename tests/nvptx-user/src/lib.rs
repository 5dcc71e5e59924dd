//! A `no_std` kernel crate that uses a struct deriving `DeviceCopy`, exactly
//! as a user's kernel crate would share its struct definitions with the host.
//!
//! Built for `nvptx64-nvidia-cuda` by `cuda_mem::build::KernelCrate` (the
//! `ptx` test); on the host the kernel ABI is gated off so the plain functions
//! can still be checked.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx))]

use cuda_mem::{DeviceCopy, DevicePtr};

/// A particle as both the host and the device see it: 40 bytes, no padding.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Particle {
    /// Position.
    pub position: [f32; 3],
    /// Mass.
    pub mass: f32,
    /// Velocity.
    pub velocity: [f32; 3],
    /// Identifier.
    pub id: u32,
    /// Per-particle accumulated forces, in another device buffer.
    pub forces: DevicePtr<[f32; 3]>,
}

// The host and the device agree on the layout (a C++ mirror would assert the same).
const _: () = assert!(core::mem::size_of::<Particle>() == 40 && core::mem::align_of::<Particle>() == 8);

/// A homogeneous generic struct, also shared.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Vec3<T> {
    /// x
    pub x: T,
    /// y
    pub y: T,
    /// z
    pub z: T,
}

/// One explicit Euler step for one particle.
pub fn step(p: &mut Particle, force: [f32; 3], dt: f32) {
    for axis in 0..3 {
        p.velocity[axis] += force[axis] / p.mass * dt;
        p.position[axis] += p.velocity[axis] * dt;
    }
}

/// Advances `n` particles by `dt`, reading each particle's force through its
/// `DevicePtr` field and adding `gravity`.
///
/// # Safety
///
/// `particles` must point to `n` valid particles whose `forces` point to a
/// valid `[f32; 3]` each, in device memory.
#[cfg(target_arch = "nvptx64")]
#[no_mangle]
pub unsafe extern "ptx-kernel" fn advance(particles: *mut Particle, n: u32, gravity: Vec3<f32>, dt: f32) {
    use core::arch::nvptx::{_block_dim_x, _block_idx_x, _thread_idx_x};
    // SAFETY: reading the special registers has no preconditions.
    let i = unsafe { _block_idx_x() as u32 * _block_dim_x() as u32 + _thread_idx_x() as u32 };
    if i >= n {
        return;
    }
    // SAFETY: `i < n` and the caller guarantees `n` valid particles.
    let p = unsafe { &mut *particles.add(i as usize) };
    // SAFETY: the caller guarantees `forces` points to a valid `[f32; 3]`.
    let f = unsafe { *p.forces.as_raw() };
    step(p, [f[0] + gravity.x, f[1] + gravity.y, f[2] + gravity.z], dt);
}
