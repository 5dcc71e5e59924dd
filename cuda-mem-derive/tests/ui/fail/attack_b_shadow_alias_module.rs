// Attack (b): a user module named like the old expansion's alias
// (`use <path> as __cuda_mem;`). The old derive interpolated the field type
// tokens into its const block, where `__cuda_mem::...` meant cuda-mem: this
// field is a `bool` in the struct but was checked as cuda-mem's `u32`, so a
// padded struct with a `bool` passed. Now no field type token is ever
// interpolated: the checks see the real field.
#![forbid(unsafe_code)]
use cm_renamed::DeviceCopy;

#[allow(non_camel_case_types)]
mod __cuda_mem {
    pub mod __private {
        pub mod core {
            pub mod primitive {
                pub type u32 = bool;
            }
        }
    }
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Sneaky {
    value: u32,
    flag: __cuda_mem::__private::core::primitive::u32,
}

fn main() {
    let sneaky = Sneaky { value: 1, flag: true };
    let _ = cm_renamed::bytes_of(&sneaky);
}
