use cm_renamed::DeviceCopy;
use core::num::NonZeroU32;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Id {
    id: NonZeroU32,
}

fn main() {}
