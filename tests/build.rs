//! Compiles the test kernel crates to PTX with `cuda_mem::build::KernelCrate`
//! (into `OUT_DIR`, where the GPU tests embed them):
//!
//! - `device-kernels` for sm_70 (the default) and for sm_80 (where
//!   `tanh_fast` is the `tanh.approx.f32` instruction) (`device_std.rs`);
//! - `panic-kernels` with printing panics (`device_std.rs`);
//! - `launch-kernels`: the `#[kernel]` fns of the typed-launch tests
//!   (`kernels.rs`, through `cuda_mem::include_kernels!`);
//! - `launch-kernels-skewed`: two of them over structs of another layout
//!   (a field more; two fields of one type swapped), for the
//!   fingerprint-mismatch tests (`kernels.rs`).
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
    for kernels in ["launch-kernels", "launch-kernels-skewed"] {
        cuda_mem::build::KernelCrate::new(kernels)
            .build()
            .unwrap_or_else(|e| e.exit());
    }
}
