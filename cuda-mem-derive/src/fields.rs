//! Syntactic checks on the fields, done before any code is generated.
//!
//! The real "every field is `DeviceCopy`" proof is type-level, on the real
//! struct (`cuda_mem::__derive_device_copy!` destructures it); the checks
//! here catch what rustc would report badly or what the layout plan cannot
//! read:
//!
//! * no fields at all;
//! * a macro anywhere in a field type (`ty!()`, or `[u8; len!()]`): the plan
//!   of a generic struct is read from the field tokens, which a macro hides
//!   (and a non-deterministic macro could expand differently each time,
//!   bytemuck#335, zerocopy#2762);
//! * `Self` in a field type (the checks live outside any impl);
//! * types that can never be `DeviceCopy`, with a specific way out:
//!   slices, `str` and `dyn Trait` (unsized), tuples (unspecified layout),
//!   references, raw and function pointers (host addresses), `!`.

use syn::visit::Visit;
use syn::{Error, Fields, Ident, Type};

use crate::Errors;

/// Checks the fields of the struct `ident`; problems go to `errors`.
pub(crate) fn check(ident: &Ident, fields: &Fields, errors: &mut Errors) {
    if fields.is_empty() {
        errors.push(Error::new(
            ident.span(),
            format!(
                "`{ident}` has no fields: a zero-sized struct has no C counterpart (an empty C++ \
                 struct has size 1) and cannot be allocated on the device; give it a field, or use \
                 `PhantomData<T>` as a zero-sized marker inside another struct"
            ),
        ));
    }
    for field in fields {
        let mut finder = Forbidden { errors: Vec::new() };
        finder.visit_type(&field.ty);
        if finder.errors.is_empty() {
            if let Some(error) = check_shape(&field.ty) {
                errors.push(error);
            }
        }
        finder
            .errors
            .into_iter()
            .for_each(|error| errors.push(error));
    }
}

/// Finds macros and `Self` anywhere inside a type.
struct Forbidden {
    errors: Vec<Error>,
}

impl<'ast> Visit<'ast> for Forbidden {
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.errors.push(Error::new_spanned(
            mac,
            "macros are not allowed in the field types of a `DeviceCopy` struct: the derive \
             reads the field types to choose its checks, and a macro could expand to a different \
             type each time; define a type alias (`type Field = my_macro!();`) or a `const` and \
             use it",
        ));
    }

    fn visit_ident(&mut self, ident: &'ast Ident) {
        if ident == "Self" {
            self.errors.push(Error::new(
                ident.span(),
                "`Self` in a field type is not supported by `#[derive(DeviceCopy)]`: \
                 write the type out",
            ));
        }
    }
}

