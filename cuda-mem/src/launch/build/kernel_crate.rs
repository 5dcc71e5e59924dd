//! [`KernelCrate`]: the settings of a kernel build and the build itself (the
//! nested `cargo rustc` for `nvptx64-nvidia-cuda`, and what it does with the
//! PTX and the errors it gets).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::dep_info::read_dep_info;
use crate::build::ptx_checks::{
    is_forbidden_extern, undeclared_shared_array, without_repeated_shared_arrays,
};
use crate::build::rustup::{scrub_env, Rustup};
use crate::build::{BuildError, NO_AUTO_INSTALL, PINNED_NIGHTLY, TARGET};

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
    target_cpu: String,
    auto_install: bool,
    printing_panics: bool,
}

/// The flags every crate of the kernel build gets (`core` included: only
/// target rustflags reach the crates `-Zbuild-std` compiles).
fn target_rustflags(target_cpu: &str, printing_panics: bool) -> [String; 6] {
    [
        // `-Cpanic=immediate-abort` is unstable; without it a `%` or a bounds
        // check in `core` leaves `.extern .func ...panic...` in the PTX, which
        // the driver rejects. Printing panics need core's panic path, which
        // the LTO build (see `printing_panics`) brings into the PTX.
        "-Zunstable-options".into(),
        if printing_panics {
            "-Cpanic=abort".into()
        } else {
            "-Cpanic=immediate-abort".into()
        },
        format!("-Ctarget-cpu={target_cpu}"),
        // No linker: a function of another crate that is not inlined stays an
        // `.extern .func`. This makes every function of every crate inlinable.
        "-Zcross-crate-inline-threshold=always".into(),
        // The `extern "ptx-kernel"` ABI of the entry points `#[kernel]`
        // writes is unstable: enable it in every crate, so kernel crates need
        // no `#![feature]` line (one that has it anyway is fine).
        "-Zcrate-attr=feature(abi_ptx)".into(),
        "-Aduplicate-features".into(),
    ]
}

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
            toolchain: PINNED_NIGHTLY.into(),
            target_cpu: "sm_70".into(),
            auto_install: std::env::var_os(NO_AUTO_INSTALL).is_none_or(|v| v.is_empty()),
            printing_panics: false,
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

    /// The nightly toolchain to build with (default [`PINNED_NIGHTLY`]).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").toolchain("nightly");
    /// ```
    pub fn toolchain(mut self, name: impl Into<String>) -> Self {
        self.toolchain = name.into();
        self
    }

    /// The oldest GPU architecture the PTX must run on (default `sm_70`,
    /// Volta: the driver compiles PTX for newer GPUs when it loads it).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").target_cpu("sm_80");
    /// ```
    pub fn target_cpu(mut self, sm: impl Into<String>) -> Self {
        self.target_cpu = sm.into();
        self
    }

    /// Whether a missing toolchain or `rust-src` is installed through rustup
    /// (default: yes, unless `CUDA_MEM_NO_AUTO_INSTALL` is set).
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").auto_install(false);
    /// ```
    pub fn auto_install(mut self, yes: bool) -> Self {
        self.auto_install = yes;
        self
    }

    /// Whether a panic in a kernel prints where and why before it traps
    /// (default: no, a panic is a bare `trap`). The kernel crate must declare
    /// the handler with `cuda_mem::printing_panic_handler!();` (see
    /// `cuda_mem::device::panic`).
    ///
    /// There is no linker, so this build differs: `-Cpanic=abort` instead of
    /// `-Cpanic=immediate-abort`, and the crate is compiled as a `cdylib`
    /// with fat LTO, which makes rustc merge every crate (`core`'s panic
    /// functions included) into the one module it writes as PTX; the link
    /// step is skipped (`-Zno-link`). The PTX is larger and uses a stack.
    ///
    /// ```
    /// let k = cuda_mem::build::KernelCrate::new("kernels").printing_panics(true);
    /// ```
    pub fn printing_panics(mut self, yes: bool) -> Self {
        self.printing_panics = yes;
        self
    }

    /// Compiles the crate and returns the path of the PTX file.
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
        let in_build_script = std::env::var_os("OUT_DIR").is_some();
        if in_build_script {
            println!("cargo:rerun-if-env-changed={NO_AUTO_INSTALL}");
            for rel in ["src", "Cargo.toml"] {
                println!("cargo:rerun-if-changed={}", self.dir.join(rel).display());
            }
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
        let rustup = Rustup::find()?;
        rustup.ensure(&self.toolchain, self.auto_install)?;

        let output = self
            .cargo_command(&rustup, &target_dir, &out)
            .output()
            .map_err(|e| {
                BuildError::new(format!(
                    "could not run cargo for the kernel crate {}: {e}",
                    self.dir.display()
                ))
            })?;
        let stderr = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Err(BuildError::new(format!(
                "compiling the kernel crate {} for {TARGET} failed{}\n{stderr}",
                self.dir.display(),
                hint_for(&stderr),
            )));
        }
        let ptx = std::fs::read_to_string(&out).map_err(|e| {
            BuildError::new(format!(
                "the kernel build succeeded but wrote no PTX at {}: {e}",
                out.display()
            ))
        })?;
        if let Some(line) = ptx.lines().find(|l| is_forbidden_extern(l)) {
            return Err(BuildError::new(format!(
                "the PTX of {} refers to a function or static it does not define ({}); the driver \
                 would reject it. A function of another crate that the kernels call must be \
                 `#[inline]` (or generic), and a `static` of another crate cannot be reached (for \
                 math, `cuda_mem::device::math` avoids libm's table-driven functions)",
                self.dir.display(),
                line.trim()
            )));
        }
        // A `shared_array!` place that a `macro_rules!` stamps into several
        // kernels is expanded once per kernel, so its declaration (one
        // array, same name, type and size) appears several times, which the
        // driver rejects as a duplicate definition: keep the first.
        if let Some(deduplicated) = without_repeated_shared_arrays(&ptx) {
            std::fs::write(&out, &deduplicated).map_err(|e| {
                BuildError::new(format!("rewriting the PTX at {}: {e}", out.display()))
            })?;
        }
        let ptx = std::fs::read_to_string(&out)
            .map_err(|e| BuildError::new(format!("reading the PTX at {}: {e}", out.display())))?;
        if let Some(name) = undeclared_shared_array(&ptx) {
            return Err(BuildError::new(format!(
                "the PTX of {} uses the shared array {name} but does not declare it: \
                 `shared_array!` and `dynamic_shared!` must be expanded in the kernel crate itself \
                 (a dependency's declaration does not reach its PTX)",
                self.dir.display()
            )));
        }
        if in_build_script {
            for source in read_dep_info(&target_dir, &rustup, &self.toolchain) {
                println!("cargo:rerun-if-changed={}", source.display());
            }
        }
        Ok(out)
    }

    /// `rustup run <toolchain> cargo rustc ...` with the nvptx settings.
    fn cargo_command(&self, rustup: &Rustup, target_dir: &Path, out: &Path) -> Command {
        let flags = target_rustflags(&self.target_cpu, self.printing_panics)
            .iter()
            .map(|f| format!("{f:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut cmd = rustup.command(&self.toolchain, "cargo");
        cmd.current_dir(&self.dir)
            .args(["rustc", "--release", "--lib", "--target", TARGET])
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"))
            .args(["-Zbuild-std=core", "--config"])
            .arg(format!("target.{TARGET}.rustflags = [{flags}]"))
            // The workspace's release profile could ask for LTO, debug info or
            // several codegen units, none of which `--emit=asm` can take.
            .args(["--config", "profile.release.debug = false"])
            .args(["--config", "profile.release.incremental = false"])
            .args(["--config", "profile.release.codegen-units = 1"])
            .args(["--config", "profile.release.opt-level = 3"])
            .arg("--target-dir")
            .arg(target_dir);
        if self.printing_panics {
            // One module with every crate in it (see `printing_panics`).
            cmd.args(["--crate-type", "cdylib"])
                .args(["--config", "profile.release.lto = \"fat\""]);
        } else {
            cmd.args(["--config", "profile.release.lto = false"]);
        }
        cmd.arg("--").arg(format!("--emit=asm={}", out.display()));
        if self.printing_panics {
            // The PTX is written before the link, and there is no linker.
            cmd.arg("-Zno-link");
        }
        scrub_env(&mut cmd);
        cmd
    }
}

fn hint_for(stderr: &str) -> &'static str {
    if stderr.contains("believes it's in a workspace when it's not") {
        "; the kernel crate lies inside a workspace it is not a member of: add it to that \
         workspace's `members` or `exclude`"
    } else if stderr.contains("`#[panic_handler]` function required") {
        "; a build with printing panics needs a panic handler: add \
         `cuda_mem::printing_panic_handler!();` to the kernel crate's root"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_flags_reach_core() {
        let flags = target_rustflags("sm_80", false);
        assert!(flags.contains(&"-Cpanic=immediate-abort".to_string()));
        assert!(flags.contains(&"-Ctarget-cpu=sm_80".to_string()));
        assert!(flags.contains(&"-Zcrate-attr=feature(abi_ptx)".to_string()));
        let flags = target_rustflags("sm_70", true);
        assert!(flags.contains(&"-Cpanic=abort".to_string()));
    }
}
