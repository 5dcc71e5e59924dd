use cm_renamed::CheckedDeviceCopy;

// 4 + 1 bytes, then 3 bytes of tail padding: the bits struct is refused.
#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Flagged {
    value: f32,
    set: bool,
}

fn main() {}
