//! The `reduce` example's data and kernel: sums, minima and maxima of the
//! fields of a derived struct, with warp shuffles, shared-memory atomics and
//! global atomics, all through the safe device API.
//!
//! The kernel [`reduce_samples`] runs in three levels:
//!
//! 1. each thread folds its samples (a grid-stride loop, four 16-byte loads
//!    in flight) into a [`Partial`] in registers;
//! 2. the warp combines its 32 partials with shuffles
//!    (`cuda_mem::device::warp::{sum, min, max}`), and lane 0 adds the
//!    warp's result into the block's partial in shared memory, atomically;
//! 3. after a barrier, thread 0 of the block adds the block's partial into
//!    the results in global memory, atomically.
//!
//! Floating-point sums are accumulated in `f64` from exact `f32` values;
//! minima and maxima of floats go through [`f32_key`], an order-preserving
//! map to `u32`, because the atomics take integer minima and maxima.

use cuda_mem::device::{
    block_thread_rank, grid_stride, sync_threads, warp, DeviceAtomicSlice, DeviceSlice, Scope,
};
use cuda_mem::{kernel, DeviceCopy};

/// One sample: 16 bytes, 16-byte aligned, so the kernel reads it with one
/// 16-byte load.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C, align(16))]
pub struct Sample {
    /// A measurement.
    pub value: f32,
    /// Its weight.
    pub weight: f32,
    /// An event count.
    pub count: u32,
    /// A signed change.
    pub delta: i32,
}

/// Where [`reduce_samples`] puts each result in its three output slices.
pub mod slot {
    /// `sums[VALUE]`: Σ value (`f64`).
    pub const VALUE: usize = 0;
    /// `sums[WEIGHT]`: Σ weight (`f64`).
    pub const WEIGHT: usize = 1;
    /// `totals[COUNT]`: Σ count (`u64`).
    pub const COUNT: usize = 0;
    /// `totals[DELTA]`: Σ delta (an `i64` as its two's complement `u64`).
    pub const DELTA: usize = 1;
    /// `extremes[..]`: min and max of value (keys, see [`f32_key`](super::f32_key)),
    /// of count, and of delta (keys, see [`i32_key`](super::i32_key)).
    pub const VALUE_MIN: usize = 0;
    /// See [`VALUE_MIN`].
    pub const VALUE_MAX: usize = 1;
    /// See [`VALUE_MIN`].
    pub const COUNT_MIN: usize = 2;
    /// See [`VALUE_MIN`].
    pub const COUNT_MAX: usize = 3;
    /// See [`VALUE_MIN`].
    pub const DELTA_MIN: usize = 4;
    /// See [`VALUE_MIN`].
    pub const DELTA_MAX: usize = 5;
    /// Lengths of the three slices.
    pub const SUMS: usize = 2;
    /// See [`SUMS`].
    pub const TOTALS: usize = 2;
    /// See [`SUMS`].
    pub const EXTREMES: usize = 6;
}

/// Maps an `f32` to a `u32` whose unsigned order is the float order
/// (`-inf < -1 < -0 < +0 < 1 < inf`; NaNs sort past the infinities).
///
/// ```
/// use particles_shared::reduce::{f32_key, f32_from_key};
/// assert!(f32_key(-2.0) < f32_key(-1.0) && f32_key(-1.0) < f32_key(0.5));
/// assert_eq!(f32_from_key(f32_key(-3.25)), -3.25);
/// ```
#[inline]
pub fn f32_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits >> 31 == 1 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The inverse of [`f32_key`].
#[inline]
pub fn f32_from_key(key: u32) -> f32 {
    f32::from_bits(if key >> 31 == 1 {
        key & 0x7fff_ffff
    } else {
        !key
    })
}

/// Maps an `i32` to a `u32` with the same order (the sign bit flipped).
///
/// ```
/// use particles_shared::reduce::{i32_key, i32_from_key};
/// assert!(i32_key(-5) < i32_key(3));
/// assert_eq!(i32_from_key(i32_key(i32::MIN)), i32::MIN);
/// ```
#[inline]
pub fn i32_key(x: i32) -> u32 {
    x as u32 ^ 0x8000_0000
}

