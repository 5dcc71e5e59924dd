const _: () = {
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn tick() {
        #[inline(always)]
        fn tick() {}
        tick()
    }
    /// The kernel's signature fingerprint, read by the host before
    /// the first launch in a context.
    #[unsafe(no_mangle)]
    #[used]
    pub static __cuda_mem_sig_tick: u64 = ::cuda_mem::launch::__kernel_signature(
        false,
        8761116119685133851u64,
        &[],
    );
};
