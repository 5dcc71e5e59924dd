use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(Rust)]
struct Unspecified {
    a: u32,
}

fn main() {}
