//! A kernel whose body an attribute macro (`hoist_body`, safe code with no
//! `unsafe` in it) moves out of its fn into the block around it. The body
//! stores through a raw pointer without `unsafe`: wherever the tokens land,
//! that must be a compile error (E0133), since a kernel body is compiled in
//! a safe context. (Before cuda-mem 0.1's round 3 the kernel fn sat inside
//! the `unsafe extern "ptx-kernel"` entry point, where this compiled.)
#![no_std]
#![forbid(unsafe_code)]

#[cuda_mem::kernel]
#[attack_macros::hoist_body]
pub fn scribble(address: u64) {
    let p = address as *mut u32;
    *p = 7;
}
