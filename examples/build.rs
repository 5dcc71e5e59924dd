//! Compiles the examples' Rust kernels (`particles-kernels/`, a `#![no_std]`
//! crate for nvptx64-nvidia-cuda) to PTX with `cuda_mem::build::KernelCrate`.
//! The PTX lands at `$OUT_DIR/particles-kernels.ptx`, where the examples embed
//! it with `include_str!(concat!(env!("OUT_DIR"), "/particles-kernels.ptx"))`.

fn main() {
    // `KernelCrate::build` prints `cargo:rerun-if-changed` for the kernel
    // crate's own sources and configuration. The kernels also compile these
    // path dependencies, so edits to them must rebuild the PTX too.
    for dependency in [
        "particles-shared/src",
        "particles-shared/Cargo.toml",
        "../cuda-mem/src",
        "../cuda-mem/Cargo.toml",
        "../cuda-mem-derive/src",
        "../cuda-mem-derive/Cargo.toml",
    ] {
        println!("cargo:rerun-if-changed={dependency}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    cuda_mem::build::KernelCrate::new("particles-kernels")
        .build()
        .unwrap_or_else(|e| e.exit());
}
