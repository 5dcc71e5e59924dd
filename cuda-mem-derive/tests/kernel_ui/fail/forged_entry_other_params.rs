//! A `crate = "..."` module that forwards the kernel's entry to cuda-mem's
//! own `__kernel_entry!` with other parameter types (a `[u64; 2]` where the
//! kernel writes through a `DeviceSliceMut<u8>`, so that the PTX would
//! describe a value the host may push freely): the entry passes its
//! parameters to the kernel (the callee), which does not type-check.
#![forbid(unsafe_code)]
#![allow(dead_code)]

mod fake {
    pub use cm_renamed::*;

    #[macro_export]
    macro_rules! entry_other_params {
        (
            symbol $s:literal, unsafe_kernel $u:tt, source $src:literal,
            lifetimes $l:tt, params [$($a:ident $r:ident: $t:ty),*], callee $c:path $(,)?
        ) => {
            cm_renamed::__kernel_entry! {
                symbol $s, unsafe_kernel $u, source $src,
                lifetimes $l, params [$($a $r: [u64; 2]),*], callee $c,
            }
        };
    }
    pub use entry_other_params as __kernel_entry;
}

#[cm_renamed::kernel(crate = "crate::fake")]
fn scribble(out: cm_renamed::device::DeviceSliceMut<u8>) {
    let _ = out;
}

fn main() {}
