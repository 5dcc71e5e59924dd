::cuda_mem::__derive_device_copy! {
    @ __cuda_mem_derive_device_copy struct Matrix generics { lifetimes[] types[T]
    consts[N : usize] args[T, N] outlives[] bounds[T : { lifetimes[] maybe[] traits[Copy]
    higher_ranked[] }, T : { lifetimes[] maybe[] traits[Default] higher_ranked[] }]
    device_copy[T] } plan homogeneous fields[rows => __cuda_mem_field0 : elem2, trace =>
    __cuda_mem_field1 : elem0, _unit => __cuda_mem_field2 : marker]
}
