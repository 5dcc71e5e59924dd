//! The macro that `#[derive(DeviceCopy)]` expands to: all of the proving and
//! every impl.
//!
//! The derive (a proc macro) only reads tokens: it checks what is syntactic
//! (struct, `repr`, field syntax), picks a layout plan, and emits one call of
//! [`__derive_device_copy!`](crate::__derive_device_copy) through the crate
//! path. The call passes the struct's name, its generics taken apart into
//! lifetimes, idents, types and paths, the field *accessors* (names or tuple
//! indices, never the field types) and the plan. This macro then proves, with
//! `$crate::…` paths only, on the real struct as rustc sees it after every
//! other macro ran, and emits the impls.
//!
//! Why a `macro_rules!` macro: `$crate` is the only path that user code can
//! neither shadow nor redirect. A `crate = "..."` path names where cuda-mem
//! is, so where this macro is found; a module that supplies its own macro of
//! this name would have to write `unsafe impl` itself, which
//! `#![forbid(unsafe_code)]` rejects (a local `macro_rules!` is linted).
//!
//! Why the generics come in pieces: a `tt` sequence spliced into an impl
//! header could close the impl early and smuggle in an item that ends with
//! this macro's tokens, which `#![forbid(unsafe_code)]` would not see. Every
//! input here is a parsed fragment (`ident`, `lifetime`, `ty`, `path`) or a
//! single token tree in a position where a group cannot parse, so a direct
//! call can only fail to compile or prove what it claims.

