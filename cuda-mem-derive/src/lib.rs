//! `#[derive(DeviceCopy)]` for [cuda-mem](https://docs.rs/cuda-mem).
//!
//! Use it through `cuda_mem::DeviceCopy` (the trait and the derive share that
//! name); this crate is an implementation detail. The documentation of the
//! derive macro below lists every check it performs.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo
    )
)]

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::{Data, DeriveInput, Error};

mod attr;
mod fields;
mod kernel;
mod padding;
mod repr;

#[cfg(test)]
mod output_tests;

/// Derives `cuda_mem::DeviceCopy` for a struct, after proving at compile time
/// that it really is plain old data for the device.
///
/// ```
/// # extern crate cm_renamed as cuda_mem;
/// use cuda_mem::{DeviceCopy, DevicePtr};
///
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
///     next: DevicePtr<Particle>,
/// }
///
/// // Generic structs whose fields all share one element type:
/// #[derive(Clone, Copy, DeviceCopy)]
/// #[repr(C)]
/// struct Vec3<T> { x: T, y: T, z: T }
///
/// fn is_device_copy<T: DeviceCopy>() {}
/// is_device_copy::<Particle>();
/// is_device_copy::<Vec3<f64>>();
/// ```
///
/// # What it checks
///
/// Every check fails the build with an error on the offending tokens:
///
/// 1. The item is a `struct` (enums: most bit patterns are not a valid
///    discriminant; unions: bytes outside the written field are
///    uninitialised).
/// 2. It is `#[repr(C)]` or `#[repr(transparent)]`; `packed`, `packed(N)` and
///    `align(N)` may be added to `C`. A raw `#[r#repr(...)]` counts the same.
///    Duplicate or conflicting hints, `repr(Rust)`, integer reprs and
///    `align(N)` over 256 are rejected.
/// 3. It has at least one field, and no field type contains a macro, `Self`, a
///    slice, `str`, `dyn Trait`, a tuple, a reference, a raw or function
///    pointer.
/// 4. Every field type is `DeviceCopy` (rustc reports the field).
/// 5. There is no padding:
///    * non-generic structs (lifetimes allowed): exactly, `S has N byte(s) of
///      padding`, including tail padding from `align(N)` or `[u64; 0]` and
///      the padding `packed(2)` leaves;
///    * generic structs: only when the layout rules padding out:
///      `repr(transparent)`, `repr(C, packed)`, or `repr(C)` (no `align`)
///      with every field of one element type `T` / `[T; N]` / `[[T; N]; M]`
///      (plus `PhantomData` markers). Anything else is refused.
/// 6. The alignment is at most 256 (what CUDA allocations guarantee).
/// 7. `Copy` is implemented (the trait's supertrait).
///
/// A generic struct is `DeviceCopy` when every type parameter that appears
/// outside a `PhantomData<_>` marker is: `Handle<T> { addr: u64, _t:
/// PhantomData<T> }` is `DeviceCopy` for every `T`, `Vec3<T>` only for
/// `T: DeviceCopy`.
///
/// # What it generates
///
/// Inside one `const _: () = { ... };`: the checks (functions that are never
/// called; rustc type-checks them), `unsafe impl DeviceCopy`, and, on host
/// builds of cuda-mem (feature `host`), cudarc's `DeviceRepr` and
/// `ValidAsZeroBits`, so the struct can be a kernel argument. No bytemuck
/// impls: you may also derive `bytemuck::Pod` on the same struct. The output
/// only uses paths through the cuda-mem crate, so it works under `#![no_std]`,
/// `#![no_implicit_prelude]` and `#![forbid(unsafe_code)]`.
///
/// # Options
///
/// `#[device_copy(crate = "path")]`: where cuda-mem is, when it is not the
/// dependency `cuda_mem` (renamed in `Cargo.toml`, or re-exported by another
/// crate). A path starting with a crate name is taken as an extern crate;
/// start a local re-export with `crate::`, `self::` or `super::`.
///
/// ```
/// # extern crate cm_renamed;
/// #[derive(Clone, Copy, cm_renamed::DeviceCopy)]
/// #[device_copy(crate = "cm_renamed")]
/// #[repr(transparent)]
/// struct Meters(f32);
/// ```
#[proc_macro_derive(DeviceCopy, attributes(device_copy))]
pub fn derive_device_copy(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input).into()
}

