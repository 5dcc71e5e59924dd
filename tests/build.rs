//! Compiles the test kernel crates to PTX with `cuda_mem::build::KernelCrate`
//! (into `OUT_DIR`, where the GPU tests embed them with
//! `cuda_mem::include_kernels!`):
//!
//! - `launch-kernels`: the kernels of the typed-launch tests (`kernels.rs`);
//! - `launch-kernels-skewed`: one of them over a struct of another layout,
//!   for the fingerprint-mismatch test.
//!
//! The builder installs the pinned nightly when needed and prints
//! `cargo:rerun-if-changed` for every source the kernels read.

fn main() {
    for kernels in ["launch-kernels", "launch-kernels-skewed"] {
        cuda_mem::build::KernelCrate::new(kernels)
            .build()
            .unwrap_or_else(|e| e.exit());
    }
}
