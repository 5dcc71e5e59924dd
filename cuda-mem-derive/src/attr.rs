//! `#[device_copy(...)]` options: for now only `crate = "path"`.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, Data, Error, Expr, ExprLit, Lit, LitStr, Path, Result};

use crate::Errors;

/// The options given in `#[device_copy(...)]` on the struct.
pub(crate) struct Options {
    /// Path to the `cuda-mem` crate in generated code. Default `::cuda_mem`.
    pub(crate) krate: Path,
}

/// Whether `attr` is `#[device_copy ...]` (raw `r#device_copy` included).
fn is_device_copy_attr(attr: &Attribute) -> bool {
    attr.path()
        .get_ident()
        .is_some_and(|ident| ident.unraw() == "device_copy")
}

/// Reads every `#[device_copy(...)]` on the item. Errors go to `errors`; the
/// returned options are usable either way (defaults where a value was bad).
pub(crate) fn parse_options(attrs: &[Attribute], errors: &mut Errors) -> Options {
    let mut krate: Option<(Path, Span)> = None;
    for attr in attrs.iter().filter(|attr| is_device_copy_attr(attr)) {
        let list = match attr.meta.require_list() {
            Ok(list) => list,
            Err(_) => {
                errors.push(Error::new_spanned(
                    attr,
                    "expected `#[device_copy(crate = \"path::to::cuda_mem\")]`",
                ));
                continue;
            }
        };
        let result = list.parse_nested_meta(|meta| {
            let key = meta.path.get_ident().map(IdentExt::unraw);
            if key.as_ref().is_some_and(|key| key == "crate") {
                let value_span = meta.input.span();
                let expr: Expr = match meta.value().and_then(|value| value.parse()) {
                    Ok(expr) => expr,
                    Err(_) => {
                        return Err(Error::new(
                            value_span,
                            "expected `crate = \"path::to::cuda_mem\"` (a string literal)",
                        ))
                    }
                };
                let lit = match expr {
                    Expr::Lit(ExprLit { lit: Lit::Str(lit), .. }) => lit,
                    other => {
                        return Err(Error::new_spanned(
                            other,
                            "`crate` expects a string literal naming the path to cuda-mem, \
                             e.g. `crate = \"my_cuda_mem\"` or `crate = \"crate::reexports::cuda_mem\"`",
                        ))
                    }
                };
                let path = parse_crate_path(&lit)?;
                if let Some((_, first)) = &krate {
                    let mut error = Error::new(
                        meta.path.span(),
                        "`crate` is given more than once; keep one `crate = \"...\"`",
                    );
                    error.combine(Error::new(*first, "first given here"));
                    return Err(error);
                }
                krate = Some((path, meta.path.span()));
                Ok(())
            } else {
                Err(Error::new_spanned(
                    &meta.path,
                    format!(
                        "unknown `device_copy` option `{}`; the only option is \
                         `crate = \"path::to::cuda_mem\"`",
                        path_to_string(&meta.path)
                    ),
                ))
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    Options {
        krate: krate
            .map(|(path, _)| path)
            .unwrap_or_else(|| syn::parse_quote!(::cuda_mem)),
    }
}

/// Rejects `#[device_copy]` on fields (it only has meaning on the struct).
pub(crate) fn reject_misplaced(data: &Data, errors: &mut Errors) {
    let message = "`#[device_copy(...)]` belongs on the struct itself, not on a field or variant";
    let mut check = |attrs: &[Attribute]| {
        for attr in attrs.iter().filter(|attr| is_device_copy_attr(attr)) {
            errors.push(Error::new_spanned(attr, message));
        }
    };
    match data {
        Data::Struct(data) => data.fields.iter().for_each(|field| check(&field.attrs)),
        Data::Enum(data) => data.variants.iter().for_each(|variant| {
            check(&variant.attrs);
            variant.fields.iter().for_each(|field| check(&field.attrs));
        }),
        Data::Union(data) => data
            .fields
            .named
            .iter()
            .for_each(|field| check(&field.attrs)),
    }
}

fn path_to_string(path: &Path) -> String {
    let mut out = String::new();
    if path.leading_colon.is_some() {
        out.push_str("::");
    }
    for (i, segment) in path.segments.iter().enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push_str(&segment.ident.to_string());
    }
    out
}

/// Parses and validates the string of `crate = "..."`.
///
/// Accepted: `name` or `::name` (an extern crate, possibly renamed; a leading
/// `::` is added so it resolves even under `#![no_implicit_prelude]`),
/// `name::module::reexport`, `crate::a::b`, `self::a`, `super::super::a`.
/// Rejected (spanned on the literal): anything that is not a path, generic
/// arguments, `Self`, and `crate` / `self` / `super` in any other position.
pub(crate) fn parse_crate_path(lit: &LitStr) -> Result<Path> {
    let mut path: Path = lit.parse_with(Path::parse_mod_style).map_err(|_| {
        Error::new(
            lit.span(),
            format!(
                "`{}` is not a path; expected e.g. `crate = \"my_cuda_mem\"` \
                 or `crate = \"crate::reexports::cuda_mem\"`",
                lit.value()
            ),
        )
    })?;
    let invalid = |why: &str| {
        Error::new(
            lit.span(),
            format!("invalid crate path `{}`: {why}", lit.value()),
        )
    };
    let mut segments = path
        .segments
        .iter()
        .map(|segment| segment.ident.unraw().to_string());
    let first = segments.next().ok_or_else(|| invalid("it is empty"))?;
    // Whether the previous segment allows a `super` after it.
    let mut super_allowed = match first.as_str() {
        "Self" => return Err(invalid("`Self` does not name a crate or module")),
        "crate" | "self" | "super" if path.leading_colon.is_some() => {
            return Err(invalid(
                "remove the leading `::` before `crate`, `self` or `super`",
            ))
        }
        "self" | "super" => true,
        _ => false,
    };
    for segment in segments {
        match segment.as_str() {
            "Self" => return Err(invalid("`Self` does not name a crate or module")),
            "crate" | "self" => return Err(invalid("`crate` and `self` may only start the path")),
            "super" if !super_allowed => {
                return Err(invalid("`super` may only follow `self` or another `super`"))
            }
            "super" => {}
            _ => super_allowed = false,
        }
    }
    if path.leading_colon.is_none() && !matches!(first.as_str(), "crate" | "self" | "super") {
        // An extern crate name: make it absolute so it resolves without the
        // extern prelude (`#![no_implicit_prelude]`) and is never shadowed by
        // a local item of the same name.
        path.leading_colon = Some(syn::token::PathSep::default());
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn ok(input: &str) -> String {
        let lit = LitStr::new(input, Span::call_site());
        match parse_crate_path(&lit) {
            Ok(path) => path.to_token_stream().to_string().replace(' ', ""),
            Err(error) => panic!("{input:?} rejected: {error}"),
        }
    }

    fn err(input: &str) -> String {
        let lit = LitStr::new(input, Span::call_site());
        match parse_crate_path(&lit) {
            Ok(path) => panic!("{input:?} accepted as {}", path.to_token_stream()),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn valid_crate_paths() {
        assert_eq!(ok("cuda_mem"), "::cuda_mem");
        assert_eq!(ok("::cm_renamed"), "::cm_renamed");
        assert_eq!(ok("facade::gpu::cuda_mem"), "::facade::gpu::cuda_mem");
        assert_eq!(
            ok("crate::reexports::cuda_mem"),
            "crate::reexports::cuda_mem"
        );
        assert_eq!(ok("crate"), "crate");
        assert_eq!(ok("self::cm"), "self::cm");
        assert_eq!(ok("super::super::cm"), "super::super::cm");
        assert_eq!(ok("self::super::cm"), "self::super::cm");
        assert_eq!(ok("r#type::cm"), "::r#type::cm");
    }

    #[test]
    fn invalid_crate_paths() {
        assert!(err("Self").contains("`Self`"));
        assert!(err("Self::x").contains("`Self`"));
        assert!(err("a::Self").contains("`Self`"));
        assert!(err("::crate::x").contains("leading `::`"));
        assert!(err("::self").contains("leading `::`"));
        assert!(err("::super::x").contains("leading `::`"));
        assert!(err("a::crate").contains("may only start"));
        assert!(err("a::self::b").contains("may only start"));
        assert!(err("a::super").contains("`super` may only follow"));
        assert!(err("self::a::super").contains("`super` may only follow"));
        assert!(err("").contains("not a path"));
        assert!(err("a::").contains("not a path"));
        assert!(err("a b").contains("not a path"));
        assert!(err("a::<T>").contains("not a path"));
        assert!(err("a<T>::b").contains("not a path"));
        assert!(err("42").contains("not a path"));
    }

    fn options(attrs: proc_macro2::TokenStream) -> (String, Option<String>) {
        let item: syn::DeriveInput = syn::parse_quote! { #attrs struct S(u8); };
        let mut errors = Errors::default();
        let options = parse_options(&item.attrs, &mut errors);
        let path = options.krate.to_token_stream().to_string().replace(' ', "");
        (
            path,
            errors.into_result().err().map(|error| error.to_string()),
        )
    }

    #[test]
    fn options_parse() {
        use quote::quote;
        assert_eq!(options(quote!()), ("::cuda_mem".into(), None));
        assert_eq!(
            options(quote!(#[device_copy(crate = "cm")])),
            ("::cm".into(), None)
        );
        assert_eq!(
            options(quote!(#[r#device_copy(crate = "cm")])),
            ("::cm".into(), None)
        );
        let (_, error) = options(quote!(#[device_copy(crate = 42)]));
        assert!(error.unwrap().contains("string literal"));
        let (_, error) = options(quote!(#[device_copy(crate)]));
        assert!(error.unwrap().contains("string literal"));
        let (_, error) = options(quote!(#[device_copy(frobnicate)]));
        assert!(error
            .unwrap()
            .contains("unknown `device_copy` option `frobnicate`"));
        let (_, error) = options(quote!(#[device_copy]));
        assert!(error.unwrap().contains("expected `#[device_copy(crate"));
        let (_, error) = options(quote!(#[device_copy = "x"]));
        assert!(error.unwrap().contains("expected `#[device_copy(crate"));
        let (_, error) = options(quote!(#[device_copy(crate = "a", crate = "b")]));
        assert!(error.unwrap().contains("more than once"));
        let (_, error) = options(quote!(#[device_copy(crate = "a")] #[device_copy(crate = "b")]));
        assert!(error.unwrap().contains("more than once"));
        let (_, error) = options(quote!(#[device_copy(crate = "Self")]));
        assert!(error.unwrap().contains("invalid crate path"));
    }
}
