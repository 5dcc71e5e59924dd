//! The operators of reductions and scans: the [`Operator`] trait (an
//! associative, commutative operation with an identity) and the three that
//! `cuda_mem::algo` runs on the builtin numeric types, [`Sum`], [`Min`] and
//! [`Max`]. A user's own operator over a derived struct implements
//! [`Operator`] and runs in the same device-side blocks ([`block`](super::block),
//! [`wide`](super::wide)).
//!
//! The float operators are exact and order-free, so a device-wide result
//! does not depend on how the work was split:
//! - [`Min`] and [`Max`] are IEEE 754-2019 `minimum` / `maximum`: a NaN
//!   anywhere makes the result NaN, and `-0.0` is below `+0.0`.
//! - [`Sum`] starts from `-0.0` (the exact identity of `+`: `-0.0 + x` is
//!   `x` for every `x`, where `0.0 + -0.0` is `+0.0`). The order of the
//!   additions is the algorithm's, so float sums may differ from a
//!   sequential loop in the last bits; integer sums wrap.
//!
//! ```
//! use cuda_mem::device::ops::{Max, Min, Operator, Sum};
//! assert_eq!(Sum.apply(2u32, u32::MAX), 1); // wraps
//! assert!(Min.apply(1.0f32, f32::NAN).is_nan());
//! assert!(Min.apply(0.0f64, -0.0).is_sign_negative());
//! assert_eq!(Max.apply(Max.identity(), -7i64), -7);
//! assert!(<Sum as Operator<f32>>::identity(Sum).is_sign_negative());
//! ```

use crate::copy::device_copy::DeviceCopy;

/// An associative operation on `T` with an identity: `apply(identity(),
/// x) == x == apply(x, identity())`. The device-wide reductions
/// ([`reduce_tiles`](super::wide::reduce_tiles)) combine values in an
/// order of their own, so they need it commutative too; the scans
/// ([`scan_tile`](super::wide::scan_tile)) keep the elements' order, so an
/// associative one will do. An operator that breaks its contract gets
/// unspecified results (up to float rounding for sums), never undefined
/// behaviour.
///
/// ```
/// use cuda_mem::device::ops::Operator;
/// #[derive(Clone, Copy)]
/// struct BitOr;
/// impl Operator<u32> for BitOr {
///     fn identity(self) -> u32 { 0 }
///     fn apply(self, a: u32, b: u32) -> u32 { a | b }
/// }
/// assert_eq!(BitOr.apply(BitOr.identity(), 0b101), 0b101);
/// ```
pub trait Operator<T: DeviceCopy>: Copy {
    /// The value that changes nothing: `apply(identity(), x) == x`.
    fn identity(self) -> T;
    /// The operation.
    fn apply(self, a: T, b: T) -> T;
}

/// Addition (integers wrap; floats start from `-0.0`).
///
/// ```
/// use cuda_mem::device::ops::{Operator, Sum};
/// assert_eq!(Sum.apply(2.5f64, 0.5), 3.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sum;

/// The smaller value (floats: IEEE `minimum`, NaN wins, `-0.0 < +0.0`).
///
/// ```
/// use cuda_mem::device::ops::{Min, Operator};
/// assert_eq!(Min.apply(-3i32, 2), -3);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Min;

/// The larger value (floats: IEEE `maximum`, NaN wins, `+0.0 > -0.0`).
///
/// ```
/// use cuda_mem::device::ops::{Max, Operator};
/// assert_eq!(Max.apply(3u64, 9), 9);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Max;

