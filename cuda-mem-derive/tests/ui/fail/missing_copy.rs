use cm_renamed::DeviceCopy;

#[derive(Clone, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct NotCopy {
    a: u32,
}

fn main() {}
