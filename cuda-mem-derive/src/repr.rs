//! Typed `#[repr(...)]` parsing.
//!
//! Every `repr` attribute on the struct is read, including one spelled
//! `#[r#repr(...)]` (rustc applies that one too; ignoring it let zerocopy's
//! derive skip a padding check, zerocopy#3620), and item names are compared
//! after `Ident::unraw`. The result can only hold combinations that make sense
//! for a `DeviceCopy` struct; anything else is a spanned error saying what to
//! write instead. Conflicts and duplicates are rejected conservatively, even
//! ones rustc would accept (`repr(C, C)`).

use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{Attribute, Error, Ident, LitInt, Meta, Token};

use crate::Errors;

/// The largest alignment a `DeviceCopy` type may have: what `cuMemAlloc`
/// guarantees for every allocation.
pub(crate) const MAX_ALIGN: u64 = 256;

/// The layout kind: the one thing a `DeviceCopy` struct must state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `repr(C)`.
    C,
    /// `repr(transparent)`.
    Transparent,
}

/// A parsed value with its `repr` item (for error spans).
#[derive(Clone)]
pub(crate) struct Spanned<T> {
    pub(crate) value: T,
    pub(crate) item: Meta,
}

/// The struct's representation, as far as `DeviceCopy` cares.
#[derive(Clone, Default)]
pub(crate) struct Repr {
    /// `C` or `transparent`, if given.
    pub(crate) kind: Option<Spanned<Kind>>,
    /// `packed` (= `packed(1)`) or `packed(N)`.
    pub(crate) packed: Option<Spanned<u64>>,
    /// `align(N)`.
    pub(crate) align: Option<Spanned<u64>>,
    /// Whether some `repr` item was rejected (and reported) already.
    pub(crate) had_errors: bool,
}

/// Whether `attr` is `#[repr(...)]` (a raw `#[r#repr(...)]` too: rustc
/// applies it).
pub(crate) fn is_repr(attr: &Attribute) -> bool {
    attr.path()
        .get_ident()
        .is_some_and(|ident| ident.unraw() == "repr")
}

impl Repr {
    /// Whether the layout is `repr(transparent)`.
    pub(crate) fn is_transparent(&self) -> bool {
        self.kind
            .as_ref()
            .is_some_and(|kind| kind.value == Kind::Transparent)
    }

    /// Whether `packed` or `packed(1)` is given (no field can be misaligned,
    /// so there is no padding at all).
    pub(crate) fn is_packed_1(&self) -> bool {
        self.packed.as_ref().is_some_and(|packed| packed.value == 1)
    }

    /// The `align(N)` modifier if it raises the alignment (N > 1).
    pub(crate) fn align_gt_1(&self) -> Option<&Spanned<u64>> {
        self.align.as_ref().filter(|align| align.value > 1)
    }

    /// Parses every `#[repr(...)]` / `#[r#repr(...)]` in `attrs`; problems go
    /// to `errors` (all of them, not just the first).
    pub(crate) fn from_attrs(attrs: &[Attribute], errors: &mut Errors) -> Repr {
        let mut repr = Repr::default();
        for attr in attrs {
            if !is_repr(attr) {
                continue;
            }
            let items = match attr.meta.require_list().and_then(|list| {
                list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
            }) {
                Ok(items) => items,
                Err(_) => {
                    errors.push(Error::new_spanned(
                        attr,
                        "expected `#[repr(C)]`, `#[repr(transparent)]` or `#[repr(C, packed)]`",
                    ));
                    repr.had_errors = true;
                    continue;
                }
            };
            for item in &items {
                if let Err(error) = repr.add(item) {
                    errors.push(error);
                    repr.had_errors = true;
                }
            }
        }
        repr
    }

