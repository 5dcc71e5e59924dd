// A generic homogeneous struct whose real field type differs from its tokens
// (an attribute macro after the derive turned `b: T` into `b: u32`, so
// `Pair<u8>` would have 3 bytes of padding). The old derive's `Identity`
// bounds compared tokens and accepted it; now rustc unifies the element
// types of the real fields.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[attack_macros::retype(b = u32)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Pair<T> {
    a: T,
    b: T,
}

fn main() {}
