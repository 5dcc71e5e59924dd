//! The table-free double-precision building blocks of [`math`](super) (used
//! on every target): `2^x`, `ln x` as a double-double, `pow` with C's special
//! cases and `1 / sqrt(x)` in `f64`, where `libm` would reach for its tables.

use crate::device::math::Float;

/// ln 2 split so that `k * LN2_HI` is exact for `|k| < 2^21`.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
/// ln 2 - LN2_HI.
const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
/// ln 2 rounded to nearest, and the rest.
const LN2: f64 = f64::from_bits(0x3fe6_2e42_fefa_39ef);
const LN2_TAIL: f64 = f64::from_bits(0x3c7a_bc9e_3b39_803f);
/// 2/3 as a double-double.
const TWO_THIRDS_HI: f64 = f64::from_bits(0x3fe5_5555_5555_5555);
const TWO_THIRDS_LO: f64 = f64::from_bits(0x3c85_5555_5555_5555);
/// e as a double-double.
const E_HI: f64 = f64::from_bits(0x4005_bf0a_8b14_5769);
const E_LO: f64 = f64::from_bits(0x3ca4_d57e_e2b1_013a);

/// `a * b + c` with one rounding.
#[inline(always)]
fn fma64(a: f64, b: f64, c: f64) -> f64 {
    <f64 as Float>::__fma(a, b, c)
}

/// `a + b` as a double-double (Knuth's two-sum: any magnitudes).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b` as a double-double when `|a| >= |b|` (or `a == 0`).
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `2^x` in `f64`, within 2 ulp: `x = n + f` with `|f| <= 1/2`, `e^(f ln 2)`
/// with `f ln 2` as a double-double, scaled by `2^n`.
#[inline]
pub(super) fn exp2_f64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x >= 1024.0 {
        return f64::INFINITY;
    }
    if x < -1075.0 {
        return 0.0;
    }
    let n = libm::round(x);
    let f = x - n; // exact
    let hi = f * LN2;
    let lo = fma64(f, LN2, -hi) + f * LN2_TAIL;
    let e = libm::exp(hi);
    libm::scalbn(e + e * lo, n as i32)
}

/// `ln x` as a double-double `(hi, lo)` for finite `x > 0`, with a relative
/// error near 2^-64: `x = m 2^k`, `m` in `[sqrt(1/2), sqrt(2))`,
/// `ln m = 2 atanh(s)` with `s = (m - 1) / (m + 1)` as a double-double and
/// the series to `s^25`.
#[inline]
fn ln_dd(x: f64) -> (f64, f64) {
    let mut k: i32 = 0;
    let mut x = x;
    if x < f64::MIN_POSITIVE {
        x *= f64::from_bits(0x4350_0000_0000_0000); // 2^54
        k = -54;
    }
    let bits = x.to_bits();
    k += ((bits >> 52) & 0x7ff) as i32 - 1023;
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        k += 1;
    }
    let f = m - 1.0; // exact (Sterbenz)
    let u = 2.0 + f;
    let u_lo = f - (u - 2.0);
    let s = f / u;
    let s_lo = (fma64(-s, u, f) - s * u_lo) / u;
    let z = s * s;
    let z_lo = fma64(s, s, -z);
    // R(z) = 2/5 + 2z/7 + ... + 2z^10/25.
    let mut r = 2.0 / 25.0;
    r = r * z + 2.0 / 23.0;
    r = r * z + 2.0 / 21.0;
    r = r * z + 2.0 / 19.0;
    r = r * z + 2.0 / 17.0;
    r = r * z + 2.0 / 15.0;
    r = r * z + 2.0 / 13.0;
    r = r * z + 2.0 / 11.0;
    r = r * z + 2.0 / 9.0;
    r = r * z + 2.0 / 7.0;
    r = r * z + 2.0 / 5.0;
    // Q = 2/3 + z R(z), a double-double.
    let (q_hi, q_lo) = two_sum(TWO_THIRDS_HI, z * r);
    let q_lo = q_lo + TWO_THIRDS_LO;
    // s^3 = s (z + z_lo), a double-double.
    let s3_hi = s * z;
    let s3_lo = fma64(s, z, -s3_hi) + s * z_lo;
    // T = s^3 Q.
    let t_hi = s3_hi * q_hi;
    let t_lo = fma64(s3_hi, q_hi, -t_hi) + s3_hi * q_lo + s3_lo * q_hi;
    // ln m = 2s + T + 2 s_lo (1 + z).
    let (h, l) = two_sum(2.0 * s, t_hi);
    let l = l + t_lo + 2.0 * s_lo * (1.0 + z);
    // ln x = k ln 2 + ln m.
    let kf = k as f64;
    let (hh, ll) = two_sum(kf * LN2_HI, h);
    fast_two_sum(hh, ll + l + kf * LN2_LO)
}

