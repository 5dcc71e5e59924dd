//! Compile a `#![no_std]` kernel crate to PTX from a build script.
//!
//! [`KernelCrate`] runs a nested `cargo rustc --release` for the crate with
//! everything the `nvptx64-nvidia-cuda` target needs passed on the command
//! line: the target, `-Zbuild-std=core`, the panic strategy, the target CPU
//! and cross-crate inlining (so that functions of the crate's dependencies,
//! `cuda_mem::device` included, end up in the one PTX module; there is no
//! linker). It asks rustc for assembly (`--emit=asm`), which for nvptx is
//! PTX. The kernel crate is a plain `#![no_std]` library: no
//! `rust-toolchain.toml`, no `.cargo/config.toml`, and no `#![feature]` for
//! the `ptx-kernel` ABI of [`#[kernel]`](macro@crate::kernel) entry points
//! (the builder enables it in every crate of the build).
//!
//! It needs a nightly toolchain with `rust-src` (for `-Zbuild-std`), by
//! default the one cuda-mem is tested with, [`PINNED_NIGHTLY`]. When that
//! toolchain or its `rust-src` is missing, the builder installs it through
//! rustup and says so (set `CUDA_MEM_NO_AUTO_INSTALL=1` to get an error with
//! the command instead); without rustup it fails with the command that
//! installs rustup. Host code that only *uses* PTX never needs any of this:
//! cuda-mem's own fill kernels ship as PTX inside the crate.
//!
//! Use it from your `build.rs` (with `cuda-mem` as a build-dependency,
//! `default-features = false, features = ["build"]`):
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     cuda_mem::build::KernelCrate::new("kernels") // a path, relative to this package
//!         .build()
//!         .unwrap_or_else(|e| e.exit()); // writes $OUT_DIR/kernels.ptx
//! }
//! ```
//!
//! and embed the PTX in your program with
//! `include_str!(concat!(env!("OUT_DIR"), "/kernels.ptx"))`.
//!
//! In a build script the builder prints `cargo:rerun-if-changed` for every
//! source file the kernel build read (its own crate's and those of its path
//! dependencies, from the dependency file rustc writes), so editing a kernel
//! or a shared struct rebuilds the PTX, and a build with nothing changed
//! does no work. It never falls back to a stale PTX file.
//!
//! The builder rejects PTX the driver would not load: a function or `static`
//! of another crate that did not get inlined (an `.extern` other than
//! `vprintf`, which ptxas resolves, and the dynamic shared memory), and a
//! shared array of `cuda_mem::shared_array!` declared in another crate. A
//! kernel panic is a bare `trap` unless the crate declares
//! `cuda_mem::printing_panic_handler!()` and is built with
//! [`KernelCrate::printing_panics`].
//!
//! The kernel crate may be a member of your workspace (a crate shared by the
//! host and the kernels), or a crate of its own; a crate inside your
//! workspace's directory that is neither must be listed in the workspace's
//! `exclude` (cargo's rule; the error says so).
//!
//! This file holds [`PINNED_NIGHTLY`] and [`BuildError`]. The builder itself
//! is `kernel_crate`; `rustup` finds and installs the toolchain it runs,
//! `ptx_checks` checks the PTX it wrote, and `dep_info` lists the source
//! files the build read (for `cargo:rerun-if-changed`).

use std::fmt;

mod dep_info;
mod kernel_crate;
mod ptx_checks;
mod rustup;

pub use kernel_crate::KernelCrate;

/// The nightly toolchain cuda-mem's kernels are built and tested with, and
/// the default of [`KernelCrate::toolchain`]. The device-side features a
/// kernel crate uses (`abi_ptx`, inline assembly for nvptx) are unstable, so a
/// known nightly is safer than whatever `nightly` is installed.
///
/// ```
/// assert!(cuda_mem::build::PINNED_NIGHTLY.starts_with("nightly-"));
/// ```
pub const PINNED_NIGHTLY: &str = "nightly-2026-05-20";

/// The target every kernel crate is compiled for.
const TARGET: &str = "nvptx64-nvidia-cuda";

/// Opt-out of installing the toolchain through rustup.
const NO_AUTO_INSTALL: &str = "CUDA_MEM_NO_AUTO_INSTALL";

/// Why a kernel build failed; [`BuildError::exit`] prints it for Cargo and exits.
///
/// ```
/// let err = cuda_mem::build::KernelCrate::new("/no/such/crate").build().unwrap_err();
/// assert!(err.to_string().contains("/no/such/crate"));
/// ```
#[derive(Debug)]
pub struct BuildError {
    message: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BuildError {}

impl BuildError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// Prints the error (so that Cargo shows it under the failing build script)
    /// and exits the build script with status 1.
    ///
    /// ```no_run
    /// # let result: Result<std::path::PathBuf, cuda_mem::build::BuildError> = unreachable!();
    /// let ptx = result.unwrap_or_else(|e| e.exit());
    /// ```
    pub fn exit(self) -> ! {
        eprintln!("error: {}", self.message);
        std::process::exit(1)
    }
}
