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
    /// The kernel's signature fingerprint, read by the host before
    /// the first launch in a context.
    #[unsafe(no_mangle)]
    #[used]
    pub static __cuda_mem_sig_scale: u64 = ::cuda_mem::launch::__kernel_signature(
        false,
        16737446012672916488u64,
        &[
            ::cuda_mem::launch::__param_signature::<fn(DeviceSliceMut<f32>), _>(),
            ::cuda_mem::launch::__param_signature::<fn(f32), _>(),
        ],
    );
};
