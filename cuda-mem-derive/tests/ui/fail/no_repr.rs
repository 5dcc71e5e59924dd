use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
struct NoRepr {
    a: u32,
    b: u32,
}

fn main() {}
