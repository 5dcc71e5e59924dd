//! Compiles the examples' kernels (`particles-shared/`, a `#![no_std]` crate
//! of structs and `#[kernel]` fns, and a member of this workspace) to PTX
//! with `cuda_mem::build::KernelCrate`. The PTX lands at
//! `$OUT_DIR/particles-shared.ptx`, where the examples embed it with
//! `cuda_mem::include_kernels!("particles-shared")`.
//!
//! The builder installs the nightly toolchain it needs on first use and
//! prints `cargo:rerun-if-changed` for every source file the kernels read
//! (cuda-mem's included), so nothing is listed here.

fn main() {
    cuda_mem::build::KernelCrate::new("particles-shared")
        .build()
        .unwrap_or_else(|e| e.exit());
}
