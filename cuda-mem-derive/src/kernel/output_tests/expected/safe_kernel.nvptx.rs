const _: () = {
    /// Multiplies every element by `factor`.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn scale(
        __cuda_mem_param0: DeviceSliceMut<f32>,
        __cuda_mem_param1: f32,
    ) {
        #[inline(always)]
        fn scale(data: DeviceSliceMut<f32>, factor: f32) {
            for x in data.iter_mut() {
                *x *= factor;
            }
        }
        scale(__cuda_mem_param0, __cuda_mem_param1)
    }
    ::cuda_mem::__kernel_fingerprint_static! {
        static __cuda_mem_sig_scale, unsafe false, source 16737446012672916488u64,
        lifetimes[], params[DeviceSliceMut < f32 >, f32]
    }
};
