// A generic plan (`packed`: nothing to check) claimed by hand for a padded
// non-generic struct: the generic plans require type or const arguments, so
// a non-generic struct cannot skip the exact checks.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

cm_renamed::__derive_device_copy! {
    @__cuda_mem_derive_device_copy
    struct Padded
    generics { lifetimes [] types [] consts [] args [] outlives [] bounds [] device_copy [] }
    plan packed
    fields [a => __a: field, b => __b: field]
}

fn main() {}
