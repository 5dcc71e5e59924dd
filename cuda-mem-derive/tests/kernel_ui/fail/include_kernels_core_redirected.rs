//! `include_kernels!` puts `::core::include_str!`'s text into `unsafe {
//! Module::new(NAME, PTX) }`, trusting it to be the kernel crate's PTX from
//! `OUT_DIR`. `::core` is whatever the calling crate's extern prelude says:
//! `extern crate attack_macros as core;` (no `unsafe` anywhere) makes it a
//! macro that returns any text, here without `OUT_DIR` even being set, and
//! the name check (`::core::assert!`) is skipped too. A hand-written PTX
//! with forged `__cuda_mem_sig_*` / `__cuda_mem_abi_*` statics then passes
//! every launch check, so a "safe" launch runs arbitrary device code.
//! Must not compile: the macro's paths must be `$crate::…` ones (here,
//! with no `OUT_DIR`, the real `env!` fails).
#![forbid(unsafe_code)]

extern crate attack_macros as core;

static KERNELS: cm_renamed::Module = cm_renamed::include_kernels!("../not/a/plain/name");

fn main() {
    assert_eq!(KERNELS.ptx(), "forged");
}
