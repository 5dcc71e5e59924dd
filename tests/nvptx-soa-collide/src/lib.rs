//! A kernel over a structure of arrays of [`Split`], a `#[derive(DeviceSoA)]`
//! struct from a crate that forbids unsafe code, whose fields are behind
//! `#[cfg(target_arch)]`: one 8-byte field on the host (a `SoaBuffer` of
//! one struct is one 8-byte region), two 4-byte fields in the kernel build
//! (the second at byte 256). The field names were chosen (a collision
//! search over FNV-1a, minutes on two cores) so that the SoA parameter's
//! fingerprint is the same for both tables. The `ptx` test builds it as the
//! host sees it (`target_arch` replaced) and as it is, and compares what
//! the launch compares.
#![no_std]
#![forbid(unsafe_code)]

use cuda_mem::device::SoaSliceMut;

/// One 8-byte field on the host, two 4-byte fields in kernels.
#[derive(Clone, Copy, cuda_mem::DeviceCopy, cuda_mem::DeviceSoA)]
#[repr(C)]
pub struct Split {
    #[cfg(not(target_arch = "nvptx64"))]
    pub f1ijp2t1b0hx5c: [u32; 2],
    #[cfg(target_arch = "nvptx64")]
    pub b: u32,
    #[cfg(target_arch = "nvptx64")]
    pub fu5ddtos24232o: u32,
}

const fn pattern() -> Split {
    #[cfg(not(target_arch = "nvptx64"))]
    let split = Split { f1ijp2t1b0hx5c: [0xa5a5_a5a5; 2] };
    #[cfg(target_arch = "nvptx64")]
    let split = Split { b: 0xa5a5_a5a5, fu5ddtos24232o: 0xa5a5_a5a5 };
    split
}

/// Writes each thread's struct, field by field, by the kernel build's
/// table.
#[cuda_mem::kernel]
pub fn scribble(mut soa: SoaSliceMut<Split>) {
    if let Some(mut item) = soa.this_thread_mut() {
        item.set(pattern());
    }
}
