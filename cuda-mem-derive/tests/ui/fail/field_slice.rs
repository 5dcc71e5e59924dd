use cm_renamed::DeviceCopy;

#[derive(DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Tail {
    len: u32,
    data: [u8],
}

fn main() {}
