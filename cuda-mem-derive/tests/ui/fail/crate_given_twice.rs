use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct S {
    a: u32,
}

fn main() {}
