use cm_renamed::CheckedDeviceCopy;

#[derive(Clone, Copy, CheckedDeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(u8)]
enum Shape {
    Dot,
    Circle(f32),
}

fn main() {}
