::cuda_mem::__derive_device_copy! {
    @ __cuda_mem_derive_device_copy struct DevRef generics { lifetimes['a, 'b] types[]
    consts[] args[] outlives['b : ['a]] bounds[] device_copy[] } plan exact fields[addr
    => __cuda_mem_field0 : field, _a => __cuda_mem_field1 : field, _b =>
    __cuda_mem_field2 : field]
}
