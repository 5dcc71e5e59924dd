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

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// A line of PTX that declares a function or variable defined elsewhere.
/// `vprintf` is fine: ptxas resolves it itself (device printing); so is the
/// dynamic shared memory (`.extern .shared`), which the launch provides.
fn is_forbidden_extern(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with(".extern")
        && !line.starts_with(".extern .shared")
        && !(line.starts_with(".extern .func") && line.contains("vprintf"))
}

/// `ptx` without the repeated declarations of `shared_array!`'s arrays
/// (the same line again, as a place expanded once per kernel gives it), or
/// `None` when there are none. Declarations of one name that differ are left
/// for the driver to refuse.
fn without_repeated_shared_arrays(ptx: &str) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    let mut repeated = false;
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let trimmed = line.trim();
        if trimmed.starts_with(".shared ")
            && trimmed.contains("__cuda_mem_shared_")
            && !seen.insert(trimmed.to_string())
        {
            repeated = true;
            continue;
        }
        out.push_str(line);
    }
    repeated.then_some(out)
}

/// A shared array of `cuda_mem::device::shared` (`__cuda_mem_shared_<n>` or
/// `__cuda_mem_dynamic_shared`) that the PTX uses but does not declare.
fn undeclared_shared_array(ptx: &str) -> Option<String> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut declared = Vec::new();
    let mut used = Vec::new();
    for line in ptx.lines() {
        let trimmed = line.trim_start();
        let declaration = trimmed.starts_with(".shared") || trimmed.starts_with(".extern .shared");
        let mut rest = line;
        while let Some(at) = rest.find("__cuda_mem_") {
            let name: String = rest[at..]
                .chars()
                .take_while(|&c| is_name_char(c))
                .collect();
            rest = &rest[at + name.len()..];
            if name.starts_with("__cuda_mem_shared_") || name == "__cuda_mem_dynamic_shared" {
                if declaration {
                    declared.push(name);
                } else {
                    used.push(name);
                }
            }
        }
    }
    used.into_iter().find(|name| !declared.contains(name))
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

/// The rustup binary and what it knows about toolchains.
struct Rustup {
    path: PathBuf,
}

