//! A kernel that returns a value.
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed")]
fn answer() -> u32 {
    42
}

fn main() {}
