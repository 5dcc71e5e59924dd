use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u32)]
enum Kind {
    Gas,
    Liquid,
}

fn main() {}
