// Attack (d): the old doc-hidden `__impl_host_traits!` implemented cudarc's
// `DeviceRepr` and `ValidAsZeroBits` for any type, with no proof: a
// `NonZeroU32` wrapper could be `alloc_zeros`ed and read back as 0. The macro
// is gone.
#![forbid(unsafe_code)]
use core::num::NonZeroU32;

#[derive(Clone, Copy)]
#[repr(transparent)]
struct Id(NonZeroU32);

cm_renamed::__impl_host_traits!([] [Id] []);

fn main() {}
