// Items named like anything the derive or its macro use, in the deriving
// module: none of them changes what the derive proves or emits. (The one
// exception: a unit struct or a constant named like one of the macro's
// pattern bindings, `__cuda_mem_s` or `__cuda_mem_field<N>`, turns the
// binding into a constant pattern, which fails to compile; never unsound.)
#![forbid(unsafe_code)]
#![deny(warnings)]
#![allow(non_camel_case_types, non_snake_case, non_upper_case_globals, dead_code)]

use cm_renamed::DeviceCopy;

mod __cuda_mem {}
mod __private {}
mod core {}
struct DeriveProof;
struct __s;
struct __field0;
const __a: u8 = 0;
fn proof() {}
fn assert_device_copy() {}
fn size_of_field() {}
type u32 = u8;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Pair {
    a: ::core::primitive::u32,
    b: u32, // the alias: a `u8`, and the checks see that
    c: [u8; 3],
}

fn main() {
    fn device_copy<T: DeviceCopy>() {}
    device_copy::<Pair>();
    ::core::assert_eq!(::core::mem::size_of::<Pair>(), 8);
}
