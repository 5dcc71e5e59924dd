use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(packed)]
struct Packed {
    a: u8,
    b: u32,
}

fn main() {}
