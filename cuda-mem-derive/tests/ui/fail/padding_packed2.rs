// `packed(2)` still aligns `b` to 2: one byte of padding after `a`.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed(2))]
struct Packed2 {
    a: u8,
    b: u64,
}

fn main() {}
