//! The blocks of a stable LSD radix sort, 8 bits per pass: [`RadixKey`]
//! (the order-preserving bits of a key), [`radix_counts`] (a block's digit
//! counts) and [`radix_scatter`] (a block's stable ranking and scatter).
//!
//! One pass over digit `shift..shift + 8` of `len` keys with `blocks`
//! blocks: block `b` owns the tiles `b * per_block .. (b + 1) * per_block`
//! ([`block_range`]); [`radix_counts`] writes its count of each digit `d`
//! to `counts[d * blocks + b]`; an exclusive sum of `counts` (digit-major,
//! then block) gives each block's first place for each digit; and
//! [`radix_scatter`] writes the block's keys there, in their input order
//! within each digit. Keys go to `out`, with a `u32` value each (their
//! input index on the first pass of `sort_pairs`).

use crate::copy::device_copy::DeviceCopy;
use crate::device::shared::SharedSlice;
use crate::device::sync::sync_threads;
use crate::device::thread::{block_rank, block_thread_rank};
use crate::device::warp;

/// Digits per pass: 8 bits.
pub const RADIX_BITS: u32 = 8;
/// Bins per pass.
pub const RADIX_BINS: usize = 1 << RADIX_BITS;

/// A key type of the radix sort: its bits in an order-preserving `u64`
/// (unsigned integers as they are; signed ones with the sign bit flipped;
/// floats in the total order of `f32::total_cmp`: `-NaN < -inf < ... <
/// -0.0 < +0.0 < ... < +inf < +NaN`).
///
/// ```
/// use cuda_mem::device::wide::RadixKey;
/// assert!((-1i32).ordered() < 0i32.ordered());
/// assert!((-0.0f32).ordered() < 0.0f32.ordered());
/// assert!(f64::INFINITY.ordered() < f64::NAN.ordered());
/// assert_eq!(f32::from_ordered((-2.5f32).ordered()), -2.5);
/// ```
pub trait RadixKey: DeviceCopy {
    /// The key's size in bytes: the number of 8-bit passes.
    const BYTES: u32;
    /// The order-preserving bits.
    fn ordered(self) -> u64;
    /// The key of [`ordered`](Self::ordered) bits.
    fn from_ordered(bits: u64) -> Self;
}

macro_rules! unsigned_keys {
    ($($t:ty),*) => {$(
        impl RadixKey for $t {
            const BYTES: u32 = size_of::<$t>() as u32;
            #[inline(always)]
            fn ordered(self) -> u64 { self as u64 }
            #[inline(always)]
            fn from_ordered(bits: u64) -> Self { bits as $t }
        }
    )*};
}
unsigned_keys!(u8, u16, u32, u64);

macro_rules! signed_keys {
    ($($t:ty, $u:ty);*) => {$(
        impl RadixKey for $t {
            const BYTES: u32 = size_of::<$t>() as u32;
            #[inline(always)]
            fn ordered(self) -> u64 { ((self as $u) ^ (1 << (<$u>::BITS - 1))) as u64 }
            #[inline(always)]
            fn from_ordered(bits: u64) -> Self { ((bits as $u) ^ (1 << (<$u>::BITS - 1))) as $t }
        }
    )*};
}
signed_keys!(i8, u8; i16, u16; i32, u32; i64, u64);

macro_rules! float_keys {
    ($($t:ty, $u:ty);*) => {$(
        impl RadixKey for $t {
            const BYTES: u32 = size_of::<$t>() as u32;
            #[inline(always)]
            fn ordered(self) -> u64 {
                let bits = self.to_bits();
                let sign = 1 << (<$u>::BITS - 1);
                (if bits & sign != 0 { !bits } else { bits | sign }) as u64
            }
            #[inline(always)]
            fn from_ordered(bits: u64) -> Self {
                let bits = bits as $u;
                let sign = 1 << (<$u>::BITS - 1);
                <$t>::from_bits(if bits & sign != 0 { bits & !sign } else { !bits })
            }
        }
    )*};
}
float_keys!(f32, u32; f64, u64);

