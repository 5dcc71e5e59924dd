const _: () = {
    /// Writes `value` at `ptr`.
    ///
    /// # Safety
    /// `ptr` points to a `u32` in device memory that no one else uses.
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn poke(
        __cuda_mem_param0: DevicePtr<u32>,
        __cuda_mem_param1: u32,
    ) {
        #[inline(always)]
        unsafe fn poke(ptr: DevicePtr<u32>, value: u32) {
            unsafe { *ptr.as_raw() = value };
        }
        unsafe { poke(__cuda_mem_param0, __cuda_mem_param1) }
    }
    /// The kernel's signature fingerprint, read by the host before
    /// the first launch in a context.
    #[unsafe(no_mangle)]
    #[used]
    pub static __cuda_mem_sig_poke: u64 = ::cuda_mem::launch::__kernel_signature(
        true,
        1287833718837152191u64,
        &[
            ::cuda_mem::launch::__param_signature::<fn(DevicePtr<u32>), _>(),
            ::cuda_mem::launch::__param_signature::<fn(u32), _>(),
        ],
    );
};
