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
    ::cuda_mem::__kernel_fingerprint_static! {
        static __cuda_mem_sig_poke, unsafe true, source 1287833718837152191u64,
        lifetimes[], params[DevicePtr < u32 >, u32]
    }
};
