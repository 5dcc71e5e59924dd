// Its successor, `__device_copy_host_impls!`, bounds both impls on the real
// `DeviceCopy`: called directly on a type that is not `DeviceCopy`, it fails.
#![forbid(unsafe_code)]
use core::num::NonZeroU32;

#[derive(Clone, Copy)]
#[repr(transparent)]
struct Id(NonZeroU32);

cm_renamed::__device_copy_host_impls! {
    struct Id
    generics { lifetimes [] types [] consts [] args [] outlives [] bounds [] }
}

fn main() {}
