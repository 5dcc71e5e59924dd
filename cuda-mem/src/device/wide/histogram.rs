//! [`histogram_tiles`]: a block's share of a device-wide histogram, in
//! shared memory when the bins fit, then added to the counts in global
//! memory; and the bin rules of `histogram_even` and `histogram_range`
//! ([`even_bin`], [`range_bin`]).

use crate::device::atomic::{AtomicInteger, DeviceAtomic, Scope};
use crate::device::grid_stride::grid_stride;
use crate::device::memory::load_global_v4;
use crate::device::shared::SharedSlice;
use crate::device::sync::{sync_threads, sync_threads_and};
use crate::device::thread::{block_thread_rank, grid_blocks};

/// The bin of `x` among `bins` equal bins over `[lower, upper)` (or
/// `[lower, upper]` when `closed`): for integers `⌊(x − lower) · bins /
/// w⌋` exactly (in 128-bit arithmetic), `w` the range's width (`upper −
/// lower`, plus one when closed: `0..=255` is every byte); for floats
/// `(x − lower) / (upper − lower) · bins` in the float's own type, kept
/// below `bins` (the top edge's rounding, and `upper` itself when
/// closed); `None` outside (a NaN is outside).
///
/// ```
/// use cuda_mem::device::wide::even_bin;
/// assert_eq!(even_bin(25u8, 0, 100, false, 4), Some(1));
/// assert_eq!(even_bin(255u8, 0, 255, true, 256), Some(255));
/// assert_eq!(even_bin(-1i32, 0, 100, false, 4), None);
/// assert_eq!(even_bin(1.0f32, 0.0, 1.0, true, 10), Some(9));
/// assert_eq!(even_bin(f64::NAN, 0.0, 1.0, false, 10), None);
/// ```
pub trait HistogramSample: crate::copy::device_copy::DeviceCopy + PartialOrd {
    /// See [`even_bin`].
    fn even_bin(self, lower: Self, upper: Self, closed: bool, bins: u32) -> Option<u32>;
}

macro_rules! integer_samples {
    ($($t:ty, $wide:ty, $uwide:ty);*) => {$(
        impl HistogramSample for $t {
            #[inline(always)]
            fn even_bin(self, lower: Self, upper: Self, closed: bool, bins: u32) -> Option<u32> {
                let inside = lower <= self && (self < upper || closed && self == upper);
                if !inside {
                    return None;
                }
                // In the narrowest type that holds `offset * bins` (64 bits
                // for samples of up to 32: a division there is far smaller
                // code on the device than a 128-bit one).
                let offset = (self as $wide - lower as $wide) as $uwide;
                let width = (upper as $wide - lower as $wide) as $uwide + <$uwide>::from(closed);
                Some((offset * bins as $uwide / width) as u32)
            }
        }
    )*};
}
integer_samples!(
    u8, i64, u64; i8, i64, u64; u16, i64, u64; i16, i64, u64; u32, i64, u64; i32, i64, u64;
    u64, i128, u128; i64, i128, u128
);

macro_rules! float_samples {
    ($($t:ty),*) => {$(
        impl HistogramSample for $t {
            #[inline(always)]
            fn even_bin(self, lower: Self, upper: Self, closed: bool, bins: u32) -> Option<u32> {
                let inside = lower <= self && (self < upper || closed && self == upper);
                if !inside {
                    return None;
                }
                // In halves, so that a range as wide as the type (whose
                // width overflows to infinity) still splits; exact, as
                // halving is, above the subnormals.
                let bin = ((self * 0.5 - lower * 0.5) / (upper * 0.5 - lower * 0.5) * bins as $t) as u32;
                Some(if bin < bins { bin } else { bins - 1 })
            }
        }
    )*};
}
float_samples!(f32, f64);

/// [`HistogramSample::even_bin`].
#[inline(always)]
pub fn even_bin<T: HistogramSample>(
    x: T,
    lower: T,
    upper: T,
    closed: bool,
    bins: u32,
) -> Option<u32> {
    x.even_bin(lower, upper, closed, bins)
}

