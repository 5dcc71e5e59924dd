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
    use ::cm_renamed as __cuda_mem;
    fn __device_copy_field_check(_: &Header) {
        fn __device_copy_assert<
            __DeviceCopyField: ?__cuda_mem::__private::core::marker::Sized
                + __cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<u8>();
        __device_copy_assert::<u64>();
    }
    fn __device_copy_layout_check()
    where
        (): __cuda_mem::__private::NoPadding<
            Header,
            {
                __cuda_mem::__private::size_of::<Header>()
                    - (0 + __cuda_mem::__private::size_of::<u8>()
                        + __cuda_mem::__private::size_of::<u64>())
            },
        >,
        (): __cuda_mem::__private::AlignAtMost256<
            Header,
            { __cuda_mem::__private::align_of::<Header>() },
            { __cuda_mem::__private::align_of::<Header>() <= 256 },
        >,
    {}
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl __cuda_mem::DeviceCopy for Header {}
    __cuda_mem::__impl_host_traits!([] [Header] []);
};
