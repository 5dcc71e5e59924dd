use cm_renamed::DeviceCopy;
use core::marker::PhantomData;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct S {
    a: u32,
    _marker: PhantomData<Self>,
}

fn main() {}
