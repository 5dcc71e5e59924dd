// `device_printf!` checks its format against its arguments' types where
// `cargo check` sees it (issue 29, class 4): `%d` takes a 32-bit integer.
fn main() {
    cm_renamed::device_printf!("x = %d\n", 1.5f64);
}
