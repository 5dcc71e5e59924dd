//! The struct's generics, taken apart for `cuda_mem::__derive_device_copy!`.
//!
//! The macro does not take generics or a `where` clause as raw tokens (a raw
//! token sequence spliced into an impl header could close the impl and
//! smuggle in another item): it takes lifetimes, idents, types and paths,
//! each matched by a fragment specifier. So every bound, on a parameter or in
//! the `where` clause, is moved into one list of `type: { bounds }`
//! predicates, and each bound is sorted into lifetimes, `?Sized`-style
//! relaxations, trait paths and higher-ranked trait paths. Bounds of another
//! form (`use<..>`, verbatim syntax) and higher-ranked predicates
//! (`for<'a> &'a T: Trait`) are refused with an error.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{
    Error, GenericParam, Generics, Lifetime, Path, TraitBound, TraitBoundModifier, Type,
    TypeParamBound, WherePredicate,
};

use crate::Errors;

/// The bounds of one predicate, sorted by kind.
#[derive(Default)]
struct Bounds {
    lifetimes: Vec<Lifetime>,
    maybe: Vec<Path>,
    traits: Vec<Path>,
    higher_ranked: Vec<(Vec<Lifetime>, Path)>,
}

/// `generics { ... }` of the macro call, or nothing (the errors went to
/// `errors`). `extra` are predicates `type: trait path` to add.
pub(crate) fn split(
    generics: &Generics,
    extra: &[(Type, Path)],
    errors: &mut Errors,
) -> TokenStream {
    let mut lifetimes = Vec::new();
    let mut types = Vec::new();
    let mut consts = Vec::new();
    let mut args = Vec::new();
    let mut outlives: Vec<(Lifetime, Vec<Lifetime>)> = Vec::new();
    let mut bounds: Vec<(Type, Bounds)> = Vec::new();

    for param in &generics.params {
        match param {
            GenericParam::Lifetime(def) => {
                lifetimes.push(def.lifetime.clone());
                if !def.bounds.is_empty() {
                    outlives.push((def.lifetime.clone(), def.bounds.iter().cloned().collect()));
                }
            }
            GenericParam::Type(param) => {
                types.push(param.ident.clone());
                args.push(param.ident.clone());
                if !param.bounds.is_empty() {
                    let ident = &param.ident;
                    let ty: Type = syn::parse_quote!(#ident);
                    bounds.push((ty, sort(param.bounds.iter(), errors)));
                }
            }
            GenericParam::Const(param) => {
                let (ident, ty) = (&param.ident, &param.ty);
                consts.push(quote!(#ident : #ty));
                args.push(param.ident.clone());
            }
        }
    }
    if let Some(clause) = &generics.where_clause {
        for predicate in &clause.predicates {
            match predicate {
                WherePredicate::Lifetime(predicate) => outlives.push((
                    predicate.lifetime.clone(),
                    predicate.bounds.iter().cloned().collect(),
                )),
                WherePredicate::Type(predicate) => {
                    if let Some(for_lifetimes) = &predicate.lifetimes {
                        errors.push(Error::new_spanned(
                            for_lifetimes,
                            "`#[derive(DeviceCopy)]` does not support higher-ranked `where` \
                             predicates (`for<'a> Type: Trait`); put the `for<'a>` on the bound \
                             (`Type: for<'a> Trait<'a>`)",
                        ));
                        continue;
                    }
                    bounds.push((
                        predicate.bounded_ty.clone(),
                        sort(predicate.bounds.iter(), errors),
                    ));
                }
                other => errors.push(Error::new_spanned(
                    other,
                    "this kind of `where` predicate is not supported by `#[derive(DeviceCopy)]`",
                )),
            }
        }
    }
    for (ty, path) in extra {
        bounds.push((
            ty.clone(),
            Bounds {
                traits: vec![path.clone()],
                ..Bounds::default()
            },
        ));
    }

    let outlives = outlives
        .iter()
        .map(|(lifetime, bounds)| quote!(#lifetime : [#(#bounds),*]));
    let bounds = bounds.iter().map(|(ty, bounds)| {
        let Bounds {
            lifetimes,
            maybe,
            traits,
            higher_ranked,
        } = bounds;
        let higher_ranked = higher_ranked
            .iter()
            .map(|(lifetimes, path)| quote!([#(#lifetimes),*] #path));
        quote! {
            #ty : {
                lifetimes [#(#lifetimes),*]
                maybe [#(#maybe),*]
                traits [#(#traits),*]
                higher_ranked [#(#higher_ranked),*]
            }
        }
    });
    quote! {
        lifetimes [#(#lifetimes),*]
        types [#(#types),*]
        consts [#(#consts),*]
        args [#(#args),*]
        outlives [#(#outlives),*]
        bounds [#(#bounds),*]
    }
}

/// Sorts the bounds of one predicate; unsupported ones go to `errors`.
fn sort<'a>(bounds: impl Iterator<Item = &'a TypeParamBound>, errors: &mut Errors) -> Bounds {
    let mut sorted = Bounds::default();
    for bound in bounds {
        match bound {
            TypeParamBound::Lifetime(lifetime) => sorted.lifetimes.push(lifetime.clone()),
            TypeParamBound::Trait(TraitBound {
                modifier,
                lifetimes,
                path,
                ..
            }) => match (modifier, lifetimes) {
                (TraitBoundModifier::Maybe(_), None) => sorted.maybe.push(path.clone()),
                (TraitBoundModifier::None, None) => sorted.traits.push(path.clone()),
                (TraitBoundModifier::None, Some(for_lifetimes)) => {
                    let mut lifetimes = Vec::new();
                    for param in &for_lifetimes.lifetimes {
                        match param {
                            GenericParam::Lifetime(def) if def.bounds.is_empty() => {
                                lifetimes.push(def.lifetime.clone())
                            }
                            other => errors.push(unsupported(other)),
                        }
                    }
                    sorted.higher_ranked.push((lifetimes, path.clone()));
                }
                (TraitBoundModifier::Maybe(_), Some(_)) => errors.push(unsupported(bound)),
            },
            other => errors.push(unsupported(other)),
        }
    }
    sorted
}

fn unsupported(tokens: &impl ToTokens) -> Error {
    Error::new_spanned(
        tokens,
        "this kind of bound is not supported by `#[derive(DeviceCopy)]`; it takes lifetimes, \
         trait paths (`Trait<..>`, `Fn(..) -> ..`), `?Sized` and `for<'a> Trait<'a>`",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_str(generics: Generics) -> Result<String, String> {
        let mut errors = Errors::default();
        let tokens = split(&generics, &[], &mut errors);
        errors
            .into_result()
            .map(|()| tokens.to_string())
            .map_err(|error| error.to_string())
    }

    #[test]
    fn every_bound_is_moved_into_one_list() {
        let generics: syn::DeriveInput = syn::parse_quote! {
            struct S<'a, 'b: 'a, T: Copy + ?Sized + 'a, const N: usize, U = u8>
            where
                U: for<'x> Fn(&'x u8) -> u8,
                [T; N]: Default,
                'b: 'static,
            {}
        };
        let out = split_str(generics.generics).unwrap();
        assert_eq!(
            out,
            quote! {
                lifetimes ['a, 'b]
                types [T, U]
                consts [N : usize]
                args [T, N, U]
                outlives ['b : ['a], 'b : ['static]]
                bounds [
                    T : { lifetimes ['a] maybe [Sized] traits [Copy] higher_ranked [] },
                    U : { lifetimes [] maybe [] traits [] higher_ranked [['x] Fn(&'x u8) -> u8] },
                    [T; N] : { lifetimes [] maybe [] traits [Default] higher_ranked [] }
                ]
            }
            .to_string()
        );
    }

    #[test]
    fn unsupported_forms_are_errors() {
        let input: syn::DeriveInput = syn::parse_quote! {
            struct S<T> where for<'a> &'a T: Copy {}
        };
        assert!(split_str(input.generics)
            .unwrap_err()
            .contains("higher-ranked"));
    }
}
