const _: () = {
    /// Multiplies every element by `factor`.
    #[inline(always)]
    fn scale(data: DeviceSliceMut<f32>, factor: f32) {
        for x in data.iter_mut() {
            *x *= factor;
        }
    }
    ::cuda_mem::__kernel_entry! {
        symbol "scale", unsafe_kernel false, source 16737446012672916488u64, lifetimes[],
        params[__cuda_mem_address0 __cuda_mem_rest0 : DeviceSliceMut < f32 >,
        __cuda_mem_address1 __cuda_mem_rest1 : f32], callee scale,
    }
};
