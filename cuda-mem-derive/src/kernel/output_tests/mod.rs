//! Expansion snapshots of `#[kernel]`: for each input, what the nvptx64 build
//! sees (`expected/<name>.nvptx.rs`) and what the host build sees
//! (`expected/<name>.host.rs`, with the launcher taken out of
//! `__kernel_host! { … }`, which passes it through on host builds of
//! cuda-mem), pretty-printed with prettyplease.
//!
//! After an intended change of the generated code, rewrite the snapshots with
//! `CUDA_MEM_BLESS=1 cargo test -p cuda-mem-derive --lib kernel::output_tests`
//! and review the diff.

use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::quote;

/// Whether `attrs` hold `#[cfg(target_arch = "nvptx64")]` (`Some(true)`),
/// its negation (`Some(false)`), or neither; the attribute is removed.
fn take_target_cfg(attrs: &mut Vec<syn::Attribute>) -> Option<bool> {
    let text = |a: &syn::Attribute| quote!(#a).to_string();
    let device = text(&syn::parse_quote!(#[cfg(target_arch = "nvptx64")]));
    let host = text(&syn::parse_quote!(#[cfg(not(target_arch = "nvptx64"))]));
    let position = attrs
        .iter()
        .position(|a| text(a) == device || text(a) == host)?;
    Some(text(&attrs.remove(position)) == device)
}

fn attrs_of(item: &mut syn::Item) -> Option<&mut Vec<syn::Attribute>> {
    match item {
        syn::Item::Const(item) => Some(&mut item.attrs),
        syn::Item::Macro(item) => Some(&mut item.attrs),
        syn::Item::Struct(item) => Some(&mut item.attrs),
        _ => None,
    }
}

/// The items for the device and for the host.
fn split(output: &TokenStream, name: &str) -> (syn::File, syn::File) {
    let file: syn::File = match syn::parse2(output.clone()) {
        Ok(file) => file,
        Err(error) => panic!("{name}: the expansion is not valid Rust ({error}):\n{output}"),
    };
    let empty = || syn::File {
        shebang: None,
        attrs: Vec::new(),
        items: Vec::new(),
    };
    let (mut device, mut host) = (empty(), empty());
    for mut item in file.items {
        match attrs_of(&mut item).and_then(take_target_cfg) {
            Some(true) => device.items.push(item),
            Some(false) => match item {
                syn::Item::Macro(call)
                    if call
                        .mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "__kernel_host") =>
                {
                    let inner: syn::File = match syn::parse2(call.mac.tokens.clone()) {
                        Ok(inner) => inner,
                        Err(error) => panic!("{name}: the launcher is not valid Rust ({error})"),
                    };
                    host.items.extend(inner.items);
                }
                item => host.items.push(item),
            },
            None => {
                device.items.push(item.clone());
                host.items.push(item);
            }
        }
    }
    (device, host)
}

fn check_file(path: PathBuf, actual: &str) {
    if std::env::var_os("CUDA_MEM_BLESS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        panic!(
            "the expansion in {} changed; if intended, rerun with CUDA_MEM_BLESS=1.\n\
             --- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

fn check(name: &str, attr: TokenStream, item: TokenStream) {
    let output = super::expand(attr, item);
    let (device, host) = split(&output, name);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/kernel/output_tests/expected");
    check_file(
        dir.join(format!("{name}.nvptx.rs")),
        &prettyplease::unparse(&device),
    );
    check_file(
        dir.join(format!("{name}.host.rs")),
        &prettyplease::unparse(&host),
    );
}

#[test]
fn safe_kernel() {
    check(
        "safe_kernel",
        quote!(),
        quote! {
            /// Multiplies every element by `factor`.
            pub fn scale(data: DeviceSliceMut<f32>, factor: f32) {
                for x in data.iter_mut() {
                    *x *= factor;
                }
            }
        },
    );
}

#[test]
fn lifetimes_structs_and_renamed_crate() {
    check(
        "lifetimes_structs_and_renamed_crate",
        quote!(crate = "cm_renamed"),
        quote! {
            #[cfg(feature = "particles")]
            #[allow(clippy::needless_range_loop)]
            pub(crate) fn step<'a>(
                out: DeviceSliceMut<'a, Particle>,
                input: DeviceSlice<'a, Particle>,
                params: crate::Params,
                mut steps: u32,
            ) {
                while steps > 0 {
                    steps -= 1;
                }
                let _ = (out, input, params);
            }
        },
    );
}

#[test]
fn unsafe_kernel() {
    check(
        "unsafe_kernel",
        quote!(),
        quote! {
            /// Writes `value` at `ptr`.
            ///
            /// # Safety
            /// `ptr` points to a `u32` in device memory that no one else uses.
            unsafe fn poke(ptr: DevicePtr<u32>, value: u32) {
                unsafe { *ptr.as_raw() = value };
            }
        },
    );
}

#[test]
fn no_parameters() {
    check(
        "no_parameters",
        quote!(),
        quote!(
            fn tick() {}
        ),
    );
}

#[test]
fn declared_block() {
    check(
        "declared_block",
        quote!(block = [32, 8]),
        quote! {
            pub fn tile(out: DeviceSliceMut<f32>) {
                let _ = out;
            }
        },
    );
}

#[test]
fn errors_are_combined() {
    check(
        "errors_are_combined",
        quote!(crate = "x", frob),
        quote! {
            const async extern "C" fn bad<T, const N: usize>(self, x: impl Copy, y: Self) -> u32
            where T: Copy
            { 0 }
        },
    );
}

/// Malformed inputs produce errors, never a panic.
#[test]
fn never_panics() {
    let cases: [(TokenStream, TokenStream); 9] = [
        (
            quote!(),
            quote!(
                struct S;
            ),
        ),
        (quote!(), quote!()),
        (
            quote!(crate),
            quote!(
                fn k() {}
            ),
        ),
        (
            quote!(crate = 1),
            quote!(
                fn k() {}
            ),
        ),
        (
            quote!(crate = ""),
            quote!(
                fn k() {}
            ),
        ),
        (
            quote!(crate = "a", crate = "b"),
            quote!(
                fn k() {}
            ),
        ),
        (
            quote!(,),
            quote!(
                fn k() {}
            ),
        ),
        (
            quote!(),
            quote!(
                fn r#type(r#fn: u32) {}
            ),
        ),
        (
            quote!(),
            quote!(
                fn k(x: [u8; _], y: m!()) {}
            ),
        ),
    ];
    for (attr, item) in cases {
        let _ = super::expand(attr, item);
    }
}
