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
    fn __device_copy_field_check<T: Copy, const N: usize>(_: &Matrix<T, N>)
    where
        T: Default,
        T: __cuda_mem::DeviceCopy,
    {
        fn __device_copy_assert<
            __DeviceCopyField: ?__cuda_mem::__private::core::marker::Sized
                + __cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<[[T; N]; N]>();
        __device_copy_assert::<T>();
        __device_copy_assert::<core::marker::PhantomData<T>>();
    }
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl<T: Copy, const N: usize> __cuda_mem::DeviceCopy for Matrix<T, N>
    where
        T: Default,
        T: __cuda_mem::DeviceCopy,
        T: __cuda_mem::__private::Identity<Type = T>,
        core::marker::PhantomData<
            T,
        >: __cuda_mem::__private::Identity<
            Type = __cuda_mem::__private::core::marker::PhantomData<T>,
        >,
    {}
    __cuda_mem::__impl_host_traits!(
        [< T : Copy, const N : usize >] [Matrix < T, N >] [where T : Default, T :
        __cuda_mem::DeviceCopy, T : __cuda_mem::__private::Identity < Type = T >,
        core::marker::PhantomData < T > : __cuda_mem::__private::Identity < Type =
        __cuda_mem::__private::core::marker::PhantomData < T > >]
    );
};