/// The digit of `key` at bit `shift`, of the key's bits xor `flip` (all
/// ones for a descending sort).
#[inline(always)]
fn digit<K: RadixKey>(key: K, shift: u32, flip: u64) -> usize {
    (((key.ordered() ^ flip) >> shift) as usize) & (RADIX_BINS - 1)
}

/// The elements block `block` owns in a pass over `len` elements by
/// `blocks` blocks of tiles of `tile` elements, `per_block` tiles each:
/// `(first, end)`.
///
/// ```
/// use cuda_mem::device::wide::block_range;
/// assert_eq!(block_range(1, 10_000, 2048, 3), (6144, 10_000));
/// ```
#[inline(always)]
pub const fn block_range(
    block: usize,
    len: usize,
    tile: usize,
    per_block: usize,
) -> (usize, usize) {
    let first = block * per_block * tile;
    let end = first + per_block * tile;
    let first = if first < len { first } else { len };
    (first, if end < len { end } else { len })
}

/// Counts the digits at `shift` of this block's keys ([`block_range`]) in
/// `bins` (shared, [`RADIX_BINS`] elements) and writes count `d` to
/// `counts[d * grid_blocks + block]`. Every thread of the block calls it.
///
/// # Safety
/// `input` holds `len` keys every thread can read, unchanged while the
/// kernel runs; `counts` has `RADIX_BINS * blocks` elements, this
/// launch's alone; the grid has `blocks` blocks; `BLOCK` is the launch's
/// block size.
///
/// ```
/// use cuda_mem::device::wide::{radix_counts, RADIX_BINS};
/// let keys = [3u32, 1, 3, 2];
/// let mut counts = vec![0u32; RADIX_BINS];
/// let bins = cuda_mem::shared_array![u32; 256];
/// // SAFETY: as the contract says (one block of one thread on the host).
/// unsafe { radix_counts::<u32, 1>(keys.as_ptr(), 4, 0, 0, counts.as_mut_ptr(), 1, 4, 1, bins.as_slice()) };
/// assert_eq!(&counts[..4], [0, 1, 1, 2]);
/// ```
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn radix_counts<K: RadixKey, const BLOCK: usize>(
    input: *const K,
    len: usize,
    shift: u32,
    flip: u64,
    counts: *mut u32,
    blocks: usize,
    tile: usize,
    per_block: usize,
    bins: SharedSlice<'_, u32>,
) {
    let rank = block_thread_rank() as usize;
    let block = block_rank();
    let mut d = rank;
    while d < RADIX_BINS {
        bins.store(d, 0);
        d += BLOCK;
    }
    sync_threads();
    let (first, end) = block_range(block, len, tile, per_block);
    let mut i = first + rank;
    while i < end {
        // SAFETY: `i < end <= len`; the caller vouches for the memory.
        let key = unsafe { input.add(i).read() };
        bins.add(digit(key, shift, flip), 1);
        i += BLOCK;
    }
    sync_threads();
    let mut d = rank;
    while d < RADIX_BINS {
        // SAFETY: `d * blocks + block < RADIX_BINS * blocks`; this block
        // alone writes its column.
        unsafe { counts.add(d * blocks + block).write(bins.load(d)) };
        d += BLOCK;
    }
}

/// The block's shared memory for [`radix_scatter`].
pub struct RadixScratch<'a, K> {
    /// Each warp's running count of each digit in the tile, then its
    /// first place: `RADIX_BINS` per warp.
    pub warp_counts: SharedSlice<'a, u32>,
    /// The block's next place for each digit: `RADIX_BINS`.
    pub next: SharedSlice<'a, u32>,
    /// The tile's count of each digit: `RADIX_BINS`.
    pub tile_counts: SharedSlice<'a, u32>,
    /// The tile's first place of each digit: `RADIX_BINS`.
    pub tile_starts: SharedSlice<'a, u32>,
    /// Each key's rank among the keys of its digit in its warp's part of
    /// the tile: `BLOCK * ITEMS`.
    pub ranks: SharedSlice<'a, u32>,
    /// The tile's keys in their sorted order: `BLOCK * ITEMS`.
    pub keys: SharedSlice<'a, K>,
    /// Their values: `BLOCK * ITEMS` (unused for keys alone).
    pub values: SharedSlice<'a, u32>,
}

