//! The one-thread model (and any host use) of the atomic operations:
//! `core::sync::atomic`, relaxed.

use core::sync::atomic::{AtomicI32, AtomicU32, Ordering};
#[cfg(target_has_atomic = "64")]
use core::sync::atomic::{AtomicI64, AtomicU64};

pub const RELAXED: Ordering = Ordering::Relaxed;

/// A value and the integer its atomic operations work on.
pub trait Raw: Copy {
    type Raw: Copy + PartialEq;
    fn to_raw(self) -> Self::Raw;
    fn from_raw(raw: Self::Raw) -> Self;
}

/// `raw.to_value()`: the inverse of `to_raw`.
pub trait ToValue<V> {
    fn to_value(self) -> V;
}

macro_rules! raw {
    ($t:ty, $raw:ty, $to:expr, $from:expr) => {
        impl Raw for $t {
            type Raw = $raw;
            #[inline(always)]
            fn to_raw(self) -> $raw {
                $to(self)
            }
            #[inline(always)]
            fn from_raw(raw: $raw) -> $t {
                $from(raw)
            }
        }
        impl ToValue<$t> for $raw {
            #[inline(always)]
            fn to_value(self) -> $t {
                <$t as Raw>::from_raw(self)
            }
        }
    };
}
raw!(u32, u32, |v| v, |r| r);
raw!(i32, i32, |v| v, |r| r);
raw!(f32, u32, f32::to_bits, f32::from_bits);
#[cfg(target_has_atomic = "64")]
raw!(u64, u64, |v| v, |r| r);
#[cfg(target_has_atomic = "64")]
raw!(i64, i64, |v| v, |r| r);
#[cfg(target_has_atomic = "64")]
raw!(f64, u64, f64::to_bits, f64::from_bits);

macro_rules! view {
    ($name:ident, $t:ty, $atomic:ty) => {
        /// # Safety
        /// `ptr` is aligned, valid, and accessed atomically only while
        /// the reference lives.
        #[inline(always)]
        pub unsafe fn $name<'a>(ptr: *mut $t) -> &'a $atomic {
            debug_assert!(ptr.cast::<$atomic>().is_aligned());
            // SAFETY: the caller's contract (aligned, valid, atomic
            // accesses only); the atomic type has the value's size.
            unsafe { &*ptr.cast::<$atomic>() }
        }
    };
}
view!(atomic_u32, u32, AtomicU32);
view!(atomic_i32, i32, AtomicI32);
view!(atomic_f32, f32, AtomicU32);
#[cfg(target_has_atomic = "64")]
view!(atomic_u64, u64, AtomicU64);
#[cfg(target_has_atomic = "64")]
view!(atomic_i64, i64, AtomicI64);
#[cfg(target_has_atomic = "64")]
view!(atomic_f64, f64, AtomicU64);

/// Addition: wrapping for integers, a compare-exchange loop for floats.
pub trait Add: Raw {
    /// # Safety
    /// As for the views above.
    unsafe fn add(ptr: *mut Self, value: Self) -> Self;
}

macro_rules! int_add {
    ($t:ty, $view:ident) => {
        impl Add for $t {
            #[inline(always)]
            unsafe fn add(ptr: *mut Self, value: Self) -> Self {
                // SAFETY: the caller's contract.
                unsafe { $view(ptr) }.fetch_add(value, RELAXED)
            }
        }
    };
}
macro_rules! float_add {
    ($t:ty, $view:ident) => {
        impl Add for $t {
            #[inline(always)]
            unsafe fn add(ptr: *mut Self, value: Self) -> Self {
                // SAFETY: the caller's contract.
                let a = unsafe { $view(ptr) };
                let old = a
                    .fetch_update(RELAXED, RELAXED, |bits| {
                        Some((<$t>::from_bits(bits) + value).to_bits())
                    })
                    .unwrap_or_else(|bits| bits);
                <$t>::from_bits(old)
            }
        }
    };
}
int_add!(u32, atomic_u32);
int_add!(i32, atomic_i32);
float_add!(f32, atomic_f32);
#[cfg(target_has_atomic = "64")]
int_add!(u64, atomic_u64);
#[cfg(target_has_atomic = "64")]
int_add!(i64, atomic_i64);
#[cfg(target_has_atomic = "64")]
float_add!(f64, atomic_f64);

/// # Safety
/// As for the views above.
#[inline(always)]
pub unsafe fn add<T: Add>(ptr: *mut T, value: T) -> T {
    // SAFETY: the caller's contract.
    unsafe { T::add(ptr, value) }
}
