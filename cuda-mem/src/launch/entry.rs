//! What a [`#[kernel]`](macro@crate::kernel) fn's PTX entry point is made
//! of, as `__kernel_entry!` builds it: each parameter's two parts, typed by
//! the parameter they belong to ([`__AddressOf`], [`__RestOf`]) and put
//! together only as one parameter ([`__assemble`]); and the statics the host
//! checks before a launch (the signature fingerprint, each parameter's
//! fingerprint, the parameter table), computed from the signature of the
//! entry's own body ([`__EntryBody`]).
//!
//! So every static describes the parameters the entry point really takes.
//! A macro pastes a caller's type tokens in several places, and each paste
//! is expanded on its own: a type that expands differently each time (a
//! proc macro with a counter can do it, in safe code) would otherwise give
//! the entry point one type and the statics another. Here every paste is
//! tied to the body's: the entry point passes its parts to the body (a type
//! error unless they agree), `__assemble` takes both parts of one `P`, the
//! kernel is called with those `P`s, and the statics read the `P`s back
//! from the body's type.

use core::marker::PhantomData;

use crate::launch::param::{
    __Raw, __abi_head_block, __kernel_signature, __param_abi, __param_signature, KernelParam,
    ParamAbi,
};

/// A part of the kernel parameter `P` as the PTX entry point receives it:
/// the part itself ([`__Raw`], which only the driver makes), marked with
/// the parameter it belongs to. `#[repr(transparent)]`: the PTX parameter
/// is the part.
#[doc(hidden)]
#[repr(transparent)]
pub struct __Part<P, T>(__Raw<T>, PhantomData<fn() -> P>);

/// The address part of the kernel parameter `P` (see
/// [`KernelParam::__Address`]).
#[doc(hidden)]
pub type __AddressOf<P> = __Part<P, <P as KernelParam>::__Address>;

/// The rest of the kernel parameter `P` (see [`KernelParam::__Rest`]).
#[doc(hidden)]
pub type __RestOf<P> = __Part<P, <P as KernelParam>::__Rest>;

/// The parameter `P` from its two parts, which must both be `P`'s. Safe to
/// call for the reason [`KernelParam::__assemble`] is.
#[doc(hidden)]
#[inline(always)]
pub fn __assemble<P: KernelParam>(address: __AddressOf<P>, rest: __RestOf<P>) -> P {
    P::__assemble(address.0, rest.0)
}

/// Implemented for a fn (the body of a kernel's entry point) whose
/// parameters are the parts of the kernel parameters `Params`, a tuple
/// `(P0, P1, ..)`: `fn(__AddressOf<P0>, __RestOf<P0>, __AddressOf<P1>, ..)`.
/// Up to 24 parameters, as the host's launches.
#[doc(hidden)]
pub trait __EntryBody<Params> {
    /// Each parameter's fingerprint ([`__param_signature`]), in order.
    const SIGNATURES: &'static [u64];
    /// Each parameter's row of the parameter table ([`__param_abi`]).
    const ROWS: &'static [ParamAbi];
}

macro_rules! entry_bodies {
    ($(($($p:ident),*))*) => {$(
        impl<F, $($p: KernelParam),*> __EntryBody<($($p,)*)> for F
        where
            F: Fn($(__AddressOf<$p>, __RestOf<$p>),*),
        {
            const SIGNATURES: &'static [u64] = &[$(__param_signature::<fn($p), $p>()),*];
            const ROWS: &'static [ParamAbi] = &[$(__param_abi::<fn($p), $p>()),*];
        }
    )*};
}

entry_bodies! {
    ()
    (P0)
    (P0, P1)
    (P0, P1, P2)
    (P0, P1, P2, P3)
    (P0, P1, P2, P3, P4)
    (P0, P1, P2, P3, P4, P5)
    (P0, P1, P2, P3, P4, P5, P6)
    (P0, P1, P2, P3, P4, P5, P6, P7)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19,
     P20)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19,
     P20, P21)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19,
     P20, P21, P22)
    (P0, P1, P2, P3, P4, P5, P6, P7, P8, P9, P10, P11, P12, P13, P14, P15, P16, P17, P18, P19,
     P20, P21, P22, P23)
}

/// The signature fingerprint of a kernel whose entry's body is `body`
/// ([`__kernel_signature`] of its parameters' fingerprints).
#[doc(hidden)]
#[must_use]
pub const fn __entry_signature<F: __EntryBody<M>, M>(
    body: &F,
    is_unsafe: bool,
    source: u64,
) -> u64 {
    let _ = body;
    __kernel_signature(is_unsafe, source, F::SIGNATURES)
}

/// Each parameter's fingerprint, for a kernel whose entry's body is `body`
/// (`N`: its number of parameters).
#[doc(hidden)]
#[must_use]
pub const fn __entry_params<F: __EntryBody<M>, M, const N: usize>(body: &F) -> [u64; N] {
    let _ = body;
    assert!(
        F::SIGNATURES.len() == N,
        "an entry's fingerprints are one per parameter"
    );
    let mut out = [0; N];
    let mut i = 0;
    while i < N {
        out[i] = F::SIGNATURES[i];
        i += 1;
    }
    out
}

/// The parameter table of a kernel whose entry's body is `body`: the head
/// row ([`__abi_head_block`]), then a row per parameter (`N`: one more
/// than its number of parameters).
#[doc(hidden)]
#[must_use]
pub const fn __entry_abi<F: __EntryBody<M>, M, const N: usize>(
    body: &F,
    is_unsafe: bool,
    block: u64,
) -> [ParamAbi; N] {
    let _ = body;
    assert!(
        F::ROWS.len() + 1 == N,
        "an entry's table is a head and one row per parameter"
    );
    let mut out = [[0; 5]; N];
    out[0] = __abi_head_block(is_unsafe, F::ROWS.len(), block);
    let mut i = 1;
    while i < N {
        out[i] = F::ROWS[i - 1];
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceSlice;

    fn body(
        _: __AddressOf<DeviceSlice<'_, f32>>,
        _: __RestOf<DeviceSlice<'_, f32>>,
        _: __AddressOf<u64>,
        _: __RestOf<u64>,
    ) {
    }

    /// The statics read from a body are the ones the per-type macros give
    /// for the same parameters.
    #[test]
    fn an_entrys_statics_are_its_bodys_parameters() {
        let signature = __entry_signature(&body, false, 7);
        let expected = crate::__kernel_signature!(unsafe_kernel false, source 7, lifetimes [], params [DeviceSlice<f32>, u64]);
        assert_eq!(signature, expected);
        assert_ne!(__entry_signature(&body, true, 7), expected);
        let params: [u64; 2] = __entry_params(&body);
        assert_eq!(
            params,
            crate::__kernel_signature!(@each [] [DeviceSlice<f32>, u64])
        );
        let abi: [ParamAbi; 3] = __entry_abi(&body, false, 0);
        let expected =
            crate::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSlice<f32>, u64]);
        assert_eq!(abi, expected);
    }
}
