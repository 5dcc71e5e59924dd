//! Two `shared_array!` places written in one `macro_rules!` and stamped by
//! one call of it, from a crate that forbids unsafe code. `shared_array!`
//! names its array by a hash of the module, file, type and length tokens,
//! and the line and column of the place (`line!()` / `column!()`, which
//! inside a macro are those of the outermost call): the two places get one
//! name, and the builder keeps one of two identical declarations. The
//! `ptx` test checks that they are two arrays.
#![no_std]
#![forbid(unsafe_code)]

use cuda_mem::device::{DeviceSliceMut, Scope};

/// Two shared arrays: a counter of ones and a counter of twos.
macro_rules! two_counters {
    () => {
        (
            cuda_mem::shared_array![u32; 1],
            cuda_mem::shared_array![u32; 1],
        )
    };
}

/// Each block counts its threads twice, once by 1 and once by 2: `out`
/// gets `(threads, 2 * threads)`, or `(3 * threads, 3 * threads)` where the
/// two arrays are one.
#[cuda_mem::kernel]
pub fn two_counts(mut out: DeviceSliceMut<[u32; 2]>) {
    let (ones, twos) = two_counters!();
    if let (Some(a), Some(b)) = (ones.atomic(0), twos.atomic(0)) {
        a.fetch_add(1, Scope::Block);
        b.fetch_add(2, Scope::Block);
    }
    cuda_mem::device::sync_threads();
    if let Some(x) = out.this_thread_mut() {
        *x = [ones.load(0), twos.load(0)];
    }
}
