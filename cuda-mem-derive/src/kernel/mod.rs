//! `#[kernel]`: a Rust fn as a CUDA kernel with a type-checked host launcher.
//!
//! One expansion serves both targets, split by `cfg(target_arch = "nvptx64")`:
//!
//! * **nvptx64**: the user's fn (kept as written, `#[inline(always)]`), an
//!   item of a `const` block (so its body is in a safe context unless it is
//!   an `unsafe fn`), and cuda-mem's `__kernel_entry!`, which makes the
//!   entry point `extern "ptx-kernel" fn` exported as the kernel's name
//!   (taking each parameter in two parts, its address and the rest, so that
//!   slices reach the kernel as global pointers), the fingerprint static
//!   `__cuda_mem_sig_<name>: u64` and the parameter table
//!   `__cuda_mem_abi_<name>`, all from one list of parameters, and calls the
//!   kernel with them (an `unsafe fn` kernel through a type marked by an
//!   `unsafe impl` written here, never by the crate path's macros).
//! * **host**: the user's fn, never called, so that the host build type-checks
//!   the kernel body (`cargo check` reports kernel errors without a nightly),
//!   and, through `cuda_mem::__kernel_host!` (which drops its input without
//!   cuda-mem's `host` feature), a unit struct named like the kernel with the
//!   constants `NAME` and `SIGNATURE` and the method `launch`, whose body is
//!   cuda-mem's `__kernel_launch!`.
//!
//! The signature fingerprint is computed in const evaluation on both sides:
//! each parameter's `KernelParam::SIGNATURE` (spelled
//! `__param_signature::<fn(Type), _>()`, so that elided lifetimes need no
//! names), the kernel's safety, and a hash of its tokens ([`fingerprint`]).
//! What decides a launch, the PTX's fingerprint and parameter table and the
//! ones the launch checks them against, is computed inside cuda-mem's
//! `macro_rules!` macros with `$crate` paths, from the parameter list the
//! entry passes to the kernel on the device and from the very parameter
//! types pushed on the host; so is every `unsafe` of a launch. A `crate =
//! "..."` path only says where those macros are: a module that forwarded to
//! them with other parameters, another safety or another kernel's name does
//! not compile, and one that supplied its own would have to write the
//! `unsafe` itself (which `#![forbid(unsafe_code)]` rejects). The host's
//! `SIGNATURE` constant, spanned on the parameter types for the errors, is
//! informational.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Error, FnArg, GenericParam, ItemFn, LitStr, Path, ReturnType, Type};

use crate::Errors;

mod fingerprint;

#[cfg(test)]
mod output_tests;

/// The attribute's expansion, or its errors as `compile_error!`s (all of
/// them at once, each on the tokens it is about).
pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item) {
        Ok(function) => function,
        Err(_) => {
            return Error::new(
                Span::call_site(),
                "`#[kernel]` goes on a `fn` item: `#[kernel] pub fn name(params) { body }`",
            )
            .into_compile_error()
        }
    };
    match Kernel::parse(attr, &function) {
        Ok(kernel) => kernel.generate(&function),
        Err(error) => error.into_compile_error(),
    }
}

/// A validated kernel.
struct Kernel {
    /// Path to cuda-mem.
    krate: Path,
    /// The symbol name in the PTX (the fn's name without `r#`).
    symbol: String,
    is_unsafe: bool,
    /// The parameter types, in order.
    params: Vec<Type>,
    /// `for<'a, …>` over the fn's lifetime parameters, or nothing.
    binder: TokenStream,
    /// The fn's lifetime parameters, `'a, …` (for cuda-mem's macros, which
    /// make the binder themselves).
    lifetimes: TokenStream,
    /// Hash of the fn's tokens (signature and body).
    source: u64,
    /// The block shape of `#[kernel(block = [x, y, z])]`.
    block: Option<[u32; 3]>,
}

