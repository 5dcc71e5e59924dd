use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Letter {
    c: char,
}

fn main() {}
