//! Grid-stride loops: each thread visits the indices `start, start + step,
//! start + 2 * step, ...` below an end, where `start` is its global index and
//! `step` the number of threads, so any grid covers any size and
//! consecutive threads touch consecutive elements (coalesced).
//!
//! [`grid_stride`] runs over a 1D range with the global linear index,
//! [`grid_stride_x`] along `x` only, [`grid_stride_rows`] over rows (the `y`
//! and `z` axes folded, see [`global_row`]), and
//! [`grid_stride_2d`] over a `width x height` rectangle (`x` along a row,
//! rows along `y`/`z`): every thread of every launch shape visits a disjoint
//! set, and together they visit every index once.

use super::thread::{global_idx, global_row, grid_threads, linear};
use super::unroll::unrolled;

/// The indices `next, next + step, ...` below `end`: one thread's share of a
/// grid-stride loop. An [`Iterator`] over `usize`.
///
/// ```
/// use cuda_mem::device::GridStride;
/// let v: Vec<usize> = GridStride::new(3, 20, 5).collect();
/// assert_eq!(v, [3, 8, 13, 18]);
/// ```
#[derive(Clone, Debug)]
pub struct GridStride {
    next: usize,
    end: usize,
    step: usize,
}

impl GridStride {
    /// The indices `start, start + step, ...` below `end`. A `step` of 0 is
    /// taken as 1.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::GridStride::new(0, 3, 0).count(), 3);
    /// ```
    #[inline(always)]
    pub fn new(start: usize, end: usize, step: usize) -> Self {
        Self {
            next: start,
            end,
            step: if step == 0 { 1 } else { step },
        }
    }

    /// Calls `f` on every remaining index, in order, `N` indices per loop
    /// iteration (`N` independent memory operations in flight per thread):
    /// the loop of a bandwidth-bound kernel.
    ///
    /// ```
    /// let mut seen = Vec::new();
    /// cuda_mem::device::GridStride::new(1, 30, 3).for_each_unrolled::<4>(|i| seen.push(i));
    /// assert_eq!(seen, (1..30).step_by(3).collect::<Vec<_>>());
    /// ```
    #[inline(always)]
    pub fn for_each_unrolled<const N: usize>(self, mut f: impl FnMut(usize)) {
        let Self {
            mut next,
            end,
            step,
        } = self;
        // The unrolled loop runs while all N indices are below `end`. It
        // cannot overflow when `end + N * step` fits (then the tail loop's
        // `next + step` fits too), which is checked once, here.
        if N > 1 {
            if let Some(block) = step.checked_mul(N) {
                if end.checked_add(block).is_some() {
                    let limit = end.saturating_sub(block - step);
                    while next < limit {
                        let mut k = 0;
                        while k < N {
                            f(next + k * step);
                            k += 1;
                        }
                        next += block;
                    }
                    while next < end {
                        f(next);
                        next += step;
                    }
                    return;
                }
            }
        }
        Self { next, end, step }.for_each(f);
    }

