// `device_printf!` refuses conversions it cannot check (`%n` writes through
// a pointer) where `cargo check` sees it (issue 29, class 4).
fn main() {
    cm_renamed::device_printf!("%n\n", 1u32);
}
