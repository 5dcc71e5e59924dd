//! Compile a `#![no_std]` kernel crate to PTX from a build script.
//!
//! This is the same builder `cuda-mem` uses for its own fill kernels. It runs a
//! nested `cargo rustc --release` in the kernel crate's directory, so the
//! crate's own `rust-toolchain.toml` (a nightly with `rust-src`) and
//! `.cargo/config.toml` (target `nvptx64-nvidia-cuda`, `build-std = ["core"]`,
//! `-Cpanic=immediate-abort`, one `-Ctarget-cpu`) apply, and asks rustc for
//! assembly (`--emit=asm`), which for nvptx is PTX. No linker is needed.
//!
//! Use it from your `build.rs` (with `cuda-mem` as a build-dependency, feature
//! `build`, `default-features = false`):
//!
//! ```no_run
//! // build.rs
//! fn main() {
//!     let ptx = cuda_mem::build::KernelCrate::new("kernels")
//!         .build()
//!         .unwrap_or_else(|e| e.exit());
//!     println!("cargo:rustc-env=MY_KERNELS_PTX={}", ptx.display());
//! }
//! ```
//!
//! and embed the PTX in your program with
//! `include_str!(env!("MY_KERNELS_PTX"))`.
//!
//! The kernel crate needs, next to its `Cargo.toml`:
//!
//! ```toml
//! # rust-toolchain.toml
//! [toolchain]
//! channel = "nightly"
//! components = ["rust-src"]
//! ```
//!
//! ```toml
//! # .cargo/config.toml
//! [build]
//! target = "nvptx64-nvidia-cuda"
//! [unstable]
//! build-std = ["core"]
//! [target.nvptx64-nvidia-cuda]
//! rustflags = ["-Zunstable-options", "-Cpanic=immediate-abort", "-Ctarget-cpu=sm_70"]
//! ```
//!
//! and an empty `[workspace]` table in its `Cargo.toml` (it must not join the
//! host workspace). The builder fails with a message naming the exact fix when
//! the nightly toolchain or `rust-src` is missing, and never falls back to a
//! stale PTX file.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kernel crate to compile to PTX.
///
/// ```no_run
/// let ptx_path = cuda_mem::build::KernelCrate::new("my-kernels").build().unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct KernelCrate {
    dir: PathBuf,
    target_dir: Option<PathBuf>,
    out: Option<PathBuf>,
    toolchain: String,
}

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

/// Environment variables of the outer build that must not reach the nested
/// cargo: they would select the host toolchain, host flags or a wrapper.
const SCRUBBED_ENV: &[&str] = &[
    "RUSTC",
    "RUSTDOC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
];

impl KernelCrate {
    /// A kernel crate in `dir` (relative paths are taken from
    /// `CARGO_MANIFEST_DIR` when set, as in a build script).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels");
    /// ```
    pub fn new(dir: impl AsRef<Path>) -> Self {
        let dir = dir.as_ref();
        let dir = match std::env::var_os("CARGO_MANIFEST_DIR") {
            Some(manifest) if dir.is_relative() => Path::new(&manifest).join(dir),
            _ => dir.to_path_buf(),
        };
        Self {
            dir,
            target_dir: None,
            out: None,
            toolchain: "nightly".into(),
        }
    }

