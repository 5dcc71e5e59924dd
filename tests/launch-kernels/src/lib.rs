//! Test kernels of `#[kernel]`: every parameter kind (slices, atomic slices,
//! pitched 2D, derived structs, a device pointer), a slow kernel for the
//! ordering tests, and an `unsafe fn` kernel. `tests/build.rs` builds the
//! PTX; `tests/tests/kernels.rs` launches it and checks every element
//! against the functions here, which the host calls too.
#![no_std]

use cuda_mem::device::{
    global_linear_idx, grid_stride, DeviceAtomicSlice, DeviceSlice, DeviceSliceMut, PitchedSlice,
    PitchedSliceMut, Scope,
};
use cuda_mem::{kernel, DeviceCopy, DevicePtr};

/// A derived struct with fields of three sizes: 16 bytes, aligned to 8.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Item {
    /// A key.
    pub key: u32,
    /// A weight.
    pub weight: f32,
    /// An identifier.
    pub id: u64,
}

/// The parameters of [`transform`], passed by value.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Params {
    /// Added to the key (wrapping).
    pub add: u32,
    /// Multiplies the weight.
    pub scale: f32,
}

/// What [`transform_items`] does to one item (the host's check calls it too).
#[inline]
pub fn transform(item: Item, params: Params) -> Item {
    Item {
        key: item.key.wrapping_mul(3).wrapping_add(params.add),
        weight: item.weight * params.scale,
        id: !item.id,
    }
}

/// `out[i] = transform(input[i], params)` for every `i` both have.
#[kernel]
pub fn transform_items(mut out: DeviceSliceMut<Item>, input: DeviceSlice<Item>, params: Params) {
    for (i, slot) in out.grid_stride_mut() {
        if let Some(&item) = input.get(i) {
            *slot = transform(item, params);
        }
    }
}

/// A range of two fields of one type: a version of it with the two
/// swapped (`launch-kernels-skewed`) has the same size, alignment and
/// offsets, and only the fields' names tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Span {
    /// The first value.
    pub start: u32,
    /// One past the last value.
    pub end: u32,
}

/// `out[i] = span.end - span.start + i` (wrapping): reads both fields, so
/// a kernel built with them swapped would write other values.
#[kernel]
pub fn span_lengths(mut out: DeviceSliceMut<u32>, span: Span) {
    for (i, slot) in out.grid_stride_mut() {
        *slot = span.end.wrapping_sub(span.start).wrapping_add(i as u32);
    }
}

/// `out[i] = offset + i`.
#[kernel]
pub fn write_indices(mut out: DeviceSliceMut<u64>, offset: u64) {
    for (i, x) in out.grid_stride_mut() {
        *x = offset + i as u64;
    }
}

/// Counts `input[i] % bins.len()` into `bins`, atomically.
#[kernel]
pub fn histogram(input: DeviceSlice<u32>, bins: DeviceAtomicSlice<u32>) {
    let n = bins.len();
    if n == 0 {
        return;
    }
    for i in grid_stride(input.len()) {
        if let Some(bin) = bins.get(input[i] as usize % n) {
            bin.fetch_add(1, Scope::Device);
        }
    }
}

/// `rounds` steps of a linear congruential generator from `x`: a slow,
/// exactly reproducible function.
#[inline]
pub fn churned(mut x: u32, rounds: u32) -> u32 {
    for _ in 0..rounds {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    x
}

/// `data[i] = churned(data[i], rounds)`: slow on purpose (ordering tests).
#[kernel]
pub fn churn(mut data: DeviceSliceMut<u32>, rounds: u32) {
    for (_, x) in data.grid_stride_mut() {
        *x = churned(*x, rounds);
    }
}

/// `out[x, y] = input[x, y] + add` over pitched 2D arrays.
#[kernel]
pub fn pitched_add(mut out: PitchedSliceMut<f32>, input: PitchedSlice<f32>, add: f32) {
    for (x, y, slot) in out.grid_stride_mut() {
        if let Some(&v) = input.get(x, y) {
            *slot = v + add;
        }
    }
}

/// Thread 0 writes `value` at `target`.
///
/// # Safety
///
/// `target` points to a `u32` in device-accessible memory that nothing else
/// uses while the kernel runs.
#[kernel]
pub unsafe fn poke(target: DevicePtr<u32>, value: u32) {
    if global_linear_idx() == 0 {
        // SAFETY: the launch's caller promised a `u32` no one else uses.
        unsafe { *target.as_raw() = value };
    }
}

/// A `crate = "..."` path that forges the fingerprint (the attack of a
/// review): a module that re-exports cuda-mem but supplies its own
/// `launch::__kernel_signature`, returning the source hash alone, and a
/// parameter type that is a `DeviceSliceMut<u8>` in the PTX but a `[u64; 2]`
/// on the host, so that the host could push any `{ptr, len}` for the kernel
/// to write through. No `unsafe` is written. cuda-mem's macros compute the
/// PTX's fingerprint and the launch's from the real parameter types, so the
/// host's `SIGNATURE` is forged but nothing that decides a launch is: the
/// launch is refused (`tests/tests/kernels.rs`).
#[forbid(unsafe_code)]
pub mod forged {
    /// cuda-mem, but for one function of its `launch` module.
    pub mod fake_cuda_mem {
        pub use cuda_mem::*;

        /// cuda-mem's `launch`, with a forged fingerprint function.
        pub mod launch {
            pub use cuda_mem::launch::*;

            /// Forged: the source hash alone, whatever the parameters.
            pub const fn __kernel_signature(_unsafe: bool, source: u64, _params: &[u64]) -> u64 {
                source
            }
        }
    }

    /// The parameter as the PTX sees it.
    #[cfg(target_arch = "nvptx64")]
    pub type Scribble<'a> = cuda_mem::device::DeviceSliceMut<'a, u8>;
    /// The parameter as the host sees it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub type Scribble<'a> = [u64; 2];

    /// Writes 0xAB into every byte of `out` (in the PTX).
    #[cuda_mem::kernel(crate = "crate::forged::fake_cuda_mem")]
    pub fn forged_scribble(out: Scribble<'_>) {
        #[cfg(target_arch = "nvptx64")]
        {
            let mut out = out;
            for (_, byte) in out.grid_stride_mut() {
                *byte = 0xAB;
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        let _ = out;
    }
}
