//! A zero-sized parameter: rustc leaves it out of the PTX entry point, so the
//! host's arguments would not line up with the kernel's.
#![allow(dead_code)]
use cm_renamed::kernel;
use core::marker::PhantomData;

#[kernel(crate = "cm_renamed")]
fn tagged(value: u32, tag: PhantomData<u64>) {
    let _ = (value, tag);
}

fn main() {}