macro_rules! integer_operators {
    ($($t:ty),*) => {$(
        impl Operator<$t> for Sum {
            #[inline(always)]
            fn identity(self) -> $t { 0 }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t { a.wrapping_add(b) }
        }
        impl Operator<$t> for Min {
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MAX }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t { if b < a { b } else { a } }
        }
        impl Operator<$t> for Max {
            #[inline(always)]
            fn identity(self) -> $t { <$t>::MIN }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t { if b > a { b } else { a } }
        }
    )*};
}
integer_operators!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! float_operators {
    ($($t:ty, $int:ty, $shift:expr);*) => {$(
        impl Operator<$t> for Sum {
            #[inline(always)]
            fn identity(self) -> $t { -0.0 }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t { a + b }
        }
        impl Operator<$t> for Min {
            #[inline(always)]
            fn identity(self) -> $t { <$t>::INFINITY }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t {
                // Selects, no branches: the smaller in the total order
                // (`-0.0` below `+0.0`), or NaN (`a + b`) if either is.
                let pick = if order_key::<$int>(a.to_bits() as $int, $shift) <= order_key::<$int>(b.to_bits() as $int, $shift) { a } else { b };
                if a.is_nan() || b.is_nan() { a + b } else { pick }
            }
        }
        impl Operator<$t> for Max {
            #[inline(always)]
            fn identity(self) -> $t { <$t>::NEG_INFINITY }
            #[inline(always)]
            fn apply(self, a: $t, b: $t) -> $t {
                let pick = if order_key::<$int>(a.to_bits() as $int, $shift) >= order_key::<$int>(b.to_bits() as $int, $shift) { a } else { b };
                if a.is_nan() || b.is_nan() { a + b } else { pick }
            }
        }
    )*};
}

/// The signed integer whose order is the float total order of the bits
/// `bits` (`f32::total_cmp`'s key): negative floats have their magnitude
/// bits flipped. `shift` is the width minus one.
#[inline(always)]
fn order_key<I>(bits: I, shift: u32) -> I
where
    I: Copy + core::ops::Shr<u32, Output = I> + core::ops::BitXor<Output = I> + FlipMagnitude,
{
    bits ^ (bits >> shift).flip_magnitude()
}

/// `x` (all ones or all zeros) with its sign bit cleared.
trait FlipMagnitude {
    fn flip_magnitude(self) -> Self;
}
impl FlipMagnitude for i32 {
    #[inline(always)]
    fn flip_magnitude(self) -> Self {
        ((self as u32) >> 1) as i32
    }
}
impl FlipMagnitude for i64 {
    #[inline(always)]
    fn flip_magnitude(self) -> Self {
        ((self as u64) >> 1) as i64
    }
}

float_operators!(f32, i32, 31; f64, i64, 63);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every float operator agrees with its definition on the values where
    /// orders are subtle, in both argument orders.
    #[test]
    fn float_min_and_max_are_ieee_minimum_and_maximum() {
        let values = [
            f64::NAN,
            -0.0,
            0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
        ];
        for &a in &values {
            for &b in &values {
                let (lo, hi) = (Min.apply(a, b), Max.apply(a, b));
                if a.is_nan() || b.is_nan() {
                    assert!(lo.is_nan() && hi.is_nan(), "{a} {b}");
                    continue;
                }
                // `total_cmp` orders -0.0 below +0.0, as minimum/maximum do.
                let (want_lo, want_hi) = if a.total_cmp(&b).is_le() {
                    (a, b)
                } else {
                    (b, a)
                };
                assert_eq!(lo.to_bits(), want_lo.to_bits(), "min({a}, {b})");
                assert_eq!(hi.to_bits(), want_hi.to_bits(), "max({a}, {b})");
                assert_eq!(Min.apply(Min.identity(), a).to_bits(), a.to_bits());
                assert_eq!(Max.apply(Max.identity(), a).to_bits(), a.to_bits());
                assert_eq!(Sum.apply(Sum.identity(), a).to_bits(), a.to_bits());
            }
        }
    }

    #[test]
    fn integer_identities_change_nothing() {
        for x in [i32::MIN, -1, 0, 1, i32::MAX] {
            assert_eq!(Sum.apply(Sum.identity(), x), x);
            assert_eq!(Min.apply(Min.identity(), x), x);
            assert_eq!(Max.apply(Max.identity(), x), x);
        }
    }
}
