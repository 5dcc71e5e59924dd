// A non-generic struct whose field is a derived generic struct with padding
// at that instantiation (its `repr` rewritten after the derive, as in
// `attack_c_attribute_changes_generic_repr.rs`). There is no padding
// *around* the field, so only the field's own layout shows it: the exact
// plan evaluates every field's layout at the definition.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[attack_macros::set_repr(C)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed)]
struct P<T> {
    a: u8,
    b: T,
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Outer {
    p: P<u32>,
}

fn main() {}
