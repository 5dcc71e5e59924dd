// The derive's macro called by hand with a false plan: `packed` for a
// `repr(C)` generic struct (`W<u32>` has 3 bytes of padding after the `u8`).
// No `unsafe` is written, so the claim gets a `DeviceCopy` impl, checked
// wherever cuda-mem views the bytes, but never bytemuck's `Pod`.
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
    let _ = bytemuck::bytes_of(&W(1u8, 2u32));
}
