//! The [`Float`] implementations of `f32` and `f64`: for each function, the
//! `libm` routine, the building block of `double` or the hardware instruction
//! (`imp`: PTX on `nvptx64`, the accurate functions standing in elsewhere).

use crate::device::math::double::{exp2_f64, pow_core_f32, pow_core_f64, pow_with, rsqrt_f64};
use crate::device::math::Float;

impl Float for f32 {
    #[inline(always)]
    fn __sqrt(self) -> f32 {
        imp::sqrt_f32(self)
    }
    #[inline(always)]
    fn __rsqrt(self) -> f32 {
        (1.0 / imp::sqrt_f64(self as f64)) as f32
    }
    #[inline(always)]
    fn __rsqrt_fast(self) -> f32 {
        imp::rsqrt_fast_f32(self)
    }
    #[inline(always)]
    fn __exp(self) -> f32 {
        libm::expf(self)
    }
    #[inline(always)]
    fn __exp_fast(self) -> f32 {
        imp::exp_fast_f32(self)
    }
    #[inline(always)]
    fn __exp2(self) -> f32 {
        exp2_f64(self as f64) as f32
    }
    #[inline(always)]
    fn __exp2_fast(self) -> f32 {
        imp::exp2_fast_f32(self)
    }
    #[inline(always)]
    fn __log(self) -> f32 {
        libm::logf(self)
    }
    #[inline(always)]
    fn __log_fast(self) -> f32 {
        imp::log_fast_f32(self)
    }
    #[inline(always)]
    fn __log2(self) -> f32 {
        libm::log2f(self)
    }
    #[inline(always)]
    fn __log2_fast(self) -> f32 {
        imp::log2_fast_f32(self)
    }
    #[inline(always)]
    fn __sin(self) -> f32 {
        libm::sinf(self)
    }
    #[inline(always)]
    fn __sin_fast(self) -> f32 {
        imp::sin_fast_f32(self)
    }
    #[inline(always)]
    fn __cos(self) -> f32 {
        libm::cosf(self)
    }
    #[inline(always)]
    fn __cos_fast(self) -> f32 {
        imp::cos_fast_f32(self)
    }
    #[inline(always)]
    fn __tanh(self) -> f32 {
        libm::tanhf(self)
    }
    #[inline(always)]
    fn __tanh_fast(self) -> f32 {
        imp::tanh_fast_f32(self)
    }
    #[inline(always)]
    fn __pow(self, y: f32) -> f32 {
        pow_with(self as f64, y as f64, pow_core_f32) as f32
    }
    #[inline(always)]
    fn __pow_fast(self, y: f32) -> f32 {
        imp::pow_fast_f32(self, y)
    }
    #[inline(always)]
    fn __fma(self, b: f32, c: f32) -> f32 {
        imp::fma_f32(self, b, c)
    }
}

impl Float for f64 {
    #[inline(always)]
    fn __sqrt(self) -> f64 {
        imp::sqrt_f64(self)
    }
    #[inline(always)]
    fn __rsqrt(self) -> f64 {
        rsqrt_f64(self)
    }
    #[inline(always)]
    fn __rsqrt_fast(self) -> f64 {
        imp::rsqrt_fast_f64(self)
    }
    #[inline(always)]
    fn __exp(self) -> f64 {
        libm::exp(self)
    }
    #[inline(always)]
    fn __exp_fast(self) -> f64 {
        libm::exp(self)
    }
    #[inline(always)]
    fn __exp2(self) -> f64 {
        exp2_f64(self)
    }
    #[inline(always)]
    fn __exp2_fast(self) -> f64 {
        exp2_f64(self)
    }
    #[inline(always)]
    fn __log(self) -> f64 {
        libm::log(self)
    }
    #[inline(always)]
    fn __log_fast(self) -> f64 {
        libm::log(self)
    }
    #[inline(always)]
    fn __log2(self) -> f64 {
        libm::log2(self)
    }
    #[inline(always)]
    fn __log2_fast(self) -> f64 {
        libm::log2(self)
    }
    #[inline(always)]
    fn __sin(self) -> f64 {
        libm::sin(self)
    }
    #[inline(always)]
    fn __sin_fast(self) -> f64 {
        libm::sin(self)
    }
    #[inline(always)]
    fn __cos(self) -> f64 {
        libm::cos(self)
    }
    #[inline(always)]
    fn __cos_fast(self) -> f64 {
        libm::cos(self)
    }
    #[inline(always)]
    fn __tanh(self) -> f64 {
        libm::tanh(self)
    }
    #[inline(always)]
    fn __tanh_fast(self) -> f64 {
        libm::tanh(self)
    }
    #[inline(always)]
    fn __pow(self, y: f64) -> f64 {
        pow_with(self, y, pow_core_f64)
    }
    #[inline(always)]
    fn __pow_fast(self, y: f64) -> f64 {
        pow_with(self, y, pow_core_f64)
    }
    #[inline(always)]
    fn __fma(self, b: f64, c: f64) -> f64 {
        imp::fma_f64(self, b, c)
    }
}

