// Attack (a): `crate = "..."` names a module that re-exports the real
// `DeviceCopy` but supplies its own, unsealed `__private` (witnesses that
// accept any padding). The old derive took its proof items from that path and
// accepted this padded struct; `bytes_of` then read uninitialised bytes.
// Now the path only says where cuda-mem's macro is, and this module has none.
#![forbid(unsafe_code)]

mod fake {
    pub use cm_renamed::DeviceCopy;

    pub mod __private {
        pub use core;
        pub trait NoPadding<T: ?Sized, const N: usize> {}
        impl<T: ?Sized, const N: usize> NoPadding<T, N> for () {}
        pub trait AlignAtMost256<T: ?Sized, const A: usize, const OK: bool> {}
        impl<T: ?Sized, const A: usize, const OK: bool> AlignAtMost256<T, A, OK> for () {}
        pub trait Identity {
            type Type: ?Sized;
        }
        impl<T: ?Sized> Identity for T {
            type Type = T;
        }
        pub const fn size_of<T>() -> usize {
            core::mem::size_of::<T>()
        }
        pub const fn align_of<T>() -> usize {
            core::mem::align_of::<T>()
        }
    }

    macro_rules! __impl_host_traits {
        ($($tokens:tt)*) => {};
    }
    pub(crate) use __impl_host_traits;
}

#[derive(Clone, Copy, cm_renamed::DeviceCopy)]
#[device_copy(crate = "crate::fake")]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

fn main() {
    let padded = Padded { a: 1, b: 2 };
    let _ = cm_renamed::bytes_of(&padded);
}
