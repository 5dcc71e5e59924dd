use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C, align(512))]
struct Huge {
    a: [u8; 512],
}

fn main() {}
