::cuda_mem::__derive_device_copy! {
    @ __cuda_mem_derive_device_copy struct Particle generics { lifetimes[] types[]
    consts[] args[] outlives[] bounds[] device_copy[] } plan exact fields[position =>
    __cuda_mem_field0 : field, mass => __cuda_mem_field1 : field, next =>
    __cuda_mem_field2 : field]
}