    /// Like [`for_each_unrolled`](Self::for_each_unrolled), but each loop
    /// iteration first calls `load` on its `N` indices, then `f` on the `N`
    /// results in order; the remaining indices one at a time. The `N`
    /// loads are in flight together even where `f` does memory operations
    /// the compiler may not move a load past (shared or global atomics,
    /// stores), which in `for_each_unrolled` make each load wait for the
    /// previous index's work: the loop of a kernel that reads, then
    /// counts or scatters (a histogram).
    ///
    /// `load` is called exactly once on each index the loop visits (the
    /// iterator's indices), in order, and on no other index, so it may
    /// read element `i` of a slice the range covers. Within a batch the
    /// loads of later indices run before `f` on earlier ones: `load` must
    /// not depend on what `f` does. `N` of 0 or 1 is a plain loop; more
    /// than 32 is a compile error (where the call is compiled; `cargo
    /// check` does not see it).
    ///
    /// ```
    /// // A histogram of the values' low bits, as a kernel would count it.
    /// let values: Vec<u32> = (0..1000).map(|i| i * 7).collect();
    /// let mut counts = [0u32; 4];
    /// cuda_mem::device::GridStride::new(0, values.len(), 1)
    ///     .for_each_batched::<4, u32>(|i| values[i], |v| counts[(v % 4) as usize] += 1);
    /// assert_eq!(counts, [250, 250, 250, 250]);
    /// ```
    ///
    /// Batches of more than 32 do not compile:
    ///
    /// ```compile_fail,E0080
    /// cuda_mem::device::GridStride::new(0, 100, 1).for_each_batched::<33, usize>(|i| i, |_| {});
    /// ```
    #[inline(always)]
    pub fn for_each_batched<const N: usize, L: Copy>(
        self,
        mut load: impl FnMut(usize) -> L,
        mut f: impl FnMut(L),
    ) {
        const { assert!(N <= 32, "for_each_batched: at most 32 indices a batch") };
        let Self {
            mut next,
            end,
            step,
        } = self;
        // As in `for_each_unrolled`: the batched loop runs while all N
        // indices are below `end`, which cannot overflow when
        // `end + N * step` fits, checked once, here.
        if N > 1 && next < end {
            if let Some(block) = step.checked_mul(N) {
                if end.checked_add(block).is_some() {
                    let limit = end.saturating_sub(block - step);
                    while next < limit {
                        // Straight-line code: the batch stays in registers.
                        let mut batch = [load(next); N];
                        unrolled::<N>(|k| {
                            if k > 0 {
                                batch[k] = load(next + k * step);
                            }
                        });
                        unrolled::<N>(|k| f(batch[k]));
                        next += block;
                    }
                }
            }
        }
        Self { next, end, step }.for_each(|i| f(load(i)));
    }
}

