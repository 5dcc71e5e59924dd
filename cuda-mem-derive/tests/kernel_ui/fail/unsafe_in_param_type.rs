//! An `unsafe` keyword in a kernel's parameter types (here in an array
//! length) would reach the crate path's macros, which could put it before a
//! block of their own; `#[kernel]` refuses it.
#![allow(dead_code)]

#[cm_renamed::kernel]
fn k(x: [u8; { unsafe { 1 } }]) {
    let _ = x;
}

fn main() {}
