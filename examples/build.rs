//! Compiles the examples' kernels (`particles-shared/`, a `#![no_std]` crate
//! of structs and `#[kernel]` fns, and `parity-kernels/`, the Rust side of
//! the parity benchmark; both members of this workspace) to PTX with
//! `cuda_mem::build::KernelCrate`. The PTX lands at
//! `$OUT_DIR/<crate>.ptx`, where the examples embed it with
//! `cuda_mem::include_kernels!("particles-shared")` (and `"parity-kernels"`).
//!
//! The builder installs the nightly toolchain it needs on first use and
//! prints `cargo:rerun-if-changed` for every source file the kernels read
//! (cuda-mem's included), so nothing is listed here.

fn main() {
    for kernels in ["particles-shared", "parity-kernels"] {
        cuda_mem::build::KernelCrate::new(kernels)
            .build()
            .unwrap_or_else(|e| e.exit());
    }
}
