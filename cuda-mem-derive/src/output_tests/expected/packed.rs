::cm_renamed::__derive_device_copy! {
    @ __cuda_mem_derive_device_copy struct Header generics { lifetimes[] types[] consts[]
    args[] outlives[] bounds[] device_copy[] } plan exact fields[tag => __cuda_mem_field0
    : field, len => __cuda_mem_field1 : field]
}
