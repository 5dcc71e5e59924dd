// A homogeneous generic struct is `DeviceCopy` only for `DeviceCopy` `T`.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(C)]
struct Vec3<T> {
    x: T,
    y: T,
    z: T,
}

fn device_copy<T: DeviceCopy>() {}

fn main() {
    device_copy::<Vec3<f32>>();
    device_copy::<Vec3<bool>>();
}
