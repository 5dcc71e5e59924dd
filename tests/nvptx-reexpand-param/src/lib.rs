//! A kernel whose parameter type expands differently each time it is
//! expanded: `attack_macros::changes!(64, 1, n)` (a proc macro with a
//! counter: safe code, no `unsafe` in its output) is `64` for its first `n`
//! expansions and `1` after, so `[u32; changes!(..)]` is a 256-byte element
//! in some of the places `#[kernel]` and `__kernel_entry!` paste it and a
//! 4-byte one in the others. Before every paste was tied to one, the
//! statics the host checks (the parameter table, the fingerprint) said
//! "4-byte elements" while the entry point wrote 256-byte ones (`n` = 4): a
//! checked launch then passed a buffer 64 times too small. The `ptx` test
//! builds a copy of this crate for each `n` from 1 to 12 (it replaces the
//! `4 /* n */` below), so that no order of the pastes is left out, and
//! checks that each copy does not build (the pastes disagree: a type
//! error) or builds with a table that describes its entry point.
#![no_std]
#![forbid(unsafe_code)]

use cuda_mem::device::DeviceSliceMut;

#[cuda_mem::kernel]
pub fn reexpand_param(mut out: DeviceSliceMut<[u32; attack_macros::changes!(64, 1, 4 /* n */)]>) {
    if let Some(x) = out.this_thread_mut() {
        x[0] = 7;
        x[x.len() - 1] = 9;
    }
}
