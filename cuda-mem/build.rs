//! Compiles `../kernels` (the fill kernels, Rust for nvptx64-nvidia-cuda) to PTX
//! and leaves it at `$OUT_DIR/kernels.ptx` for `include_str!`.

#[allow(dead_code, clippy::needless_doctest_main)]
#[path = "src/kernel_build.rs"]
mod kernel_build;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/kernel_build.rs");
    // Only the host API launches kernels; the `no_std` build (e.g. for nvptx) needs none.
    if std::env::var_os("CARGO_FEATURE_HOST").is_none() {
        return;
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    kernel_build::KernelCrate::new("../kernels")
        .ptx_path(out.join("kernels.ptx"))
        .target_dir(out.join("kernels-target"))
        .build()
        .unwrap_or_else(|e| e.exit());
}
