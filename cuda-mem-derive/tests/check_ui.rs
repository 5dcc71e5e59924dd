//! Compile-fail tests that must fail under `cargo check` alone: a check that
//! only a full build runs (a post-monomorphization error) passes here.
//!
//! trybuild runs `cargo check` when a suite has no pass cases and `cargo
//! build` otherwise (`ui.rs` and `kernel_ui.rs` have pass cases), so these
//! cases have a suite of their own, with none. One failing case per file,
//! as in `ui.rs`. Regenerate the `.stderr` snapshots after a toolchain bump
//! or an intended change of a message with `TRYBUILD=overwrite cargo test -p
//! cuda-mem-derive --test check_ui` and review the diff.

#[test]
fn check_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/check_ui/*.rs");
}
