use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u8)]
struct Tagged {
    a: u8,
}

fn main() {}
