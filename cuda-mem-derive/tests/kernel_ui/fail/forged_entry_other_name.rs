//! A `crate = "..."` module that forwards the kernel's entry to cuda-mem's
//! own `__kernel_entry!` under another kernel's symbol (so that the PTX
//! statics of `scribble` would describe this kernel's parameters): the
//! statics' symbol is checked against the entry's name.
#![forbid(unsafe_code)]
#![allow(dead_code)]

mod fake {
    pub use cm_renamed::*;

    #[macro_export]
    macro_rules! entry_other_name {
        (
            name $n:ident, symbol $s:literal, unsafe_kernel $u:tt, source $src:literal,
            lifetimes $l:tt, params $p:tt, docs $d:tt, kernel $k:tt
        ) => {
            cm_renamed::__kernel_entry! {
                name $n, symbol "scribble", unsafe_kernel $u, source $src,
                lifetimes $l, params $p, docs $d, kernel $k
            }
        };
    }
    pub use entry_other_name as __kernel_entry;
}

#[cm_renamed::kernel(crate = "crate::fake")]
fn fill(out: cm_renamed::device::DeviceSliceMut<u8>, value: u8) {
    let _ = (out, value);
}

fn main() {}
