//! `#[derive(DeviceSoA)]`: the field table of a `#[repr(C)]` struct of
//! named fields, `{Name}Fields<Fam>` (one handle per field, of any field
//! family), the two generic functions that make and visit them, and the
//! `{Name}SoA` alias of its device `SoaBuffer` (host builds only, through
//! `cuda_mem::__soa_alias!`). The `unsafe impl` itself, and the table read
//! off the struct's own fields, come from cuda-mem's `__device_soa_impl!`
//! (through `$crate`: a `crate = "..."` path only locates it), which names
//! no field type, so none is expanded twice.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Data, DeriveInput, Error, Fields};

use crate::{attr, repr, Errors};

/// The derive's expansion for `input`, or its errors.
pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let options = attr::parse_options(&input.attrs, &mut errors);
    let krate = &options.krate;
    let ident = &input.ident;
    if let Some(param) = input.generics.params.first() {
        errors.push(Error::new_spanned(
            param,
            "`DeviceSoA` cannot be derived for a generic struct yet; derive it on a concrete one",
        ));
    }
    if !input.attrs.iter().any(repr::is_repr) {
        errors.push(Error::new(
            ident.span(),
            format!("`{ident}` needs `#[repr(C)]` (and `DeviceCopy`): its fields are split by their offsets"),
        ));
    }
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) if !named.named.is_empty() => Some(&named.named),
            Fields::Named(_) | Fields::Unit => {
                errors.push(Error::new(
                    ident.span(),
                    format!("`{ident}` has no fields: there are no arrays to keep"),
                ));
                None
            }
            Fields::Unnamed(unnamed) => {
                errors.push(Error::new_spanned(
                    unnamed,
                    "`DeviceSoA` needs named fields: each becomes a field of `{Name}Fields`",
                ));
                None
            }
        },
        Data::Enum(data) => {
            errors.push(Error::new(
                data.enum_token.span,
                "`DeviceSoA` is for `#[repr(C)]` structs of named fields, not enums",
            ));
            None
        }
        Data::Union(data) => {
            errors.push(Error::new(
                data.union_token.span,
                "`DeviceSoA` is for `#[repr(C)]` structs of named fields, not unions",
            ));
            None
        }
    };
    errors.into_result()?;
    let Some(fields) = fields else {
        return Ok(TokenStream::new());
    };
    let vis = &input.vis;
    let fields_ident = format_ident!("{}Fields", ident);
    let soa_ident = format_ident!("{}SoA", ident);
    let names: Vec<_> = fields.iter().filter_map(|f| f.ident.as_ref()).collect();
    let tys: Vec<_> = fields.iter().map(|f| &f.ty).collect();
    let fvis: Vec<_> = fields.iter().map(|f| &f.vis).collect();
    let index: Vec<usize> = (0..names.len()).collect();
    let slice_ident = format_ident!("{}Slice", ident);
    let slice_mut_ident = format_ident!("{}SliceMut", ident);
    let slice_doc = format!(
        "A structure of arrays of [`{ident}`] as a kernel parameter the kernel reads \
         (`#[derive(DeviceSoA)]`): `get(i)` gives struct `i`, `fields()` each field's array."
    );
    let slice_mut_doc = format!(
        "A structure of arrays of [`{ident}`] as a kernel parameter each thread writes its own \
         structs of (`#[derive(DeviceSoA)]`), as with `DeviceSliceMut`."
    );
    let fields_doc = format!(
        "One handle per field of [`{ident}`] (`#[derive(DeviceSoA)]`): with \
         `cuda_mem::soa::Views` each field's array as a `View` (`SoaBuffer::fields`), with \
         `ViewsMut` as a `ViewMut` (`fields_mut`)."
    );
    Ok(quote! {
        #krate::__device_soa_impl!(#ident, #fields_ident, [#(#names #index),*]);

        #[doc = #slice_doc]
        #vis type #slice_ident<'a> = #krate::soa::SoaSlice<'a, #ident>;
        #[doc = #slice_mut_doc]
        #vis type #slice_mut_ident<'a> = #krate::soa::SoaSliceMut<'a, #ident>;

        #[doc = #fields_doc]
        #vis struct #fields_ident<Fam: #krate::soa::FieldFamily> {
            #( #[allow(missing_docs)] #fvis #names: <Fam as #krate::soa::FieldFamily>::Of<#tys>, )*
        }

        #krate::__soa_alias!(#vis #soa_ident = #ident);
    })
}
