//! A reference as a kernel parameter: a host address means nothing on the device.
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed")]
fn read(value: &u32) {
    let _ = value;
}

fn main() {}
