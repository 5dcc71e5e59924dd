//! The examples' kernels (`particles-kernels`, built by `build.rs`) are valid
//! PTX with the properties the examples rely on. Needs `ptxas` (no GPU):
//! `bash .ci/test` installs it and sets `PTXAS`.

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

#[test]
fn the_kernels_assemble_for_sm80_and_sm90() {
    cuda_mem_tests::assemble_ptx(PTX, "particles-kernels");
}