/// The hardware instructions (`nvptx64`).
#[cfg(target_arch = "nvptx64")]
mod imp {
    /// One instruction `$op d, a;` on a 32- or 64-bit float.
    macro_rules! unary {
        ($name:ident, $t:ty, $reg:ident, $op:literal) => {
            #[inline(always)]
            pub fn $name(x: $t) -> $t {
                let y: $t;
                // SAFETY: a floating-point instruction on registers only.
                unsafe {
                    core::arch::asm!(
                        concat!($op, " {y}, {x};"),
                        x = in($reg) x,
                        y = out($reg) y,
                        options(pure, nomem, nostack, preserves_flags)
                    );
                }
                y
            }
        };
    }

    unary!(sqrt_f32, f32, reg32, "sqrt.rn.f32");
    unary!(sqrt_f64, f64, reg64, "sqrt.rn.f64");
    unary!(rsqrt_fast_f32, f32, reg32, "rsqrt.approx.ftz.f32");
    unary!(rsqrt_fast_f64, f64, reg64, "rsqrt.approx.f64");
    unary!(exp2_fast_f32, f32, reg32, "ex2.approx.ftz.f32");
    unary!(log2_fast_f32, f32, reg32, "lg2.approx.ftz.f32");
    unary!(sin_fast_f32, f32, reg32, "sin.approx.ftz.f32");
    unary!(cos_fast_f32, f32, reg32, "cos.approx.ftz.f32");
    unary!(rcp_fast_f32, f32, reg32, "rcp.approx.ftz.f32");

    #[inline(always)]
    pub fn exp_fast_f32(x: f32) -> f32 {
        exp2_fast_f32(x * core::f32::consts::LOG2_E)
    }

    #[inline(always)]
    pub fn log_fast_f32(x: f32) -> f32 {
        log2_fast_f32(x) * core::f32::consts::LN_2
    }

    #[inline(always)]
    pub fn pow_fast_f32(x: f32, y: f32) -> f32 {
        exp2_fast_f32(y * log2_fast_f32(x))
    }

    /// `tanh.approx.f32` where the target has it (sm_75 and later).
    #[cfg(target_feature = "sm_75")]
    #[inline(always)]
    pub fn tanh_fast_f32(x: f32) -> f32 {
        let y: f32;
        // SAFETY: a floating-point instruction on registers only.
        unsafe {
            core::arch::asm!(
                "tanh.approx.f32 {y}, {x};",
                x = in(reg32) x,
                y = out(reg32) y,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        y
    }

    /// `1 - 2 / (e^(2|x|) + 1)` with the sign of `x` (sm_70).
    #[cfg(not(target_feature = "sm_75"))]
    #[inline(always)]
    pub fn tanh_fast_f32(x: f32) -> f32 {
        let e = exp2_fast_f32(2.0 * core::f32::consts::LOG2_E * x.abs());
        let t = 1.0 - 2.0 * rcp_fast_f32(e + 1.0);
        f32::copysign(t, x)
    }

    #[inline(always)]
    pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        let d: f32;
        // SAFETY: a floating-point instruction on registers only.
        unsafe {
            core::arch::asm!(
                "fma.rn.f32 {d}, {a}, {b}, {c};",
                a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, d = out(reg32) d,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        d
    }

    #[inline(always)]
    pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        let d: f64;
        // SAFETY: a floating-point instruction on registers only.
        unsafe {
            core::arch::asm!(
                "fma.rn.f64 {d}, {a}, {b}, {c};",
                a = in(reg64) a, b = in(reg64) b, c = in(reg64) c, d = out(reg64) d,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        d
    }
}

/// The one-thread model: the accurate functions stand in for the fast ones.
#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    #[inline(always)]
    pub fn sqrt_f32(x: f32) -> f32 {
        libm::sqrtf(x)
    }
    #[inline(always)]
    pub fn sqrt_f64(x: f64) -> f64 {
        libm::sqrt(x)
    }
    #[inline(always)]
    pub fn rsqrt_fast_f32(x: f32) -> f32 {
        1.0 / libm::sqrtf(x)
    }
    #[inline(always)]
    pub fn rsqrt_fast_f64(x: f64) -> f64 {
        1.0 / libm::sqrt(x)
    }
    #[inline(always)]
    pub fn exp_fast_f32(x: f32) -> f32 {
        libm::expf(x)
    }
    #[inline(always)]
    pub fn exp2_fast_f32(x: f32) -> f32 {
        super::exp2_f64(x as f64) as f32
    }
    #[inline(always)]
    pub fn log_fast_f32(x: f32) -> f32 {
        libm::logf(x)
    }
    #[inline(always)]
    pub fn log2_fast_f32(x: f32) -> f32 {
        libm::log2f(x)
    }
    #[inline(always)]
    pub fn sin_fast_f32(x: f32) -> f32 {
        libm::sinf(x)
    }
    #[inline(always)]
    pub fn cos_fast_f32(x: f32) -> f32 {
        libm::cosf(x)
    }
    #[inline(always)]
    pub fn tanh_fast_f32(x: f32) -> f32 {
        libm::tanhf(x)
    }
    #[inline(always)]
    pub fn pow_fast_f32(x: f32, y: f32) -> f32 {
        super::pow_with(x as f64, y as f64, super::pow_core_f32) as f32
    }
    #[inline(always)]
    pub fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        libm::fmaf(a, b, c)
    }
    #[inline(always)]
    pub fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        libm::fma(a, b, c)
    }
}
