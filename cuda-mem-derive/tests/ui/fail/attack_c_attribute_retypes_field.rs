// Attack (c): an attribute macro placed after the derive rewrites a field's
// type (`u8` -> `bool`) after the derive read the tokens. The old derive
// checked the tokens (`u8`) and accepted the struct; the real field is a
// `bool`. Now the proof destructures the real struct.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[attack_macros::retype(flag = bool)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Flags {
    value: u8,
    flag: u8,
}

fn main() {
    let flags = Flags { value: 1, flag: true };
    let _ = cm_renamed::bytes_of(&flags);
}
