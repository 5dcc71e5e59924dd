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

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error};

mod attr;
mod checked;
mod fields;
mod generics;
mod kernel;
mod padding;
mod repr;
mod soa;

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
/// Every check fails the build. The syntactic ones are done by the derive,
/// with the error on the offending tokens; the others by rustc, on the real
/// struct as it is after every macro ran (an attribute macro placed after
/// `#[derive(DeviceCopy)]` can rewrite the struct after the derive read it):
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
/// 4. The real struct has exactly the fields the derive saw (an exhaustive
///    pattern), and every one of them is `DeviceCopy`.
/// 5. There is no padding:
///    * non-generic structs (lifetimes allowed): exactly, from the real
///      layout: `S has N byte(s) of padding`, including tail padding from
///      `align(N)` or `[u64; 0]` and the padding `packed(2)` leaves; and the
///      fields are in declaration order (the `repr(C)` order);
///    * generic structs: only when the layout rules padding out:
///      `repr(transparent)`, `repr(C, packed)`, or `repr(C)` (no `align`)
///      with every field of one element type `T` / `[T; N]` / `[[T; N]; M]`
///      (plus `PhantomData` markers); rustc unifies the element types of the
///      real fields. Anything else is refused. The `repr` is taken from the
///      tokens here, so the real layout of every instantiation is checked
///      again when cuda-mem uses it (a buffer of `S<u8>`, a byte view): a
///      build error if it has padding.
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
/// One call of `cuda_mem::__derive_device_copy!` (hidden), a `macro_rules!`
/// macro of cuda-mem, reached through the crate path. The call passes the
/// struct's name, its generics in pieces, the field names (never the field
/// types), the layout plan and per-field hints. The macro does the proving,
/// with `$crate::` paths only, and emits, inside one `const _: () = { ... };`:
///
/// * the checks (a never-called `proof` function and constants that rustc
///   evaluates while checking your crate);
/// * `unsafe impl DeviceCopy` (with the struct's layout fingerprint);
/// * `bytemuck::Zeroable`, and for a struct without type or const
///   parameters `bytemuck::Pod` (for its `'static` instantiations: all of
///   them unless it has lifetime parameters), so `bytemuck::bytes_of`,
///   `cast_slice` & co. work with no second derive. **Do not also derive
///   `bytemuck::Pod` or `Zeroable`**: that is now a conflicting-impl error
///   (E0119); remove the bytemuck derives, `DeviceCopy` brings them. A
///   generic struct is not `Pod`: its layout is re-checked per instantiation
///   by cuda-mem's own byte views (`cuda_mem::bytes_of`), which bytemuck's
///   would skip;
/// * on host builds of cuda-mem (feature `host`), cudarc's `DeviceRepr` and
///   `ValidAsZeroBits`, so the struct can be a kernel argument.
///
/// The output introduces no names in your module (the only bindings are
/// locals named `__cuda_mem_*`: a unit struct or a constant of exactly such
/// a name would turn one into a constant pattern and fail the build), and
/// works under `#![no_std]`, `#![no_implicit_prelude]` and
/// `#![forbid(unsafe_code)]`.
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
///
/// # Threat model: what safe code cannot do
///
/// The proof holds against a crate that forbids unsafe code
/// (`#![forbid(unsafe_code)]`) and tries to get a `DeviceCopy` (or `Pod`, or
/// `DeviceRepr`) impl for a type that breaks the contract:
///
/// * **A forged crate path.** The path only says where cuda-mem's macro is.
///   The macro finds its checks through `$crate`, which no path, module or
///   re-export can redirect. A module that supplies its own macro of that
///   name must write `unsafe impl` in it, and a local `macro_rules!` is
///   linted by `forbid(unsafe_code)`.
/// * **Shadowing.** No field type is ever re-interpreted in another scope,
///   and the expansion declares no names (no `use ... as` alias, no helper
///   items) where your tokens are resolved.
/// * **Rewriting after the derive.** An attribute macro below
///   `#[derive(DeviceCopy)]` can change fields, types and `repr` after the
///   derive read them; the checks are on the real struct, so a changed field
///   set, a field type that is not `DeviceCopy`, padding or reordered fields
///   of a non-generic struct, and a generic field that no longer shares the
///   element type all fail. (For a generic struct whose `repr` is changed,
///   cuda-mem's buffers and byte views still refuse every padded
///   instantiation, at build time.)
/// * **Hidden helpers.** Calling `cuda_mem::__derive_device_copy!` by hand
///   proves the same things (it takes only parsed fragments, so its input
///   cannot smuggle in other items), and the other hidden helpers only check;
///   `__device_copy_host_impls!` requires the type to be `DeviceCopy`
///   already.
///
/// A hand-written `unsafe impl DeviceCopy` is trusted, like any unsafe code.
#[proc_macro_derive(DeviceCopy, attributes(device_copy))]
pub fn derive_device_copy(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    expand(&input).into()
}