/// The inverse of [`i32_key`].
#[inline]
pub fn i32_from_key(key: u32) -> i32 {
    (key ^ 0x8000_0000) as i32
}

/// The initial value of `extremes`: every minimum at `u32::MAX`, every
/// maximum at 0 (the empty set's extremes).
pub const EXTREMES_EMPTY: [u32; slot::EXTREMES] = [u32::MAX, 0, u32::MAX, 0, u32::MAX, 0];

/// What one thread (then one warp, one block) has seen.
#[derive(Clone, Copy, Debug)]
pub struct Partial {
    sums: [f64; slot::SUMS],
    totals: [u64; slot::TOTALS],
    extremes: [u32; slot::EXTREMES],
}

impl Partial {
    /// Nothing seen yet.
    pub const EMPTY: Self = Self {
        sums: [0.0; slot::SUMS],
        totals: [0; slot::TOTALS],
        extremes: EXTREMES_EMPTY,
    };

    /// Adds one sample.
    #[inline(always)]
    pub fn add(&mut self, s: &Sample) {
        self.sums[slot::VALUE] += f64::from(s.value);
        self.sums[slot::WEIGHT] += f64::from(s.weight);
        self.totals[slot::COUNT] += u64::from(s.count);
        self.totals[slot::DELTA] = self.totals[slot::DELTA].wrapping_add(s.delta as i64 as u64);
        let keys = [f32_key(s.value), s.count, i32_key(s.delta)];
        for (k, key) in keys.into_iter().enumerate() {
            self.extremes[2 * k] = self.extremes[2 * k].min(key);
            self.extremes[2 * k + 1] = self.extremes[2 * k + 1].max(key);
        }
    }

    /// The partial of the whole warp, in every lane (shuffles).
    #[inline(always)]
    fn warp_reduce(self) -> Self {
        Self {
            sums: self.sums.map(warp::sum),
            totals: self.totals.map(warp::sum),
            extremes: core::array::from_fn(|i| {
                if i % 2 == 0 {
                    warp::min(self.extremes[i])
                } else {
                    warp::max(self.extremes[i])
                }
            }),
        }
    }
}

