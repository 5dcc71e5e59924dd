// A hand-written call that tries to close an impl header early and smuggle in
// `unsafe impl Send` (whose `unsafe` the lint would not see if it ended with
// the macro's tokens): every input is a parsed fragment, so it does not parse.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct Pair {
    a: u32,
    b: u32,
}

struct Raw(*mut u8);

cm_renamed::__derive_device_copy! {
    @__cuda_mem_derive_device_copy
    struct Pair
    generics {
        lifetimes [] types [] consts [] args [] outlives []
        bounds [u32 : { lifetimes [] maybe [] traits [Copy {} unsafe impl Send for Raw {} impl Copy] higher_ranked [] }]
        device_copy []
    }
    plan exact
    fields [a => __a: field, b => __b: field]
}

fn main() {}
