use cm_renamed::DeviceCopy;

#[derive(DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Object {
    len: u32,
    data: dyn Send,
}

fn main() {}
