use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
union Either {
    a: u32,
    b: f32,
}

fn main() {}
