::core::compile_error! {
    "`crate` expects a string literal naming the path to cuda-mem, e.g. `crate = \"my_cuda_mem\"` or `crate = \"crate::reexports::cuda_mem\"`"
}
::core::compile_error! {
    "`C` is given twice; remove one"
}
::core::compile_error! {
    "`align(N)` needs N to be a power of two (1, 2, 4, ..., 256), e.g. `align(8)`"
}
::core::compile_error! {
    "references are host addresses and mean nothing on the device; store a device address as `cuda_mem::DevicePtr<T>`"
}
::core::compile_error! {
    "cannot prove that the generic struct `Bad` has no padding for every choice of its parameters (that needs the exact sizes, which rustc only knows once the parameters are concrete). `#[derive(DeviceCopy)]` accepts a generic struct when its layout cannot have padding:\n- `#[repr(transparent)]`: a wrapper of one field (plus `PhantomData` markers);\n- `#[repr(C, packed)]`: no padding at all, but unaligned fields;\n- `#[repr(C)]` where every field has one element type `T`: `T`, `[T; N]`, `[[T; N]; M]` (plus `PhantomData` markers);\n- otherwise make the struct non-generic (or derive on each concrete struct you need): for those the exact padding is checked"
}
