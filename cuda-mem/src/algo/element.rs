//! What the shipped kernels run on: the element types ([`Numeric`]) and the
//! operators ([`BuiltinOp`]), both sealed to the kernels that exist.

use crate::copy::device_copy::DeviceCopy;
use crate::device::ops::{Max, Min, Operator, Sum};

pub(crate) mod sealed {
    /// Implemented by the types and operators the kernels are shipped for.
    pub trait Sealed {}
}

/// An element type the algorithm kernels are shipped for: `i32`, `u32`,
/// `i64`, `u64`, `f32` and `f64`. (A user's own type runs in the device
/// std's blocks, [`cuda_mem::device::wide`](crate::device::wide), in a
/// kernel of its own.)
///
/// ```
/// use cuda_mem::algo::{BuiltinOp, Numeric};
/// use cuda_mem::device::ops::Sum;
/// fn total<T: Numeric>(x: &cuda_mem::DeviceBuffer<T>) -> cuda_mem::Result<T>
/// where
///     Sum: BuiltinOp<T>,
/// {
///     cuda_mem::algo::sum(x)
/// }
/// ```
pub trait Numeric: DeviceCopy + PartialEq + std::fmt::Debug + sealed::Sealed {
    /// The kernels' name for the type (`"f32"`).
    #[doc(hidden)]
    const NAME: &'static str;
    /// The value of an arg reduction's key (`algo-kernels/`'s `min_key` /
    /// `max_key`, an order-preserving `i64`): its inverse; a float's NaN key
    /// (`i64::MIN` for `argmin`, `i64::MAX` for `argmax`) gives a NaN.
    #[doc(hidden)]
    fn from_arg_key(key: i64) -> Self;
}

macro_rules! integer_numeric {
    ($($t:ty, $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Numeric for $t {
            const NAME: &'static str = stringify!($t);
            fn from_arg_key(key: i64) -> Self {
                let from: fn(i64) -> $t = $from;
                from(key)
            }
        }
    )*};
}
integer_numeric! {
    i32, |k| k as i32;
    u32, |k| k as u32;
    i64, |k| k;
    u64, |k| (k as u64) ^ (1 << 63);
}

macro_rules! float_numeric {
    ($($t:ty, $bits:ty, $int:ty;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Numeric for $t {
            const NAME: &'static str = stringify!($t);
            fn from_arg_key(key: i64) -> Self {
                if key == i64::MIN || key == i64::MAX {
                    return <$t>::NAN;
                }
                // The total-order key is its own inverse.
                let key = key as $int;
                let bits = key ^ (((key >> (<$int>::BITS - 1)) as $bits) >> 1) as $int;
                <$t>::from_bits(bits as $bits)
            }
        }
    )*};
}
float_numeric! {
    f32, u32, i32;
    f64, u64, i64;
}

/// An operator the reduction and scan kernels are shipped for:
/// [`Sum`], [`Min`] and [`Max`] of `cuda_mem::device::ops`, on every
/// [`Numeric`] type (the same definitions run on the device and in the
/// host model: integer sums wrap, float minima and maxima are IEEE
/// `minimum` / `maximum`).
///
/// ```
/// use cuda_mem::algo::BuiltinOp;
/// use cuda_mem::device::ops::Sum;
/// fn scan_op<T: cuda_mem::algo::Numeric>(op: impl BuiltinOp<T>) {}
/// scan_op::<f32>(Sum);
/// ```
pub trait BuiltinOp<T: Numeric>: Operator<T> + sealed::Sealed {
    /// The kernels' name for the operator (`"sum"`).
    #[doc(hidden)]
    const NAME: &'static str;
    /// The first output of an exclusive scan: the identity, but `+0.0`
    /// (not `-0.0`) for float sums, as a loop from `0.0` gives.
    #[doc(hidden)]
    fn exclusive_start(self) -> T {
        self.identity()
    }
}

impl sealed::Sealed for Sum {}
impl sealed::Sealed for Min {}
impl sealed::Sealed for Max {}

macro_rules! builtin_ops {
    ($($t:ty),*) => {$(
        impl BuiltinOp<$t> for Min {
            const NAME: &'static str = "min";
        }
        impl BuiltinOp<$t> for Max {
            const NAME: &'static str = "max";
        }
    )*};
}
builtin_ops!(i32, u32, i64, u64, f32, f64);

macro_rules! builtin_sum {
    ($($t:ty),*) => {$(
        impl BuiltinOp<$t> for Sum {
            const NAME: &'static str = "sum";
            fn exclusive_start(self) -> $t {
                0 as $t
            }
        }
    )*};
}
builtin_sum!(i32, u32, i64, u64, f32, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_sums_start_from_positive_zero() {
        assert!(BuiltinOp::<f32>::exclusive_start(Sum).is_sign_positive());
        assert!(BuiltinOp::<f64>::exclusive_start(Sum).is_sign_positive());
        assert_eq!(BuiltinOp::<u32>::exclusive_start(Min), u32::MAX);
        // The kernels' keys (`algo-kernels/`): the total-order key,
        // sign-extended; `u64` with its top bit flipped.
        let key32 = |x: f32| {
            let b = x.to_bits() as i32;
            i64::from(b ^ (((b >> 31) as u32) >> 1) as i32)
        };
        for x in [-2.5f32, -0.0, 0.0, 1e-40, -f32::INFINITY, f32::MAX] {
            assert_eq!(f32::from_arg_key(key32(x)).to_bits(), x.to_bits());
        }
        assert!(f64::from_arg_key(i64::MIN).is_nan());
        assert_eq!(i32::from_arg_key(-7), -7);
        assert_eq!(u64::from_arg_key((u64::MAX ^ (1 << 63)) as i64), u64::MAX);
    }
}
