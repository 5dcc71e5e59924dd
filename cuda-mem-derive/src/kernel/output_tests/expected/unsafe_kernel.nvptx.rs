::cuda_mem::__kernel_entry! {
    name poke, symbol "poke", unsafe_kernel true, source 1287833718837152191u64,
    lifetimes[], params[__cuda_mem_param0 : DevicePtr < u32 >, __cuda_mem_param1 : u32],
    docs[#[doc = r" Writes `value` at `ptr`."] #[doc = r""] #[doc = r" # Safety"] #[doc =
    r" `ptr` points to a `u32` in device memory that no one else uses."]], kernel {
    #[inline(always)] unsafe fn poke(ptr : DevicePtr < u32 >, value : u32) { unsafe { *
    ptr.as_raw() = value }; } }
}
