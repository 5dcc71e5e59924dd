// A struct that is `Copy` and `repr(C)` but does not derive `DeviceCopy`.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy)]
#[repr(C)]
struct Plain {
    a: u32,
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Outer {
    plain: Plain,
    items: [Plain; 4],
}

fn main() {}
