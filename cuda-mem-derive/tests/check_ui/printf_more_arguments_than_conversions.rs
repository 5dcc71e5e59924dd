// `device_printf!` counts its arguments against the format's conversions
// where `cargo check` sees it (issue 29, class 4).
fn main() {
    cm_renamed::device_printf!("x = %d\n", 1u32, 2u32);
}
