// `S<1>` has 3 bytes of padding before `len`: refused.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct S<const N: usize> {
    bytes: [u8; N],
    len: u32,
}

fn main() {}