/// Proves that a struct is `DeviceCopy` and implements it (with bytemuck's
/// `Zeroable`, and `Pod` for a non-generic struct, and cudarc's `DeviceRepr`
/// and `ValidAsZeroBits` on host builds). Emitted by `#[derive(DeviceCopy)]`;
/// not for direct use.
///
/// Whatever the input, the impls only exist if the proof holds:
///
/// * for every plan, the function [`DeriveProof::proof`] destructures the real
///   struct with an exhaustive pattern of the given fields (no `..`) and
///   requires every field to be `DeviceCopy`;
/// * `exact` (no type or const parameters): the padding, alignment and field
///   order of the real layout, in a constant (`cargo check` sees it);
/// * `transparent`, `packed` and `homogeneous` (generic structs only: they
///   require type or const arguments) rely on the `repr` the derive read, and
///   `homogeneous` unifies the element types of the real fields. Their
///   `__LAYOUT` re-checks the real layout for every instantiation that
///   cuda-mem's buffers and byte views touch.
///
/// [`DeriveProof::proof`]: crate::__private::DeriveProof::proof
///
/// ```
/// // What `#[derive(DeviceCopy)]` on `#[repr(C)] struct Pair { a: u32, b: f32 }` expands to.
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Pair { a: u32, b: f32 }
/// cuda_mem::__derive_device_copy! {
///     @__cuda_mem_derive_device_copy
///     struct Pair
///     generics {
///         lifetimes [] types [] consts [] args [] outlives [] bounds [] device_copy []
///     }
///     plan exact
///     fields [a => __field0: field, b => __field1: field]
/// }
/// fn is_device_copy<T: cuda_mem::DeviceCopy + bytemuck::Pod>() {}
/// is_device_copy::<Pair>();
/// ```
///
/// ```compile_fail,E0277
/// // A padded struct: 3 bytes after `a`.
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// struct Padded { a: u8, b: u32 }
/// cuda_mem::__derive_device_copy! {
///     @__cuda_mem_derive_device_copy
///     struct Padded
///     generics {
///         lifetimes [] types [] consts [] args [] outlives [] bounds [] device_copy []
///     }
///     plan exact
///     fields [a => __field0: field, b => __field1: field]
/// }
/// ```
///
/// The generic plans take the `repr` on trust (it cannot be observed on a
/// generic struct before monomorphization). A call that lies about it gets
/// its impls, but no instantiation with padding gets past cuda-mem's
/// buffers and byte views (`__LAYOUT` measures the real layout):
///
/// ```compile_fail,E0080
/// #[derive(Clone, Copy)]
/// #[repr(C, align(8))] // not `transparent`: `W<u8>` has 7 bytes of padding
/// struct W<T>(T);
/// cuda_mem::__derive_device_copy! {
///     @__cuda_mem_derive_device_copy
///     struct W
///     generics {
///         lifetimes [] types [T] consts [] args [T] outlives [] bounds [] device_copy [T]
///     }
///     plan transparent
///     fields [0 => __field0: field]
/// }
/// const { cuda_mem::__private::check_element::<W<u64>>() }; // fine: no padding
/// const { cuda_mem::__private::check_element::<W<u8>>() }; // error
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __derive_device_copy {
    (
        @__cuda_mem_derive_device_copy
        struct $name:ident
        generics {
            lifetimes [$($lt:lifetime),*]
            types [$($tp:ident),*]
            consts [$($cp:ident : $cty:ty),*]
            args [$($arg:ident),*]
            outlives [$($ol:lifetime : [$($olb:lifetime),+]),*]
            bounds [$($bty:ty : {
                lifetimes [$($bl:lifetime),*]
                maybe [$($bm:path),*]
                traits [$($bt:path),*]
                higher_ranked [$([$($bhl:lifetime),*] $bht:path),*]
            }),*]
            device_copy [$($dc:ident),*]
        }
        plan $plan:ident
        fields [$($f:tt => $b:ident : $hint:ident),+]
    ) => {
        #[allow(
            dead_code,
            non_camel_case_types,
            non_snake_case,
            unused_qualifications,
            private_bounds,
            private_interfaces,
            clippy::all,
            clippy::pedantic
        )]
        const _: () = {
            $crate::__derive_device_copy! { @layout $plan $name [$($arg),*] [$($f),+] }

            #[automatically_derived]
            impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::__private::DeriveProof
                for $name<$($lt,)* $($arg),*>
            where
                $($ol: $($olb +)*,)*
                $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
                $($dc: $crate::DeviceCopy,)*
            {
                #[inline(always)]
                fn proof(self) {
                    let $name { $($f: $b),+ } = self;
                    $($crate::__private::assert_device_copy($b);)+
                    $crate::__derive_device_copy! { @elements $plan [$($b : $hint),+] }
                }
            }

            #[doc = " SAFETY: `DeriveProof::proof` above type-checks only if the struct has exactly \
                     these fields and each is `DeviceCopy` (every bit pattern valid, no host \
                     pointers); the layout plan proved (non-generic: exactly, from the real \
                     layout) or the `repr` rules out padding and an alignment over 256, and \
                     `__LAYOUT` re-checks the real layout of every instantiation cuda-mem uses."]
            #[automatically_derived]
            // SAFETY: see the `#[doc]` above (the proof is this expansion).
            unsafe impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::DeviceCopy
                for $name<$($lt,)* $($arg),*>
            where
                $($ol: $($olb +)*,)*
                $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
                $($dc: $crate::DeviceCopy,)*
            {
                const __LAYOUT: u64 = $crate::__private::layout::StructLayout::new(
                    $crate::__private::core::mem::size_of::<Self>(),
                    $crate::__private::core::mem::align_of::<Self>(),
                )
                $(.field(
                    $crate::__private::core::stringify!($f),
                    $crate::__private::core::mem::offset_of!(Self, $f),
                    $crate::__private::size_of_field(|__cuda_mem_s: Self| __cuda_mem_s.$f),
                    $crate::__private::layout_of_field(|__cuda_mem_s: Self| __cuda_mem_s.$f),
                ))+
                .finish();
            }

            #[doc = " SAFETY: a `DeviceCopy` type is valid for every bit pattern, all zeros included."]
            #[automatically_derived]
            // SAFETY: see the `#[doc]` above (the proof is this expansion).
            unsafe impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::__private::bytemuck::Zeroable
                for $name<$($lt,)* $($arg),*>
            where
                $($ol: $($olb +)*,)*
                $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
                $name<$($lt,)* $($arg),*>: $crate::DeviceCopy,
            {
            }

            // `Pod` only where the layout was proved for the struct itself
            // (the exact plan): bytemuck reads a value's bytes without
            // `__LAYOUT`, so a generic plan, whose `repr` is taken on trust,
            // cannot promise no padding for every instantiation.
            $crate::__derive_device_copy! { @pod $plan {
            #[doc = " SAFETY: `DeviceCopy` is `Pod` without the `'static` bound: `Copy`, no padding, \
                     every bit pattern valid, `repr(C)` or `repr(transparent)`; this struct's layout \
                     was proved exactly (a non-generic struct)."]
            #[automatically_derived]
            // SAFETY: see the `#[doc]` above (the proof is this expansion).
            unsafe impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::__private::bytemuck::Pod
                for $name<$($lt,)* $($arg),*>
            where
                $($ol: $($olb +)*,)*
                $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
                $name<$($lt,)* $($arg),*>: $crate::DeviceCopy + 'static,
            {
            }
            } }

            $crate::__device_copy_host_impls! {
                struct $name
                generics {
                    lifetimes [$($lt),*]
                    types [$($tp),*]
                    consts [$($cp : $cty),*]
                    args [$($arg),*]
                    outlives [$($ol : [$($olb),+]),*]
                    bounds [$($bty : {
                        lifetimes [$($bl),*]
                        maybe [$($bm),*]
                        traits [$($bt),*]
                        higher_ranked [$([$($bhl),*] $bht),*]
                    }),*]
                }
            }
        };
    };

    // bytemuck's `Pod`: for the exact plan only (see its use above).
    // `Zeroable` needs no such care: the all-zero pattern is a valid value of
    // every `DeviceCopy` type, padding or not; nor do cudarc's marker traits,
    // which cudarc implements for padded tuples itself.
    (@pod exact { $($impls:tt)* }) => { $($impls)* };
    (@pod $plan:ident { $($impls:tt)* }) => {};

    // Layout checks in the anonymous constant, per plan. A non-generic
    // struct gets the exact ones: bare `$name` names no generic arguments, so
    // rustc rejects it for a struct with type or const parameters. The
    // generic plans require at least one type or const argument, so a
    // non-generic struct cannot skip the exact checks.
    (@layout exact $name:ident [] [$($f:tt),+]) => {
        $crate::__private::no_padding::<
            $name,
            {
                $crate::__private::core::mem::size_of::<$name>()
                    - (0 $(+ $crate::__private::size_of_field(|__cuda_mem_s: $name| __cuda_mem_s.$f))+)
            },
        >();
        $crate::__private::align_at_most_256::<
            $name,
            { $crate::__private::core::mem::align_of::<$name>() },
            { $crate::__private::core::mem::align_of::<$name>() <= 256 },
        >();
        $crate::__private::fields_in_declaration_order(&[$((
            $crate::__private::core::mem::offset_of!($name, $f),
            $crate::__private::size_of_field(|__cuda_mem_s: $name| __cuda_mem_s.$f),
        )),+]);
        // The fields' own layouts: a field of a derived generic struct is
        // checked at this instantiation (its padding is inside the field,
        // where the size arithmetic above cannot see it).
        let _: u64 = <$name as $crate::DeviceCopy>::__LAYOUT;
    };
    (@layout transparent $name:ident [$($arg:ident),+] [$($f:tt),+]) => {};
    (@layout packed $name:ident [$($arg:ident),+] [$($f:tt),+]) => {};
    (@layout homogeneous $name:ident [$($arg:ident),+] [$($f:tt),+]) => {};

    // Element checks inside `DeriveProof::proof`, on the bound fields.
    (@elements exact [$($b:ident : $hint:ident),+]) => {};
    (@elements packed [$($b:ident : $hint:ident),+]) => {};
    (@elements transparent [$($b:ident : $hint:ident),+]) => {
        $($crate::__private::transparent::$hint($b);)+
    };
    (@elements homogeneous [$($b:ident : $hint:ident),+]) => {
        let _ = [$($crate::__private::homogeneous::$hint($b)),+];
    };
}

