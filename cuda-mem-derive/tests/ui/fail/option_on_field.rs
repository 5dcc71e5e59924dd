use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct S {
    #[device_copy(crate = "cm_renamed")]
    a: u32,
}

fn main() {}
