use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u8)]
enum Never {}

fn main() {}
