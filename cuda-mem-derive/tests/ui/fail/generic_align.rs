// `G<u8>` would be 3 bytes rounded up to 8: refused.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(8))]
struct G<T>([T; 3]);

fn main() {}
