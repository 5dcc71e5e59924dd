use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(3))]
struct Three {
    a: [u8; 3],
}

fn main() {}
