use cm_renamed::DeviceCopy;

macro_rules! len {
    () => {
        4
    };
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct M {
    a: [u32; len!()],
}

fn main() {}
