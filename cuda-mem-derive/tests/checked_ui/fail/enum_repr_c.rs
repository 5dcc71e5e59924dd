use cm_renamed::CheckedDeviceCopy;

// `repr(C)` gives the enum C's `int`, whose size is the platform's.
#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
enum Phase {
    Solid,
    Liquid,
}

fn main() {}
