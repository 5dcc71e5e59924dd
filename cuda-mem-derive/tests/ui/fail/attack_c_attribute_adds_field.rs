// An attribute macro after the derive adds a field (here one that adds
// padding). The exhaustive pattern of the real struct names the fields the
// derive saw, so it fails.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[attack_macros::add_field(extra: u8)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Grown {
    value: u32,
}

fn main() {}
