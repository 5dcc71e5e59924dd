//! A generic kernel: the PTX has one entry point per kernel.
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed")]
fn fill<T: Copy>(value: T) {
    let _ = value;
}

fn main() {}
