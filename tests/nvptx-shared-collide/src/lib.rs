//! Two `shared_array!` places written apart (not stamped by one macro),
//! from a crate that forbids unsafe code. `shared_array!` names its array
//! by `__site`: a 64-bit FNV-1a hash of the module, file, type and length
//! tokens and the place number, XORed with `line << 32 | column`. The
//! length tokens below (`1 + 0 * K`) were chosen so that the two hashes
//! differ only in bits the line and column XOR can cancel: both places get
//! one name, and the builder keeps one of the two identical declarations.
//! The `ptx` test checks that they are two arrays.
#![no_std]
#![forbid(unsafe_code)]

use cuda_mem::device::{DeviceSliceMut, Scope};

/// Each block counts its threads twice, once by 1 and once by 2: `out`
/// gets `(threads, 2 * threads)`, or `(3 * threads, 3 * threads)` where the
/// two arrays are one.
#[cuda_mem::kernel]
pub fn two_counts(mut out: DeviceSliceMut<[u32; 2]>) {










    // The first place is at line 32, column 5; the second at line 49,
    // column 3621 (line 32 ^ 17, column 5 ^ 3616).
    let ones =
    cuda_mem::shared_array![u32; 1 + 0 * 101389505];
    let twos =















                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    cuda_mem::shared_array![u32; 1 + 0 * 201623452];
    if let (Some(a), Some(b)) = (ones.atomic(0), twos.atomic(0)) {
        a.fetch_add(1, Scope::Block);
        b.fetch_add(2, Scope::Block);
    }
    cuda_mem::device::sync_threads();
    if let Some(x) = out.this_thread_mut() {
        *x = [ones.load(0), twos.load(0)];
    }
}
