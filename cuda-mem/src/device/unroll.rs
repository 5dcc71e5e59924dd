//! Straight-line repetition of a step for a constant count: what keeps a
//! per-thread array in registers where a loop would not be unrolled.

/// Calls `f(0)`, `f(1)`, ..., `f(N - 1)` as straight-line code, not a
/// loop: an array indexed by the step stays in registers, even where the
/// steps hold warp barriers (a loop with barriers may not be unrolled,
/// and its array would go to local memory). At most 32 steps, checked at
/// compile time.
#[inline(always)]
pub(crate) fn unrolled<const N: usize>(mut f: impl FnMut(usize)) {
    const { assert!(N <= 32, "unrolled: at most 32 steps") };
    macro_rules! steps {
        ($($k:literal)*) => {$(
            if $k < N {
                f($k);
            }
        )*};
    }
    steps!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}
