// A field whose (wrong) hand-written impl brings an alignment over 256: the
// derive's alignment witness still refuses the outer struct.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy)]
#[repr(C, align(512))]
struct Big([u8; 512]);
// SAFETY: not actually sound (alignment 512): this is what the test is about.
unsafe impl DeviceCopy for Big {}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Outer {
    big: Big,
}

fn main() {}
