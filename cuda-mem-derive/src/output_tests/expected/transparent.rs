::cuda_mem::__derive_device_copy! {
    @ __cuda_mem_derive_device_copy struct Tagged generics { lifetimes[] types[T, Tag]
    consts[] args[T, Tag] outlives[] bounds[Tag : { lifetimes[] maybe[Sized] traits[]
    higher_ranked[] }, Tagged < T, Tag > : { lifetimes[] maybe[]
    traits[::cuda_mem::__private::core::marker::Copy] higher_ranked[] }] device_copy[T] }
    plan transparent fields[0 => __cuda_mem_field0 : field, 1 => __cuda_mem_field1 :
    marker]
}
