//! `f32` and `f64` math for kernels: [`sqrt`], [`rsqrt`], [`exp`], [`exp2`],
//! [`log`], [`log2`], [`sin`], [`cos`], [`tanh`], [`pow`], [`fma`], each
//! generic over `f32` and `f64` ([`Float`]), most with a `_fast` variant.
//!
//! Accuracy is stated in ulps (units in the last place of the correctly
//! rounded result) or as an absolute bound. The *accurate* functions keep
//! subnormal inputs and results; the `_fast` ones for `f32` flush them to
//! zero (the `.ftz` hardware forms: an absolute error below 2^-126).
//!
//! | function | `f32` | `f64` |
//! | --- | --- | --- |
//! | [`sqrt`] | `sqrt.rn.f32`: correctly rounded | `sqrt.rn.f64`: correctly rounded |
//! | [`rsqrt`] | `1 / sqrt` in `f64`, rounded: ≤ 1 ulp | `1 / sqrt` and a Newton step on the exact residual: ≤ 1 ulp |
//! | [`rsqrt_fast`] | `rsqrt.approx.ftz.f32`: ≤ 2 ulp | `rsqrt.approx.f64`, single-precision accuracy: relative error ≤ 2^-19 |
//! | [`exp`] | `libm::expf`: ≤ 1 ulp | `libm::exp`: ≤ 1 ulp |
//! | [`exp_fast`] | `ex2.approx.ftz.f32(x · log2 e)`: ≤ 2 + 1.2 \|x\| ulp | = [`exp`] |
//! | [`exp2`] | the `f64` [`exp2`], rounded: ≤ 1 ulp | `libm::exp` of the reduced argument, scaled: ≤ 2 ulp |
//! | [`exp2_fast`] | `ex2.approx.ftz.f32`: ≤ 2.5 ulp (NVIDIA's figure is 2; 2.011 seen on an H200 just below a power of two, at -75.07816) | = [`exp2`] |
//! | [`log`] | `libm::logf`: ≤ 1 ulp | `libm::log`: ≤ 1 ulp |
//! | [`log_fast`] | `lg2.approx.ftz.f32 · ln 2`: absolute error ≤ 2^-21 on [0.5, 2], ≤ 4 ulp elsewhere (the multiply's rounding on top of `lg2.approx`'s error; 3.08 ulp seen on an H200 near 0.39) | = [`log`] |
//! | [`log2`] | `libm::log2f`: ≤ 1 ulp | `libm::log2`: ≤ 1 ulp |
//! | [`log2_fast`] | `lg2.approx.ftz.f32`: absolute error ≤ 2^-22 on [0.5, 2], ≤ 3 ulp elsewhere (2.15 ulp seen on an H200 near 0.26) | = [`log2`] |
//! | [`sin`], [`cos`] | `libm::sinf`/`cosf`: ≤ 1 ulp, any argument | `libm::sin`/`cos`: ≤ 1 ulp, any argument |
//! | [`sin_fast`], [`cos_fast`] | `sin`/`cos.approx.ftz.f32`: absolute error ≤ 2^-20 for \|x\| ≤ π, growing with \|x\| | = [`sin`], [`cos`] |
//! | [`tanh`] | `libm::tanhf`: ≤ 3 ulp (2.1 measured) | `libm::tanh`: ≤ 4 ulp (3 measured) |
//! | [`tanh_fast`] | `tanh.approx.f32` (sm_75 and later): relative error ≤ 2^-10.9; on sm_70 `1 - 2 / (2^(2x log2 e) + 1)` with approximate instructions: absolute error ≤ 2^-20 | = [`tanh`] |
//! | [`pow`] | `exp(y · ln x)` in `f64`, rounded: ≤ 1 ulp | `ln x` in double-double, then `libm::exp`: ≤ 2 ulp |
//! | [`pow_fast`] | `ex2.approx(y · lg2.approx(x))` for `x > 0` (`x < 0` gives NaN): relative error ≤ 2^-21 (2 + 2 \|y\| max(1, \|log2 x\|)) | = [`pow`] |
//! | [`fma`] | `fma.rn.f32`: one rounding | `fma.rn.f64`: one rounding |
//!
//! The bounds of the `libm` functions are those measured against a
//! correctly rounded reference on random arguments (musl's code, from
//! which `libm` is ported, is designed for < 1 ulp except `tanh`); those of
//! the hardware approximations are NVIDIA's for the same instructions (the
//! CUDA intrinsics `__expf`, `__logf`, `__sinf`, ..., and `rsqrtf`).
//!
//! Division with `/` is already correctly rounded (`div.rn`).
//! [`pow`] follows C's special cases (`pow(x, 0) = 1`, `pow(1, y) = 1`,
//! negative `x` with an integer `y`, zeros and infinities).
//!
//! `libm` is a `no_std` crate of portable implementations; the kernel build
//! inlines it into the PTX (no calls out). Its table-driven functions
//! (`exp2`, `exp2f`, `tan`, and `pow` through `sqrt`) refer to `static`
//! tables that cannot be inlined across crates, so those are built here from
//! table-free pieces instead.
//!
//! On other targets the accurate functions compute the same thing (the
//! `libm` parts are the same code) and the `_fast` ones are the accurate
//! ones.
//!
//! This file holds [`Float`] and the functions; `double` holds the
//! table-free double-precision building blocks, and `impls` the `Float`
//! implementations of `f32` and `f64` with the hardware instructions they use.

