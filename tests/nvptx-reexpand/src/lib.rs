//! A kernel crate that forbids unsafe code and gives cuda-mem's exported
//! macros a token that expands differently each time it is expanded:
//! `attack_macros::changes!(first, later, n)`, a proc macro with a counter
//! (safe code, no `unsafe` in its output), which is `first` for its first
//! `n` expansions and `later` after. A macro that pastes a caller's tokens
//! in two places, and relies on the two meaning the same, can be made to
//! disagree with itself. The `ptx` test builds this crate and checks that
//! what the PTX declares covers what the code does. (Parameter types:
//! `nvptx-reexpand-param`.)
#![no_std]
#![forbid(unsafe_code)]

use cuda_mem::device::Scope;

/// `shared_array!` pastes its length into the size of the `.shared`
/// declaration (`global_asm!`) and, again, into the `SharedArray` type that
/// indexes it. Here the declaration gets 1 element and the array 1024, so
/// the safe, bounds-checked `atomic(1023)` is an atomic 4092 bytes into a
/// 4-byte shared array.
#[cuda_mem::kernel]
pub fn reexpand_shared(x: u32) {
    let counts = cuda_mem::shared_array![u32; attack_macros::changes!(1, 1024)];
    if let Some(last) = counts.atomic(1023) {
        last.fetch_add(x, Scope::Block);
    }
}
