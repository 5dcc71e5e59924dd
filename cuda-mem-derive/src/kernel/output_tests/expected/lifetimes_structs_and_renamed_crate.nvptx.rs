#[cfg(feature = "particles")]
::cm_renamed::__kernel_entry! {
    name step, symbol "step", unsafe_kernel false, source 1523033959801330723u64,
    lifetimes['a], params[__cuda_mem_param0 : DeviceSliceMut < 'a, Particle >,
    __cuda_mem_param1 : DeviceSlice < 'a, Particle >, __cuda_mem_param2 : crate ::Params,
    __cuda_mem_param3 : u32], docs[], kernel { #[inline(always)] #[cfg(feature =
    "particles")] #[allow(clippy::needless_range_loop)] fn step < 'a > (out :
    DeviceSliceMut < 'a, Particle >, input : DeviceSlice < 'a, Particle >, params : crate
    ::Params, mut steps : u32,) { while steps > 0 { steps -= 1; } let _ = (out, input,
    params); } }
}
