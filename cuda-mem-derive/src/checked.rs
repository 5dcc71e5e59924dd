//! `#[derive(CheckedDeviceCopy)]`: the bits and the two conversions of a
//! fieldless enum (its integer `repr`) or of a `#[repr(C)]` struct (a
//! `{Name}Bits` struct of its fields' bits, itself `#[derive(DeviceCopy)]`,
//! which proves it has no padding). The generated code is safe code only:
//! values are made by matching bits, never by reinterpreting memory, so
//! nothing a later macro does to the item can make it unsound (at worst it
//! no longer compiles).

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::ext::IdentExt;
use syn::{Attribute, Data, DataEnum, DataStruct, DeriveInput, Error, Fields};

use crate::{attr, repr, Errors};

/// The integer `repr`s an enum may have: its bits on the device.
const ENUM_REPRS: [&str; 4] = ["u8", "u16", "u32", "i32"];

/// The derive's expansion for `input`, or its errors.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let options = attr::parse_options(&input.attrs, &mut errors);
    if let Some(param) = input.generics.params.first() {
        errors.push(Error::new_spanned(
            param,
            "`CheckedDeviceCopy` cannot be derived for a generic type yet; write the two \
             conversions by hand (`impl CheckedDeviceCopy`), or derive it on a concrete type",
        ));
    }
    let tokens = match &input.data {
        Data::Enum(data) => enumeration(input, data, &options.krate, &mut errors),
        Data::Struct(data) => structure(input, data, &options.krate, &mut errors),
        Data::Union(data) => {
            errors.push(Error::new(
                data.union_token.span,
                "`CheckedDeviceCopy` cannot be derived for unions: which field holds a value \
                 is not in its bits; use a `#[repr(C)]` struct or a fieldless enum",
            ));
            None
        }
    };
    errors.into_result()?;
    Ok(tokens.unwrap_or_default())
}

/// The enum's integer `repr` (`u8`, `u16`, `u32` or `i32`), or the errors
/// that say what to write.
fn enum_repr(ident: &Ident, attrs: &[Attribute], errors: &mut Errors) -> Option<Ident> {
    let mut found: Option<Ident> = None;
    for attr in attrs.iter().filter(|attr| repr::is_repr(attr)) {
        let result = attr.parse_nested_meta(|meta| {
            let item = meta.path.get_ident().map(IdentExt::unraw);
            match item {
                Some(int) if ENUM_REPRS.iter().any(|r| int == r) => {
                    if found.is_some() {
                        return Err(meta.error("give one integer `repr`"));
                    }
                    found = Some(Ident::new(&int.to_string(), Span::call_site()));
                    Ok(())
                }
                _ => Err(meta.error(
                    "a `CheckedDeviceCopy` enum takes `#[repr(u8)]`, `#[repr(u16)]`, \
                     `#[repr(u32)]` or `#[repr(i32)]` alone: its bits on the device are that \
                     integer",
                )),
            }
        });
        if let Err(error) = result {
            errors.push(error);
            return None;
        }
    }
    if found.is_none() {
        errors.push(Error::new(
            ident.span(),
            format!(
                "`{ident}` needs `#[repr(u8)]` (or `u16`, `u32`, `i32`): without it the enum's \
                 layout is the compiler's choice, and its bits on the device have no type"
            ),
        ));
    }
    found
}