/// The bin of `x` among the bins `[levels[k], levels[k + 1])` of the
/// `levels.len()` ascending levels (`levels.len() - 1` bins): the `k` with
/// `levels[k] <= x < levels[k + 1]`, by binary search; `None` below the
/// first level, at or above the last, or for a NaN. Levels that are not
/// ascending give some bin (never an out-of-range one).
///
/// ```
/// use cuda_mem::device::wide::range_bin;
/// let levels = [0.0f32, 1.0, 10.0, 100.0];
/// assert_eq!(range_bin(5.0, levels.len(), |k| levels[k]), Some(1));
/// assert_eq!(range_bin(100.0, levels.len(), |k| levels[k]), None);
/// ```
#[inline(always)]
pub fn range_bin<T: PartialOrd + Copy>(
    x: T,
    levels: usize,
    level: impl Fn(usize) -> T,
) -> Option<u32> {
    if levels < 2 || !(level(0) <= x && x < level(levels - 1)) {
        return None;
    }
    // The last `k` with `level(k) <= x`, in `0..levels - 1`.
    let (mut lo, mut hi) = (0, levels - 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if level(mid) <= x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo as u32)
}

/// Counts this block's share of `len` samples (a grid-stride loop, four
/// loads in flight) into `counts[bin(x)]` for the samples whose `bin` is
/// `Some` (below `bins`): in `shared` (`u32` counters) when `bins` fits it,
/// then one atomic add per bin into `counts`; else with an atomic add per
/// sample. For byte samples, the first 256 counters of `shared` (when it
/// has them) hold instead the bin of every byte value, found once per
/// block, and the counters are the rest; when every byte is its own bin
/// (256 bins over `0..=255`), the samples are their bins, with no table
/// lookup; and when `shared` has room for 32 copies of the counters (256
/// bins need 8192 `u32`s after the table) and the block has 2^16 samples
/// or more, each lane of a warp counts in its own copy, in its own bank. Every thread of the block calls
/// it; `counts` starts at the caller's (zero) values and may be shared by
/// every block of the grid.
///
/// # Safety
/// `input` holds `len` samples every thread can read, unchanged while the
/// kernel runs; `counts` holds `bins` counters, accessed only atomically
/// while it runs; `bin` returns values below `bins`; `BLOCK` is the
/// launch's block size.
///
/// ```
/// use cuda_mem::device::wide::{even_bin, histogram_tiles};
/// let samples = [1u8, 200, 7, 255, 64];
/// let mut counts = [0u32; 4];
/// let shared = cuda_mem::shared_array![u32; 8];
/// // SAFETY: as the contract says (one block of one thread on the host).
/// unsafe {
///     histogram_tiles::<u8, u32, 1>(samples.as_ptr(), 5, |x| even_bin(x, 0, 255, false, 4), 4, counts.as_mut_ptr(), shared.as_slice());
/// }
/// assert_eq!(counts, [2, 1, 0, 1]); // 255 is outside [0, 255)
/// ```
#[inline(always)]
pub unsafe fn histogram_tiles<T, C, const BLOCK: usize>(
    input: *const T,
    len: usize,
    bin: impl Fn(T) -> Option<u32>,
    bins: u32,
    counts: *mut C,
    shared: SharedSlice<'_, u32>,
) where
    T: crate::copy::device_copy::DeviceCopy,
    C: AtomicInteger + From<u32>,
{
    let rank = block_thread_rank() as usize;
    let bins = bins as usize;
    let global = |b: usize| {
        // SAFETY: `b < bins` (`bin`'s contract), a counter of `counts`,
        // accessed atomically only while the kernel runs.
        unsafe { DeviceAtomic::from_ptr(counts.add(b)) }
    };
    // Byte samples take their bins from a table of all 256 values, made
    // once per block at the front of `shared`: a shared load per sample
    // instead of `bin`'s arithmetic (a 64-bit division for an even
    // histogram, a binary search for a ranged one).
    let (table, counters) = match shared.split_at(BYTE_VALUES) {
        Some(split) if size_of::<T>() == 1 => (Some(split.0), split.1),
        _ => (None, shared),
    };
    // Byte samples into at most `counters.len() / 32` bins, many per block:
    // a copy of the counters per lane of a warp, lane `l`'s count of bin
    // `b` at `b * 32 + l`, so that a warp's 32 adds go to 32 different
    // banks whatever the bytes (with one copy, 32 random bytes put about
    // four adds on the busiest bank, which serialises them); summed per bin
    // at the end. Zeroing and summing 32 copies costs a block more than the
    // adds save below `LANES_FROM` samples (H200, 256 bins of random bytes:
    // 2^28 samples over 792 blocks 92 µs, against 129 over 528 blocks of
    // one copy; at 2^20 over 64 blocks 8.1 against 7.0; at 2^24 over 256
    // blocks of 2^16, 12.35-12.42 µs against 13.5 of CUB's, where one copy
    // measured 0.91-0.92 of CUB).
    let lanes = table.is_some()
        && bins * LANE_COPIES <= counters.len()
        && len / grid_blocks() >= LANES_FROM;
    let private = bins <= counters.len();
    if private {
        let zeroed = if lanes { bins * LANE_COPIES } else { bins };
        let mut b = rank;
        while b < zeroed {
            counters.store(b, 0);
            b += BLOCK;
        }
    }
    let lane = if lanes { rank % LANE_COPIES } else { 0 };
    let stride = if lanes { LANE_COPIES } else { 1 };
    // Whether every byte is its own bin (256 bins over every byte, the
    // common case): then the samples need no table.
    let mut own = true;
    if let Some(table) = table {
        let mut v = rank;
        while v < BYTE_VALUES {
            let byte = v as u8;
            // SAFETY: `T` is one byte, and any byte is a `T` (`DeviceCopy`).
            let x = unsafe { core::mem::transmute_copy::<u8, T>(&byte) };
            let b = bin(x);
            own &= b == Some(v as u32);
            table.store(v, b.unwrap_or(NO_BIN));
            v += BLOCK;
        }
    }
    // A barrier: the counters zeroed and the table made.
    let direct = match table {
        Some(_) => sync_threads_and(own),
        None => {
            if private {
                sync_threads();
            }
            false
        }
    };
    let byte = |x: T| {
        // SAFETY: `T` is one byte wherever this is called (a table or
        // `direct`, only for byte samples).
        usize::from(unsafe { core::mem::transmute_copy::<T, u8>(&x) })
    };
    // One counting loop per way to a bin (each batch of `SAMPLE_CHUNKS`
    // chunks of 16 bytes straight-line code: 64 byte samples) and per kind
    // of counter: no branch between the two
    // kinds of add in the loops (a macro: each loop has its add inlined).
    macro_rules! count_with {
        ($add:expr) => {{
            let add = $add;
            match table {
                // SAFETY: the caller vouches for the memory.
                Some(_) if direct => unsafe {
                    for_each_sample(input, len, |x| add(byte(x) as u32))
                },
                // SAFETY: as above.
                Some(table) => unsafe {
                    for_each_sample(input, len, |x| {
                        let b = table.load(byte(x));
                        if b != NO_BIN {
                            add(b);
                        }
                    })
                },
                // SAFETY: as above.
                None => unsafe {
                    for_each_sample(input, len, |x| {
                        if let Some(b) = bin(x) {
                            add(b);
                        }
                    })
                },
            }
        }};
    }
    if private {
        count_with!(|b: u32| counters.add(b as usize * stride + lane, 1));
    } else {
        count_with!(|b: u32| {
            global(b as usize).fetch_add(C::from(1), Scope::Device);
        });
    }
    if private {
        sync_threads();
        let mut b = rank;
        while b < bins {
            let c = if lanes {
                // Lane `(k + b) % 32`'s copy at step `k`: the threads of a
                // warp (consecutive bins) read 32 different banks.
                let mut c = 0u32;
                let mut k = 0;
                while k < LANE_COPIES {
                    c = c.wrapping_add(counters.load(b * LANE_COPIES + (k + b) % LANE_COPIES));
                    k += 1;
                }
                c
            } else {
                counters.load(b)
            };
            if c != 0 {
                global(b).fetch_add(C::from(c), Scope::Device);
            }
            b += BLOCK;
        }
    }
}