impl Iterator for GridStride {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.end {
            let i = self.next;
            // At the end of the index space the iteration ends.
            self.next = i.checked_add(self.step).unwrap_or(self.end);
            Some(i)
        } else {
            None
        }
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = if self.next < self.end {
            (self.end - self.next - 1) / self.step + 1
        } else {
            0
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for GridStride {}
impl core::iter::FusedIterator for GridStride {}

/// The calling thread's indices of `0..n` in a grid-stride loop over the
/// global linear index ([`global_linear_idx`](super::global_linear_idx),
/// stepping by [`total_threads`](super::total_threads)). Works for any
/// launch shape.
///
/// ```
/// // The one-thread model: the only thread visits every index.
/// assert_eq!(cuda_mem::device::grid_stride(4).collect::<Vec<_>>(), [0, 1, 2, 3]);
/// ```
#[inline(always)]
pub fn grid_stride(n: usize) -> GridStride {
    let (index, threads) = linear();
    GridStride::new(index, n, threads)
}

/// The calling thread's indices of `0..n` along `x` only: start
/// `global_idx().x`, step `grid_threads().x`. Threads that differ only in `y`
/// or `z` visit the same indices, so use it for the `x` axis of a 2D loop.
///
/// ```
/// assert_eq!(cuda_mem::device::grid_stride_x(2).count(), 2);
/// ```
#[inline(always)]
pub fn grid_stride_x(n: usize) -> GridStride {
    GridStride::new(global_idx().x, n, grid_threads().x)
}

/// The calling thread's rows of `0..height`: start and step from
/// [`global_row`] (`y` and `z` folded). Threads that
/// differ only in `x` visit the same rows.
///
/// ```
/// assert_eq!(cuda_mem::device::grid_stride_rows(3).collect::<Vec<_>>(), [0, 1, 2]);
/// ```
#[inline(always)]
pub fn grid_stride_rows(height: usize) -> GridStride {
    let (row, rows) = global_row();
    GridStride::new(row, height, rows)
}

/// The calling thread's cells `(x, y)` of a `width x height` rectangle, row
/// by row: `x` from [`grid_stride_x`], `y` from [`grid_stride_rows`]. Every
/// cell goes to exactly one thread of the launch, whatever its shape; a
/// launch with `blockDim.x` a multiple of 32 reads rows coalesced.
///
/// ```
/// let cells: Vec<(usize, usize)> = cuda_mem::device::grid_stride_2d(2, 2).collect();
/// assert_eq!(cells, [(0, 0), (1, 0), (0, 1), (1, 1)]);
/// ```
#[inline(always)]
pub fn grid_stride_2d(width: usize, height: usize) -> GridStride2d {
    let x = grid_stride_x(width);
    GridStride2d {
        rows: grid_stride_rows(height),
        row: None,
        first_x: x.clone(),
        x,
    }
}

/// The iterator of [`grid_stride_2d`]: `(x, y)` pairs, row by row.
///
/// ```
/// let n = cuda_mem::device::grid_stride_2d(3, 5).count();
/// assert_eq!(n, 15);
/// ```
#[derive(Clone, Debug)]
pub struct GridStride2d {
    rows: GridStride,
    row: Option<usize>,
    first_x: GridStride,
    x: GridStride,
}

impl Iterator for GridStride2d {
    type Item = (usize, usize);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, usize)> {
        loop {
            if let Some(y) = self.row {
                if let Some(x) = self.x.next() {
                    return Some((x, y));
                }
            }
            self.row = Some(self.rows.next()?);
            self.x = self.first_x.clone();
        }
    }
}

impl core::iter::FusedIterator for GridStride2d {}

/// The indices `next, next + step, ...` below `end`, as a plain counted
/// loop: the index iterator of the slice parameters' grid-stride loops
/// ([`DeviceSlice::grid_stride`](super::DeviceSlice::grid_stride) and the
/// others). Their ends are slice lengths, at most `isize::MAX` for any
/// element that takes memory; indices and steps are bounded by
/// `isize::MAX + 1` (a larger end is taken as that, a larger step visits the
/// same one index as it), so `i + step` cannot overflow for any `i < end`
/// and the loop is `while i < end { ..; i += step }`: one compare and one
/// add per index, no overflow check, a count the compiler can compute.
#[derive(Clone, Debug)]
pub(crate) struct Strided {
    next: usize,
    end: usize,
    step: usize,
}

/// The bound of [`Strided`]'s indices and steps: `isize::MAX + 1`.
const BOUND: usize = isize::MAX as usize + 1;

impl Strided {
    /// The indices `start, start + step, ...` below `end` (and at most
    /// `isize::MAX`); a `step` of 0 is taken as 1.
    #[inline(always)]
    pub(crate) fn new(start: usize, end: usize, step: usize) -> Self {
        Self {
            next: start,
            end: if end > BOUND { BOUND } else { end },
            step: step.clamp(1, BOUND),
        }
    }
}

impl Iterator for Strided {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.end {
            let i = self.next;
            // SAFETY: `i < end <= BOUND` and `step <= BOUND`, so `i + step <
            // 2 * BOUND = usize::MAX + 1`: no overflow (the unchecked add
            // tells the compiler so).
            self.next = unsafe { i.unchecked_add(self.step) };
            Some(i)
        } else {
            None
        }
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = if self.next < self.end {
            (self.end - self.next - 1) / self.step + 1
        } else {
            0
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for Strided {}
impl core::iter::FusedIterator for Strided {}

#[cfg(test)]
mod tests {
    use super::{GridStride, Strided};

    fn unrolled<const N: usize>(s: GridStride) -> Vec<usize> {
        let mut v = Vec::new();
        s.for_each_unrolled::<N>(|i| v.push(i));
        v
    }

    #[test]
    fn batched_loops_load_and_use_what_the_iterator_visits() {
        for start in 0..7 {
            for end in [0usize, 1, 6, 7, 30, 33, 100] {
                for step in [1usize, 2, 5, 8] {
                    let want: Vec<usize> = GridStride::new(start, end, step).collect();
                    // Every whole batch's four loads, then its four uses;
                    // the rest load and use one index at a time.
                    let whole = want.len() / 4 * 4;
                    let mut events = Vec::new();
                    for batch in want[..whole].chunks(4) {
                        events.extend(batch.iter().map(|&i| ('l', i)));
                        events.extend(batch.iter().map(|&i| ('f', i)));
                    }
                    for &i in &want[whole..] {
                        events.extend([('l', i), ('f', i)]);
                    }
                    let seen = core::cell::RefCell::new(Vec::new());
                    GridStride::new(start, end, step).for_each_batched::<4, usize>(
                        |i| {
                            seen.borrow_mut().push(('l', i));
                            i * 3
                        },
                        |v| seen.borrow_mut().push(('f', v / 3)),
                    );
                    assert_eq!(seen.into_inner(), events, "{start} {end} {step}");
                }
            }
        }
        // Near the end of the index space: no overflow, the tail one at a
        // time.
        let s = GridStride::new(usize::MAX - 3, usize::MAX, 1);
        let mut used = Vec::new();
        s.for_each_batched::<8, usize>(|i| i, |i| used.push(i));
        assert_eq!(used, [usize::MAX - 3, usize::MAX - 2, usize::MAX - 1]);
    }

    #[test]
    fn unrolled_loops_visit_what_the_iterator_visits() {
        for start in [0, 1, 5, 17] {
            for end in [0, 1, 3, 16, 17, 100, 1001] {
                for step in [1, 2, 3, 7, 64, 1000] {
                    let s = GridStride::new(start, end, step);
                    let want: Vec<usize> = s.clone().collect();
                    assert_eq!(s.len(), want.len());
                    assert_eq!(unrolled::<1>(s.clone()), want);
                    assert_eq!(unrolled::<4>(s.clone()), want, "{start} {end} {step}");
                    assert_eq!(unrolled::<5>(s), want);
                }
            }
        }
    }

    #[test]
    fn loops_end_at_the_end_of_the_index_space() {
        let end = usize::MAX - 1;
        let s = GridStride::new(usize::MAX - 10, end, 4);
        let want = [usize::MAX - 10, usize::MAX - 6, usize::MAX - 2];
        assert_eq!(s.clone().collect::<Vec<_>>(), want);
        assert_eq!(unrolled::<4>(s), want);
        let s = GridStride::new(usize::MAX - 3, usize::MAX, usize::MAX);
        assert_eq!(s.clone().collect::<Vec<_>>(), [usize::MAX - 3]);
        assert_eq!(unrolled::<8>(s), [usize::MAX - 3]);
    }

    #[test]
    fn counted_loops_visit_what_grid_stride_visits() {
        for start in [0, 1, 5, 17] {
            for end in [0, 1, 3, 16, 17, 100, 1001] {
                for step in [0, 1, 2, 3, 7, 64, 1000] {
                    let want: Vec<usize> = GridStride::new(start, end, step).collect();
                    let counted = Strided::new(start, end, step);
                    assert_eq!(counted.len(), want.len());
                    assert_eq!(counted.collect::<Vec<_>>(), want, "{start} {end} {step}");
                }
            }
        }
    }

    #[test]
    fn counted_loops_stop_at_isize_max() {
        let max = isize::MAX as usize;
        let s = Strided::new(max - 10, usize::MAX - 1, 4);
        assert_eq!(s.collect::<Vec<_>>(), [max - 10, max - 6, max - 2]);
        assert_eq!(Strided::new(max + 1, usize::MAX, 1).count(), 0);
        for step in [1, 2, 3, max, max + 1, usize::MAX] {
            assert_eq!(Strided::new(max, max + 1, step).collect::<Vec<_>>(), [max]);
        }
    }

    #[test]
    fn the_2d_loop_visits_every_cell_row_by_row() {
        let cells: Vec<(usize, usize)> = super::grid_stride_2d(3, 2).collect();
        assert_eq!(cells, [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
        assert_eq!(super::grid_stride_2d(0, 5).count(), 0);
        assert_eq!(super::grid_stride_2d(4, 0).count(), 0);
    }
}
