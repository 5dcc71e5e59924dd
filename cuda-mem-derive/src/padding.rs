//! How the derive proves "no padding", and (for generic structs) whether it
//! can at all.
//!
//! * No type or const parameters (lifetimes allowed): the exact answer. A
//!   sealed const-generic witness,
//!   `(): NoPadding<S, { size_of::<S>() - Σ size_of::<Field>() }>`, holds only
//!   when the difference is 0; rustc evaluates it while checking the user's
//!   crate. Lifetimes are replaced by `'static` there, because an anonymous
//!   constant cannot name a generic parameter and a layout never depends on a
//!   lifetime. An alignment witness (`<= 256`) goes next to it.
//! * Generic and `repr(transparent)`: the layout is the one non-zero-sized
//!   field's, which is `DeviceCopy`; nothing to prove.
//! * Generic and `repr(C, packed)` (= `packed(1)`): every field is at
//!   alignment 1, so there is never padding.
//! * Generic `repr(C)` (optionally `packed(N)`), no `align(N > 1)`, and every
//!   field is `E`, `[E; N]`, `[[E; N]; M]`… of **one** element type `E` (plus
//!   any `PhantomData<_>` markers): the "homogeneous" rule. All such fields
//!   have `E`'s alignment and a size that is a multiple of it, so they pack
//!   without gaps, and the struct's alignment is `E`'s, so there is no tail
//!   padding either. The derive reads `E` from tokens; rustc confirms it with
//!   `Elem: Identity<Type = E>` bounds on the impl (zerocopy's trick), so a
//!   macro that makes two `T`s mean different types cannot fool it.
//! * Any other generic struct: an error listing these options.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{
    Error, Fields, GenericArgument, Generics, Ident, Path, PathArguments, Type, WherePredicate,
};

use crate::repr::Repr;

/// What the generated code must do to prove there is no padding.
pub(crate) enum Plan {
    /// Emit the size and alignment witnesses (no type or const parameters).
    Witness,
    /// Nothing: the representation rules padding out.
    Trivial,
    /// Add these `where` predicates to the impl (homogeneous generic struct).
    Homogeneous(Vec<WherePredicate>),
}

/// Whether the struct has type or const parameters (lifetimes don't count).
pub(crate) fn has_type_or_const_params(generics: &Generics) -> bool {
    generics.type_params().next().is_some() || generics.const_params().next().is_some()
}

/// Decides how to prove the absence of padding, or explains why it cannot.
pub(crate) fn plan(
    ident: &Ident,
    generics: &Generics,
    fields: &Fields,
    repr: &Repr,
    krate: &Path,
) -> syn::Result<Plan> {
    if !has_type_or_const_params(generics) {
        return Ok(Plan::Witness);
    }
    if repr.is_transparent() || repr.is_packed_1() {
        return Ok(Plan::Trivial);
    }
    if let Some(align) = repr.align_gt_1() {
        return Err(Error::new_spanned(
            &align.item,
            format!(
                "`align({})` on a generic struct adds tail padding that depends on the type \
                 parameters (e.g. three `u8`s in an `align(4)` struct leave 1 byte), which the \
                 derive cannot check; remove `align`, or derive on a struct with concrete field \
                 types (for those the exact padding is checked)",
                align.value
            ),
        ));
    }
    if let Some(bounds) = homogeneous_bounds(fields, krate) {
        return Ok(Plan::Homogeneous(bounds));
    }
    Err(Error::new_spanned(
        generics,
        format!(
            "cannot prove that the generic struct `{ident}` has no padding for every choice of its \
             parameters (that needs the exact sizes, which rustc only knows once the parameters are \
             concrete). `#[derive(DeviceCopy)]` accepts a generic struct when its layout cannot have \
             padding:\n\
             - `#[repr(transparent)]`: a wrapper of one field (plus `PhantomData` markers);\n\
             - `#[repr(C, packed)]`: no padding at all, but unaligned fields;\n\
             - `#[repr(C)]` where every field has one element type `T`: `T`, `[T; N]`, `[[T; N]; M]` \
             (plus `PhantomData` markers);\n\
             - otherwise make the struct non-generic (or derive on each concrete struct you need): \
             for those the exact padding is checked"
        ),
    ))
}

