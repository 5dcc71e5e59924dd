//! Compiles the examples' Rust kernels (`particles-kernels/`, a `#![no_std]`
//! crate) to PTX with `cuda_mem::build::KernelCrate`. The PTX lands at
//! `$OUT_DIR/particles-kernels.ptx`, where the examples embed it with
//! `include_str!(concat!(env!("OUT_DIR"), "/particles-kernels.ptx"))`.
//!
//! The builder installs the nightly toolchain it needs on first use and
//! prints `cargo:rerun-if-changed` for every source file the kernels read
//! (`particles-shared` and cuda-mem included), so nothing is listed here.

fn main() {
    cuda_mem::build::KernelCrate::new("particles-kernels")
        .build()
        .unwrap_or_else(|e| e.exit());
}
