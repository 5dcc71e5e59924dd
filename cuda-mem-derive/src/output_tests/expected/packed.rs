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
    fn __device_copy_field_check() {
        fn __device_copy_assert<
            __DeviceCopyField: ?::cm_renamed::__private::core::marker::Sized
                + ::cm_renamed::DeviceCopy,
        >() {}
        __device_copy_assert::<u8>();
        __device_copy_assert::<u64>();
    }
    fn __device_copy_layout_check()
    where
        (): ::cm_renamed::__private::NoPadding<
            Header,
            {
                ::cm_renamed::__private::size_of::<Header>()
                    - (0 + ::cm_renamed::__private::size_of::<u8>()
                        + ::cm_renamed::__private::size_of::<u64>())
            },
        >,
        (): ::cm_renamed::__private::AlignAtMost256<
            Header,
            { ::cm_renamed::__private::align_of::<Header>() },
            { ::cm_renamed::__private::align_of::<Header>() <= 256 },
        >,
    {}
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl ::cm_renamed::DeviceCopy for Header {}
    ::cm_renamed::__impl_host_traits!([] [Header] []);
};