    fn add(&mut self, item: &Meta) -> syn::Result<()> {
        let name = item
            .path()
            .get_ident()
            .map(|ident| ident.unraw().to_string());
        let name = name.as_deref().unwrap_or("");
        let err = |message: String| Err(Error::new_spanned(item, message));
        match (name, item) {
            ("C", Meta::Path(_)) => self.set_kind(Kind::C, item),
            ("transparent", Meta::Path(_)) => self.set_kind(Kind::Transparent, item),
            ("packed", Meta::Path(_)) => self.set_packed(1, item),
            ("packed", Meta::List(list)) => {
                let n = parse_power_of_two(item, list.parse_args::<LitInt>(), "packed")?;
                self.set_packed(n, item)
            }
            ("align", Meta::List(list)) => {
                let n = parse_power_of_two(item, list.parse_args::<LitInt>(), "align")?;
                if n > MAX_ALIGN {
                    return err(format!(
                        "`align({n})` is over {MAX_ALIGN}: CUDA allocations are only guaranteed \
                         to be {MAX_ALIGN}-byte aligned, so a buffer could hold misaligned values; \
                         use `align(N)` with N <= {MAX_ALIGN}"
                    ));
                }
                self.set_align(n, item)
            }
            ("packed" | "align", _) => err(format!(
                "expected `{name}(N)` with N a power of two, e.g. `{name}(8)`"
            )),
            ("Rust", Meta::Path(_)) => err(
                "`repr(Rust)` leaves the field order and padding to the compiler, so the \
                 device (or C++) cannot know the layout; use `#[repr(C)]`"
                    .into(),
            ),
            (
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64"
                | "i128" | "isize",
                Meta::Path(_),
            ) => err(format!(
                "`repr({name})` only applies to enums, and enums cannot be `DeviceCopy`; \
                 a `DeviceCopy` struct needs `#[repr(C)]` or `#[repr(transparent)]`"
            )),
            _ => err(format!(
                "`{}` is not a representation `DeviceCopy` supports; use `C`, `transparent`, \
                 `C, packed`, `C, packed(N)` or `C, align(N)`",
                quote::ToTokens::to_token_stream(item)
            )),
        }
    }

    fn set_kind(&mut self, kind: Kind, item: &Meta) -> syn::Result<()> {
        let name = |kind: Kind| match kind {
            Kind::C => "C",
            Kind::Transparent => "transparent",
        };
        if let Some(previous) = &self.kind {
            return Err(if previous.value == kind {
                duplicate(
                    item,
                    &format!("`{}` is given twice; remove one", name(kind)),
                )
            } else {
                duplicate(
                    item,
                    &format!(
                        "`{}` conflicts with `{}`: a struct has one layout; keep `C` for a \
                         C-compatible struct, or `transparent` for a wrapper of one field",
                        name(kind),
                        name(previous.value)
                    ),
                )
            });
        }
        if kind == Kind::Transparent && (self.packed.is_some() || self.align.is_some()) {
            return Err(transparent_conflict(item));
        }
        self.kind = Some(Spanned {
            value: kind,
            item: item.clone(),
        });
        Ok(())
    }

    fn set_packed(&mut self, n: u64, item: &Meta) -> syn::Result<()> {
        if self.packed.is_some() {
            return Err(duplicate(item, "`packed` is given twice; keep one"));
        }
        if self.align.is_some() {
            return Err(packed_align_conflict(item));
        }
        if self.is_transparent() {
            return Err(transparent_conflict(item));
        }
        self.packed = Some(Spanned {
            value: n,
            item: item.clone(),
        });
        Ok(())
    }

    fn set_align(&mut self, n: u64, item: &Meta) -> syn::Result<()> {
        if self.align.is_some() {
            return Err(duplicate(item, "`align` is given twice; keep one"));
        }
        if self.packed.is_some() {
            return Err(packed_align_conflict(item));
        }
        if self.is_transparent() {
            return Err(transparent_conflict(item));
        }
        self.align = Some(Spanned {
            value: n,
            item: item.clone(),
        });
        Ok(())
    }

