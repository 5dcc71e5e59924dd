//! Compiles the test kernel crates to PTX with `cuda_mem::build::KernelCrate`
//! (the GPU tests of `device_std` embed them):
//!
//! - `device-kernels` for sm_70 (the default) and for sm_80 (where
//!   `tanh_fast` is the `tanh.approx.f32` instruction);
//! - `panic-kernels` with printing panics.
//!
//! The builder installs the pinned nightly when needed and prints
//! `cargo:rerun-if-changed` for every source the kernels read.

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    cuda_mem::build::KernelCrate::new("device-kernels")
        .build()
        .unwrap_or_else(|e| e.exit());
    cuda_mem::build::KernelCrate::new("device-kernels")
        .target_cpu("sm_80")
        .target_dir(out.join("device-kernels-sm80-target"))
        .ptx_path(out.join("device-kernels-sm80.ptx"))
        .build()
        .unwrap_or_else(|e| e.exit());
    cuda_mem::build::KernelCrate::new("panic-kernels")
        .printing_panics(true)
        .build()
        .unwrap_or_else(|e| e.exit());
}
