//! Compile-fail and compile-pass tests of `#[derive(CheckedDeviceCopy)]`.
//!
//! One failing case per file, as in `ui.rs`. Regenerate the `.stderr`
//! snapshots with `TRYBUILD=overwrite cargo test -p cuda-mem-derive --test
//! checked_ui` and review the diff.

#[test]
fn checked_ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/checked_ui/fail/*.rs");
    cases.pass("tests/checked_ui/pass/*.rs");
}
