// A warp shuffle moves a value's bytes as 32-bit words, so it must check a
// derived generic struct's real layout like the byte views do: `W<u16>` is
// claimed `packed` (by a direct call of the derive's macro) but is a padded
// `repr(C)` struct of 4 bytes, one of them padding.
#![forbid(unsafe_code)]

#[derive(Clone, Copy)]
#[repr(C)]
struct W<T>(u8, T);

cm_renamed::__derive_device_copy! {
    @__cuda_mem_derive_device_copy
    struct W
    generics {
        lifetimes [] types [T] consts [] args [T] outlives [] bounds [] device_copy [T]
    }
    plan packed
    fields [0 => __a: field, 1 => __b: field]
}

fn main() {
    let _ = cm_renamed::device::warp::shfl_idx(W(1u8, 2u16), 0);
}
