::core::compile_error! {
    "unknown `kernel` option; the options are `crate = \"path::to::cuda_mem\"` and `block = [x, y, z]`"
}
::core::compile_error! {
    "a kernel cannot be a `const fn`"
}
::core::compile_error! {
    "a kernel cannot be an `async fn`"
}
::core::compile_error! {
    "leave out the ABI: `#[kernel]` makes the `extern \"ptx-kernel\"` entry point itself"
}
::core::compile_error! {
    "a kernel cannot be generic: the PTX holds one entry point per kernel; write a kernel per type (a `macro_rules!` can stamp them out)"
}
::core::compile_error! {
    "a kernel cannot be generic: the PTX holds one entry point per kernel; write a kernel per type (a `macro_rules!` can stamp them out)"
}
::core::compile_error! {
    "a kernel cannot have a `where` clause"
}
::core::compile_error! {
    "a kernel returns nothing: write its results into a `DeviceSliceMut` parameter"
}
::core::compile_error! {
    "a kernel is a free fn: it cannot take `self`"
}
::core::compile_error! {
    "a kernel parameter cannot be `impl Trait`: a kernel cannot be generic"
}
::core::compile_error! {
    "`Self` has no meaning in a kernel's parameters: a kernel is a free fn"
}
