//! The examples' kernels (the `#[kernel]` fns of `particles-shared`, built by
//! `build.rs`) are valid PTX with the properties the examples rely on, and
//! carry the signature fingerprints the host's launchers expect. Needs
//! `ptxas` (no GPU): `bash .ci/test` installs it and sets `PTXAS`.

use cuda_mem_tests::{ptx_fingerprint, ptx_kernel};
use particles_shared::{jacobi::jacobi_sweep, particles_step, reduce::reduce_samples, scale_f32};

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/particles-shared.ptx"));

/// Every kernel with the host's name and fingerprint.
const KERNELS: [(&str, u64); 4] = [
    (particles_step::NAME, particles_step::SIGNATURE),
    (scale_f32::NAME, scale_f32::SIGNATURE),
    (reduce_samples::NAME, reduce_samples::SIGNATURE),
    (jacobi_sweep::NAME, jacobi_sweep::SIGNATURE),
];

#[test]
fn every_kernel_is_an_entry_and_calls_nothing_external() {
    for (name, _) in KERNELS {
        ptx_kernel(PTX, name);
    }
    assert!(
        !PTX.contains(".extern .func"),
        "the PTX calls an external function (a panic path, or a non-inlined function of another crate)"
    );
}

/// The PTX holds each kernel's fingerprint as a visible 8-byte global, equal
/// to the one the host computed from the same `#[kernel]` declaration (the
/// host and the kernel build run on different compilers).
#[test]
fn the_fingerprints_in_the_ptx_are_the_hosts() {
    for (name, signature) in KERNELS {
        assert_eq!(
            ptx_fingerprint(PTX, name),
            Some(signature),
            "fingerprint of {name} in the PTX"
        );
    }
}

/// The simple kernels keep everything in registers.
#[test]
fn the_simple_kernels_use_no_local_memory() {
    for name in [particles_step::NAME, scale_f32::NAME] {
        assert!(
            !ptx_kernel(PTX, name).contains(".local"),
            "{name} uses local memory"
        );
    }
}

/// The `particles` example compares GPU and CPU bit for bit; that needs IEEE
/// division and no flush-to-zero of subnormals (see `particles-shared`).
#[test]
fn the_particle_step_uses_ieee_arithmetic() {
    let step = ptx_kernel(PTX, particles_step::NAME);
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
        ptx_kernel(PTX, scale_f32::NAME).contains("mul.rn.f32"),
        "scale_f32 does not multiply with IEEE rounding"
    );
}

/// The reduction uses what it is an example of: warp shuffles, shared-memory
/// and global atomics, barriers, and 16-byte loads from global memory.
#[test]
fn the_reduction_uses_shuffles_shared_atomics_and_barriers() {
    let reduce = ptx_kernel(PTX, reduce_samples::NAME);
    for needle in [
        "shfl.sync.down",
        "atom.relaxed.cta",
        "atom.relaxed.gpu",
        "barrier.sync",
        "ld.global.v4",
    ] {
        assert!(reduce.contains(needle), "reduce_samples has no {needle}");
    }
}

#[test]
fn the_kernels_assemble_for_sm80_and_sm90() {
    cuda_mem_tests::assemble_ptx(PTX, "particles-shared");
}

/// The Jacobi sweep (example `graph`) adds and multiplies by 0.25 with IEEE
/// rounding and fuses nothing, so it equals the CPU's sweep bit for bit.
#[test]
fn the_jacobi_sweep_rounds_like_the_cpu() {
    let sweep = ptx_kernel(PTX, jacobi_sweep::NAME);
    assert!(
        sweep.contains("add.rn.f32"),
        "no IEEE addition in jacobi_sweep"
    );
    assert!(!sweep.contains("fma."), "jacobi_sweep fuses a multiply-add");
    assert!(
        !sweep.contains(".ftz"),
        "jacobi_sweep flushes denormals to zero"
    );
}
