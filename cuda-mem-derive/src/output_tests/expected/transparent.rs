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
    fn __device_copy_field_check<T, Tag: ?Sized>()
    where
        T: ::cuda_mem::DeviceCopy,
        Tagged<T, Tag>: ::cuda_mem::__private::core::marker::Copy,
    {
        fn __device_copy_assert<
            __DeviceCopyField: ?::cuda_mem::__private::core::marker::Sized
                + ::cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<T>();
        __device_copy_assert::<core::marker::PhantomData<Tag>>();
    }
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl<T, Tag: ?Sized> ::cuda_mem::DeviceCopy for Tagged<T, Tag>
    where
        T: ::cuda_mem::DeviceCopy,
        Tagged<T, Tag>: ::cuda_mem::__private::core::marker::Copy,
    {}
    ::cuda_mem::__impl_host_traits!(
        [< T, Tag : ? Sized >] [Tagged < T, Tag >] [where T : ::cuda_mem::DeviceCopy,
        Tagged < T, Tag > : ::cuda_mem::__private::core::marker::Copy]
    );
};
