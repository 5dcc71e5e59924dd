#[allow(
    dead_code,
    non_camel_case_types,
    non_snake_case,
    private_bounds,
    private_interfaces,
    clippy::all,
    clippy::pedantic,
)]
const _: () = {
    use ::cuda_mem as __cuda_mem;
    fn __device_copy_field_check<'a, 'b: 'a>(_: &DevRef<'a, 'b>) {
        fn __device_copy_assert<
            __DeviceCopyField: ?__cuda_mem::__private::core::marker::Sized
                + __cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<u64>();
        __device_copy_assert::<core::marker::PhantomData<&'a ()>>();
        __device_copy_assert::<core::marker::PhantomData<&'b mut [u8; 4]>>();
    }
    fn __device_copy_layout_check()
    where
        (): __cuda_mem::__private::NoPadding<
            DevRef<'static, 'static>,
            {
                __cuda_mem::__private::size_of::<DevRef<'static, 'static>>()
                    - (0 + __cuda_mem::__private::size_of::<u64>()
                        + __cuda_mem::__private::size_of::<
                            core::marker::PhantomData<&'static ()>,
                        >()
                        + __cuda_mem::__private::size_of::<
                            core::marker::PhantomData<&'static mut [u8; 4]>,
                        >())
            },
        >,
        (): __cuda_mem::__private::AlignAtMost256<
            DevRef<'static, 'static>,
            { __cuda_mem::__private::align_of::<DevRef<'static, 'static>>() },
            { __cuda_mem::__private::align_of::<DevRef<'static, 'static>>() <= 256 },
        >,
    {}
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl<'a, 'b: 'a> __cuda_mem::DeviceCopy for DevRef<'a, 'b> {}
    __cuda_mem::__impl_host_traits!([< 'a, 'b : 'a >] [DevRef < 'a, 'b >] []);
};
