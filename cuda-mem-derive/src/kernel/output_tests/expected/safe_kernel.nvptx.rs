::cuda_mem::__kernel_entry! {
    name scale, symbol "scale", unsafe_kernel false, source 16737446012672916488u64,
    lifetimes[], params[__cuda_mem_param0 : DeviceSliceMut < f32 >, __cuda_mem_param1 :
    f32], docs[#[doc = r" Multiplies every element by `factor`."]], kernel {
    #[inline(always)] fn scale(data : DeviceSliceMut < f32 >, factor : f32) { for x in
    data.iter_mut() { * x *= factor; } } }
}