/// Rejects field types that can never be `DeviceCopy` (looking through
/// parentheses and array element types), with a specific hint.
fn check_shape(ty: &Type) -> Option<Error> {
    let message = match ty {
        Type::Paren(inner) => return check_shape(&inner.elem),
        Type::Group(inner) => return check_shape(&inner.elem),
        Type::Array(array) => return check_shape(&array.elem),
        Type::Slice(_) => {
            "a slice has no size known at compile time, so the struct could not be copied as a \
             fixed number of bytes; use an array `[T; N]`, or keep the elements in their own \
             buffer and store a `cuda_mem::DevicePtr<T>` and a length"
        }
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("str") => {
            "`str` has no size known at compile time; store the bytes in an array `[u8; N]`"
        }
        Type::TraitObject(_) | Type::ImplTrait(_) => {
            "a trait object has no fixed layout (and `dyn` values carry a host vtable pointer); \
             use a concrete `DeviceCopy` type"
        }
        Type::Tuple(tuple) if tuple.elems.is_empty() => {
            "`()` is not `DeviceCopy` (a zero-sized tuple has no C counterpart); \
             use `PhantomData<T>` for a zero-sized marker, or remove the field"
        }
        Type::Tuple(_) => {
            "tuples are not `DeviceCopy`: their layout is unspecified (`repr(Rust)`) and may \
             contain padding; use a `#[repr(C)]` struct (deriving `DeviceCopy`) or an array"
        }
        Type::Reference(_) => {
            "references are host addresses and mean nothing on the device; \
             store a device address as `cuda_mem::DevicePtr<T>`"
        }
        Type::Ptr(_) => {
            "raw pointers are not `DeviceCopy` (a host address means nothing on the device); \
             store a device address as `cuda_mem::DevicePtr<T>`"
        }
        Type::BareFn(_) => {
            "function pointers are host addresses and mean nothing on the device; \
             store an integer that selects the function instead"
        }
        Type::Never(_) => "`!` has no values, so it cannot be stored in device memory",
        Type::Infer(_) => "`_` is not allowed in a field type",
        _ => return None,
    };
    Some(Error::new_spanned(ty, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(item: syn::DeriveInput) -> Vec<String> {
        let syn::Data::Struct(data) = &item.data else {
            panic!("not a struct")
        };
        let mut errors = Errors::default();
        check(&item.ident, &data.fields, &mut errors);
        match errors.into_result() {
            Ok(()) => Vec::new(),
            Err(error) => error.into_iter().map(|error| error.to_string()).collect(),
        }
    }

    #[test]
    fn accepted() {
        let ok: &[syn::DeriveInput] = &[
            syn::parse_quote!(
                struct S {
                    a: u32,
                    b: [[f32; 4]; 4],
                    c: cuda_mem::DevicePtr<u8>,
                }
            ),
            syn::parse_quote!(
                struct S<'a, T>(T, core::marker::PhantomData<&'a T>);
            ),
            syn::parse_quote!(
                struct S {
                    a: bool,
                    b: Option<u32>,
                }
            ), // type-level check's job
            syn::parse_quote!(
                struct S {
                    a: [u8; 3 + N],
                    b: <T as Tr>::Assoc,
                }
            ),
        ];
        for item in ok {
            assert_eq!(errors(item.clone()), Vec::<String>::new());
        }
    }

    #[test]
    fn rejected() {
        let cases: &[(syn::DeriveInput, &str)] = &[
            (
                syn::parse_quote!(
                    struct S;
                ),
                "has no fields",
            ),
            (
                syn::parse_quote!(
                    struct S {}
                ),
                "has no fields",
            ),
            (
                syn::parse_quote!(
                    struct S();
                ),
                "has no fields",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: u32,
                        b: [u8],
                    }
                ),
                "a slice",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: str,
                    }
                ),
                "`str`",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: dyn Send,
                    }
                ),
                "trait object",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: (u8, u32),
                    }
                ),
                "tuples are not",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: [(u8, u32); 2],
                    }
                ),
                "tuples are not",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: (),
                    }
                ),
                "`()` is not",
            ),
            (
                syn::parse_quote!(
                    struct S<'a> {
                        a: &'a u32,
                    }
                ),
                "references",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: *const u8,
                    }
                ),
                "raw pointers",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: [*mut u8; 4],
                    }
                ),
                "raw pointers",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: fn(),
                    }
                ),
                "function pointers",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: ((u8)),
                    }
                ),
                "",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: ty!(),
                    }
                ),
                "macros are not allowed",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: [u8; len!()],
                    }
                ),
                "macros are not allowed",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: Wrapper<m!()>,
                    }
                ),
                "macros are not allowed",
            ),
            (
                syn::parse_quote!(
                    struct S {
                        a: [Self; 0],
                    }
                ),
                "`Self`",
            ),
        ];
        for (item, expected) in cases {
            let found = errors(item.clone());
            if expected.is_empty() {
                assert!(found.is_empty(), "{found:?}");
                continue;
            }
            assert_eq!(found.len(), 1, "{}: {found:?}", quote::quote!(#item));
            assert!(found[0].contains(expected), "{found:?} lacks {expected:?}");
        }
    }

    #[test]
    fn every_field_is_reported() {
        let item: syn::DeriveInput = syn::parse_quote!(
            struct S<'a> {
                a: &'a u8,
                b: *const u8,
                c: (u8,),
                d: m!(),
            }
        );
        assert_eq!(errors(item).len(), 4);
    }
}
