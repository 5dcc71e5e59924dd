//! Compile-fail and compile-pass tests of `#[kernel]` and its launchers.
//!
//! One failing case per file, as for the derive (`ui.rs`). Regenerate the
//! `.stderr` snapshots after a toolchain bump or an intended change of a
//! message with `TRYBUILD=overwrite cargo test -p cuda-mem-derive --test
//! kernel_ui` and review the diff.

#[test]
fn kernel_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/kernel_ui/fail/*.rs");
    cases.pass("tests/kernel_ui/pass/*.rs");
}
