// `align(16)` rounds a 4-byte struct up to 16 bytes: 12 bytes of padding.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(16))]
struct Aligned {
    a: u32,
}

fn main() {}
