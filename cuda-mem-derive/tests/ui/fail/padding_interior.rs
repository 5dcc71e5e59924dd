// `u32` must start at offset 4: 3 bytes of padding after `a`.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Interior {
    a: u8,
    b: u32,
}

fn main() {}
