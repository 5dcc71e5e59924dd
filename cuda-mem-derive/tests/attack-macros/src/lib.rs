//! Attribute macros that rewrite a struct *after* `#[derive(DeviceCopy)]` has
//! read its tokens (an attribute placed below the derive runs later). The
//! derive's compile-fail tests use them to check that the proof is made on
//! the real, expanded struct. Each is ordinary safe code.
#![forbid(unsafe_code)]

use proc_macro::TokenStream;
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{parse_macro_input, Fields, ItemStruct, Meta, Token, Type};

/// `#[retype(field = Type, ...)]`: replaces the type of each named field.
///
/// ```ignore
/// #[derive(DeviceCopy)]
/// #[retype(flag = bool)]
/// #[repr(C)]
/// struct Flags { value: u8, flag: u8 } // the real struct has `flag: bool`
/// ```
#[proc_macro_attribute]
pub fn retype(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = parse_macro_input!(item as ItemStruct);
    let args = match Punctuated::<Meta, Token![,]>::parse_terminated.parse(args) {
        Ok(args) => args,
        Err(error) => return error.into_compile_error().into(),
    };
    for arg in args {
        let Meta::NameValue(pair) = arg else {
            return syn::Error::new_spanned(arg, "expected `field = Type`")
                .into_compile_error()
                .into();
        };
        let ty: Type = match syn::parse2(pair.value.to_token_stream()) {
            Ok(ty) => ty,
            Err(error) => return error.into_compile_error().into(),
        };
        let (Fields::Named(fields), Some(name)) = (&mut item.fields, pair.path.get_ident()) else {
            return syn::Error::new_spanned(pair.path, "expected a named field")
                .into_compile_error()
                .into();
        };
        for field in &mut fields.named {
            if field.ident.as_ref() == Some(name) {
                field.ty = ty.clone();
            }
        }
    }
    item.into_token_stream().into()
}

/// `#[add_field(name: Type)]`: appends a field.
#[proc_macro_attribute]
pub fn add_field(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = parse_macro_input!(item as ItemStruct);
    let field = match syn::Field::parse_named.parse(args) {
        Ok(field) => field,
        Err(error) => return error.into_compile_error().into(),
    };
    if let Fields::Named(fields) = &mut item.fields {
        fields.named.push(field);
    }
    item.into_token_stream().into()
}

/// `#[set_repr(C, align(8))]`: replaces every `#[repr(...)]` of the struct.
#[proc_macro_attribute]
pub fn set_repr(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item = parse_macro_input!(item as ItemStruct);
    item.attrs.retain(|attr| !attr.path().is_ident("repr"));
    let args = proc_macro2::TokenStream::from(args);
    item.attrs.push(syn::parse_quote!(#[repr(#args)]));
    item.into_token_stream().into()
}

/// `#[hoist_body]` on a fn: keeps an empty fn of the same signature and
/// moves the body out, after `let` bindings of the parameters (each its
/// type's `Default`), so that the body's statements become statements of
/// the block the fn sits in. Used on the nvptx side (where `#[kernel]` puts
/// the kernel fn in a block) to check that a kernel body is compiled in a
/// safe context whatever an attribute does with its tokens.
///
/// ```ignore
/// #[cuda_mem::kernel]
/// #[hoist_body]
/// fn k(address: u64) { let p = address as *mut u32; *p = 7; } // must not compile
/// ```
#[proc_macro_attribute]
pub fn hoist_body(_args: TokenStream, item: TokenStream) -> TokenStream {
    let mut function = parse_macro_input!(item as syn::ItemFn);
    let body = std::mem::replace(&mut *function.block, syn::parse_quote!({}));
    let lets = function.sig.inputs.iter().filter_map(|input| match input {
        syn::FnArg::Typed(typed) => {
            let (pat, ty) = (&typed.pat, &typed.ty);
            Some(quote::quote!(let #pat: #ty = ::core::default::Default::default();))
        }
        syn::FnArg::Receiver(_) => None,
    });
    let statements = &body.stmts;
    quote::quote!(#function #(#lets)* #(#statements)*).into()
}

/// `changes!(first, later)`: expands to `first` the first time it is
/// expanded with these tokens in a compilation, and to `later` every time
/// after (`changes!(first, later, n)`: `first` the first `n` times) (a counter in the macro's process: safe code). An exported macro
/// that pastes a caller's tokens in two places expands such a call twice,
/// so the two places can disagree; used to check that a declaration and
/// the type that indexes it come from one expansion.
///
/// ```ignore
/// let a = cuda_mem::shared_array![u32; attack_macros::changes!(1, 1024)];
/// ```
#[proc_macro]
pub fn changes(input: TokenStream) -> TokenStream {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static SEEN: Mutex<Option<HashMap<String, usize>>> = Mutex::new(None);
    let args = match Punctuated::<syn::Expr, Token![,]>::parse_terminated.parse(input.clone()) {
        Ok(args) if args.len() == 2 || args.len() == 3 => args,
        _ => {
            return syn::Error::new(
                proc_macro2::Span::call_site(),
                "expected `first, later` or `first, later, how many firsts`",
            )
            .into_compile_error()
            .into()
        }
    };
    let firsts = match args.get(2) {
        Some(syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        })) => n.base10_parse::<usize>().unwrap_or(1),
        _ => 1,
    };
    let key = input.to_string();
    let mut seen = SEEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let count = seen
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_insert(0);
    *count += 1;
    let pick = if *count <= firsts { &args[0] } else { &args[1] };
    pick.to_token_stream().into()
}

/// `include_str!(...)` that ignores its arguments and expands to the text
/// `"forged"`. With `extern crate attack_macros as core;` at a crate's root,
/// `::core::include_str!` in an exported macro of another crate, expanded
/// in that crate, is this one (the crate's extern prelude decides what
/// `::core` is). Safe code: the output is a string literal.
#[proc_macro]
pub fn include_str(_input: TokenStream) -> TokenStream {
    quote::quote!("forged").into()
}

/// `assert!(...)` that checks nothing (expands to `()`), for the same use
/// as [`include_str!`](macro@include_str).
#[proc_macro]
pub fn assert(_input: TokenStream) -> TokenStream {
    quote::quote!(()).into()
}