    /// Requires `C` or `transparent`, with an error that says what to write.
    /// Not repeated when a `repr` item was rejected already (that error
    /// says what to write).
    pub(crate) fn require_kind(&self, ident: &Ident, errors: &mut Errors) {
        if self.kind.is_some() || self.had_errors {
            return;
        }
        if let Some(modifier) = self.packed.as_ref().or(self.align.as_ref()) {
            errors.push(Error::new_spanned(
                &modifier.item,
                "`packed` / `align` alone keep the unspecified `repr(Rust)` field order; \
                 add `C`: `#[repr(C, packed)]` (or `#[repr(C, align(N))]`)",
            ));
        } else {
            errors.push(Error::new(
                ident.span(),
                format!(
                    "`{ident}` needs `#[repr(C)]` (or `#[repr(transparent)]` for a single-field \
                     wrapper) to derive `DeviceCopy`: without it the field order and padding are \
                     unspecified and the device cannot rely on them"
                ),
            ));
        }
    }
}

fn duplicate(item: &Meta, message: &str) -> Error {
    Error::new_spanned(item, message)
}

fn transparent_conflict(item: &Meta) -> Error {
    Error::new_spanned(
        item,
        "`transparent` cannot be combined with `packed` or `align`: a transparent wrapper has \
         exactly the layout of its field; use `#[repr(C, packed)]` / `#[repr(C, align(N))]` instead",
    )
}

fn packed_align_conflict(item: &Meta) -> Error {
    Error::new_spanned(
        item,
        "`packed` and `align` conflict (rustc rejects the combination); keep one of them",
    )
}

