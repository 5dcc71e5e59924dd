// `r#repr` is applied by rustc like `repr`; the derive must see the
// `align(8)` (7 bytes of tail padding) instead of ignoring the attribute.
use cm_renamed::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[device_copy(crate = "cm_renamed")]
#[r#repr(C, align(8))]
struct Raw(u8);

fn main() {}
