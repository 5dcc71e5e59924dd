use cm_renamed::DeviceCopy;

macro_rules! ty {
    () => {
        u32
    };
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct M {
    a: ty!(),
}

fn main() {}
