// Attack (a), adapted to the new expansion: the module also re-exports the
// real `__derive_device_copy!`. That macro reaches its checks through
// `$crate`, never through the given path, so the forged `__private` is
// ignored and the padding is found.
#![forbid(unsafe_code)]

mod fake {
    pub use cm_renamed::{DeviceCopy, __derive_device_copy};

    pub mod __private {
        pub use core;
        pub trait NoPadding<T: ?Sized, const N: usize> {}
        impl<T: ?Sized, const N: usize> NoPadding<T, N> for () {}
        pub const fn no_padding<T: ?Sized, const N: usize>() {}
        pub fn assert_device_copy<F>(_: F) {}
    }
}

#[derive(Clone, Copy, cm_renamed::DeviceCopy)]
#[device_copy(crate = "crate::fake")]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

fn main() {}
