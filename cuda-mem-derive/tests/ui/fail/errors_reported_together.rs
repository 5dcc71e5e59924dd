// Every syntactic problem is reported in one go.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed", colour = "blue")]
#[repr(C, C)]
struct S<'a> {
    a: &'a u32,
    b: (u8, u8),
}

fn main() {}
