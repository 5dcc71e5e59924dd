use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed", frobnicate)]
#[repr(C)]
struct S {
    a: u32,
}

fn main() {}
