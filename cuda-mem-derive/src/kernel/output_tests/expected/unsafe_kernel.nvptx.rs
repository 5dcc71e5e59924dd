const _: () = {
    /// Writes `value` at `ptr`.
    ///
    /// # Safety
    /// `ptr` points to a `u32` in device memory that no one else uses.
    #[inline(always)]
    unsafe fn poke(ptr: DevicePtr<u32>, value: u32) {
        unsafe { *ptr.as_raw() = value };
    }
    #[allow(non_camel_case_types)]
    struct __CudaMemUnsafeKernel;
    unsafe impl ::cuda_mem::launch::__UnsafeKernel for __CudaMemUnsafeKernel {}
    impl __CudaMemUnsafeKernel {
        #[inline(always)]
        #[allow(clippy::all)]
        unsafe fn __cuda_mem_run(
            (__cuda_mem_param0, __cuda_mem_param1): (DevicePtr<u32>, u32),
        ) {
            unsafe { poke(__cuda_mem_param0, __cuda_mem_param1) }
        }
    }
    ::cuda_mem::__kernel_entry! {
        symbol "poke", unsafe_kernel true, source 1287833718837152191u64, lifetimes[],
        params[__cuda_mem_address0 __cuda_mem_rest0 : DevicePtr < u32 >,
        __cuda_mem_address1 __cuda_mem_rest1 : u32], callee __CudaMemUnsafeKernel,
    }
};