/// The values of a byte: the length of the bin table of byte samples.
const BYTE_VALUES: usize = 256;

/// The copies of the shared counters of byte samples, one per lane of a
/// warp (see `histogram_tiles`).
const LANE_COPIES: usize = 32;

/// The samples per block from which byte samples are counted in a copy
/// per lane (see `histogram_tiles`).
const LANES_FROM: usize = 1 << 16;

/// A byte table's entry for a value outside every bin (`bin` is below
/// `bins`, a `u32`, so never this).
const NO_BIN: u32 = u32::MAX;

/// 16-byte chunks of samples each thread loads before counting them.
const SAMPLE_CHUNKS: usize = 4;

/// Calls `f` on this thread's share of the `len` samples at `input` (a
/// grid-stride share): 16 bytes per load (16 samples of a byte) for the
/// 16-byte-aligned middle, one sample per load for the head before it and
/// the tail after it.
///
/// # Safety
/// `input` holds `len` samples in global memory every thread can read,
/// unchanged while the kernel runs, aligned for `T` (whose size is its
/// alignment: a primitive).
#[inline(always)]
unsafe fn for_each_sample<T: crate::copy::device_copy::DeviceCopy>(
    input: *const T,
    len: usize,
    mut f: impl FnMut(T),
) {
    let size = size_of::<T>();
    let read = |i: usize| {
        // SAFETY: every index below is below `len`; the caller vouches
        // for the memory.
        unsafe { input.add(i).read() }
    };
    // Chunks of samples up to 8 bytes (a sample is taken from a `u64`).
    if size == 0
        || size > 8
        || !16usize.is_multiple_of(size)
        || !(input as usize).is_multiple_of(size)
    {
        grid_stride(len).for_each(|i| f(read(i)));
        return;
    }
    let per = 16 / size;
    let misaligned = (input as usize) % 16;
    let head = if misaligned == 0 {
        0
    } else {
        ((16 - misaligned) / size).min(len)
    };
    let chunks = (len - head) / per;
    let tail = head + chunks * per;
    // The head and the tail, a few samples.
    grid_stride(head + (len - tail))
        .for_each(|k| f(read(if k < head { k } else { tail + k - head })));
    // Four chunks a thread loaded before their samples are counted (the
    // counts' atomics would otherwise hold each load until the previous
    // chunk's are done).
    let load = |c: usize| {
        // SAFETY: `for_each_batched` loads only the chunks it visits, `c <
        // chunks`, so chunk `c` is 16 bytes of the samples, 16-aligned
        // (`head` samples past `input` is the first boundary), in global
        // memory.
        unsafe { load_global_v4(input.add(head + c * per).cast::<[u32; 4]>()) }
    };
    grid_stride(chunks).for_each_batched::<SAMPLE_CHUNKS, [u32; 4]>(load, |words| {
        // The samples' bytes by shifts of the four words, each word by name
        // (an address into `words`, or an index the compiler does not
        // unroll, would put them in local memory).
        let mut emit = |bits: u64| {
            // SAFETY: the sample's bytes are the low `size` bytes of
            // `bits` (little-endian); any bytes are a `T` (`DeviceCopy`).
            f(unsafe { core::mem::transmute_copy::<u64, T>(&bits) })
        };
        let [w0, w1, w2, w3] = words;
        if size == 8 {
            emit(u64::from(w0) | (u64::from(w1) << 32));
            emit(u64::from(w2) | (u64::from(w3) << 32));
        } else {
            let mut word = |w: u32| {
                let mut at = 0;
                while at < 4 {
                    emit(u64::from(w >> (8 * at)));
                    at += size;
                }
            };
            word(w0);
            word(w1);
            word(w2);
            word(w3);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_bins_are_exact_for_integers_and_clamped_for_floats() {
        assert_eq!(even_bin(u64::MAX - 1, 0, u64::MAX, false, 1000), Some(999));
        assert_eq!(
            even_bin(u64::MAX, 0, u64::MAX, true, 1 << 20),
            Some((1 << 20) - 1)
        );
        assert_eq!(even_bin(i64::MIN, i64::MIN, i64::MAX, false, 2), Some(0));
        assert_eq!(even_bin(0i64, i64::MIN, i64::MAX, false, 2), Some(1));
        for x in 0..=255u8 {
            assert_eq!(even_bin(x, 0, 255, true, 256), Some(u32::from(x)));
        }
        for bins in [1u32, 3, 7, 256] {
            for x in 0..100u32 {
                let b = even_bin(x, 0, 100, false, bins).unwrap();
                assert_eq!(b, x * bins / 100);
                let f = even_bin(x as f32 + 0.5, 0.0, 100.0, false, bins).unwrap();
                assert!(f < bins);
            }
        }
        assert_eq!(even_bin(1.0f32, 0.0, 1.0, false, 4), None);
        // A range as wide as the type: its width overflows, its halves do not.
        assert_eq!(even_bin(0.0f32, f32::MIN, f32::MAX, false, 4), Some(2));
        assert_eq!(even_bin(f32::MIN, f32::MIN, f32::MAX, false, 4), Some(0));
        assert_eq!(even_bin(1.0f32, 0.0, 1.0, true, 4), Some(3));
    }

    #[test]
    fn range_bins_find_the_last_level_at_or_below() {
        let levels = [-5i32, 0, 3, 3, 10];
        let at = |k: usize| levels[k];
        for x in -10..15 {
            let want = (levels[0] <= x && x < levels[4])
                .then(|| (0..4).rev().find(|&k| levels[k] <= x).unwrap() as u32);
            assert_eq!(range_bin(x, 5, at), want, "{x}");
        }
        assert_eq!(range_bin(1, 1, |_| 0), None);
    }

    #[test]
    fn both_paths_count_the_same() {
        let samples: Vec<u16> = (0..1000u32).map(|i| (i * 7919 % 300) as u16).collect();
        let shared = crate::shared_array![u32; 64];
        let (mut small, mut large) = ([0u64; 30], [0u64; 70]);
        // SAFETY: one block of one thread; the counters are ours.
        unsafe {
            histogram_tiles::<u16, u64, 1>(
                samples.as_ptr(),
                1000,
                |x| even_bin(x, 0, 300, false, 30),
                30,
                small.as_mut_ptr(),
                shared.as_slice(),
            );
            histogram_tiles::<u16, u64, 1>(
                samples.as_ptr(),
                1000,
                |x| even_bin(x, 0, 300, false, 70),
                70,
                large.as_mut_ptr(),
                shared.as_slice(),
            );
        }
        let want = |bins: u32| {
            let mut c = vec![0u64; bins as usize];
            for &x in &samples {
                c[(u32::from(x) * bins / 300) as usize] += 1;
            }
            c
        };
        assert_eq!(small.to_vec(), want(30));
        assert_eq!(large.to_vec(), want(70));
    }

    /// Byte samples through the table of bins, with shared counters (a
    /// `shared` of 256 + bins), with global ones (256 + fewer), and without
    /// the table (fewer than 256): the same counts, the ranged bins and
    /// the values outside every bin included.
    #[test]
    fn byte_samples_count_the_same_with_and_without_the_table() {
        let samples: Vec<i8> = (0..5000i32).map(|i| (i * 7919 % 256 - 128) as i8).collect();
        let levels = [-100i8, -3, 0, 1, 50, 90];
        let want = {
            let mut c = [0u32; 5];
            for &x in &samples {
                if let Some(b) = range_bin(x, levels.len(), |i| levels[i]) {
                    c[b as usize] += 1;
                }
            }
            c
        };
        let with_counters = crate::shared_array![u32; 261];
        let with_table = crate::shared_array![u32; 258];
        let plain = crate::shared_array![u32; 200];
        for shared in [
            with_counters.as_slice(),
            with_table.as_slice(),
            plain.as_slice(),
        ] {
            let mut counts = [0u32; 5];
            // SAFETY: one block of one thread; the counters are ours.
            unsafe {
                histogram_tiles::<i8, u32, 1>(
                    samples.as_ptr(),
                    samples.len(),
                    |x| range_bin(x, levels.len(), |i| levels[i]),
                    5,
                    counts.as_mut_ptr(),
                    shared,
                );
            }
            assert_eq!(counts, want, "with {} shared counters", shared.len());
        }
    }

    /// Bytes that are their own bins are counted without the table; one
    /// byte outside every bin (a table that is not the identity) takes the
    /// table again, and that byte is not counted.
    #[test]
    fn bytes_that_are_their_own_bins_skip_the_table_only_then() {
        // Enough samples for a block to count in a copy per lane.
        let samples: Vec<u8> = (0..(1u32 << 17) + 3001)
            .map(|i| (i * 7919 % 251) as u8 ^ 0x5a)
            .collect();
        // One copy of the counters, and (room for 32 after the table) one
        // per lane.
        let narrow = crate::shared_array![u32; 512];
        let wide = crate::shared_array![u32; 256 + 32 * 256];
        for (skip, shared) in [None, Some(77u8), Some(0), Some(255)]
            .into_iter()
            .flat_map(|skip| [(skip, narrow.as_slice()), (skip, wide.as_slice())])
        {
            let mut got = [0u32; 256];
            // SAFETY: one block of one thread; the counters are ours.
            unsafe {
                histogram_tiles::<u8, u32, 1>(
                    samples.as_ptr(),
                    samples.len(),
                    |x| (Some(x) != skip).then_some(u32::from(x)),
                    256,
                    got.as_mut_ptr(),
                    shared,
                );
            }
            let mut want = [0u32; 256];
            samples
                .iter()
                .filter(|&&x| Some(x) != skip)
                .for_each(|&x| want[usize::from(x)] += 1);
            assert_eq!(got, want, "without byte {skip:?}");
        }
    }

    /// Every alignment of bytes and shorts, every length around the
    /// 16-byte chunks: the head, the vector middle and the tail together
    /// count each sample once.
    #[test]
    fn unaligned_samples_are_each_counted_once() {
        let shared = crate::shared_array![u32; 256];
        let bytes: Vec<u8> = (0..200u32).map(|i| (i * 37 % 256) as u8).collect();
        let shorts: Vec<u16> = (0..200u32).map(|i| (i * 7919 % 65536) as u16).collect();
        for offset in 0..17 {
            for len in [0usize, 1, 5, 15, 16, 17, 33, 100] {
                let data = &bytes[offset..offset + len];
                let mut got = [0u32; 256];
                // SAFETY: one block of one thread; the counters are ours.
                unsafe {
                    histogram_tiles::<u8, u32, 1>(
                        data.as_ptr(),
                        len,
                        |x| Some(u32::from(x)),
                        256,
                        got.as_mut_ptr(),
                        shared.as_slice(),
                    );
                }
                let mut want = [0u32; 256];
                data.iter().for_each(|&x| want[usize::from(x)] += 1);
                assert_eq!(got, want, "bytes at {offset}, {len}");
                let data = &shorts[offset..offset + len];
                let mut got = [0u64; 16];
                // SAFETY: as above.
                unsafe {
                    histogram_tiles::<u16, u64, 1>(
                        data.as_ptr(),
                        len,
                        |x| Some(u32::from(x) % 16),
                        16,
                        got.as_mut_ptr(),
                        shared.as_slice(),
                    );
                }
                let mut want = [0u64; 16];
                data.iter().for_each(|&x| want[usize::from(x) % 16] += 1);
                assert_eq!(got, want, "shorts at {offset}, {len}");
            }
        }
    }

    #[test]
    fn sixteen_byte_samples_are_counted_one_at_a_time() {
        // A 16-byte sample fills a whole chunk: it takes the one-by-one
        // loop (it once took the chunks' and panicked on the host).
        let shared = crate::shared_array![u32; 64];
        for len in [0usize, 1, 2, 3, 7, 64, 1001] {
            let samples: Vec<u128> = (0..len as u128)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835) ^ (i << 100))
                .collect();
            let mut got = [0u32; 16];
            // SAFETY: one block of one thread; the counters are ours.
            unsafe {
                histogram_tiles::<u128, u32, 1>(
                    samples.as_ptr(),
                    len,
                    |x| Some((x >> 124) as u32),
                    16,
                    got.as_mut_ptr(),
                    shared.as_slice(),
                );
            }
            let mut want = [0u32; 16];
            samples.iter().for_each(|&x| want[(x >> 124) as usize] += 1);
            assert_eq!(got, want, "{len} samples");
        }
    }
}
