// A lifetime parameter does not hide the padding from the check.
use cm_renamed::DeviceCopy;
use core::marker::PhantomData;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct DevRef<'a> {
    tag: u8,
    addr: u64,
    _borrow: PhantomData<&'a ()>,
}

fn main() {}
