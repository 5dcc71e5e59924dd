// An attribute macro after the derive removes `repr(C)` and adds `align(8)`
// to a non-generic struct: 7 bytes of padding the tokens do not show. The
// exact check measures the real layout.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[attack_macros::set_repr(C, align(8))]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Small {
    a: u8,
}

fn main() {}
