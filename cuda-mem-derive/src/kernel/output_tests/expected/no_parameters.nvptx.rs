const _: () = {
    #[inline(always)]
    fn tick() {}
    ::cuda_mem::__kernel_entry! {
        symbol "tick", unsafe_kernel false, source 8761116119685133851u64, lifetimes[],
        params[], callee tick,
    }
};
