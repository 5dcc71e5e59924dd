// Attack (a), last resort: the module supplies its own `__derive_device_copy!`
// that skips the proof. It has to write `unsafe impl` itself, and a local
// `macro_rules!` is linted: `#![forbid(unsafe_code)]` rejects it.
#![forbid(unsafe_code)]

mod fake {
    pub use cm_renamed::DeviceCopy;

    macro_rules! __derive_device_copy {
        (@__cuda_mem_derive_device_copy struct $name:ident $($rest:tt)*) => {
            unsafe impl cm_renamed::DeviceCopy for $name {}
        };
    }
    pub(crate) use __derive_device_copy;
}

#[derive(Clone, Copy, cm_renamed::DeviceCopy)]
#[device_copy(crate = "crate::fake")]
#[repr(C)]
struct Padded {
    a: u8,
    b: u32,
}

fn main() {}
