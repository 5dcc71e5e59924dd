use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u64)]
enum Wide {
    A,
    B,
}

fn main() {}
