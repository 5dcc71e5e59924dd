// The size is rounded up to the alignment of `u32`: 3 bytes after `b`.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Trailing {
    a: u32,
    b: u8,
}

fn main() {}
