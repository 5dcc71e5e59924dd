use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, packed(2))]
struct G<T> {
    a: u8,
    b: T,
}

fn main() {}
