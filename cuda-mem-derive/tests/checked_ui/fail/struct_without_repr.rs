use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
struct Flags {
    a: bool,
    b: bool,
}

fn main() {}
