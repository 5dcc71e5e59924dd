// `T: DeviceCopy` says nothing about `T::Raw`: the user must add
// `where T::Raw: DeviceCopy`.
use cm_renamed::DeviceCopy;

trait Storage {
    type Raw: Copy;
}

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[repr(transparent)]
struct Stored<T: Storage> {
    raw: T::Raw,
}

fn main() {}
