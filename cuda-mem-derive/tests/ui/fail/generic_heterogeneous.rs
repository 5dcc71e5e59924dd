// Padding depends on `T` (`G<u32>` has 3 bytes after `a`): refused.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct G<T> {
    a: u8,
    b: T,
}

fn main() {}