/// Parses the `N` of `packed(N)` / `align(N)`: an unsuffixed integer literal,
/// a non-zero power of two.
fn parse_power_of_two(item: &Meta, lit: syn::Result<LitInt>, name: &str) -> syn::Result<u64> {
    let bad = || {
        Error::new_spanned(
            item,
            format!("`{name}(N)` needs N to be a power of two (1, 2, 4, ..., {MAX_ALIGN}), e.g. `{name}(8)`"),
        )
    };
    let lit = lit.map_err(|_| bad())?;
    if !lit.suffix().is_empty() {
        return Err(bad());
    }
    match lit.base10_parse::<u64>() {
        Ok(n) if n.is_power_of_two() => Ok(n),
        Ok(n) if n > MAX_ALIGN && name == "align" => Err(Error::new_spanned(
            item,
            format!("`{name}({n})`: N must be a power of two, at most {MAX_ALIGN}"),
        )),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(attrs: proc_macro2::TokenStream) -> Result<Repr, String> {
        let item: syn::DeriveInput = syn::parse_quote! { #attrs struct S(u8); };
        let mut errors = Errors::default();
        let repr = Repr::from_attrs(&item.attrs, &mut errors);
        repr.require_kind(&item.ident, &mut errors);
        errors
            .into_result()
            .map(|()| repr)
            .map_err(|error| error.to_string())
    }

    fn kind(repr: &Repr) -> Option<Kind> {
        repr.kind.as_ref().map(|kind| kind.value)
    }

    #[test]
    fn accepted() {
        let repr = parse(quote!(#[repr(C)])).unwrap();
        assert_eq!(kind(&repr), Some(Kind::C));
        assert!(repr.packed.is_none() && repr.align.is_none());

        let repr = parse(quote!(#[repr(transparent)])).unwrap();
        assert!(repr.is_transparent());

        let repr = parse(quote!(#[repr(C, packed)])).unwrap();
        assert!(repr.is_packed_1());

        let repr = parse(quote!(#[repr(C, packed(4))])).unwrap();
        assert_eq!(repr.packed.as_ref().unwrap().value, 4);
        assert!(!repr.is_packed_1());

        let repr = parse(quote!(#[repr(C)] #[repr(align(16))])).unwrap();
        assert_eq!(repr.align_gt_1().unwrap().value, 16);

        let repr = parse(quote!(#[repr(C, align(1))])).unwrap();
        assert!(repr.align_gt_1().is_none());

        let repr = parse(quote!(#[repr(C, align(256))])).unwrap();
        assert_eq!(repr.align.as_ref().unwrap().value, 256);
    }

    #[test]
    fn raw_identifiers_are_normalised() {
        let repr = parse(quote!(#[r#repr(C, align(8))])).unwrap();
        assert_eq!(kind(&repr), Some(Kind::C));
        assert_eq!(repr.align.as_ref().unwrap().value, 8);
        let repr = parse(quote!(#[repr(r#C, r#packed)])).unwrap();
        assert!(repr.is_packed_1());
        let repr = parse(quote!(#[r#repr(r#transparent)])).unwrap();
        assert!(repr.is_transparent());
    }

    #[test]
    fn other_attributes_are_ignored() {
        let repr =
            parse(quote!(#[derive(Clone)] #[doc = "x"] #[representation(u8)] #[repr(C)])).unwrap();
        assert_eq!(kind(&repr), Some(Kind::C));
    }

    #[test]
    fn rejected() {
        let cases: &[(proc_macro2::TokenStream, &str)] = &[
            (quote!(), "needs `#[repr(C)]`"),
            (quote!(#[repr(Rust)]), "`repr(Rust)` leaves"),
            (quote!(#[repr(packed)]), "add `C`: `#[repr(C, packed)]`"),
            (quote!(#[repr(align(8))]), "add `C`"),
            (quote!(#[repr(u8)]), "`repr(u8)` only applies to enums"),
            (quote!(#[repr(C, u32)]), "`repr(u32)` only applies to enums"),
            (quote!(#[repr(C, C)]), "`C` is given twice"),
            (quote!(#[repr(C)] #[r#repr(C)]), "`C` is given twice"),
            (
                quote!(#[repr(C, transparent)]),
                "`transparent` conflicts with `C`",
            ),
            (
                quote!(#[repr(transparent, C)]),
                "`C` conflicts with `transparent`",
            ),
            (
                quote!(#[repr(transparent, packed)]),
                "`transparent` cannot be combined",
            ),
            (
                quote!(#[repr(align(4), transparent)]),
                "`transparent` cannot be combined",
            ),
            (
                quote!(#[repr(C, packed, packed(2))]),
                "`packed` is given twice",
            ),
            (
                quote!(#[repr(C, align(8), align(16))]),
                "`align` is given twice",
            ),
            (
                quote!(#[repr(C, packed, align(8))]),
                "`packed` and `align` conflict",
            ),
            (quote!(#[repr(C, align(3))]), "power of two"),
            (quote!(#[repr(C, align(0))]), "power of two"),
            (quote!(#[repr(C, packed(3))]), "power of two"),
            (quote!(#[repr(C, align(8u32))]), "power of two"),
            (quote!(#[repr(C, align(x))]), "power of two"),
            (
                quote!(#[repr(C, align(99999999999999999999999))]),
                "power of two",
            ),
            (quote!(#[repr(C, align = 8)]), "expected `align(N)`"),
            (quote!(#[repr(C, align)]), "expected `align(N)`"),
            (quote!(#[repr(C, align(512))]), "`align(512)` is over 256"),
            (quote!(#[repr(C, align(1000))]), "at most 256"),
            (quote!(#[repr(C, simd)]), "`simd` is not a representation"),
            (quote!(#[repr(C, a::b)]), "is not a representation"),
            (quote!(#[repr]), "expected `#[repr(C)]`"),
            (quote!(#[repr = "C"]), "expected `#[repr(C)]`"),
            (quote!(#[repr("C")]), "expected `#[repr(C)]`"),
        ];
        for (attrs, expected) in cases {
            match parse(attrs.clone()) {
                Ok(_) => panic!("`{attrs}` accepted"),
                Err(error) => assert!(
                    error.contains(expected),
                    "`{attrs}`: {error:?} lacks {expected:?}"
                ),
            }
        }
    }

    #[test]
    fn every_problem_is_reported() {
        let item: syn::DeriveInput =
            syn::parse_quote! { #[repr(Rust, C, C, align(3))] #[repr(u8)] struct S(u8); };
        let mut errors = Errors::default();
        Repr::from_attrs(&item.attrs, &mut errors);
        let error = errors.into_result().unwrap_err();
        assert_eq!(error.into_iter().count(), 4);
    }
}