impl Rustup {
    /// `rustup` from `PATH`, else `$CARGO_HOME/bin` (or `~/.cargo/bin`).
    fn find() -> Result<Self, BuildError> {
        Self::find_in(
            std::env::var_os("PATH"),
            std::env::var_os("CARGO_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// [`Rustup::find`] with the environment given.
    fn find_in(
        path: Option<OsString>,
        cargo_home: Option<OsString>,
        home: Option<OsString>,
    ) -> Result<Self, BuildError> {
        let on_path = path
            .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
            .unwrap_or_default();
        let cargo_home = cargo_home
            .map(PathBuf::from)
            .or_else(|| home.map(|h| PathBuf::from(h).join(".cargo")));
        let candidates = on_path
            .into_iter()
            .chain(cargo_home.map(|h| h.join("bin")))
            .map(|dir| dir.join(format!("rustup{}", std::env::consts::EXE_SUFFIX)));
        for path in candidates {
            if path.is_file() {
                return Ok(Self { path });
            }
        }
        Err(BuildError::new(format!(
            "compiling Rust kernels needs rustup (for a nightly toolchain with rust-src), and it was \
             not found on PATH or in $CARGO_HOME/bin; install it with: \
             curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y && \
             rustup toolchain install {PINNED_NIGHTLY} --profile minimal --component rust-src"
        )))
    }

    /// `rustup run <toolchain> <program>`, with the outer build's toolchain
    /// selection removed from the environment.
    fn command(&self, toolchain: &str, program: &str) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.args(["run", toolchain, program]);
        scrub_env(&mut cmd);
        cmd
    }

    /// The sysroot of `toolchain`, if it is installed.
    fn sysroot(&self, toolchain: &str) -> Option<PathBuf> {
        let out = self
            .command(toolchain, "rustc")
            .args(["--print", "sysroot"])
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }

    /// Makes sure `toolchain` and its `rust-src` are installed, installing
    /// them when `auto_install` is set, or says how to.
    fn ensure(&self, toolchain: &str, auto_install: bool) -> Result<(), BuildError> {
        let install_toolchain = [
            "toolchain",
            "install",
            toolchain,
            "--profile",
            "minimal",
            "--component",
            "rust-src",
        ];
        let add_src = ["component", "add", "rust-src", "--toolchain", toolchain];
        let step: &[&str] = match self.sysroot(toolchain) {
            None => &install_toolchain,
            Some(root) if !has_core_sources(&root) => &add_src,
            Some(_) => return Ok(()),
        };
        let command = format!("rustup {}", step.join(" "));
        let why = format!(
            "compiling Rust kernels for {TARGET} needs the `{toolchain}` toolchain with the \
             `rust-src` component (-Zbuild-std builds `core` from source)"
        );
        if !auto_install {
            return Err(BuildError::new(format!(
                "{why}, which is not installed; run: {command}"
            )));
        }
        announce(&format!(
            "{why}; installing it now: {command} (set {NO_AUTO_INSTALL}=1 to get an error instead)"
        ));
        let _lock = InstallLock::acquire();
        // Another build may have installed it while we waited for the lock.
        if self.has_rust_src(toolchain) {
            return Ok(());
        }
        self.run(step, &why)?;
        if !self.has_rust_src(toolchain) {
            // rustup can list rust-src as installed while its files are gone
            // (a toolchain copied without them); it then calls `add` a no-op.
            self.run(
                &["component", "remove", "rust-src", "--toolchain", toolchain],
                &why,
            )?;
            self.run(&add_src, &why)?;
        }
        if self.has_rust_src(toolchain) {
            Ok(())
        } else {
            Err(BuildError::new(format!(
                "{why}; `{command}` succeeded but the toolchain still has no rust-src; \
                 run: rustup component remove rust-src --toolchain {toolchain} && \
                 rustup component add rust-src --toolchain {toolchain}"
            )))
        }
    }

    /// Whether `toolchain` is installed with the sources of `core`.
    fn has_rust_src(&self, toolchain: &str) -> bool {
        self.sysroot(toolchain)
            .is_some_and(|root| has_core_sources(&root))
    }

    /// Runs `rustup <args>`; an error carries `why` and rustup's message.
    fn run(&self, args: &[&str], why: &str) -> Result<(), BuildError> {
        let command = format!("rustup {}", args.join(" "));
        let mut cmd = Command::new(&self.path);
        cmd.args(args);
        scrub_env(&mut cmd);
        let output = cmd
            .output()
            .map_err(|e| BuildError::new(format!("{why}; running `{command}` failed: {e}")))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(BuildError::new(format!(
                "{why}; `{command}` failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            )))
        }
    }
}

/// Whether the toolchain at `sysroot` has the sources of `core` (`rust-src`).
fn has_core_sources(sysroot: &Path) -> bool {
    sysroot.join("lib/rustlib/src/rust/library/core").is_dir()
}

/// Says something on stderr and, in a build script, as a cargo warning (cargo
/// hides a build script's stderr unless it fails).
fn announce(message: &str) {
    eprintln!("cuda-mem: {message}");
    if std::env::var_os("OUT_DIR").is_some() {
        println!("cargo:warning=cuda-mem: {message}");
    }
}

/// Serialises toolchain installs of concurrent build scripts (rustup does not
/// lock its own installs). A directory is created atomically; one older than
/// ten minutes is taken to be left over from a killed build.
struct InstallLock(Option<PathBuf>);

impl InstallLock {
    fn acquire() -> Self {
        let path = std::env::temp_dir().join("cuda-mem-toolchain-install.lock");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(900);
        while std::time::Instant::now() < deadline {
            if std::fs::create_dir(&path).is_ok() {
                return Self(Some(path));
            }
            let stale = std::fs::metadata(&path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > std::time::Duration::from_secs(600));
            if stale {
                let _ = std::fs::remove_dir(&path);
                continue;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        // Could not get it: install anyway rather than fail the build.
        Self(None)
    }
}

impl Drop for InstallLock {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_dir(path);
        }
    }
}

/// The source files the last kernel build read, from the dependency file cargo
/// writes next to the library (`lib<name>.d`), without the toolchain's own
/// sources (`core`) and the registry's, which do not change.
fn read_dep_info(target_dir: &Path, rustup: &Rustup, toolchain: &str) -> Vec<PathBuf> {
    let dir = target_dir.join(TARGET).join("release");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let sysroot = rustup.sysroot(toolchain);
    let cargo_home = std::env::var_os("CARGO_HOME").map(PathBuf::from);
    let mut sources = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "d") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for file in parse_dep_info(&text) {
            let external = sysroot.as_ref().is_some_and(|s| file.starts_with(s))
                || cargo_home
                    .as_ref()
                    .is_some_and(|h| file.starts_with(h.join("registry")));
            if !external && !sources.contains(&file) {
                sources.push(file);
            }
        }
    }
    sources
}

/// The prerequisites of a Makefile-style dependency file (`out: in1 in2 ...`,
/// spaces in names escaped as `\ `).
fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for line in text.lines() {
        let Some((_, inputs)) = line.split_once(": ") else {
            continue;
        };
        let mut current = String::new();
        let mut chars = inputs.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if chars.peek() == Some(&' ') => {
                    current.push(' ');
                    chars.next();
                }
                ' ' => {
                    if !current.is_empty() {
                        files.push(PathBuf::from(std::mem::take(&mut current)));
                    }
                }
                c => current.push(c),
            }
        }
        if !current.is_empty() {
            files.push(PathBuf::from(current));
        }
    }
    files
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_info_lists_every_input_with_escaped_spaces() {
        let text = "/t/libk.rlib: /a/src/lib.rs /my\\ dir/shared.rs\n\n/x.d: /b/c.rs\n";
        assert_eq!(
            parse_dep_info(text),
            [
                PathBuf::from("/a/src/lib.rs"),
                PathBuf::from("/my dir/shared.rs"),
                PathBuf::from("/b/c.rs")
            ]
        );
    }

    #[test]
    fn vprintf_is_the_only_allowed_extern() {
        assert!(!is_forbidden_extern(
            ".extern .func  (.param .b32 func_retval0) vprintf"
        ));
        assert!(is_forbidden_extern(
            ".extern .func _ZN4core9panicking5panic17h"
        ));
        assert!(!is_forbidden_extern(".entry cuda_mem_fill_small("));
        assert!(is_forbidden_extern(
            ".extern .global .align 8 .b8 _RNvNtNtCs2pbRs8dvQsm_4libm4math4exp23TBL[4096];"
        ));
        assert!(!is_forbidden_extern(
            ".extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];"
        ));
    }

    #[test]
    fn a_shared_array_declared_once_per_kernel_is_declared_once() {
        let ptx = ".shared .align 4 .b8 __cuda_mem_shared_7[128];\n\
                   .shared .align 4 .b8 __cuda_mem_shared_8[64];\n\
                   .shared .align 4 .b8 __cuda_mem_shared_7[128];\n\
                   \tcvta.shared.u64 %rd1, __cuda_mem_shared_7;\n";
        let once = without_repeated_shared_arrays(ptx).unwrap();
        assert_eq!(once.matches("__cuda_mem_shared_7[128]").count(), 1);
        assert_eq!(once.matches("__cuda_mem_shared_8[64]").count(), 1);
        assert!(once.ends_with("\tcvta.shared.u64 %rd1, __cuda_mem_shared_7;\n"));
        assert_eq!(without_repeated_shared_arrays(&once), None);
    }

    #[test]
    fn shared_arrays_must_be_declared_where_they_are_used() {
        let declared = ".shared .align 4 .b8 __cuda_mem_shared_123[64];\n\
                        .extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];\n\
                        \tcvta.shared.u64 %rd1, __cuda_mem_shared_123;\n\
                        \tcvta.shared.u64 %rd2, __cuda_mem_dynamic_shared;\n";
        assert_eq!(undeclared_shared_array(declared), None);
        let missing = "\tcvta.shared.u64 %rd1, __cuda_mem_shared_9;\n";
        assert_eq!(
            undeclared_shared_array(missing).as_deref(),
            Some("__cuda_mem_shared_9")
        );
        let dynamic = "\tcvta.shared.u64 %rd2, __cuda_mem_dynamic_shared;\n";
        assert_eq!(
            undeclared_shared_array(dynamic).as_deref(),
            Some("__cuda_mem_dynamic_shared")
        );
    }

    #[test]
    fn without_rustup_the_error_gives_the_install_commands() {
        let empty = std::env::temp_dir().join("cuda-mem-no-rustup-here");
        let err = Rustup::find_in(Some(empty.clone().into()), Some(empty.into()), None)
            .err()
            .expect("no rustup in an empty directory");
        let text = err.to_string();
        assert!(text.contains("sh.rustup.rs"), "{text}");
        assert!(
            text.contains(&format!("rustup toolchain install {PINNED_NIGHTLY}")),
            "{text}"
        );
    }

    #[test]
    fn a_missing_toolchain_without_auto_install_is_an_error_with_the_command() {
        let Ok(rustup) = Rustup::find() else {
            return; // no rustup on this machine: the test above covers it
        };
        let err = rustup
            .ensure("nightly-1999-01-01", false)
            .expect_err("a toolchain that does not exist");
        let text = err.to_string();
        assert!(
            text.contains(
                "run: rustup toolchain install nightly-1999-01-01 --profile minimal --component rust-src"
            ),
            "{text}"
        );
    }

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
