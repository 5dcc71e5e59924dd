//! The Rust kernels of the cuda-mem examples, compiled to PTX for
//! `nvptx64-nvidia-cuda` by `examples/build.rs` with
//! `cuda_mem::build::KernelCrate`, and embedded in the example binaries.
//!
//! - `particles_step`: advances particles with [`particles_shared::step`], the
//!   same function the host uses for its check (example `particles`).
//! - `scale_f32`: multiplies floats in place (example `pipeline`).
//!
//! Both use a grid-stride loop, so any grid size covers any `n`. Nothing here
//! can panic (no indexing, no division), and the build uses
//! `-Cpanic=immediate-abort`, so the PTX holds no `.extern .func`.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, stdarch_nvptx))]

#[cfg(target_arch = "nvptx64")]
mod device {
    use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _thread_idx_x};
    use particles_shared::{step, Particle};

    /// This thread's first index and the number of threads in the grid.
    #[inline(always)]
    fn grid_stride() -> (usize, usize) {
        // SAFETY: reading the special registers has no preconditions.
        // (The registers are non-negative `i32`s: `as u32` first, no sign extension.)
        unsafe {
            let threads_per_block = _block_dim_x() as u32 as usize;
            let first = _block_idx_x() as u32 as usize * threads_per_block
                + _thread_idx_x() as u32 as usize;
            (first, _grid_dim_x() as u32 as usize * threads_per_block)
        }
    }

    /// Advances each of the `n` particles at `particles` by `steps` steps of
    /// `dt` seconds. Each thread keeps its particles in registers for all the
    /// steps: one load and one store per particle.
    ///
    /// # Safety
    ///
    /// `particles` points to `n` particles in memory the device may read and
    /// write (device, managed or mapped pinned memory), used by nothing else
    /// while the kernel runs.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn particles_step(
        particles: *mut Particle,
        n: usize,
        dt: f32,
        steps: u32,
    ) {
        let (mut i, stride) = grid_stride();
        while i < n {
            // SAFETY: `i < n`, and the caller guarantees `n` particles at
            // `particles` that only this thread touches at index `i`.
            let slot = unsafe { particles.add(i) };
            // SAFETY: as above; `slot` is valid and aligned for a `Particle`.
            let mut p = unsafe { slot.read() };
            for _ in 0..steps {
                step(&mut p, dt);
            }
            // SAFETY: as above.
            unsafe { slot.write(p) };
            i += stride;
        }
    }

    /// Multiplies each of the `n` floats at `data` by `factor`, in place.
    ///
    /// # Safety
    ///
    /// `data` points to `n` floats in memory the device may read and write,
    /// used by nothing else while the kernel runs.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn scale_f32(data: *mut f32, n: usize, factor: f32) {
        let (mut i, stride) = grid_stride();
        while i < n {
            // SAFETY: `i < n`, and the caller guarantees `n` floats at `data`
            // that only this thread touches at index `i`.
            unsafe { *data.add(i) *= factor };
            i += stride;
        }
    }
}
