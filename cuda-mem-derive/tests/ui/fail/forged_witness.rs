// The padding witness is sealed: another crate cannot declare "no padding"
// for its padded struct (zerocopy#3614).
use cm_renamed::__private::NoPadding;

#[allow(dead_code)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

impl NoPadding<Padded, 3> for () {}

fn main() {}