impl<K> Clone for RadixScratch<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for RadixScratch<'_, K> {}

/// Writes this block's keys (and a `u32` value each) to their places of
/// the pass at `shift`: the block's first place for each digit comes from
/// `offsets` (the exclusive sum of [`radix_counts`]'s `counts`), and within
/// a digit the keys keep their input order (the sort is stable). Each warp
/// ranks its rows of 32 consecutive keys with `match_any` and running
/// per-warp digit counts; the warps' counts are summed per digit across
/// the block, tile after tile. The tile's keys then go through shared
/// memory in their sorted order, so that consecutive threads write
/// consecutive places (coalesced stores within each digit's run).
///
/// `values_in` null: the values are the keys' input indices (the first
/// pass of `sort_pairs`); `values_out` null: keys only.
///
/// # Safety
/// - `keys_in` (and `values_in`, unless null) hold `len` elements every
///   thread can read, unchanged while the kernel runs; `keys_out` (and
///   `values_out`, unless null) have `len` elements, this launch's alone,
///   overlapping neither input.
/// - `offsets` holds the exclusive sum of this pass's counts
///   (`RADIX_BINS * blocks`, digit-major) over the same `len`, `shift`,
///   `flip`, `tile` (`BLOCK * ITEMS`) and `per_block`; the grid has
///   `blocks` blocks.
/// - Every thread of the block calls it, `BLOCK` is the launch's block
///   size (below 32 or a multiple of it), `len` is below 2^32, and
///   `scratch` has the lengths [`RadixScratch`] states.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn radix_scatter<K: RadixKey, const BLOCK: usize, const ITEMS: usize>(
    keys_in: *const K,
    keys_out: *mut K,
    values_in: *const u32,
    values_out: *mut u32,
    len: usize,
    shift: u32,
    flip: u64,
    offsets: *const u32,
    blocks: usize,
    per_block: usize,
    scratch: RadixScratch<'_, K>,
) {
    let lanes = const { super::warp_lanes(BLOCK) };
    let warps = BLOCK.div_ceil(lanes);
    let rank = block_thread_rank() as usize;
    let (lane, warp) = (rank % lanes, rank / lanes);
    let block = block_rank();
    let tile = BLOCK * ITEMS;
    let mut d = rank;
    while d < RADIX_BINS {
        // SAFETY: `d * blocks + block` is inside `offsets`.
        scratch
            .next
            .store(d, unsafe { offsets.add(d * blocks + block).read() });
        d += BLOCK;
    }
    let (first_of_block, end) = block_range(block, len, tile, per_block);
    let below = warp::lanemask_lt();
    let counts = |d: usize| warp * RADIX_BINS + d;
    let mut tile_first = first_of_block;
    while tile_first < end {
        let first = tile_first + warp * lanes * ITEMS;
        let mut d = lane;
        while d < RADIX_BINS {
            scratch.warp_counts.store(counts(d), 0);
            d += lanes;
        }
        warp::sync_warp();
        // Rank each row: the lanes with the same digit, before this one,
        // after the row's earlier in the warp. (The ranks go to shared
        // memory, not to an array: a loop with barriers may not be
        // unrolled, and the array would go to local memory.)
        let mut j = 0;
        while j < ITEMS {
            let i = first + j * lanes + lane;
            let valid = i < end;
            let d = if valid {
                // SAFETY: `i < end <= len`.
                digit(unsafe { keys_in.add(i).read() }, shift, flip)
            } else {
                0
            };
            let peers = warp::match_any(if valid { d as u32 } else { u32::MAX });
            let base = if valid {
                scratch.warp_counts.load(counts(d))
            } else {
                0
            };
            scratch
                .ranks
                .store(i - tile_first, base + (peers & below).count_ones());
            warp::sync_warp();
            if valid && peers.trailing_zeros() as usize == lane {
                scratch
                    .warp_counts
                    .store(counts(d), base + peers.count_ones());
            }
            warp::sync_warp();
            j += 1;
        }
        sync_threads();
        // Per digit: each warp's first place in the tile, and the tile's count.
        let mut d = rank;
        while d < RADIX_BINS {
            let mut running = 0;
            let mut w = 0;
            while w < warps {
                let at = w * RADIX_BINS + d;
                let c = scratch.warp_counts.load(at);
                scratch.warp_counts.store(at, running);
                running += c;
                w += 1;
            }
            scratch.tile_counts.store(d, running);
            d += BLOCK;
        }
        sync_threads();
        // The tile's first place of each digit: warp 0 sums the counts,
        // a run of digits per lane.
        if warp == 0 {
            let per = RADIX_BINS.div_ceil(lanes);
            let (from, to) = (
                (lane * per).min(RADIX_BINS),
                ((lane + 1) * per).min(RADIX_BINS),
            );
            let mut mine = 0;
            let mut d = from;
            while d < to {
                mine += scratch.tile_counts.load(d);
                d += 1;
            }
            let mut running = warp::exclusive_scan(mine, 0, |a, b| a + b);
            let mut d = from;
            while d < to {
                scratch.tile_starts.store(d, running);
                running += scratch.tile_counts.load(d);
                d += 1;
            }
        }
        sync_threads();
        // Into shared memory in the tile's sorted order...
        let mut j = 0;
        while j < ITEMS {
            let i = first + j * lanes + lane;
            if i < end {
                // SAFETY: `i < end <= len` (read again: an L2 hit).
                let key = unsafe { keys_in.add(i).read() };
                let d = digit(key, shift, flip);
                let at = (scratch.tile_starts.load(d)
                    + scratch.warp_counts.load(counts(d))
                    + scratch.ranks.load(i - tile_first)) as usize;
                scratch.keys.store(at, key);
                if !values_out.is_null() {
                    let value = if values_in.is_null() {
                        i as u32
                    } else {
                        // SAFETY: `i < len`, a value of the caller's.
                        unsafe { values_in.add(i).read() }
                    };
                    scratch.values.store(at, value);
                }
            }
            j += 1;
        }
        sync_threads();
        // ... and out, consecutive threads to consecutive places.
        let here = (end - tile_first).min(tile);
        let mut r = rank;
        while r < here {
            let key = scratch.keys.load(r);
            let d = digit(key, shift, flip);
            let place = (scratch.next.load(d) + r as u32 - scratch.tile_starts.load(d)) as usize;
            // SAFETY: `place < len` (the places of a pass are a permutation
            // of `0..len`), written by this thread alone.
            unsafe {
                keys_out.add(place).write(key);
                if !values_out.is_null() {
                    values_out.add(place).write(scratch.values.load(r));
                }
            }
            r += BLOCK;
        }
        sync_threads();
        let mut d = rank;
        while d < RADIX_BINS {
            scratch
                .next
                .store(d, scratch.next.load(d) + scratch.tile_counts.load(d));
            d += BLOCK;
        }
        sync_threads();
        tile_first += tile;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole sort on the host model (one block of one thread, many
    /// tiles): every pass's counts, their exclusive sum, the scatter. The
    /// values are the input indices, so stability shows.
    fn sort<K: RadixKey, const ITEMS: usize>(keys: &[K], descending: bool) -> (Vec<K>, Vec<u32>) {
        let len = keys.len();
        let per_block = len.div_ceil(ITEMS).max(1);
        let flip = if descending { u64::MAX } else { 0 };
        let (mut a, mut b) = (keys.to_vec(), keys.to_vec());
        let (mut va, mut vb) = (vec![0u32; len], vec![0u32; len]);
        let bins = crate::shared_array![u32; 256];
        let (warp_counts, next, tile_counts, tile_starts, ranks, values) = (
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 8],
            crate::shared_array![u32; 8],
        );
        let tile_keys = crate::shared_array![K; 8];
        let scratch = RadixScratch {
            warp_counts: warp_counts.as_slice(),
            next: next.as_slice(),
            tile_counts: tile_counts.as_slice(),
            tile_starts: tile_starts.as_slice(),
            ranks: ranks.as_slice(),
            keys: tile_keys.as_slice(),
            values: values.as_slice(),
        };
        for pass in 0..K::BYTES {
            let shift = pass * RADIX_BITS;
            let mut counts = vec![0u32; RADIX_BINS];
            // SAFETY: the contract: one block, `len` keys, room for the counts.
            unsafe {
                radix_counts::<K, 1>(
                    a.as_ptr(),
                    len,
                    shift,
                    flip,
                    counts.as_mut_ptr(),
                    1,
                    ITEMS,
                    per_block,
                    bins.as_slice(),
                );
            }
            let mut sum = 0;
            for c in counts.iter_mut() {
                (*c, sum) = (sum, sum + *c);
            }
            let values_in = if pass == 0 {
                core::ptr::null()
            } else {
                va.as_ptr()
            };
            // SAFETY: the contract: this pass's offsets, distinct buffers.
            unsafe {
                radix_scatter::<K, 1, ITEMS>(
                    a.as_ptr(),
                    b.as_mut_ptr(),
                    values_in,
                    vb.as_mut_ptr(),
                    len,
                    shift,
                    flip,
                    counts.as_ptr(),
                    1,
                    per_block,
                    scratch,
                );
            }
            core::mem::swap(&mut a, &mut b);
            core::mem::swap(&mut va, &mut vb);
        }
        (a, va)
    }

    #[test]
    fn passes_sort_stably_in_both_orders() {
        for len in [0usize, 1, 2, 7, 300, 1001] {
            let keys: Vec<i32> = (0..len as i32).map(|i| ((i * 7919) % 61) - 30).collect();
            let mut want: Vec<(i32, u32)> = keys.iter().copied().zip(0..).collect();
            want.sort_by_key(|&(k, _)| k); // stable
            let (sorted, indices) = sort::<i32, 4>(&keys, false);
            assert_eq!(
                sorted.into_iter().zip(indices).collect::<Vec<_>>(),
                want,
                "len {len}"
            );
            let mut want_desc: Vec<(i32, u32)> = keys.iter().copied().zip(0..).collect();
            want_desc.sort_by_key(|&(k, _)| core::cmp::Reverse(k));
            let (sorted, indices) = sort::<i32, 3>(&keys, true);
            assert_eq!(
                sorted.into_iter().zip(indices).collect::<Vec<_>>(),
                want_desc,
                "len {len}"
            );
        }
        let bytes: Vec<u8> = (0..500u32).map(|i| (i * 37 % 256) as u8).collect();
        let mut want = bytes.clone();
        want.sort();
        assert_eq!(sort::<u8, 5>(&bytes, false).0, want);
        let wide: Vec<u64> = (0..500u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let mut want = wide.clone();
        want.sort();
        assert_eq!(sort::<u64, 8>(&wide, false).0, want);
    }

    #[test]
    fn float_keys_follow_total_cmp() {
        let mut values = [
            f64::NAN,
            -f64::NAN,
            -0.0,
            0.0,
            f64::INFINITY,
            -1.5,
            2.0,
            f64::NEG_INFINITY,
        ];
        let (sorted, _) = sort::<f64, 2>(&values, false);
        values.sort_by(|a, b| a.total_cmp(b));
        assert_eq!(
            sorted.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            values.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
        );
        for x in values {
            assert_eq!(f64::from_ordered(x.ordered()).to_bits(), x.to_bits());
        }
        for x in [-3i16, 0, i16::MIN, i16::MAX] {
            assert_eq!(i16::from_ordered(x.ordered()), x);
        }
    }
}
