//! A `crate = "..."` module that routes the launch through its own
//! `__kernel_launch!` (to push parameters the PTX's fingerprint does not
//! describe) has to write the `unsafe` of the launch itself, which
//! `#![forbid(unsafe_code)]` rejects: every `unsafe` of a launch lives in
//! cuda-mem's macros, reached through `$crate`.
#![forbid(unsafe_code)]
#![allow(dead_code)]

mod fake {
    pub use cm_renamed::*;

    #[macro_export]
    macro_rules! forged_launch {
        (
            module $module:ident, stream $stream:ident, config $config:ident, name $name:expr,
            unsafe_kernel $u:tt, source $s:literal, args $args:ident [$($v:ident: $a:ident => $p:ident),*]
        ) => {{
            let launch = $module.__begin($name, 0, &[], $stream)?;
            let ($($v,)*) = $args;
            $(let mut $v = unsafe { launch.param::<$a, $p>($v) }?;)*
            unsafe {
                launch.__finish(
                    $config,
                    &mut [$((&mut $v as *mut $p).cast::<::core::ffi::c_void>()),*],
                )
            }
        }};
    }
    pub use forged_launch as __kernel_launch;
}

#[cm_renamed::kernel(crate = "crate::fake")]
fn scale(data: cm_renamed::device::DeviceSliceMut<f32>, factor: f32) {
    let _ = (data, factor);
}

fn main() {}
