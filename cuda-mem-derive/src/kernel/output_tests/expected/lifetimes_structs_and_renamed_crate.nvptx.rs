#[cfg(feature = "particles")]
const _: () = {
    #[inline(always)]
    #[cfg(feature = "particles")]
    #[allow(clippy::needless_range_loop)]
    fn step<'a>(
        out: DeviceSliceMut<'a, Particle>,
        input: DeviceSlice<'a, Particle>,
        params: crate::Params,
        mut steps: u32,
    ) {
        while steps > 0 {
            steps -= 1;
        }
        let _ = (out, input, params);
    }
    ::cm_renamed::__kernel_entry! {
        symbol "step", unsafe_kernel false, source 1523033959801330723u64, lifetimes['a],
        params[__cuda_mem_address0 __cuda_mem_rest0 : DeviceSliceMut < 'a, Particle >,
        __cuda_mem_address1 __cuda_mem_rest1 : DeviceSlice < 'a, Particle >,
        __cuda_mem_address2 __cuda_mem_rest2 : crate ::Params, __cuda_mem_address3
        __cuda_mem_rest3 : u32], callee step,
    }
};