/// Strips arrays (and parentheses) down to the element type.
fn element(mut ty: &Type) -> &Type {
    loop {
        ty = match ty {
            Type::Array(array) => &array.elem,
            Type::Paren(paren) => &paren.elem,
            Type::Group(group) => &group.elem,
            _ => return ty,
        }
    }
}

/// For a `PhantomData<X>` field (last path segment `PhantomData` with one type
/// argument), the `X`.
pub(crate) fn phantom_argument(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    if path.qself.is_some() {
        return None;
    }
    let last = path.path.segments.last()?;
    if last.ident != "PhantomData" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut args = args.args.iter();
    match (args.next(), args.next()) {
        (Some(GenericArgument::Type(argument)), None) => Some(argument),
        _ => None,
    }
}

/// The homogeneous rule: `Some(bounds)` if every non-`PhantomData` field is an
/// (array of an) element type with the same tokens, `None` otherwise. The
/// bounds make rustc confirm what the tokens suggest.
fn homogeneous_bounds(fields: &Fields, krate: &Path) -> Option<Vec<WherePredicate>> {
    let mut predicates = Vec::new();
    let mut first: Option<&Type> = None;
    for field in fields {
        if let Some(argument) = phantom_argument(&field.ty) {
            let ty = &field.ty;
            predicates.push(syn::parse_quote! {
                #ty: #krate::__private::Identity<
                    Type = #krate::__private::core::marker::PhantomData<#argument>
                >
            });
            continue;
        }
        let elem = element(&field.ty);
        match first {
            None => first = Some(elem),
            Some(first) if tokens(first) == tokens(elem) => predicates.push(syn::parse_quote! {
                #elem: #krate::__private::Identity<Type = #first>
            }),
            Some(_) => return None,
        }
    }
    Some(predicates)
}

fn tokens(ty: &Type) -> String {
    ty.to_token_stream().to_string()
}

/// `S<'static, 'static>` for a struct whose only parameters are lifetimes.
pub(crate) fn staticized_self(ident: &Ident, generics: &Generics) -> TokenStream {
    if generics.params.is_empty() {
        return quote!(#ident);
    }
    let statics = generics.lifetimes().map(|_| quote!('static));
    quote!(#ident<#(#statics),*>)
}

/// `ty` with the struct's lifetime parameters replaced by `'static`.
pub(crate) fn staticized(ty: &Type, generics: &Generics) -> Type {
    struct Replace<'a>(&'a Generics);
    impl syn::visit_mut::VisitMut for Replace<'_> {
        fn visit_lifetime_mut(&mut self, lifetime: &mut syn::Lifetime) {
            if self
                .0
                .lifetimes()
                .any(|param| param.lifetime.ident == lifetime.ident)
            {
                *lifetime = syn::Lifetime::new("'static", lifetime.span());
            }
        }
    }
    let mut ty = ty.clone();
    syn::visit_mut::VisitMut::visit_type_mut(&mut Replace(generics), &mut ty);
    ty
}

/// The type parameters that must be `DeviceCopy` for the struct to be: those
/// named in a field other than a `PhantomData<_>` marker. (A marker is
/// `DeviceCopy` whatever its parameter; if a "`PhantomData`" is something
/// else, the field check fails, so skipping the bound is never unsound.)
pub(crate) fn params_needing_bound<'g>(generics: &'g Generics, fields: &Fields) -> Vec<&'g Ident> {
    struct Mentions<'a>(&'a mut Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Mentions<'_> {
        fn visit_ident(&mut self, ident: &'ast Ident) {
            self.0.push(ident.to_string());
        }
    }
    let mut mentioned = Vec::new();
    for field in fields
        .iter()
        .filter(|field| phantom_argument(&field.ty).is_none())
    {
        syn::visit::Visit::visit_type(&mut Mentions(&mut mentioned), &field.ty);
    }
    generics
        .type_params()
        .map(|param| &param.ident)
        .filter(|ident| mentioned.iter().any(|name| *ident == name))
        .collect()
}