impl Kernel {
    fn parse(attr: TokenStream, function: &ItemFn) -> syn::Result<Self> {
        let mut errors = Errors::default();
        let (krate, block) = parse_options(attr, &mut errors);
        let sig = &function.sig;
        if let Some(constness) = &sig.constness {
            errors.push(Error::new(
                constness.span,
                "a kernel cannot be a `const fn`",
            ));
        }
        if let Some(asyncness) = &sig.asyncness {
            errors.push(Error::new(
                asyncness.span,
                "a kernel cannot be an `async fn`",
            ));
        }
        if let Some(abi) = &sig.abi {
            errors.push(Error::new_spanned(
                abi,
                "leave out the ABI: `#[kernel]` makes the `extern \"ptx-kernel\"` entry point itself",
            ));
        }
        for param in &sig.generics.params {
            match param {
                GenericParam::Lifetime(lifetime) if lifetime.bounds.is_empty() => {}
                GenericParam::Lifetime(lifetime) => errors.push(Error::new_spanned(
                    &lifetime.bounds,
                    "a kernel's lifetime parameters cannot have bounds",
                )),
                GenericParam::Type(_) | GenericParam::Const(_) => errors.push(Error::new_spanned(
                    param,
                    "a kernel cannot be generic: the PTX holds one entry point per kernel; \
                     write a kernel per type (a `macro_rules!` can stamp them out)",
                )),
            }
        }
        if let Some(where_clause) = &sig.generics.where_clause {
            errors.push(Error::new_spanned(
                where_clause,
                "a kernel cannot have a `where` clause",
            ));
        }
        if let Some(variadic) = &sig.variadic {
            errors.push(Error::new_spanned(variadic, "a kernel cannot be variadic"));
        }
        if let ReturnType::Type(_, ty) = &sig.output {
            let unit = matches!(&**ty, Type::Tuple(tuple) if tuple.elems.is_empty());
            if !unit {
                errors.push(Error::new_spanned(
                    ty,
                    "a kernel returns nothing: write its results into a `DeviceSliceMut` parameter",
                ));
            }
        }
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(receiver) => errors.push(Error::new_spanned(
                    receiver,
                    "a kernel is a free fn: it cannot take `self`",
                )),
                FnArg::Typed(typed) => {
                    check_param_type(&typed.ty, &mut errors);
                    params.push((*typed.ty).clone());
                }
            }
        }
        if let Some(extra) = sig.inputs.iter().nth(MAX_PARAMS) {
            errors.push(Error::new_spanned(
                extra,
                format!(
                    "a kernel takes at most {MAX_PARAMS} parameters (a launch's tuple of \
                     arguments, and the entry point's table, go that far); pass a struct \
                     (`#[derive(DeviceCopy)]`) or a slice of them instead"
                ),
            ));
        }
        errors.into_result()?;
        let lifetimes: Vec<_> = sig.generics.lifetimes().map(|l| &l.lifetime).collect();
        let binder = if lifetimes.is_empty() {
            TokenStream::new()
        } else {
            quote!(for<#(#lifetimes),*>)
        };
        let lifetimes = quote!(#(#lifetimes),*);
        let mut tokens = sig.to_token_stream();
        function.block.to_tokens(&mut tokens);
        Ok(Self {
            krate,
            symbol: sig.ident.unraw().to_string(),
            is_unsafe: sig.unsafety.is_some(),
            params,
            binder,
            lifetimes,
            source: fingerprint::of_tokens(tokens),
            block,
        })
    }

    /// `block [x, y, z],` for cuda-mem's macros, or nothing.
    fn block_option(&self) -> TokenStream {
        match self.block {
            Some(shape) => {
                let [x, y, z] = shape.map(proc_macro2::Literal::u32_unsuffixed);
                quote!(block [#x, #y, #z],)
            }
            None => TokenStream::new(),
        }
    }

    /// The source hash as a `u64` literal, for the fingerprint expressions.
    fn source_literal(&self) -> proc_macro2::Literal {
        proc_macro2::Literal::u64_suffixed(self.source)
    }

    /// `__kernel_signature(…)`: the fingerprint expression of the host's
    /// `SIGNATURE` constant, spanned on each parameter type so that a type
    /// that cannot be a parameter is reported there. (The launch computes
    /// its own, in cuda-mem's `__kernel_launch!`, from the parameters it
    /// pushes.)
    fn signature(&self) -> TokenStream {
        let krate = &self.krate;
        let binder = &self.binder;
        let is_unsafe = self.is_unsafe;
        let source = self.source_literal();
        // Spanned on each type, so that "`T` cannot be a kernel parameter"
        // points at the parameter.
        let params = self.params.iter().map(|ty| {
            quote_spanned! {ty.span()=>
                #krate::launch::__param_signature::<#binder fn(#ty), _>()
            }
        });
        quote! {
            #krate::launch::__kernel_signature(#is_unsafe, #source, &[#(#params),*])
        }
    }

    fn generate(&self, function: &ItemFn) -> TokenStream {
        let krate = &self.krate;
        let name = &function.sig.ident;
        let signature = self.signature();
        let (docs, others): (Vec<_>, Vec<_>) = function
            .attrs
            .iter()
            .partition(|attr| attr.path().is_ident("doc"));
        let cfgs: Vec<&syn::Attribute> = others
            .iter()
            .copied()
            .filter(|attr| attr.path().is_ident("cfg"))
            .collect();
        let sig = &function.sig;
        let block = &function.block;

        // The kernel fn itself (on the device; on the host its body is
        // `on_host`), an item of a `const` block, so its body is compiled in
        // a safe context unless the user wrote `unsafe fn`, whatever other
        // attribute macros do with its tokens; then cuda-mem's
        // `__kernel_entry!`, which makes the PTX entry point and the statics
        // the host checks from one list of parameters, and calls the kernel
        // with them, safely. An `unsafe fn` kernel is called through a safe
        // wrapper written here (never by a macro the crate path can supply:
        // no `unsafe` token reaches it), whose launch is `unsafe`.
        let (is_unsafe, source) = (self.is_unsafe, self.source_literal());
        let (lifetimes, params) = (&self.lifetimes, &self.params);
        let symbol = &self.symbol;
        let addresses: Vec<_> = (0..params.len())
            .map(|i| format_ident!("__cuda_mem_address{i}"))
            .collect();
        let rests: Vec<_> = (0..params.len())
            .map(|i| format_ident!("__cuda_mem_rest{i}"))
            .collect();
        let values: Vec<_> = (0..params.len())
            .map(|i| format_ident!("__cuda_mem_param{i}"))
            .collect();
        let block_option = self.block_option();
        let wrapper = format_ident!("__CudaMemUnsafeKernel");
        let unsafe_wrapper = |callee: TokenStream| {
            quote! {
                #[allow(non_camel_case_types)]
                struct #wrapper;

                // SAFETY: `__cuda_mem_run` runs this `unsafe fn` kernel,
                // whose entry point's parameter table says `unsafe`
                // (`unsafe_kernel true` below), so only an `unsafe` launch
                // reaches it.
                unsafe impl #krate::launch::__UnsafeKernel for #wrapper {}

                impl #wrapper {
                    #[inline(always)]
                    #[allow(clippy::all)]
                    unsafe fn __cuda_mem_run<#lifetimes>((#(#values,)*): (#(#params,)*)) {
                        // SAFETY: the caller's promise (the launch's): the
                        // kernel's preconditions hold.
                        unsafe { #callee(#(#values),*) }
                    }
                }
            }
        };
        let entry = |callee: TokenStream| {
            quote! {
                #krate::__kernel_entry! {
                    symbol #symbol,
                    unsafe_kernel #is_unsafe,
                    #block_option
                    source #source,
                    lifetimes [#lifetimes],
                    params [#(#addresses #rests: #params),*],
                    callee #callee,
                }
            }
        };
        let (device_wrapper, device_callee, host_wrapper, host_callee) = if self.is_unsafe {
            (
                unsafe_wrapper(quote!(#name)),
                quote!(#wrapper),
                unsafe_wrapper(quote!(#name::on_host)),
                quote!(#wrapper),
            )
        } else {
            (
                TokenStream::new(),
                quote!(#name),
                TokenStream::new(),
                quote!(#name::on_host),
            )
        };
        let (device_entry, host_entry) = (entry(device_callee), entry(host_callee));
        let device = quote! {
            #[cfg(target_arch = "nvptx64")]
            #(#cfgs)*
            const _: () = {
                #(#docs)*
                #[inline(always)]
                #(#others)*
                #sig #block

                #device_wrapper
                #device_entry
            };

            #[cfg(not(target_arch = "nvptx64"))]
            #(#cfgs)*
            const _: () = {
                #host_wrapper
                #host_entry
            };
        };

        let host = self.host_items(function, &docs, &others, &cfgs, &signature);
        let launcher = self.launcher(function);
        quote! {
            #device
            #host
            #[cfg(not(target_arch = "nvptx64"))]
            #(#cfgs)*
            #krate::__kernel_host! { #launcher }
        }
    }

    /// For the host: a unit struct named like the kernel, with the constants
    /// `NAME` and `SIGNATURE` and the kernel's body as `on_host` (so the host
    /// build type-checks it, and tests can run it in the one-thread model).
    fn host_items(
        &self,
        function: &ItemFn,
        docs: &[&syn::Attribute],
        others: &[&syn::Attribute],
        cfgs: &[&syn::Attribute],
        signature: &TokenStream,
    ) -> TokenStream {
        let krate = &self.krate;
        let core = quote!(#krate::__private::core);
        let name = &function.sig.ident;
        let vis = &function.vis;
        let symbol = &self.symbol;
        let n = self.params.len();
        let mut on_host = function.sig.clone();
        on_host.ident = syn::Ident::new("on_host", name.span());
        let block = &function.block;
        let struct_doc = format!(
            " The kernel `{symbol}` (`#[kernel]`): launch it with \
             [`{name}.launch(&MODULE, &stream, config, ({}))`](Self::launch).",
            self.param_names(function).join(", ") + if n == 1 { "," } else { "" }
        );
        let separator = (!docs.is_empty()).then(|| quote!(#[doc = ""]));
        let on_host_doc = [
            " Runs the kernel's body on the CPU, in the host model of",
            " `cuda_mem::device`: a grid of one thread (block and grid of size 1, a",
            " warp of one lane), so the thread's grid-stride loops visit every",
            " index. For unit tests of a kernel's logic; slice parameters come from",
            " their `from_raw_parts` over host memory.",
        ];
        let allow = quote!(#[allow(dead_code, clippy::all, clippy::pedantic)]);
        quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            #(#cfgs)*
            #(#docs)*
            #separator
            #[doc = #struct_doc]
            #[allow(non_camel_case_types, dead_code)]
            #vis struct #name;

            #[cfg(not(target_arch = "nvptx64"))]
            #(#cfgs)*
            const _: () = {
                impl #core::clone::Clone for #name {
                    fn clone(&self) -> Self {
                        *self
                    }
                }

                impl #core::marker::Copy for #name {}

                impl #core::fmt::Debug for #name {
                    fn fmt(&self, f: &mut #core::fmt::Formatter<'_>) -> #core::fmt::Result {
                        f.write_str(#symbol)
                    }
                }

                impl #name {
                    /// The kernel's name in the PTX.
                    #allow
                    pub const NAME: &'static str = #symbol;

                    /// The kernel's signature fingerprint: its parameters'
                    /// kinds and type layouts, its safety and its source
                    /// tokens. The PTX holds the same value, computed when it
                    /// was compiled.
                    #allow
                    pub const SIGNATURE: u64 = #signature;

                    #(#[doc = #on_host_doc])*
                    #allow
                    #(#others)*
                    pub #on_host #block
                }

                // Evaluated here, so that a parameter type the PTX cannot
                // take fails the build at the kernel, not at a launch.
                const _: u64 = #name::SIGNATURE;
            };
        }
    }

    /// The host launcher: `launch`, for cuda-mem's `host` feature.
    fn launcher(&self, function: &ItemFn) -> TokenStream {
        let krate = &self.krate;
        let core = quote!(#krate::__private::core);
        let name = &function.sig.ident;
        let unsafety = &function.sig.unsafety;
        let binder = &self.binder;
        let n = self.params.len();
        // Named on each parameter's type, like the bounds below, so that
        // rustc points "required by this bound" at the kernel's parameter.
        let args: Vec<_> = (self.params.iter().enumerate())
            .map(|(i, ty)| format_ident!("__CudaMemArg{i}", span = ty.span()))
            .collect();
        let params: Vec<_> = (self.params.iter().enumerate())
            .map(|(i, ty)| format_ident!("__CudaMemParam{i}", span = ty.span()))
            .collect();
        let values: Vec<_> = (0..n).map(|i| format_ident!("__cuda_mem_arg{i}")).collect();
        let bounds = self
            .params
            .iter()
            .zip(&args)
            .zip(&params)
            .map(|((ty, a), p)| {
                // `(for<'a> fn(T<'a>))`: parenthesised, or the binder would bind
                // the whole predicate instead of making the fn pointer generic.
                let fn_type = if binder.is_empty() {
                    quote_spanned!(ty.span()=> fn(#ty))
                } else {
                    quote_spanned!(ty.span()=> (#binder fn(#ty)))
                };
                // Spanned on the parameter's type, every token (a span mixing
                // contexts would fall back to the attribute): "required by this
                // bound" points at the kernel's parameter.
                respan(
                    quote! {
                        #fn_type: #core::ops::Fn(#p),
                        #a: #krate::LaunchArg<#p>,
                        #p: #krate::KernelParam,
                    },
                    ty.span(),
                )
            });
        // The body is cuda-mem's: the fingerprint of the parameters pushed,
        // their claims and the launch, every `unsafe` of it, come from its
        // `__kernel_launch!` (see there).
        let (is_unsafe, source) = (self.is_unsafe, self.source_literal());
        let block_option = self.block_option();
        // `max_occupancy` of a kernel with a declared block: that block's size.
        let best_block = match self.block {
            Some([x, y, z]) => {
                let size = proc_macro2::Literal::u32_suffixed(x * y * z);
                quote!(#core::option::Option::Some(#size))
            }
            None => quote!(#core::option::Option::None),
        };
        let body = quote! {
            #krate::__kernel_launch! {
                module module,
                stream stream,
                config config,
                name Self::NAME,
                unsafe_kernel #is_unsafe,
                #block_option
                source #source,
                args args [#(#values: #args => #params),*]
            }
        };
        let launch_doc = self.launch_doc(function);
        let check_doc = [
            " Loads `module` into `ctx` (once per context) and checks that its PTX",
            " has this kernel with this [`SIGNATURE`](Self::SIGNATURE), as the",
            " kernel's first launch in a context does: to report a stale PTX at",
            " start-up, or to keep the loading out of a timed section.",
            "",
            " # Errors",
            "",
            " `Err(KernelMismatch)` as for `launch`, and the driver's errors of",
            " loading the module.",
        ];
        quote! {
            impl #name {
                #(#[doc = #check_doc])*
                pub fn check(
                    &self,
                    module: &'static #krate::Module,
                    ctx: &#krate::launch::__Arc<#krate::CudaContext>,
                ) -> #krate::Result<()> {
                    module.__check(Self::NAME, Self::SIGNATURE, ctx)
                }

                /// The kernel's occupancy in `ctx` with blocks of
                /// `block_size` threads and `dynamic_shared` bytes of dynamic
                /// shared memory per block: how many blocks run at once on a
                /// multiprocessor (`cuOccupancyMaxActiveBlocksPerMultiprocessor`),
                /// and from it a grid of whole waves
                /// (`occupancy.waves(1)`) or one sized for a grid-stride loop
                /// (`occupancy.for_elements(n)`). Checks the module as
                /// [`check`](Self::check) does.
                ///
                /// # Errors
                ///
                /// As for `check`, and `InvalidArgument` for a block size
                /// or an amount of shared memory the kernel cannot run with.
                pub fn occupancy(
                    &self,
                    module: &'static #krate::Module,
                    ctx: &#krate::launch::__Arc<#krate::CudaContext>,
                    block_size: u32,
                    dynamic_shared: u32,
                ) -> #krate::Result<#krate::Occupancy> {
                    module.__occupancy(Self::NAME, Self::SIGNATURE, ctx, #core::option::Option::Some(block_size), dynamic_shared)
                }

                /// [`occupancy`](Self::occupancy) with the block size the
                /// driver finds best for this kernel
                /// (`cuOccupancyMaxPotentialBlockSize`: the most threads
                /// resident per multiprocessor), or, for a kernel declared
                /// with `#[kernel(block = [x, y, z])]`, that block's size
                /// (`x * y * z`; a grid from it is 1D, so write the
                /// `block_dim` of such a launch yourself).
                ///
                /// # Errors
                ///
                /// As for `occupancy`.
                pub fn max_occupancy(
                    &self,
                    module: &'static #krate::Module,
                    ctx: &#krate::launch::__Arc<#krate::CudaContext>,
                    dynamic_shared: u32,
                ) -> #krate::Result<#krate::Occupancy> {
                    module.__occupancy(Self::NAME, Self::SIGNATURE, ctx, #best_block, dynamic_shared)
                }

                #(#[doc = #launch_doc])*
                pub #unsafety fn launch<#(#args, #params),*>(
                    &self,
                    module: &'static #krate::Module,
                    stream: &impl #krate::AsStream,
                    config: #krate::LaunchConfig,
                    args: (#(#args,)*),
                ) -> #krate::Result<()>
                where
                    #(#bounds)*
                {
                    #body
                }
            }
        }
    }

    /// The parameters' patterns as text (`data`, `factor`).
    fn param_names(&self, function: &ItemFn) -> Vec<String> {
        function
            .sig
            .inputs
            .iter()
            .map(|input| match input {
                FnArg::Typed(typed) => match &*typed.pat {
                    syn::Pat::Ident(ident) => ident.ident.unraw().to_string(),
                    pattern => tidy(&pattern.to_token_stream().to_string()),
                },
                FnArg::Receiver(_) => "self".into(),
            })
            .collect()
    }

    /// The lines of `launch`'s documentation.
    fn launch_doc(&self, function: &ItemFn) -> Vec<String> {
        let symbol = &self.symbol;
        let mut lines = vec![
            format!(" Queues the kernel `{symbol}` on `stream`, with the grid, block and dynamic"),
            " shared memory of `config`.".into(),
            String::new(),
            " `args` are the kernel's arguments, one tuple in parameter order:".into(),
            String::new(),
        ];
        if self.params.is_empty() {
            lines.push(" - none: pass `()`".into());
        }
        for (name, ty) in self.param_names(function).iter().zip(&self.params) {
            let ty = tidy(&ty.to_token_stream().to_string());
            lines.push(format!(" - `{name}`: `{ty}`"));
        }
        lines.extend([
            String::new(),
            " A `DeviceSlice<T>` parameter takes `&` a buffer or view of `T`s, a".into(),
            " `DeviceSliceMut<T>` parameter `&mut` a buffer or an exclusive view, and".into(),
            " any other parameter a value of its type (the trait `LaunchArg`).".into(),
            String::new(),
            " Buffers and views are ordered on `stream` like `kernel_arg` /".into(),
            " `kernel_arg_mut`: the kernel runs after earlier work on them, and later".into(),
            " work, host access and their free wait for it; they are borrowed for".into(),
            " this call only.".into(),
            String::new(),
            " # Errors".into(),
            String::new(),
            " `Err(KernelMismatch)` naming the kernel when the module's PTX lacks it or".into(),
            " its signature fingerprint differs from [`SIGNATURE`](Self::SIGNATURE)".into(),
            " (checked at the first launch in each context; nothing is launched), and".into(),
            " the driver's errors (a stream of another context, a configuration the".into(),
            " kernel cannot run with).".into(),
        ]);
        if self.is_unsafe {
            lines.extend([
                String::new(),
                " # Safety".into(),
                String::new(),
                " The kernel is an `unsafe fn`: the caller upholds its preconditions (its".into(),
                " `# Safety` section) for these arguments and this configuration.".into(),
            ]);
        }
        lines
    }
}

/// Token text with the spaces `to_string` puts around `<`, `>`, `,`, `::`,
/// `&` and `'` removed where Rust style has none.
fn tidy(text: &str) -> String {
    let mut out = text.to_string();
    for (from, to) in [
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        (" ,", ","),
        (" :: ", "::"),
        (":: ", "::"),
        ("& ", "&"),
        ("' ", "'"),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
    ] {
        out = out.replace(from, to);
    }
    out
}

/// `tokens` with every span (recursively) set to `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
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

/// The most parameters a kernel takes: cuda-mem's launches and entry points
/// are implemented for tuples of up to this many (`KernelParams`,
/// `__EntryBody`).
const MAX_PARAMS: usize = 24;

/// Rejects parameter types that cannot be named from the host launcher:
/// `impl Trait` (a generic), `Self`, inferred types and macros.
fn check_param_type(ty: &Type, errors: &mut Errors) {
    struct Check<'e> {
        errors: &'e mut Errors,
    }
    impl<'ast> Visit<'ast> for Check<'_> {
        fn visit_type(&mut self, ty: &'ast Type) {
            match ty {
                Type::ImplTrait(_) => self.errors.push(Error::new_spanned(
                    ty,
                    "a kernel parameter cannot be `impl Trait`: a kernel cannot be generic",
                )),
                Type::Infer(_) => self
                    .errors
                    .push(Error::new_spanned(ty, "write the parameter's type out")),
                Type::Macro(_) => self.errors.push(Error::new_spanned(
                    ty,
                    "a kernel parameter's type cannot be a macro call; use a type alias",
                )),
                _ => syn::visit::visit_type(self, ty),
            }
        }
        fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
            if ident == "Self" {
                self.errors.push(Error::new(
                    ident.span(),
                    "`Self` has no meaning in a kernel's parameters: a kernel is a free fn",
                ));
            }
        }
    }
    Check { errors }.visit_type(ty);
    // The parameter types go to the crate path's macros; an `unsafe` keyword
    // among them (an `unsafe fn` pointer type, a block in an array length)
    // is one a forwarding module could take out and put before a block of
    // its own, which `forbid(unsafe_code)` would not see: none may pass.
    if let Some(span) = find_unsafe(ty.to_token_stream()) {
        errors.push(Error::new(
            span,
            "a kernel parameter's type cannot contain `unsafe`; use a type alias",
        ));
    }
}

/// The span of the first `unsafe` keyword in `tokens`, at any depth.
fn find_unsafe(tokens: TokenStream) -> Option<Span> {
    tokens.into_iter().find_map(|token| match token {
        proc_macro2::TokenTree::Ident(ident) if ident == "unsafe" => Some(ident.span()),
        proc_macro2::TokenTree::Group(group) => find_unsafe(group.stream()),
        _ => None,
    })
}

/// Reads `#[kernel]`, `#[kernel(crate = "path")]` and `#[kernel(block =
/// [x, y, z])]` (`y` and `z` may be left out: 1).
fn parse_options(attr: TokenStream, errors: &mut Errors) -> (Path, Option<[u32; 3]>) {
    let mut krate: Option<Path> = None;
    let mut block: Option<[u32; 3]> = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let lit: LitStr = meta.value()?.parse().map_err(|_| {
                meta.error("expected `crate = \"path::to::cuda_mem\"` (a string literal)")
            })?;
            if krate.is_some() {
                return Err(meta.error("`crate` is given more than once; keep one"));
            }
            krate = Some(crate::attr::parse_crate_path(&lit)?);
            Ok(())
        } else if meta.path.is_ident("block") {
            if block.is_some() {
                return Err(meta.error("`block` is given more than once; keep one"));
            }
            block = Some(parse_block(meta.value()?)?);
            Ok(())
        } else {
            Err(meta.error(
                "unknown `kernel` option; the options are `crate = \"path::to::cuda_mem\"` \
                 and `block = [x, y, z]`",
            ))
        }
    });
    if let Err(error) = syn::parse::Parser::parse2(parser, attr) {
        errors.push(error);
    }
    (
        krate.unwrap_or_else(|| syn::parse_quote!(::cuda_mem)),
        block,
    )
}

/// `[x, y, z]` of `block = [x, y, z]`: one to three integer literals, a
/// shape CUDA can launch (each at least 1, `z` at most 64, at most 1024
/// threads in all).
fn parse_block(input: syn::parse::ParseStream<'_>) -> syn::Result<[u32; 3]> {
    let expected = "expected `block = [x, y, z]`: the block shape, one to three integer \
                    literals (`[256]`, `[32, 8]`, `[8, 8, 4]`)";
    let array: syn::ExprArray = input.parse().map_err(|e| Error::new(e.span(), expected))?;
    if array.elems.is_empty() || array.elems.len() > 3 {
        return Err(Error::new_spanned(&array, expected));
    }
    let mut shape = [1u32; 3];
    for (slot, elem) in shape.iter_mut().zip(&array.elems) {
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(int),
            ..
        }) = elem
        else {
            return Err(Error::new_spanned(elem, expected));
        };
        *slot = int
            .base10_parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| Error::new_spanned(elem, "a block size is at least 1"))?;
    }
    let threads = shape.iter().map(|&n| u64::from(n)).product::<u64>();
    if shape[2] > 64 || threads > 1024 {
        return Err(Error::new_spanned(
            &array,
            format!(
                "a block has at most 1024 threads, and at most 64 along `z`; this one has {} x {} x {}",
                shape[0], shape[1], shape[2]
            ),
        ));
    }
    Ok(shape)
}
