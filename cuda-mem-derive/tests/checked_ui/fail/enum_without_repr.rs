use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
enum Phase {
    Solid,
    Liquid,
}

fn main() {}
