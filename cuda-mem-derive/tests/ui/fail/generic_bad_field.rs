use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(transparent)]
struct G<T: 'static>(Option<T>);

fn main() {}
