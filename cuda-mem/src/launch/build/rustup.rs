//! rustup and the toolchains it runs: finding rustup, installing the nightly
//! and its `rust-src` when they are missing (one install at a time), and
//! running their programs without the outer build's environment.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::build::{BuildError, NO_AUTO_INSTALL, PINNED_NIGHTLY, TARGET};

/// The rustup binary and what it knows about toolchains.
pub(super) struct Rustup {
    path: PathBuf,
}

impl Rustup {
    /// `rustup` from `PATH`, else `$CARGO_HOME/bin` (or `~/.cargo/bin`).
    pub(super) fn find() -> Result<Self, BuildError> {
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
    pub(super) fn command(&self, toolchain: &str, program: &str) -> Command {
        let mut cmd = Command::new(&self.path);
        cmd.args(["run", toolchain, program]);
        scrub_env(&mut cmd);
        cmd
    }

    /// The sysroot of `toolchain`, if it is installed.
    pub(super) fn sysroot(&self, toolchain: &str) -> Option<PathBuf> {
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
    pub(super) fn ensure(&self, toolchain: &str, auto_install: bool) -> Result<(), BuildError> {
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

pub(super) fn scrub_env(cmd: &mut Command) {
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
}
