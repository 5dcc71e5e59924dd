//! How the derive proves "no padding", and (for generic structs) whether it
//! can at all: the layout plan passed to `cuda_mem::__derive_device_copy!`,
//! which does the proving on the real struct.
//!
//! * No type or const parameters (lifetimes allowed): `exact`. The macro
//!   evaluates `size_of::<S>() - Σ field sizes` (field sizes inferred from
//!   the real fields, not from tokens) in a sealed const-generic witness,
//!   the alignment in another, and checks the field offsets are in
//!   declaration order. A layout never depends on a lifetime, so the struct
//!   is named without its lifetime arguments there.
//! * Generic and `repr(transparent)`: `transparent`. The layout is the one
//!   non-zero-sized field's, which is `DeviceCopy`; `PhantomData` markers
//!   are confirmed as such on the real fields.
//! * Generic and `repr(C, packed)` (= `packed(1)`): `packed`. Every field is
//!   at alignment 1, so there is never padding.
//! * Generic `repr(C)` (optionally `packed(N)`), no `align(N > 1)`, and every
//!   field is `E`, `[E; N]` or `[[E; N]; M]` of **one** element type `E` (plus
//!   any `PhantomData<_>` markers): `homogeneous`. All such fields have `E`'s
//!   alignment and a size that is a multiple of it, so they pack without
//!   gaps, and the struct's alignment is `E`'s, so there is no tail padding
//!   either. The derive reads the shape from tokens (the hints); the macro
//!   has rustc unify the element types of the real fields, so neither macro
//!   hygiene nor an attribute macro that rewrites a field can fool it.
//! * Any other generic struct: an error listing these options.
//!
//! The generic plans trust the `repr` the derive read; the real layout of
//! every instantiation is re-checked after monomorphization (the struct's
//! `__LAYOUT`) wherever cuda-mem allocates or views it.

use quote::ToTokens;
use syn::{Error, Fields, GenericArgument, Generics, Ident, PathArguments, Type};

use crate::repr::Repr;

/// The layout plan: how `__derive_device_copy!` proves there is no padding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// The exact checks on the real layout (no type or const parameters).
    Exact,
    /// `repr(transparent)`, generic.
    Transparent,
    /// `repr(C, packed)`, generic.
    Packed,
    /// The homogeneous rule, generic.
    Homogeneous,
}

impl Plan {
    /// The plan's name in the macro call.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Plan::Exact => "exact",
            Plan::Transparent => "transparent",
            Plan::Packed => "packed",
            Plan::Homogeneous => "homogeneous",
        }
    }
}

/// What the macro checks on one field, beyond "is `DeviceCopy`".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hint {
    /// Nothing more.
    Field,
    /// A `PhantomData<_>` marker.
    Marker,
    /// `E` (0), `[E; N]` (1) or `[[E; N]; M]` (2) of the common element type.
    Element(u8),
}

impl Hint {
    /// The name of the checking function in the macro call.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Hint::Field => "field",
            Hint::Marker => "marker",
            Hint::Element(0) => "elem0",
            Hint::Element(1) => "elem1",
            Hint::Element(_) => "elem2",
        }
    }
}

/// Whether the struct has type or const parameters (lifetimes don't count).
pub(crate) fn has_type_or_const_params(generics: &Generics) -> bool {
    generics.type_params().next().is_some() || generics.const_params().next().is_some()
}

/// Decides how to prove the absence of padding (and the hint of every
/// field), or explains why it cannot.
pub(crate) fn plan(
    ident: &Ident,
    generics: &Generics,
    fields: &Fields,
    repr: &Repr,
) -> syn::Result<(Plan, Vec<Hint>)> {
    let all = |hint| fields.iter().map(|_| hint).collect();
    if !has_type_or_const_params(generics) {
        return Ok((Plan::Exact, all(Hint::Field)));
    }
    if repr.is_transparent() {
        let hints = fields
            .iter()
            .map(|field| match phantom_argument(&field.ty) {
                Some(_) => Hint::Marker,
                None => Hint::Field,
            })
            .collect();
        return Ok((Plan::Transparent, hints));
    }
    if repr.is_packed_1() {
        return Ok((Plan::Packed, all(Hint::Field)));
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
    if let Some(hints) = homogeneous_hints(fields) {
        return Ok((Plan::Homogeneous, hints));
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

/// Strips arrays (and parentheses) down to the element type; also returns
/// how many array levels there were.
fn element(mut ty: &Type) -> (&Type, usize) {
    let mut depth = 0;
    loop {
        ty = match ty {
            Type::Array(array) => {
                depth += 1;
                &array.elem
            }
            Type::Paren(paren) => &paren.elem,
            Type::Group(group) => &group.elem,
            _ => return (ty, depth),
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

/// The homogeneous rule, read from tokens: `Some(hints)` if every
/// non-`PhantomData` field is an element type, or an array (at most two
/// levels) of it, with the same tokens for the element. This is only the
/// plan; rustc confirms it on the real fields.
fn homogeneous_hints(fields: &Fields) -> Option<Vec<Hint>> {
    let mut hints = Vec::new();
    let mut first: Option<String> = None;
    for field in fields {
        if phantom_argument(&field.ty).is_some() {
            hints.push(Hint::Marker);
            continue;
        }
        let (elem, depth) = element(&field.ty);
        if depth > 2 {
            return None;
        }
        let elem = elem.to_token_stream().to_string();
        match &first {
            None => first = Some(elem),
            Some(first) if *first == elem => {}
            Some(_) => return None,
        }
        hints.push(Hint::Element(depth as u8));
    }
    first.map(|_| hints)
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
