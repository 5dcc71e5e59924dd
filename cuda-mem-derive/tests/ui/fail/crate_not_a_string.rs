use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = 42)]
#[repr(C)]
struct S {
    a: u32,
}

fn main() {}
