//! Expansion snapshots: the derive's output for representative inputs,
//! pretty-printed with prettyplease and compared with `expected/<name>.rs`.
//!
//! After an intended change of the generated code, rewrite the snapshots with
//! `CUDA_MEM_BLESS=1 cargo test -p cuda-mem-derive --lib output_tests` and
//! review the diff.

use std::path::PathBuf;

use quote::quote;

fn check(name: &str, input: proc_macro2::TokenStream) {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => panic!("{name}: bad test input: {error}"),
    };
    let output = crate::expand(&input);
    let file: syn::File = match syn::parse2(output.clone()) {
        Ok(file) => file,
        Err(error) => panic!("{name}: the expansion is not valid Rust ({error}):\n{output}"),
    };
    let actual = prettyplease::unparse(&file);
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/output_tests/expected")
        .join(format!("{name}.rs"));
    if std::env::var_os("CUDA_MEM_BLESS").is_some() {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected != actual {
        panic!(
            "the expansion of `{name}` changed; if intended, rerun with CUDA_MEM_BLESS=1.\n\
             --- expected ({})\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

#[test]
fn non_generic() {
    check(
        "non_generic",
        quote! {
            #[repr(C)]
            struct Particle {
                position: [f32; 3],
                mass: f32,
                next: cuda_mem::DevicePtr<Particle>,
            }
        },
    );
}

#[test]
fn lifetime_only() {
    check(
        "lifetime_only",
        quote! {
            #[repr(C)]
            struct DevRef<'a, 'b: 'a> {
                addr: u64,
                _a: core::marker::PhantomData<&'a ()>,
                _b: core::marker::PhantomData<&'b mut [u8; 4]>,
            }
        },
    );
}

#[test]
fn homogeneous_generic() {
    check(
        "homogeneous_generic",
        quote! {
            #[repr(C)]
            struct Matrix<T: Copy, const N: usize> where T: Default {
                rows: [[T; N]; N],
                trace: T,
                _unit: core::marker::PhantomData<T>,
            }
        },
    );
}

#[test]
fn transparent() {
    check(
        "transparent",
        quote! {
            #[repr(transparent)]
            struct Tagged<T, Tag: ?Sized = str>(T, core::marker::PhantomData<Tag>);
        },
    );
}

#[test]
fn packed() {
    check(
        "packed",
        quote! {
            #[device_copy(crate = "cm_renamed")]
            #[repr(C, packed)]
            struct Header {
                tag: u8,
                len: u64,
            }
        },
    );
}

#[test]
fn errors_are_combined() {
    check(
        "errors_are_combined",
        quote! {
            #[device_copy(crate = 42, frobnicate)]
            #[repr(C, C, align(3))]
            struct Bad<T> {
                a: &'static T,
                b: u8,
            }
        },
    );
}

/// Malformed inputs must produce errors, never a panic.
#[test]
fn never_panics() {
    let inputs = [
        quote!(
            struct S;
        ),
        quote!(
            enum E {}
        ),
        quote!(union U { a: u8 }),
        quote!(
            #[device_copy(crate = 42)]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate = "")]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate = "a b")]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate = "::")]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate)]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate = )]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(crate = "a")]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(,)]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy(())]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[device_copy::x]
            #[repr(C)]
            struct S(u8);
        ),
        quote!(
            #[repr(C, align(18446744073709551616))]
            struct S(u8);
        ),
        quote!(
            #[repr(C, align(-1))]
            struct S(u8);
        ),
        quote!(
            #[repr(C, align("8"))]
            struct S(u8);
        ),
        quote!(
            #[repr(C, align(8, 16))]
            struct S(u8);
        ),
        quote!(
            #[repr(C, packed(0))]
            struct S(u8);
        ),
        quote!(
            #[repr(,)]
            struct S(u8);
        ),
        quote!(
            #[repr()]
            struct S(u8);
        ),
        quote!(
            #[repr(C)]
            struct r#type {
                r#fn: u32,
            }
        ),
        quote!(
            #[repr(C)]
            struct S<'a>(&'a [u8]);
        ),
        quote!(
            #[repr(C)]
            struct S<T>(T, u8);
        ),
        quote!(
            #[repr(C)]
            struct S<const N: usize>([u8; N], u32);
        ),
        quote!(
            #[repr(C)]
            struct S<T>(PhantomData);
        ),
        quote!(
            #[repr(C)]
            struct S<T>(PhantomData);
        ),
        quote!(
            #[repr(C)]
            struct S<T>(PhantomData<'static, T>);
        ),
        quote!(
            #[repr(C)]
            struct S(<u8 as Tr>::X, Self);
        ),
        quote!(
            #[repr(C)]
            struct S {
                #[device_copy(crate = "x")]
                a: u8,
            }
        ),
    ];
    for input in inputs {
        let input: syn::DeriveInput = match syn::parse2(input.clone()) {
            Ok(input) => input,
            Err(error) => panic!("`{input}` does not parse: {error}"),
        };
        let _ = crate::expand(&input);
    }
}