/// Whether `y` is an odd integer.
#[inline(always)]
fn is_odd_integer(y: f64) -> bool {
    // Every double of magnitude 2^53 or more is an even integer.
    libm::fabs(y) < 9_007_199_254_740_992.0 && libm::trunc(y) == y && {
        let half = y * 0.5;
        libm::trunc(half) != half
    }
}

/// `pow` with C's special cases; `core(|x|, y)` computes `|x|^y` for finite
/// `x != 0, 1` and finite `y != 0`.
#[inline(always)]
pub(super) fn pow_with(x: f64, y: f64, core: impl Fn(f64, f64) -> f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0;
    }
    if x.is_nan() || y.is_nan() {
        return x + y;
    }
    let ax = libm::fabs(x);
    if y.is_infinite() {
        return if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y > 0.0) {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let odd = is_odd_integer(y);
    let negative = x.is_sign_negative();
    if x == 0.0 || x.is_infinite() {
        // |x|^y is 0 or inf; the sign follows x for odd integers.
        let big = (x == 0.0) == (y < 0.0);
        let magnitude = if big { f64::INFINITY } else { 0.0 };
        return if negative && odd {
            -magnitude
        } else {
            magnitude
        };
    }
    if negative && libm::trunc(y) != y {
        return f64::NAN;
    }
    let r = core(ax, y);
    if negative && odd {
        -r
    } else {
        r
    }
}

/// `|x|^y` in `f64` for [`pow_with`]: `y ln|x|` as a double-double from
/// [`ln_dd`], then `e^hi (1 + lo)`.
#[inline]
pub(super) fn pow_core_f64(ax: f64, y: f64) -> f64 {
    let (lh, ll) = ln_dd(ax);
    let th = y * lh;
    let tl = fma64(y, lh, -th) + y * ll;
    if th > 709.0 && th < 710.0 {
        // e^th may overflow where e^(th + tl) does not: e^(th - 1) e.
        let p = libm::exp(th - 1.0); // th - 1 is exact here
        return fma64(p, E_HI, p * (E_LO + E_HI * tl));
    }
    let e = libm::exp(th);
    if e.is_infinite() {
        return e;
    }
    e + e * tl
}

/// `1 / sqrt(x)` in `f64` within 1 ulp: the quotient, corrected by one
/// Newton step on an exactly computed residual `1 - x r^2`.
#[inline]
pub(super) fn rsqrt_f64(x: f64) -> f64 {
    let r = 1.0 / <f64 as Float>::__sqrt(x);
    if !(r.is_finite() && r > 0.0) {
        return r; // zero, infinity, NaN, negative input
    }
    let h = x * r;
    let h_lo = fma64(x, r, -h);
    let e = fma64(-h, r, 1.0) - h_lo * r;
    fma64(0.5 * r, e, r)
}

