// An attribute macro after the derive turns a generic `repr(C, packed)`
// struct into a plain `repr(C)` one, so `P<u32>` has 3 bytes of padding the
// tokens do not show. The generic plans take the `repr` on trust and check
// the real layout wherever cuda-mem views a value as bytes, so the derive
// must not make the struct bytemuck `Pod`: `bytemuck::bytes_of` would read
// the padding (uninitialised memory) with no check of ours in between.
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

fn main() {
    let _ = bytemuck::bytes_of(&P { a: 1u8, b: 2u32 });
}
