// `__derive_device_copy!` called by hand on a padded struct: the proof is in
// the macro, not in the derive, so it fails the same way.
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
    plan exact
    fields [a => __a: field, b => __b: field]
}

fn main() {}
