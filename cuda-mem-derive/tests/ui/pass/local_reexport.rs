// `crate = "..."` pointing at a re-export inside the user's crate, through
// `crate::`, `self::` and `super::` paths.
#![deny(warnings)]

mod gpu {
    pub use cm_renamed::*;
}

#[derive(Clone, Copy, cm_renamed::DeviceCopy)]
#[device_copy(crate = "crate::gpu")]
#[repr(C)]
struct ViaCrate {
    a: u32,
}

#[derive(Clone, Copy, cm_renamed::DeviceCopy)]
#[device_copy(crate = "self::gpu")]
#[repr(C)]
struct ViaSelf {
    a: u32,
}

mod inner {
    #[derive(Clone, Copy, cm_renamed::DeviceCopy)]
    #[device_copy(crate = "super::gpu")]
    #[repr(C)]
    pub struct ViaSuper {
        pub a: u32,
    }
}

fn device_copy<T: gpu::DeviceCopy>() {}

fn main() {
    device_copy::<ViaCrate>();
    device_copy::<ViaSelf>();
    device_copy::<inner::ViaSuper>();
}