/// Derives `cuda_mem::CheckedDeviceCopy` for a fieldless enum with an
/// integer `repr`, or for a `#[repr(C)]` struct whose fields are
/// `CheckedDeviceCopy` (`bool`, such enums, any `DeviceCopy` type).
///
/// ```
/// # extern crate cm_renamed as cuda_mem;
/// use cuda_mem::CheckedDeviceCopy;
///
/// #[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
/// #[device_copy(crate = "cuda_mem")]
/// #[repr(u8)]
/// enum Phase { Solid, Liquid, Gas = 7 }
///
/// #[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
/// #[device_copy(crate = "cuda_mem")]
/// #[repr(C)]
/// struct Cell { temperature: f32, phase: Phase, frozen: bool, flags: [u8; 2] }
///
/// assert_eq!(Phase::try_from_bits(7), Some(Phase::Gas));
/// assert_eq!(Phase::try_from_bits(2), None);
/// let cell = Cell { temperature: -3.5, phase: Phase::Solid, frozen: true, flags: [1, 2] };
/// let bits: CellBits = cell.into_bits(); // `DeviceCopy`: what a buffer holds
/// assert_eq!(Cell::try_from_bits(bits), Some(cell));
/// let mut broken = bits;
/// broken.frozen = 2; // what a kernel or a memset could write
/// assert_eq!(Cell::try_from_bits(broken), None);
/// ```
///
/// # What it generates
///
/// Safe code only: the values are made by matching bits (an enum's
/// discriminants, a `bool`'s 0 and 1, field by field for a struct), never
/// by reinterpreting memory, so no macro that rewrites the item afterwards
/// can make it unsound.
///
/// * An enum: `Bits` is its `repr` integer (`u8`, `u16`, `u32` or `i32`,
///   required: without one the layout is the compiler's); every variant is
///   fieldless.
/// * A struct (`#[repr(C)]`, or `transparent`; `packed` and `align` kept):
///   a struct `{Name}Bits` next to it, with the same visibility, `repr` and
///   field names, each field of its type's `Bits`, itself
///   `#[derive(DeviceCopy)]`: so a struct with padding is refused there
///   (`{Name}Bits has N byte(s) of padding`), as `DeviceCopy` refuses it.
///
/// Generic types are refused (write the two conversions by hand).
/// `#[device_copy(crate = "path")]` names cuda-mem when it is renamed.
#[proc_macro_derive(CheckedDeviceCopy, attributes(device_copy))]
pub fn derive_checked_device_copy(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    checked::expand(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// Derives `cuda_mem::soa::DeviceSoA` for a `#[repr(C)]` struct of named
/// `DeviceCopy` fields (derive `DeviceCopy` too), so that cuda-mem can keep
/// it as a structure of arrays: `{Name}SoA` (a
/// `cuda_mem::soa::SoaBuffer<{Name}, Device>`; `SoaBuffer<{Name}, Pinned>`
/// and so on for the other kinds), whose
/// `fields()` / `fields_mut()` give `{Name}Fields`, one view per field.
///
/// ```
/// # extern crate cm_renamed as cuda_mem;
/// use cuda_mem::soa::DeviceSoA;
/// use cuda_mem::{DeviceCopy, DeviceSoA};
///
/// #[derive(Clone, Copy, DeviceCopy, DeviceSoA)]
/// #[device_copy(crate = "cuda_mem")]
/// #[repr(C)]
/// struct Particle { pos: [f32; 3], mass: f32 }
///
/// assert_eq!(Particle::FIELDS.iter().map(|f| f.name).collect::<Vec<_>>(), ["pos", "mass"]);
/// assert_eq!(Particle::FIELDS[1].offset, 12);
/// ```
///
/// # What it generates
///
/// Safe code only: the field table (`FIELDS`: names, `offset_of!`
/// offsets, sizes and alignments), `{Name}Fields<Fam>` with the fields'
/// names and visibilities, the functions that make its handles and visit a
/// value's fields, and the alias `{Name}SoA` (host builds).
/// cuda-mem checks the table against the struct before any byte moves by
/// it. Generic structs, tuple structs, enums and unions are refused;
/// `#[device_copy(crate = "path")]` names cuda-mem when it is renamed.
#[proc_macro_derive(DeviceSoA, attributes(device_copy))]
pub fn derive_device_soa(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let input = syn::parse_macro_input!(input as DeriveInput);
    soa::expand(&input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

#[doc = include_str!("kernel/doc.md")]
#[proc_macro_attribute]
pub fn kernel(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    kernel::expand(attr.into(), item.into()).into()
}

/// A number no other expansion of this macro in the same compilation gets:
/// `cuda_mem::shared_array!` puts it in the name of the array it declares,
/// so that two places stamped by one `macro_rules!` call (whose `line!()`
/// and `column!()` are the call's, the same for both) are two arrays. Not
/// for use outside cuda-mem.
#[doc(hidden)]
#[proc_macro]
pub fn __shared_place(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    if let Some(token) = input.into_iter().next() {
        return Error::new(token.span().into(), "`__shared_place!` takes no input")
            .into_compile_error()
            .into();
    }
    let place = NEXT.fetch_add(1, Ordering::Relaxed);
    proc_macro::TokenTree::Literal(proc_macro::Literal::u64_suffixed(place)).into()
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
                 the variants, or `#[derive(CheckedDeviceCopy)]` with `#[repr(u8)]` (its bits are \
                 checked on every read)",
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
    // `#[derive(Copy)]` bounds every type parameter with `Copy`, a
    // marker-only one (which needs no `DeviceCopy` bound) too: then require
    // the struct's own `Copy` (the supertrait) in the impls instead.
    let mut extra = Vec::new();
    let bounded = padding::params_needing_bound(&input.generics, fields);
    if input.generics.type_params().count() > bounded.len() {
        let ident = &input.ident;
        let (_, ty_generics, _) = input.generics.split_for_impl();
        let krate = &options.krate;
        extra.push((
            syn::parse_quote!(#ident #ty_generics),
            syn::parse_quote!(#krate::__private::core::marker::Copy),
        ));
    }
    let generics = generics::split(&input.generics, &extra, &mut errors);
    let plan = match padding::plan(&input.ident, &input.generics, fields, &repr) {
        Ok(plan) => Some(plan),
        Err(error) => {
            errors.push(error);
            None
        }
    };
    errors.into_result()?;
    let Some((plan, hints)) = plan else {
        return Ok(TokenStream::new());
    };
    Ok(generate(
        input,
        fields,
        &options.krate,
        generics,
        plan,
        &hints,
    ))
}

/// The one call of `__derive_device_copy!` that does the proving and emits
/// the impls. It passes the struct's name, its generics in pieces, the
/// field accessors (never the field types), the plan and the hints.
fn generate(
    input: &DeriveInput,
    fields: &syn::Fields,
    krate: &syn::Path,
    generics: TokenStream,
    plan: padding::Plan,
    hints: &[padding::Hint],
) -> TokenStream {
    let ident = &input.ident;
    let device_copy = padding::params_needing_bound(&input.generics, fields);
    let plan = syn::Ident::new(plan.name(), Span::call_site());
    let fields = fields
        .iter()
        .zip(hints)
        .enumerate()
        .map(|(i, (field, hint))| {
            // The accessor: the field's name, or its index spanned on its type.
            let accessor = match &field.ident {
                Some(name) => name.to_token_stream(),
                None => syn::Index {
                    index: i as u32,
                    span: field.ty.span(),
                }
                .to_token_stream(),
            };
            // The binding of the field in the exhaustive pattern, located on the
            // field's type, so that rustc reports a field that is not
            // `DeviceCopy` there. (A local of the never-called proof function:
            // no user tokens are resolved in its scope but the struct's name, in
            // the type namespace.)
            let binding = Ident::new(
                &format!("__cuda_mem_field{i}"),
                Span::call_site().located_at(field.ty.span()),
            );
            let hint = Ident::new(hint.name(), Span::call_site());
            quote!(#accessor => #binding : #hint)
        });
    quote! {
        #krate::__derive_device_copy! {
            @__cuda_mem_derive_device_copy
            struct #ident
            generics {
                #generics
                device_copy [#(#device_copy),*]
            }
            plan #plan
            fields [#(#fields),*]
        }
    }
}
