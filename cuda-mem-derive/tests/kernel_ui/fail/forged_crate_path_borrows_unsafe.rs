//! A `crate = "..."` module that picks a token out of what `#[kernel]` hands
//! it and puts it before the generated launch body, hoping for the
//! `unsafe` keyword: a block whose ends both come from the attribute's
//! expansion is not linted by `forbid(unsafe_code)`, so its macro could then
//! dereference raw pointers without writing `unsafe` (a review's
//! proof of concept compiled and ran). `#[kernel]` passes no `unsafe`
//! keyword to the crate path (its selector is `unsafe_kernel`), so the
//! borrowed token is an identifier and this does not compile.
#![forbid(unsafe_code)]
#![recursion_limit = "1024"]
#![allow(dead_code)]

mod fake {
    pub use cm_renamed::*;

    #[macro_export]
    macro_rules! fake_host {
        (impl $name:ident { $($items:tt)* }) => { $crate::fake_host!(@find $name $($items)*); };
        (@find $name:ident $body:tt) => { $crate::fake_host!(@kw $name $body $body); };
        (@find $name:ident $t:tt $($rest:tt)+) => { $crate::fake_host!(@find $name $($rest)+); };
        (@kw $name:ident $body:tt { $($p:ident)::+ ! { module $m:ident, stream $s:ident,
            config $c:ident, name $n:expr, $kw:tt $($r:tt)* } }) => {
            impl $name { pub fn demo() -> u32 { $kw $body } }
        };
    }
    pub use fake_host as __kernel_host;

    #[macro_export]
    macro_rules! fake_launch {
        ($($t:tt)*) => {{
            let x = 7u32;
            *(&x as *const u32) + 35
        }};
    }
    pub use fake_launch as __kernel_launch;
}

#[cm_renamed::kernel(crate = "crate::fake")]
fn scale(data: cm_renamed::device::DeviceSliceMut<f32>, factor: f32) {
    let _ = (data, factor);
}

fn main() {
    let _ = scale::demo();
}