    /// Where the nested cargo keeps its build (default: `$OUT_DIR/<crate dir name>-target`).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").target_dir("/tmp/k");
    /// ```
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Where to write the PTX (default: `$OUT_DIR/<crate dir name>.ptx`).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").ptx_path("/tmp/k.ptx");
    /// ```
    pub fn ptx_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.out = Some(path.into());
        self
    }

    /// The toolchain whose `rust-src` is checked (default `nightly`; it must match
    /// the crate's `rust-toolchain.toml`).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").toolchain("nightly-2026-05-19");
    /// ```
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.toolchain = name.into();
        self
    }

    /// Compiles the crate and returns the path of the PTX file.
    ///
    /// In a build script it also prints `cargo:rerun-if-changed` for the
    /// crate's sources and configuration, so editing a kernel rebuilds it.
    ///
    /// ```no_run
    /// let ptx = cuda_mem::build::KernelCrate::new("kernels").build()?;
    /// # Ok::<(), cuda_mem::build::BuildError>(())
    /// ```
    pub fn build(self) -> Result<PathBuf, BuildError> {
        let manifest = self.dir.join("Cargo.toml");
        if !manifest.is_file() {
            return Err(BuildError::new(format!(
                "kernel crate not found: {} has no Cargo.toml",
                self.dir.display()
            )));
        }
        let name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "kernels".into());
        let out_dir = std::env::var_os("OUT_DIR").map(PathBuf::from);
        let default_in_out_dir = |suffix: &str| {
            out_dir.as_ref().map(|d| d.join(format!("{name}{suffix}"))).ok_or_else(|| {
                BuildError::new("OUT_DIR is not set: call ptx_path() and target_dir() outside a build script")
            })
        };
        let out = match self.out.clone() {
            Some(p) => p,
            None => default_in_out_dir(".ptx")?,
        };
        let target_dir = match self.target_dir.clone() {
            Some(p) => p,
            None => default_in_out_dir("-target")?,
        };
        self.emit_rerun_if_changed();
        self.check_toolchain()?;

        let mut cmd = Command::new("cargo");
        cmd.current_dir(&self.dir)
            .arg("rustc")
            .arg("--release")
            .arg("--target-dir")
            .arg(&target_dir)
            .arg("--")
            .arg(format!("--emit=asm={}", out.display()));
        scrub_env(&mut cmd);
        let output = cmd.output().map_err(|e| {
            BuildError::new(format!(
                "could not run `cargo` for the kernel crate {}: {e}; is rustup's cargo on PATH?",
                self.dir.display()
            ))
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Err(BuildError::new(format!(
                "compiling the kernel crate {} for nvptx64-nvidia-cuda failed{}\n{stderr}",
                self.dir.display(),
                self.hint_for(&stderr),
            )));
        }
        let ptx = std::fs::read_to_string(&out).map_err(|e| {
            BuildError::new(format!(
                "the kernel build succeeded but wrote no PTX at {}: {e}",
                out.display()
            ))
        })?;
        if let Some(line) = ptx.lines().find(|l| l.contains(".extern .func")) {
            return Err(BuildError::new(format!(
                "the PTX of {} calls a function it does not define ({}); the driver would reject it. \
                 Build with `-Cpanic=immediate-abort` in .cargo/config.toml rustflags and keep kernel \
                 code in one crate or `#[inline]`",
                self.dir.display(),
                line.trim()
            )));
        }
        Ok(out)
    }

    fn emit_rerun_if_changed(&self) {
        if std::env::var_os("OUT_DIR").is_none() {
            return;
        }
        for rel in [
            "src",
            "Cargo.toml",
            "Cargo.lock",
            "rust-toolchain.toml",
            ".cargo/config.toml",
        ] {
            println!("cargo:rerun-if-changed={}", self.dir.join(rel).display());
        }
    }

    /// Fails early, with the command that fixes it, when the nightly toolchain or
    /// its `rust-src` component is missing.
    fn check_toolchain(&self) -> Result<(), BuildError> {
        let tc = &self.toolchain;
        let mut cmd = Command::new("rustc");
        cmd.arg(format!("+{tc}")).args(["--print", "sysroot"]);
        scrub_env(&mut cmd);
        let sysroot = match cmd.output() {
            Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
            _ => {
                return Err(BuildError::new(format!(
                "the `{tc}` Rust toolchain is needed to compile kernels for nvptx64-nvidia-cuda \
                     but is not installed; run: rustup toolchain install {tc} --component rust-src"
            )))
            }
        };
        if !sysroot.join("lib/rustlib/src/rust/library/core").is_dir() {
            return Err(BuildError::new(format!(
                "the `{tc}` toolchain has no `rust-src` component, which -Zbuild-std=core needs to build \
                 `core` for nvptx64-nvidia-cuda; run: rustup component add rust-src --toolchain {tc}"
            )));
        }
        Ok(())
    }

    fn hint_for(&self, stderr: &str) -> String {
        let tc = &self.toolchain;
        if stderr.contains("is not installed")
            || stderr.contains("toolchain") && stderr.contains("not found")
        {
            format!("; run: rustup toolchain install {tc} --component rust-src")
        } else if stderr.contains("rust-src") || stderr.contains("can't find crate for `core`") {
            format!("; run: rustup component add rust-src --toolchain {tc}")
        } else {
            String::new()
        }
    }
}

fn scrub_env(cmd: &mut Command) {
    for (key, _) in std::env::vars_os() {
        let Some(key) = key.to_str() else { continue };
        let cargo_setting =
            key.starts_with("CARGO") && key != "CARGO_HOME" && !key.starts_with("CARGO_NET");
        if cargo_setting || SCRUBBED_ENV.contains(&key) {
            cmd.env_remove(key);
        }
    }
}