mod double;
mod impls;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `f32` or `f64` (sealed): the types the functions of [`math`](self) take.
///
/// ```
/// fn hypot<F: cuda_mem::device::math::Float + core::ops::Add<Output = F> + core::ops::Mul<Output = F>>(a: F, b: F) -> F {
///     cuda_mem::device::math::sqrt(a * a + b * b)
/// }
/// assert_eq!(hypot(3.0f32, 4.0), 5.0);
/// ```
pub trait Float: sealed::Sealed + Copy + PartialOrd {
    #[doc(hidden)]
    fn __sqrt(self) -> Self;
    #[doc(hidden)]
    fn __rsqrt(self) -> Self;
    #[doc(hidden)]
    fn __rsqrt_fast(self) -> Self;
    #[doc(hidden)]
    fn __exp(self) -> Self;
    #[doc(hidden)]
    fn __exp_fast(self) -> Self;
    #[doc(hidden)]
    fn __exp2(self) -> Self;
    #[doc(hidden)]
    fn __exp2_fast(self) -> Self;
    #[doc(hidden)]
    fn __log(self) -> Self;
    #[doc(hidden)]
    fn __log_fast(self) -> Self;
    #[doc(hidden)]
    fn __log2(self) -> Self;
    #[doc(hidden)]
    fn __log2_fast(self) -> Self;
    #[doc(hidden)]
    fn __sin(self) -> Self;
    #[doc(hidden)]
    fn __sin_fast(self) -> Self;
    #[doc(hidden)]
    fn __cos(self) -> Self;
    #[doc(hidden)]
    fn __cos_fast(self) -> Self;
    #[doc(hidden)]
    fn __tanh(self) -> Self;
    #[doc(hidden)]
    fn __tanh_fast(self) -> Self;
    #[doc(hidden)]
    fn __pow(self, y: Self) -> Self;
    #[doc(hidden)]
    fn __pow_fast(self, y: Self) -> Self;
    #[doc(hidden)]
    fn __fma(self, b: Self, c: Self) -> Self;
}

macro_rules! generic {
    ($($(#[$doc:meta])* $name:ident => $method:ident ($($arg:ident),*);)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name<F: Float>(x: F $(, $arg: F)*) -> F {
            x.$method($($arg),*)
        }
    )*};
}

