const _: () = {
    #[inline(always)]
    fn tile(out: DeviceSliceMut<f32>) {
        let _ = out;
    }
    ::cuda_mem::__kernel_entry! {
        symbol "tile", unsafe_kernel false, block[32, 8, 1], source
        13995853755486797247u64, lifetimes[], params[__cuda_mem_address0 __cuda_mem_rest0
        : DeviceSliceMut < f32 >], callee tile,
    }
};