/// `|x|^y` for `f32` arguments, computed in `f64`: `e^(y ln|x|)` is within
/// 2^-44 (relative) of the result, so rounding to `f32` is within 1 ulp.
#[inline]
pub(super) fn pow_core_f32(ax: f64, y: f64) -> f64 {
    libm::exp(y * libm::log(ax))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::math::{cos, exp, exp2, log, log2, pow, rsqrt, sin, sqrt, tanh};

    /// The distance in ulps between two doubles of the same sign.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    /// xorshift: the tests need no dependency.
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn ln_dd_is_accurate_against_std() {
        let mut seed = 0x1234_5678_9abc_def1;
        for _ in 0..200_000 {
            let x = f64::from_bits(rng(&mut seed) % 0x7ff0_0000_0000_0000);
            if x == 0.0 {
                continue;
            }
            let (hi, lo) = ln_dd(x);
            assert!(
                ulps(hi, x.ln()) <= 1,
                "ln_dd({x:e}) = {hi:e} + {lo:e}, std {:e}",
                x.ln()
            );
            assert!(lo.abs() <= hi.abs() * 2f64.powi(-52) || hi == 0.0);
        }
        // (Its low part is checked through `pow`, whose exponent amplifies
        // any error of the logarithm: bases near 1 with huge exponents.)
    }

    #[test]
    fn exp2_f64_is_within_2_ulp() {
        let mut seed = 0x0bad_5eed_1234_5678;
        for _ in 0..200_000 {
            let x = (rng(&mut seed) as i64 as f64) / (i64::MAX as f64) * 1100.0;
            let got = exp2_f64(x);
            let want = x.exp2();
            assert!(ulps(got, want) <= 2, "exp2({x}) = {got:e}, std {want:e}");
        }
        assert!(ulps(exp2_f64(1023.5), 2f64.powf(1023.5)) <= 2);
        assert_eq!(exp2_f64(-1074.0), f64::from_bits(1));
        assert_eq!(exp2_f64(-1022.0), f64::MIN_POSITIVE);
        assert_eq!(exp2_f64(1024.0), f64::INFINITY);
        assert_eq!(exp2_f64(-1080.0), 0.0);
        assert!(exp2_f64(f64::NAN).is_nan());
        assert_eq!(exp2_f64(f64::NEG_INFINITY), 0.0);
    }

    #[test]
    fn pow_f64_is_within_2_ulp_of_std() {
        let mut seed = 0x5eed_0000_1111_2222;
        let mut worst = 0;
        for _ in 0..300_000 {
            let x = f64::from_bits(rng(&mut seed) % 0x7ff0_0000_0000_0000);
            let y = (rng(&mut seed) as i64 as f64) / (i64::MAX as f64) * 64.0;
            let want = x.powf(y);
            if !want.is_finite() || want == 0.0 || want < f64::MIN_POSITIVE {
                continue;
            }
            let got = pow(x, y);
            worst = worst.max(ulps(got, want));
            assert!(
                ulps(got, want) <= 2,
                "pow({x:e}, {y}) = {got:e}, std {want:e}"
            );
        }
        // Bases near 1 with huge exponents: where a plain exp(y log x) fails.
        for (x, y) in [
            (1.0000001, 7.0e9),
            (0.999_999_9, -7.0e9),
            (1.5, 1750.0),
            (0.5, 1074.5),
        ] {
            let (got, want) = (pow(x, y), f64::powf(x, y));
            assert!(
                ulps(got, want) <= 2,
                "pow({x}, {y}) = {got:e}, std {want:e}"
            );
        }
        eprintln!("worst pow error: {worst} ulp");
    }

    #[test]
    fn rsqrt_f64_is_within_1_ulp() {
        let mut seed = 0x7777_1234_5555_9999;
        for _ in 0..200_000 {
            let x = f64::from_bits(rng(&mut seed) % 0x7ff0_0000_0000_0000);
            let got = rsqrt(x);
            // The reference: 1/sqrt(x) = sqrt(1/x) up to two roundings; use
            // the correctly rounded quotient of the correctly rounded root
            // refined the same way, checked against a slower route.
            let want = 1.0 / x.sqrt();
            assert!(
                ulps(got, want) <= 2,
                "rsqrt({x:e}) = {got:e}, 1/sqrt {want:e}"
            );
            // r^2 x is 1 within about an ulp and a half.
            if x > 1e-300 && x < 1e300 {
                let back = got * got * x;
                assert!(
                    (back - 1.0).abs() < 4.0 * f64::EPSILON,
                    "{x:e}: r^2 x = {back}"
                );
            }
        }
        assert_eq!(rsqrt(0.25f64), 2.0);
        assert_eq!(rsqrt(0.0f64), f64::INFINITY);
        assert!(rsqrt(-1.0f64).is_nan());
    }

    #[test]
    fn pow_follows_c_special_cases() {
        let (inf, nan) = (f64::INFINITY, f64::NAN);
        let cases: &[(f64, f64, f64)] = &[
            (nan, 0.0, 1.0),
            (1.0, nan, 1.0),
            (-1.0, inf, 1.0),
            (-1.0, -inf, 1.0),
            (0.5, inf, 0.0),
            (0.5, -inf, inf),
            (2.0, inf, inf),
            (2.0, -inf, 0.0),
            (0.0, -3.0, inf),
            (-0.0, -3.0, -inf),
            (-0.0, -2.0, inf),
            (-0.0, 3.0, -0.0),
            (-0.0, 2.5, 0.0),
            (inf, -1.0, 0.0),
            (-inf, 3.0, -inf),
            (-inf, -3.0, -0.0),
            (-inf, 2.0, inf),
            (-2.0, 3.0, -8.0),
            (-2.0, 2.0, 4.0),
            (-8.0, 1.0 / 3.0, nan),
            (-2.0, 1e300, inf),
        ];
        for &(x, y, want) in cases {
            let got = pow(x, y);
            let same = (got.is_nan() && want.is_nan())
                || (got == want && got.is_sign_negative() == want.is_sign_negative());
            assert!(same, "pow({x}, {y}) = {got}, want {want}");
            let got32 = pow(x as f32, y as f32) as f64;
            let want32 = (want as f32) as f64;
            let same32 = (got32.is_nan() && want32.is_nan())
                || (got32 == want32 && got32.is_sign_negative() == want32.is_sign_negative());
            assert!(
                same32 || y as f32 as f64 != y,
                "pow({x}f32, {y}) = {got32}, want {want32}"
            );
        }
    }

    #[test]
    fn f32_functions_are_within_their_bounds_against_f64_std() {
        let mut seed = 0x0f32_0f32_0f32_0f32;
        let ulps32 = |got: f32, want: f64| -> f64 {
            let w = want as f32;
            if got == w || (got.is_nan() && want.is_nan()) {
                return 0.0;
            }
            let ulp = f32::from_bits(w.abs().to_bits() + 1) as f64 - w.abs() as f64;
            ((got as f64 - want) / ulp).abs()
        };
        for _ in 0..100_000 {
            let x = f32::from_bits((rng(&mut seed) as u32) % 0x4300_0000); // 0 ..= 128
            let s = if rng(&mut seed) & 1 == 0 { x } else { -x };
            assert!(
                ulps32(exp(s.min(88.0)), (s.min(88.0) as f64).exp()) <= 1.0,
                "exp {s}"
            );
            assert!(ulps32(exp2(s), (s as f64).exp2()) <= 1.0, "exp2 {s}");
            if x > 0.0 {
                assert!(ulps32(log(x), (x as f64).ln()) <= 1.0, "log {x}");
                assert!(ulps32(log2(x), (x as f64).log2()) <= 1.0, "log2 {x}");
                assert!(
                    ulps32(rsqrt(x), 1.0 / (x as f64).sqrt()) <= 1.0,
                    "rsqrt {x}"
                );
                let y = (rng(&mut seed) % 2000) as f32 / 100.0 - 10.0;
                assert!(
                    ulps32(pow(x, y), (x as f64).powf(y as f64)) <= 1.0,
                    "pow {x} {y}"
                );
            }
            assert!(ulps32(sin(s), (s as f64).sin()) <= 1.0, "sin {s}");
            assert!(ulps32(cos(s), (s as f64).cos()) <= 1.0, "cos {s}");
            assert!(ulps32(tanh(s), (s as f64).tanh()) <= 3.0, "tanh {s}");
            assert_eq!(sqrt(x), (x as f64).sqrt() as f32);
        }
    }
}