/// cudarc's `DeviceRepr` and `ValidAsZeroBits` for a struct, on host builds;
/// nothing without the `host` feature, so the same derive works in `no_std`
/// kernel crates. Called by [`__derive_device_copy!`](crate::__derive_device_copy).
///
/// Both impls require the struct to be `DeviceCopy` (a `where` bound on the
/// real trait), so calling this directly proves nothing and unlocks nothing:
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// #[repr(transparent)]
/// struct Id(core::num::NonZeroU32);
/// cuda_mem::__device_copy_host_impls! {
///     struct Id
///     generics { lifetimes [] types [] consts [] args [] outlives [] bounds [] }
/// }
/// ```
#[cfg(feature = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __device_copy_host_impls {
    (
        struct $name:ident
        generics {
            lifetimes [$($lt:lifetime),*]
            types [$($tp:ident),*]
            consts [$($cp:ident : $cty:ty),*]
            args [$($arg:ident),*]
            outlives [$($ol:lifetime : [$($olb:lifetime),+]),*]
            bounds [$($bty:ty : {
                lifetimes [$($bl:lifetime),*]
                maybe [$($bm:path),*]
                traits [$($bt:path),*]
                higher_ranked [$([$($bhl:lifetime),*] $bht:path),*]
            }),*]
        }
    ) => {
        #[doc = " SAFETY: a `DeviceCopy` type has a C-compatible layout, no padding, no host \
                 pointers and is valid for every bit pattern: what cudarc needs to pass it by \
                 value as a kernel parameter and to copy it to and from device memory."]
        #[automatically_derived]
        // SAFETY: see the `#[doc]` above (the proof is this expansion).
        unsafe impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::__private::cudarc::driver::DeviceRepr
            for $name<$($lt,)* $($arg),*>
        where
            $($ol: $($olb +)*,)*
            $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
            $name<$($lt,)* $($arg),*>: $crate::DeviceCopy,
        {
        }

        #[doc = " SAFETY: every bit pattern of a `DeviceCopy` type is a valid value, the all-zero \
                 one included."]
        #[automatically_derived]
        // SAFETY: see the `#[doc]` above (the proof is this expansion).
        unsafe impl<$($lt,)* $($tp,)* $(const $cp: $cty,)*> $crate::__private::cudarc::driver::ValidAsZeroBits
            for $name<$($lt,)* $($arg),*>
        where
            $($ol: $($olb +)*,)*
            $($bty: $($bl +)* $(?$bm +)* $($bt +)* $(for<$($bhl),*> $bht +)*,)*
            $name<$($lt,)* $($arg),*>: $crate::DeviceCopy,
        {
        }
    };
}

/// Without the `host` feature there is no cudarc: nothing to emit.
#[cfg(not(feature = "host"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __device_copy_host_impls {
    (
        struct $name:ident
        generics {
            lifetimes [$($lt:lifetime),*]
            types [$($tp:ident),*]
            consts [$($cp:ident : $cty:ty),*]
            args [$($arg:ident),*]
            outlives [$($ol:lifetime : [$($olb:lifetime),+]),*]
            bounds [$($bty:ty : {
                lifetimes [$($bl:lifetime),*]
                maybe [$($bm:path),*]
                traits [$($bt:path),*]
                higher_ranked [$([$($bhl:lifetime),*] $bht:path),*]
            }),*]
        }
    ) => {};
}
