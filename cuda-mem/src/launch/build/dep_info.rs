//! The source files a kernel build read, from the dependency files cargo wrote,
//! for the `cargo:rerun-if-changed` lines of a build script.

use std::path::{Path, PathBuf};

use crate::build::rustup::Rustup;
use crate::build::TARGET;

/// The source files the last kernel build read, from the dependency file cargo
/// writes next to the library (`lib<name>.d`), without the toolchain's own
/// sources (`core`) and the registry's, which do not change.
pub(super) fn read_dep_info(target_dir: &Path, rustup: &Rustup, toolchain: &str) -> Vec<PathBuf> {
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
}
