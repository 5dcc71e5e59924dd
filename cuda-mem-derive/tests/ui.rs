//! Compile-fail and compile-pass tests of `#[derive(DeviceCopy)]`.
//!
//! One failing case per file (rustc stops at the first failing pass, so two
//! cases in one file could hide each other). The `.stderr` snapshots are for
//! the pinned toolchain (rustc 1.95); after a toolchain bump or an intended
//! change of a message, regenerate them with
//! `TRYBUILD=overwrite cargo test -p cuda-mem-derive --test ui` and review the
//! diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
