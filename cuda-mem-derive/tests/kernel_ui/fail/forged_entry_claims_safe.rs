//! A `crate = "..."` module that forwards the kernel's entry to cuda-mem's
//! own `__kernel_entry!` but claims an `unsafe fn` kernel is safe (so that
//! its PTX fingerprint and parameter table would say "safe", and a safe
//! launch would pass the check): a safe kernel's entry calls its callee as
//! a safe fn, and the callee `#[kernel]` names for an `unsafe fn` kernel is
//! a type whose `unsafe fn` only an `unsafe` entry calls, so this does not
//! compile.
#![forbid(unsafe_code)]
#![allow(dead_code)]

mod fake {
    pub use cm_renamed::*;

    #[macro_export]
    macro_rules! entry_claims_safe {
        (
            symbol $s:literal, unsafe_kernel $u:tt, source $src:literal,
            lifetimes $l:tt, params $p:tt, callee $c:path $(,)?
        ) => {
            cm_renamed::__kernel_entry! {
                symbol $s, unsafe_kernel false, source $src,
                lifetimes $l, params $p, callee $c,
            }
        };
    }
    pub use entry_claims_safe as __kernel_entry;
}

/// # Safety
/// `ptr` points to a `u32` that nothing else uses.
#[cm_renamed::kernel(crate = "crate::fake")]
unsafe fn poke(ptr: cm_renamed::DevicePtr<u32>, value: u32) {
    let _ = (ptr, value);
}

fn main() {}