#[doc = include_str!("kernel/doc.md")]
#[proc_macro_attribute]
pub fn kernel(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    kernel::expand(attr.into(), item.into()).into()
}

/// Collects errors so that every problem is reported at once.
#[derive(Default)]
pub(crate) struct Errors(Option<Error>);

impl Errors {
    /// Adds one error.
    pub(crate) fn push(&mut self, error: Error) {
        match &mut self.0 {
            Some(errors) => errors.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// `Err` with every error pushed, if any.
    pub(crate) fn into_result(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

/// The derive's expansion for `input` (or the errors, as `compile_error!`s).
pub(crate) fn expand(input: &DeriveInput) -> TokenStream {
    match try_expand(input) {
        Ok(tokens) => tokens,
        Err(error) => error.into_compile_error(),
    }
}

fn try_expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let options = attr::parse_options(&input.attrs, &mut errors);
    attr::reject_misplaced(&input.data, &mut errors);
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            errors.push(Error::new(
                data.enum_token.span,
                "`DeviceCopy` cannot be derived for enums: device code and `memset` can write any \
                 bit pattern, and most bit patterns are not a valid discriminant; use a \
                 `#[repr(transparent)]` struct around an integer, with associated constants for \
                 the variants",
            ));
            return errors.into_result().map(|()| TokenStream::new());
        }
        Data::Union(data) => {
            errors.push(Error::new(
                data.union_token.span,
                "`DeviceCopy` cannot be derived for unions: the bytes outside the field last \
                 written are uninitialised and must not be copied; use a `#[repr(C)]` struct, or \
                 a byte array (`[u8; N]`) with methods that decode it",
            ));
            return errors.into_result().map(|()| TokenStream::new());
        }
    };
    let repr = repr::Repr::from_attrs(&input.attrs, &mut errors);
    repr.require_kind(&input.ident, &mut errors);
    fields::check(&input.ident, fields, &mut errors);
    // Generated code reaches cuda-mem through one `use <path> as __cuda_mem;`:
    // a wrong path is then reported once, at that import.
    let krate: syn::Path = syn::parse_quote!(__cuda_mem);
    let plan = padding::plan(&input.ident, &input.generics, fields, &repr, &krate);
    let plan = match plan {
        Ok(plan) => Some(plan),
        Err(error) => {
            errors.push(error);
            None
        }
    };
    errors.into_result()?;
    let Some(plan) = plan else {
        return Ok(TokenStream::new());
    };
    Ok(generate(input, fields, &options.krate, &krate, plan))
}

fn generate(
    input: &DeriveInput,
    fields: &syn::Fields,
    krate_path: &syn::Path,
    krate: &syn::Path,
    plan: padding::Plan,
) -> TokenStream {
    let ident = &input.ident;
    let core = quote!(#krate::__private::core);

    // Impl generics: every type parameter used outside `PhantomData` must be
    // `DeviceCopy`, plus the user's own bounds, plus (homogeneous rule) the
    // element-type bounds.
    let mut generics = input.generics.clone();
    {
        let bounded = padding::params_needing_bound(&input.generics, fields);
        let phantom_only = input.generics.type_params().count() > bounded.len();
        let where_clause = generics.make_where_clause();
        for param in bounded {
            where_clause
                .predicates
                .push(syn::parse_quote!(#param: #krate::DeviceCopy));
        }
        if phantom_only {
            // `#[derive(Copy)]` bounds every type parameter with `Copy`, a
            // marker-only one too; require the struct's own `Copy` (the
            // supertrait) instead of `DeviceCopy` for such parameters.
            let (_, ty_generics, _) = input.generics.split_for_impl();
            where_clause
                .predicates
                .push(syn::parse_quote!(#ident #ty_generics: #core::marker::Copy));
        }
    }
    // The field check needs only the `DeviceCopy` bounds and the user's.
    let check_generics = generics.clone();
    if let padding::Plan::Homogeneous(predicates) = &plan {
        generics
            .make_where_clause()
            .predicates
            .extend(predicates.iter().cloned());
    }
    if generics
        .where_clause
        .as_ref()
        .is_some_and(|clause| clause.predicates.is_empty())
    {
        generics.where_clause = None;
    }
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let (check_impl_generics, _, check_where_clause) = check_generics.split_for_impl();
    let check_where_clause = check_where_clause
        .filter(|clause| !clause.predicates.is_empty())
        .map(|clause| quote!(#clause));

    let field_types: Vec<_> = fields.iter().map(|field| &field.ty).collect();

    let layout_check = match plan {
        padding::Plan::Witness => {
            let generics = &input.generics;
            let this = padding::staticized_self(ident, generics);
            let max_align = proc_macro2::Literal::u64_unsuffixed(repr::MAX_ALIGN);
            // Spanned on the struct's name, so that rustc reports "`S` has N
            // byte(s) of padding" there. (Only this bound is re-spanned: a
            // user-spanned `unsafe impl` would trip `forbid(unsafe_code)`.)
            let span = ident.span();
            let krate = respan(krate.to_token_stream(), span);
            let this = respan(this, span);
            let field_types = field_types
                .iter()
                .map(|ty| respan(padding::staticized(ty, generics).into_token_stream(), span));
            quote_spanned! {span=>
                fn __device_copy_layout_check()
                where
                    (): #krate::__private::NoPadding<
                        #this,
                        {
                            #krate::__private::size_of::<#this>()
                                - (0 #(+ #krate::__private::size_of::<#field_types>())*)
                        },
                    >,
                    (): #krate::__private::AlignAtMost256<
                        #this,
                        { #krate::__private::align_of::<#this>() },
                        { #krate::__private::align_of::<#this>() <= #max_align },
                    >,
                {}
            }
        }
        padding::Plan::Trivial | padding::Plan::Homogeneous(_) => TokenStream::new(),
    };

    let safety = " SAFETY: `#[derive(DeviceCopy)]` checked that this type is a `repr(C)` or \
                  `repr(transparent)` struct whose fields are all `DeviceCopy` (so every bit \
                  pattern is valid and there are no host pointers), that it has no padding \
                  and that its alignment is at most 256.";

    quote! {
        #[allow(
            dead_code,
            non_camel_case_types,
            non_snake_case,
            private_bounds,
            private_interfaces,
            clippy::all,
            clippy::pedantic,
        )]
        const _: () = {
            use #krate_path as #krate;

            // The (never passed) argument gives the function the bounds the
            // struct implies (e.g. `T: 'a` for a `PhantomData<&'a T>` field).
            fn __device_copy_field_check #check_impl_generics (
                _: &#ident #ty_generics,
            ) #check_where_clause {
                fn __device_copy_assert<
                    __DeviceCopyField: ?#core::marker::Sized + #krate::DeviceCopy,
                >() {}
                #(__device_copy_assert::<#field_types>();)*
            }

            #layout_check

            #[doc = #safety]
            #[automatically_derived]
            unsafe impl #impl_generics #krate::DeviceCopy for #ident #ty_generics #where_clause {}

            #krate::__impl_host_traits!([#impl_generics] [#ident #ty_generics] [#where_clause]);
        };
    }
}

/// `tokens` with every span (recursively) set to `span`.
fn respan(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut new =
                    proc_macro2::Group::new(group.delimiter(), respan(group.stream(), span));
                new.set_span(span);
                token = proc_macro2::TokenTree::Group(new);
            } else {
                token.set_span(span);
            }
            token
        })
        .collect()
}
