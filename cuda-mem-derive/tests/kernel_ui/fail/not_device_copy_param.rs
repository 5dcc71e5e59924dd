//! A kernel parameter that is not `DeviceCopy` (`bool`: only 0 and 1 are valid).
#![allow(dead_code)]
use cm_renamed::kernel;

#[kernel(crate = "cm_renamed")]
fn flag(enabled: bool) {
    let _ = enabled;
}

fn main() {}