generic! {
    /// The square root, correctly rounded (`sqrt.rn`); NaN below zero.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::sqrt(2.25f64), 1.5);
    /// ```
    sqrt => __sqrt();
    /// `1 / sqrt(x)`, within 1 ulp.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::rsqrt(4.0f32), 0.5);
    /// ```
    rsqrt => __rsqrt();
    /// `1 / sqrt(x)` by the hardware approximation (see the table).
    ///
    /// ```
    /// let r = cuda_mem::device::math::rsqrt_fast(4.0f32);
    /// assert!((r - 0.5).abs() < 1e-6);
    /// ```
    rsqrt_fast => __rsqrt_fast();
    /// `e^x`, within 1 ulp.
    ///
    /// ```
    /// assert!((cuda_mem::device::math::exp(1.0f64) - core::f64::consts::E).abs() < 1e-15);
    /// ```
    exp => __exp();
    /// `e^x`, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::exp_fast(1.0f32) - core::f32::consts::E).abs() < 1e-5);
    /// ```
    exp_fast => __exp_fast();
    /// `2^x`, within 1 ulp (`f32`) or 2 ulp (`f64`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::exp2(10.0f32), 1024.0);
    /// ```
    exp2 => __exp2();
    /// `2^x`, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::exp2_fast(0.5f32) - core::f32::consts::SQRT_2).abs() < 1e-5);
    /// ```
    exp2_fast => __exp2_fast();
    /// The natural logarithm, within 1 ulp; NaN below zero, `-inf` at zero.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::log(1.0f64), 0.0);
    /// ```
    log => __log();
    /// The natural logarithm, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::log_fast(core::f32::consts::E) - 1.0).abs() < 1e-5);
    /// ```
    log_fast => __log_fast();
    /// The base-2 logarithm, within 1 ulp.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::log2(8.0f32), 3.0);
    /// ```
    log2 => __log2();
    /// The base-2 logarithm, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::log2_fast(8.0f32) - 3.0).abs() < 1e-5);
    /// ```
    log2_fast => __log2_fast();
    /// The sine (radians), within 1 ulp for any argument.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::sin(0.0f32), 0.0);
    /// ```
    sin => __sin();
    /// The sine, fast (see the table: accurate near zero only in absolute terms).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::sin_fast(1.0f32) - 0.841_470_96).abs() < 1e-5);
    /// ```
    sin_fast => __sin_fast();
    /// The cosine (radians), within 1 ulp for any argument.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::cos(0.0f64), 1.0);
    /// ```
    cos => __cos();
    /// The cosine, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::cos_fast(1.0f32) - 0.540_302_3).abs() < 1e-5);
    /// ```
    cos_fast => __cos_fast();
    /// The hyperbolic tangent, within 3 ulp (`f32`) or 4 ulp (`f64`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::math::tanh(0.0f32), 0.0);
    /// ```
    tanh => __tanh();
    /// The hyperbolic tangent, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::tanh_fast(0.5f32) - 0.462_117_16).abs() < 1e-3);
    /// ```
    tanh_fast => __tanh_fast();
    /// `x^y` with C's special cases, within 1 ulp (`f32`) or 2 ulp (`f64`).
    ///
    /// ```
    /// use cuda_mem::device::math::pow;
    /// assert_eq!(pow(2.0f64, 10.0), 1024.0);
    /// assert_eq!(pow(-2.0f32, 3.0), -8.0);
    /// assert!(pow(-2.0f32, 0.5).is_nan());
    /// assert_eq!(pow(0.0f64, -1.0), f64::INFINITY);
    /// ```
    pow => __pow(y);
    /// `x^y` for `x > 0`, fast (see the table).
    ///
    /// ```
    /// assert!((cuda_mem::device::math::pow_fast(2.0f32, 0.5) - core::f32::consts::SQRT_2).abs() < 1e-5);
    /// ```
    pow_fast => __pow_fast(y);
    /// `x * b + c` with one rounding (`fma.rn`).
    ///
    /// ```
    /// use cuda_mem::device::math::fma;
    /// // The product's low bits survive: 0.1 * 10 - 1 is not 0 with one rounding.
    /// assert_ne!(fma(0.1f64, 10.0, -1.0), 0.0);
    /// ```
    fma => __fma(b, c);
}
