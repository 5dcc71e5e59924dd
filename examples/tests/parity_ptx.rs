//! The parity kernels (`examples/parity-kernels`, built by `build.rs`) in
//! PTX, without a GPU: every memory access names its state space (global,
//! shared or parameter loads and stores, never generic ones: the entry
//! point's pointer parameters and the shared arrays' 32-bit addresses),
//! nothing uses local memory, nothing calls out, and ptxas assembles it for
//! sm_80 and sm_90 (`bash .ci/test` installs ptxas and sets `PTXAS`).

use cuda_mem_tests::{assemble_ptx, ptx_kernel};
use parity_kernels::{
    histogram, particles_step, saxpy, scan_reduce_tiles, scan_tile_sums, scan_tiles, stencil5,
    sum_u32, sum_u32_v4, transpose_classic, transpose_tile32,
};

const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/parity-kernels.ptx"));

const KERNELS: [&str; 11] = [
    saxpy::NAME,
    sum_u32::NAME,
    sum_u32_v4::NAME,
    histogram::NAME,
    stencil5::NAME,
    transpose_tile32::NAME,
    transpose_classic::NAME,
    particles_step::NAME,
    scan_reduce_tiles::NAME,
    scan_tile_sums::NAME,
    scan_tiles::NAME,
];

/// The loads and stores of `body` that name no state space (`ld.u32 %r,
/// [%rd]` is a generic load; `ld.global.nc.u32`, `ld.relaxed.cta.shared.b32`
/// and `ld.param.b64` are not). Atomics are not counted: the kernels' few
/// global atomics (one per block) go through `DeviceAtomic`, which serves
/// global and shared memory alike.
fn generic_accesses(body: &str) -> Vec<&str> {
    body.lines()
        .map(str::trim)
        .filter(|line| {
            let op = line.split_whitespace().next().unwrap_or("");
            let mut parts = op.split('.');
            matches!(parts.next(), Some("ld" | "st"))
                && !parts.any(|p| {
                    matches!(p, "global" | "param" | "const" | "local") || p.starts_with("shared")
                })
        })
        .collect()
}

#[test]
fn every_parity_kernel_accesses_memory_through_its_state_space() {
    for name in KERNELS {
        let body = ptx_kernel(PTX, name);
        let generic = generic_accesses(body);
        assert!(
            generic.is_empty(),
            "{name} has generic memory accesses (the slow path this PTX avoids): {generic:?}"
        );
    }
}

#[test]
fn the_generic_access_check_sees_one() {
    assert_eq!(
        generic_accesses("\tld.u32 %r1, [%rd2];\n"),
        ["ld.u32 %r1, [%rd2];"]
    );
    assert_eq!(generic_accesses("\tst.b64 [%rd2], %rd3;\n").len(), 1);
    assert!(generic_accesses("\tld.global.nc.u32 %r1, [%rd2];\n").is_empty());
    assert!(generic_accesses("\tld.relaxed.cta.shared.b32 %r1, [%r2];\n").is_empty());
    assert!(
        generic_accesses("\tst.relaxed.cta.shared.v4.b32 [%r2], {%r1, %r1, %r1, %r1};\n")
            .is_empty()
    );
    assert!(generic_accesses("\tld.param.b64 %rd1, [k_param_0];\n").is_empty());
}

/// Every parity kernel declares its block shape (`#[kernel(block =
/// ...)]`), so the checks on it (`thread_idx_for`'s, the block collectives'
/// block size, shared-memory indices built from the thread's rank) fold
/// away: no parity kernel's PTX has a `trap`.
#[test]
fn declared_block_shapes_leave_no_check_on_the_device() {
    for name in KERNELS {
        let body = ptx_kernel(PTX, name);
        assert!(!body.contains("trap;"), "{name} has a trap:\n{body}");
    }
}

/// The 64-bit equality tests of `body` (`setp.eq.b64`, `setp.ne.s64`, ...):
/// in a pitched kernel, a null test of a cell's address (an `Option<&T>`
/// the compiler could not prove `Some`) or 64-bit index math.
fn wide_equality_tests(body: &str) -> Vec<&str> {
    body.lines()
        .map(str::trim)
        .filter(|line| {
            let op = line.split_whitespace().next().unwrap_or("");
            let parts: Vec<&str> = op.split('.').collect();
            parts.len() == 3
                && parts[0] == "setp"
                && matches!(parts[1], "eq" | "ne")
                && matches!(parts[2], "b64" | "s64" | "u64")
        })
        .collect()
}

/// The one-cell-per-thread pitched kernels' index math is 32-bit and their
/// cell addresses are known not to be null (slice addresses enter as
/// `NonNull`, sizes as 32-bit words): neither keeps a 64-bit equality test.
/// (A null test came back with some shapes of the device std's cell
/// arithmetic, costing a compare pair and a branch after the transpose's
/// barrier. `transpose_classic`, four `thread_element_mut` cells per thread,
/// keeps four, and runs at the C++ twin's speed anyway.)
#[test]
fn pitched_kernels_keep_no_null_test() {
    for name in ["stencil5", "transpose_tile32"] {
        let tests = wide_equality_tests(ptx_kernel(PTX, name));
        assert!(
            tests.is_empty(),
            "{name} keeps 64-bit equality tests: {tests:?}"
        );
    }
}

#[test]
fn the_equality_test_check_sees_one() {
    assert_eq!(
        wide_equality_tests("\tsetp.eq.b64 \t%p11, %rd24, %rd23;\n"),
        ["setp.eq.b64 \t%p11, %rd24, %rd23;"]
    );
    assert_eq!(
        wide_equality_tests("\tsetp.ne.s64 %p1, %rd2, 0;\n").len(),
        1
    );
    assert!(wide_equality_tests("\tsetp.ne.b32 %p7, %r20, %r2;\n").is_empty());
    assert!(wide_equality_tests("\tsetp.ge.u64 %p4, %rd14, %rd4;\n").is_empty());
}

#[test]
fn no_parity_kernel_uses_local_memory_or_calls_out() {
    for name in KERNELS {
        assert!(
            !ptx_kernel(PTX, name).contains(".local"),
            "{name} uses local memory"
        );
    }
    assert!(
        !PTX.contains(".extern .func"),
        "the parity PTX calls an external function"
    );
}

#[test]
fn the_parity_ptx_assembles() {
    assemble_ptx(PTX, "parity-kernels");
}
