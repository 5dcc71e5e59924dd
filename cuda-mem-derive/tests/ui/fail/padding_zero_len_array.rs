// A zero-length array has no bytes but still raises the alignment to 8.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct ZeroLen {
    a: u8,
    _align: [u64; 0],
}

fn main() {}
