use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, transparent)]
struct Both {
    a: u32,
}

fn main() {}
