//! The examples' kernels (`particles-kernels`, built by `build.rs`) are valid
//! PTX with the properties the examples rely on. Needs `ptxas` (no GPU):
//! `bash .ci/test` installs it and sets `PTXAS`.

use std::path::PathBuf;
use std::process::Command;

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/particles-kernels.ptx"));

/// The text of the kernel `name`, from its `.entry` to the next one.
fn kernel(name: &str) -> &'static str {
    let start = PTX
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name} in the PTX"));
    let rest = &PTX[start..];
    let end = rest[1..].find(".entry ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

#[test]
fn every_kernel_is_an_entry_and_calls_nothing_external() {
    for name in ["particles_step", "scale_f32"] {
        kernel(name);
    }
    assert!(
        !PTX.contains(".extern .func"),
        "the PTX calls an external function (a panic path, or a non-#[inline] function of another crate)"
    );
}

/// The `particles` example compares GPU and CPU bit for bit; that needs IEEE
/// division and no flush-to-zero of subnormals (see `particles-shared`).
#[test]
fn the_particle_step_uses_ieee_arithmetic() {
    let step = kernel("particles_step");
    assert!(
        step.contains("div.rn.f32"),
        "no IEEE division in particles_step"
    );
    for inexact in ["div.approx", "div.full", ".ftz", "rcp.approx"] {
        assert!(
            !step.contains(inexact),
            "particles_step uses {inexact}: results would differ from the CPU's"
        );
    }
    assert!(
        kernel("scale_f32").contains("mul.rn.f32"),
        "scale_f32 does not multiply with IEEE rounding"
    );
}

fn ptxas() -> PathBuf {
    if let Some(path) = std::env::var_os("PTXAS") {
        return path.into();
    }
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join("ptxas"))
                .find(|p| p.is_file())
        })
        .unwrap_or_else(|| {
            panic!("ptxas not found: run the tests with `bash .ci/test` (it installs ptxas), or set PTXAS=/path/to/ptxas")
        })
}

#[test]
fn the_kernels_assemble_for_sm80_and_sm90() {
    let dir = std::env::temp_dir().join(format!("cuda-mem-examples-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("particles-kernels.ptx");
    std::fs::write(&file, PTX).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let out = Command::new(ptxas())
            .arg(format!("-arch={arch}"))
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("particles-kernels-{arch}.cubin")))
            .output()
            .expect("run ptxas");
        assert!(
            out.status.success(),
            "ptxas -arch={arch} rejected the examples' kernels:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
