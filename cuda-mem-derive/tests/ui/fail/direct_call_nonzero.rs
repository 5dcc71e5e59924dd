// `__derive_device_copy!` called by hand on a struct with a `NonZeroU32`
// field, leaving the field out of the list: the exhaustive pattern fails, and
// listing it fails the `DeviceCopy` check.
#![forbid(unsafe_code)]
use core::num::NonZeroU32;

#[derive(Clone, Copy)]
#[repr(C)]
struct Id {
    id: NonZeroU32,
    other: u32,
}

cm_renamed::__derive_device_copy! {
    @__cuda_mem_derive_device_copy
    struct Id
    generics { lifetimes [] types [] consts [] args [] outlives [] bounds [] device_copy [] }
    plan exact
    fields [other => __other: field]
}

fn main() {}