/// Adds the sums, totals and extremes of every sample into `sums`,
/// `totals` and `extremes` (laid out as in [`slot`]; start them at 0, 0 and
/// [`EXTREMES_EMPTY`]). Any grid works; a few blocks per multiprocessor of
/// 256 threads read at full bandwidth.
#[kernel]
pub fn reduce_samples(
    samples: DeviceSlice<Sample>,
    sums: DeviceAtomicSlice<f64>,
    totals: DeviceAtomicSlice<u64>,
    extremes: DeviceAtomicSlice<u32>,
) {
    // 1. This thread's samples.
    let mut mine = Partial::EMPTY;
    grid_stride(samples.len()).for_each_unrolled::<4>(|i| mine.add(&samples[i]));

    // 2. The warp's, then the block's, in shared memory.
    let warp_total = mine.warp_reduce();
    let block_sums = cuda_mem::shared_array![f64; slot::SUMS];
    let block_totals = cuda_mem::shared_array![u64; slot::TOTALS];
    let block_extremes = cuda_mem::shared_array![u32; slot::EXTREMES];
    let first = block_thread_rank() == 0;
    if first {
        for i in 0..slot::SUMS {
            if let Some(a) = block_sums.atomic(i) {
                a.store(0.0, Scope::Block);
            }
        }
        for i in 0..slot::TOTALS {
            if let Some(a) = block_totals.atomic(i) {
                a.store(0, Scope::Block);
            }
        }
        for (i, empty) in EXTREMES_EMPTY.into_iter().enumerate() {
            if let Some(a) = block_extremes.atomic(i) {
                a.store(empty, Scope::Block);
            }
        }
    }
    sync_threads();
    if warp::lane_id() == 0 {
        for (i, &v) in warp_total.sums.iter().enumerate() {
            if let Some(a) = block_sums.atomic(i) {
                a.fetch_add(v, Scope::Block);
            }
        }
        for (i, &v) in warp_total.totals.iter().enumerate() {
            if let Some(a) = block_totals.atomic(i) {
                a.fetch_add(v, Scope::Block);
            }
        }
        for (i, &v) in warp_total.extremes.iter().enumerate() {
            if let Some(a) = block_extremes.atomic(i) {
                if i % 2 == 0 {
                    a.fetch_min(v, Scope::Block);
                } else {
                    a.fetch_max(v, Scope::Block);
                }
            }
        }
    }
    sync_threads();

    // 3. The grid's, in global memory.
    if first {
        for i in 0..slot::SUMS {
            if let (Some(from), Some(to)) = (block_sums.atomic(i), sums.get(i)) {
                to.fetch_add(from.load(Scope::Block), Scope::Device);
            }
        }
        for i in 0..slot::TOTALS {
            if let (Some(from), Some(to)) = (block_totals.atomic(i), totals.get(i)) {
                to.fetch_add(from.load(Scope::Block), Scope::Device);
            }
        }
        for i in 0..slot::EXTREMES {
            if let (Some(from), Some(to)) = (block_extremes.atomic(i), extremes.get(i)) {
                let v = from.load(Scope::Block);
                if i % 2 == 0 {
                    to.fetch_min(v, Scope::Device);
                } else {
                    to.fetch_max(v, Scope::Device);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;
    use cuda_mem::device::DeviceAtomicSlice;

    #[test]
    fn keys_preserve_order() {
        let floats = [
            f32::NEG_INFINITY,
            -3.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            2.0,
            f32::INFINITY,
        ];
        for pair in floats.windows(2) {
            assert!(f32_key(pair[0]) < f32_key(pair[1]), "{pair:?}");
        }
        for x in floats {
            assert_eq!(f32_from_key(f32_key(x)).to_bits(), x.to_bits());
        }
        let ints = [i32::MIN, -7, -1, 0, 1, i32::MAX];
        for pair in ints.windows(2) {
            assert!(i32_key(pair[0]) < i32_key(pair[1]));
        }
    }

    /// The kernel's body on the CPU (one thread) against plain folds.
    #[test]
    fn the_kernel_body_sums_and_finds_extremes() {
        let samples: Vec<Sample> = (0..1000i32)
            .map(|i| Sample {
                value: (i as f32 - 400.0) * 0.25,
                weight: 1.0 / (1 + i % 7) as f32,
                count: (i * 37 % 101) as u32,
                delta: (i * 7919) % 2001 - 1000,
            })
            .collect();
        let mut sums = [0.0f64; slot::SUMS];
        let mut totals = [0u64; slot::TOTALS];
        let mut extremes = EXTREMES_EMPTY;
        // SAFETY: the arrays outlive the slices, which are their only users.
        unsafe {
            reduce_samples::on_host(
                DeviceSlice::from_raw_parts(samples.as_ptr(), samples.len()),
                DeviceAtomicSlice::from_raw_parts(sums.as_mut_ptr(), slot::SUMS),
                DeviceAtomicSlice::from_raw_parts(totals.as_mut_ptr(), slot::TOTALS),
                DeviceAtomicSlice::from_raw_parts(extremes.as_mut_ptr(), slot::EXTREMES),
            );
        }
        let value_sum: f64 = samples.iter().map(|s| f64::from(s.value)).sum();
        assert_eq!(sums[slot::VALUE], value_sum);
        let count_sum: u64 = samples.iter().map(|s| u64::from(s.count)).sum();
        assert_eq!(totals[slot::COUNT], count_sum);
        let delta_sum: i64 = samples.iter().map(|s| i64::from(s.delta)).sum();
        assert_eq!(totals[slot::DELTA] as i64, delta_sum);
        let min = samples
            .iter()
            .map(|s| s.value)
            .fold(f32::INFINITY, f32::min);
        assert_eq!(f32_from_key(extremes[slot::VALUE_MIN]), min);
        let max = samples.iter().map(|s| s.delta).max();
        assert_eq!(Some(i32_from_key(extremes[slot::DELTA_MAX])), max);
    }
}