/// A fieldless enum with an integer `repr`: its bits are the discriminant.
fn enumeration(
    input: &DeriveInput,
    data: &DataEnum,
    krate: &syn::Path,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let ident = &input.ident;
    let repr = enum_repr(ident, &input.attrs, errors);
    if data.variants.is_empty() {
        errors.push(Error::new(
            ident.span(),
            format!("`{ident}` has no variants, so no bits are a value of it: give it one"),
        ));
    }
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            errors.push(Error::new_spanned(
                &variant.fields,
                "`CheckedDeviceCopy` enums are fieldless: a variant's fields are not in its \
                 discriminant; use a `#[repr(C)]` struct with an enum field for the kind",
            ));
        }
    }
    let repr = repr?;
    let int = quote!(#krate::__private::core::primitive::#repr);
    let variants = data.variants.iter().map(|variant| &variant.ident);
    let variants_again = variants.clone();
    Some(quote! {
        impl #krate::CheckedDeviceCopy for #ident {
            type Bits = #int;
            #[inline]
            fn into_bits(self) -> #int {
                self as #int
            }
            #[inline]
            fn try_from_bits(bits: #int) -> #krate::__private::core::option::Option<Self> {
                #(
                    if bits == #ident::#variants as #int {
                        return #krate::__private::core::option::Option::Some(#ident::#variants_again);
                    }
                )*
                #krate::__private::core::option::Option::None
            }
        }
    })
}

/// A `#[repr(C)]` struct: a `{Name}Bits` struct of its fields' bits (the
/// same `repr`), `DeviceCopy` by its own derive, and field-by-field
/// conversions.
fn structure(
    input: &DeriveInput,
    data: &DataStruct,
    krate: &syn::Path,
    errors: &mut Errors,
) -> Option<TokenStream> {
    let ident = &input.ident;
    let vis = &input.vis;
    let bits_ident = format_ident!("{}Bits", ident);
    if data.fields.is_empty() {
        errors.push(Error::new(
            ident.span(),
            format!("`{ident}` has no fields: it has no bits to store"),
        ));
        return None;
    }
    // The struct's own `repr` attributes, as they are: the bits struct has
    // the same layout rules (and `DeviceCopy`'s derive checks them).
    let reprs: Vec<&Attribute> = input
        .attrs
        .iter()
        .filter(|attr| repr::is_repr(attr))
        .collect();
    if reprs.is_empty() {
        errors.push(Error::new(
            ident.span(),
            format!(
                "`{ident}` needs `#[repr(C)]`: its bits struct `{bits_ident}` takes the same \
                 layout, field by field"
            ),
        ));
        return None;
    }
    let path = krate.to_token_stream().to_string().replace(' ', "");
    let named = matches!(data.fields, Fields::Named(_));
    let members: Vec<TokenStream> = data
        .fields
        .iter()
        .enumerate()
        .map(|(i, field)| match &field.ident {
            Some(name) => name.to_token_stream(),
            None => syn::Index::from(i).to_token_stream(),
        })
        .collect();
    let bits_fields = data.fields.iter().map(|field| {
        let (fvis, ty) = (&field.vis, &field.ty);
        let bits = quote!(<#ty as #krate::CheckedDeviceCopy>::Bits);
        match &field.ident {
            Some(name) => quote!(#fvis #name: #bits),
            None => quote!(#fvis #bits),
        }
    });
    let body = if named {
        quote!({ #(#bits_fields,)* })
    } else {
        quote!(( #(#bits_fields,)* );)
    };
    let tys: Vec<&syn::Type> = data.fields.iter().map(|field| &field.ty).collect();
    let doc = format!(
        "The bits of [`{ident}`] on the device (`#[derive(CheckedDeviceCopy)]`): each field's \
         `CheckedDeviceCopy::Bits`, in the same layout."
    );
    Some(quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, #krate::DeviceCopy)]
        #[device_copy(crate = #path)]
        #(#reprs)*
        #vis struct #bits_ident #body

        impl #krate::CheckedDeviceCopy for #ident {
            type Bits = #bits_ident;
            #[inline]
            fn into_bits(self) -> #bits_ident {
                #bits_ident {
                    #( #members: <#tys as #krate::CheckedDeviceCopy>::into_bits(self.#members), )*
                }
            }
            #[inline]
            fn try_from_bits(bits: #bits_ident) -> #krate::__private::core::option::Option<Self> {
                #krate::__private::core::option::Option::Some(#ident {
                    #( #members: <#tys as #krate::CheckedDeviceCopy>::try_from_bits(bits.#members)?, )*
                })
            }
        }
    })
}
