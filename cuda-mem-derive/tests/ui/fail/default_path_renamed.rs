// cuda-mem is a dependency under another name and `crate = ...` is missing:
// the default path `::cuda_mem` does not resolve.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct S {
    a: u32,
}

fn main() {}
