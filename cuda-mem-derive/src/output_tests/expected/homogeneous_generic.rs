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
    fn __device_copy_field_check<T: Copy, const N: usize>()
    where
        T: Default,
        T: ::cuda_mem::DeviceCopy,
    {
        fn __device_copy_assert<
            __DeviceCopyField: ?::cuda_mem::__private::core::marker::Sized
                + ::cuda_mem::DeviceCopy,
        >() {}
        __device_copy_assert::<[[T; N]; N]>();
        __device_copy_assert::<T>();
        __device_copy_assert::<core::marker::PhantomData<T>>();
    }
    /// SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit pattern is valid and there are no host pointers), that it has no padding and that its alignment is at most 256.
    #[automatically_derived]
    unsafe impl<T: Copy, const N: usize> ::cuda_mem::DeviceCopy for Matrix<T, N>
    where
        T: Default,
        T: ::cuda_mem::DeviceCopy,
        T: ::cuda_mem::__private::Identity<Type = T>,
        core::marker::PhantomData<
            T,
        >: ::cuda_mem::__private::Identity<
            Type = ::cuda_mem::__private::core::marker::PhantomData<T>,
        >,
    {}
    ::cuda_mem::__impl_host_traits!(
        [< T : Copy, const N : usize >] [Matrix < T, N >] [where T : Default, T :
        ::cuda_mem::DeviceCopy, T : ::cuda_mem::__private::Identity < Type = T >,
        core::marker::PhantomData < T > : ::cuda_mem::__private::Identity < Type =
        ::cuda_mem::__private::core::marker::PhantomData < T > >]
    );
};
