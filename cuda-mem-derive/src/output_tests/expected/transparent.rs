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
    fn __device_copy_field_check<T, Tag: ?Sized>(_: &Tagged<T, Tag>)
    where
        T: __cuda_mem::DeviceCopy,
        Tagged<T, Tag>: __cuda_mem::__private::core::marker::Copy,
    {
        fn __device_copy_assert<
            __DeviceCopyField: ?__cuda_mem::__private::core::marker::Sized
                + __cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<T>();
        __device_copy_assert::<core::marker::PhantomData<Tag>>();
    }
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl<T, Tag: ?Sized> __cuda_mem::DeviceCopy for Tagged<T, Tag>
    where
        T: __cuda_mem::DeviceCopy,
        Tagged<T, Tag>: __cuda_mem::__private::core::marker::Copy,
    {}
    __cuda_mem::__impl_host_traits!(
        [< T, Tag : ? Sized >] [Tagged < T, Tag >] [where T : __cuda_mem::DeviceCopy,
        Tagged < T, Tag > : __cuda_mem::__private::core::marker::Copy]
    );
};
