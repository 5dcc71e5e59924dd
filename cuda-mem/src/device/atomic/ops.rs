//! The atomic operations of each [`AtomicValue`] (`i32`, `u32`, `i64`, `u64`,
//! `f32`, `f64`): one `atom`, `ld` or `st.relaxed.<scope>` instruction each
//! on `nvptx64`, the `core::sync::atomic` model of `host` elsewhere.

#[cfg(not(target_arch = "nvptx64"))]
use crate::device::atomic::host::{self, Raw as _, ToValue as _};
use crate::device::atomic::{sealed, AtomicInteger, AtomicValue, Scope};

/// One PTX atomic instruction per scope: `$asm` is the template with `SCOPE`
/// where the scope goes (the template must be a literal, so the three are
/// spelled out and the `match` folds away once the scope is known).
#[cfg(target_arch = "nvptx64")]
macro_rules! per_scope {
    ($scope:expr, [$($pre:expr),*], [$($post:expr),*], $($operands:tt)*) => {
        match $scope {
            Scope::Block => core::arch::asm!(concat!($($pre,)* "cta", $($post,)*), $($operands)*),
            Scope::Device => core::arch::asm!(concat!($($pre,)* "gpu", $($post,)*), $($operands)*),
            Scope::System => core::arch::asm!(concat!($($pre,)* "sys", $($post,)*), $($operands)*),
        }
    };
}

/// `atom.relaxed.<scope>.<op>.<ty> d, [a], b;`
#[cfg(target_arch = "nvptx64")]
macro_rules! atom2 {
    ($ptr:expr, $value:expr, $scope:expr, $op:literal, $ty:expr, $reg:ident, $rust:ty) => {{
        let old: $rust;
        // SAFETY: the caller's contract (trait `Ops`): an aligned, valid
        // address accessed atomically only.
        unsafe {
            per_scope!(
                $scope,
                ["atom.relaxed."],
                [".", $op, ".", $ty, " {d}, [{a}], {b};"],
                d = out($reg) old,
                a = in(reg64) $ptr,
                b = in($reg) $value,
                options(nostack, preserves_flags)
            )
        };
        old
    }};
}

macro_rules! impl_atomic {
    ($t:ty, $atomic:ident, $bits:literal, $reg:ident, $to_bits:expr, add = $add:literal, int = $int:tt) => {
        impl AtomicValue for $t {}

        impl sealed::Ops for $t {
            #[inline(always)]
            unsafe fn load(ptr: *mut Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: $t;
                    // SAFETY: the trait's contract.
                    unsafe {
                        per_scope!(
                            scope,
                            ["ld.relaxed."],
                            [".b", $bits, " {d}, [{a}];"],
                            d = out($reg) v,
                            a = in(reg64) ptr,
                            options(nostack, preserves_flags)
                        )
                    };
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.load(host::RELAXED).to_value()
                }
            }

            #[inline(always)]
            unsafe fn store(ptr: *mut Self, value: Self, scope: Scope) {
                #[cfg(target_arch = "nvptx64")]
                // SAFETY: the trait's contract.
                unsafe {
                    per_scope!(
                        scope,
                        ["st.relaxed."],
                        [".b", $bits, " [{a}], {b};"],
                        a = in(reg64) ptr,
                        b = in($reg) value,
                        options(nostack, preserves_flags)
                    )
                };
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.store(value.to_raw(), host::RELAXED);
                }
            }

            #[inline(always)]
            unsafe fn swap(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "exch", concat!("b", $bits), $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.swap(value.to_raw(), host::RELAXED).to_value()
                }
            }

            #[inline(always)]
            unsafe fn cas(ptr: *mut Self, current: Self, new: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                {
                    let old: $t;
                    // SAFETY: the trait's contract.
                    unsafe {
                        per_scope!(
                            scope,
                            ["atom.relaxed."],
                            [".cas.b", $bits, " {d}, [{a}], {b}, {c};"],
                            d = out($reg) old,
                            a = in(reg64) ptr,
                            b = in($reg) current,
                            c = in($reg) new,
                            options(nostack, preserves_flags)
                        )
                    };
                    old
                }
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    let a = unsafe { host::$atomic(ptr) };
                    match a.compare_exchange(current.to_raw(), new.to_raw(), host::RELAXED, host::RELAXED) {
                        Ok(v) | Err(v) => v.to_value(),
                    }
                }
            }

            #[inline(always)]
            unsafe fn add(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "add", $add, $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::add(ptr, value) }
                }
            }

            #[inline(always)]
            fn same_bits(a: Self, b: Self) -> bool {
                $to_bits(a) == $to_bits(b)
            }
        }

        impl_atomic!(@int $t, $atomic, $bits, $reg, $int);
    };
    (@int $t:ty, $atomic:ident, $bits:literal, $reg:ident, float) => {};
    (@int $t:ty, $atomic:ident, $bits:literal, $reg:ident, [$min:literal]) => {
        impl AtomicInteger for $t {}

        impl sealed::IntOps for $t {
            #[inline(always)]
            unsafe fn sub(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                // SAFETY: the trait's contract.
                unsafe { <Self as sealed::Ops>::add(ptr, value.wrapping_neg(), scope) }
            }

            #[inline(always)]
            unsafe fn min(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "min", $min, $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.fetch_min(value, host::RELAXED)
                }
            }

            #[inline(always)]
            unsafe fn max(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "max", $min, $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.fetch_max(value, host::RELAXED)
                }
            }

            #[inline(always)]
            unsafe fn and(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "and", concat!("b", $bits), $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.fetch_and(value, host::RELAXED)
                }
            }

            #[inline(always)]
            unsafe fn or(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "or", concat!("b", $bits), $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.fetch_or(value, host::RELAXED)
                }
            }

            #[inline(always)]
            unsafe fn xor(ptr: *mut Self, value: Self, scope: Scope) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return atom2!(ptr, value, scope, "xor", concat!("b", $bits), $reg, $t);
                #[cfg(not(target_arch = "nvptx64"))]
                {
                    let _ = scope;
                    // SAFETY: the trait's contract.
                    unsafe { host::$atomic(ptr) }.fetch_xor(value, host::RELAXED)
                }
            }
        }
    };
}

impl_atomic!(
    u32,
    atomic_u32,
    "32",
    reg32,
    core::convert::identity,
    add = "u32",
    int = ["u32"]
);
impl_atomic!(
    i32,
    atomic_i32,
    "32",
    reg32,
    core::convert::identity,
    add = "s32",
    int = ["s32"]
);
impl_atomic!(
    f32,
    atomic_f32,
    "32",
    reg32,
    f32::to_bits,
    add = "f32",
    int = float
);
#[cfg(any(target_arch = "nvptx64", target_has_atomic = "64"))]
impl_atomic!(
    u64,
    atomic_u64,
    "64",
    reg64,
    core::convert::identity,
    add = "u64",
    int = ["u64"]
);
#[cfg(any(target_arch = "nvptx64", target_has_atomic = "64"))]
impl_atomic!(
    i64,
    atomic_i64,
    "64",
    reg64,
    core::convert::identity,
    add = "u64",
    int = ["s64"]
);
#[cfg(any(target_arch = "nvptx64", target_has_atomic = "64"))]
impl_atomic!(
    f64,
    atomic_f64,
    "64",
    reg64,
    f64::to_bits,
    add = "f64",
    int = float
);
