const _: () = {
    #[unsafe(no_mangle)]
    pub unsafe extern "ptx-kernel" fn tick() {
        #[inline(always)]
        fn tick() {}
        tick()
    }
    ::cuda_mem::__kernel_fingerprint_static! {
        static __cuda_mem_sig_tick, unsafe false, source 8761116119685133851u64,
        lifetimes[], params[]
    }
};
