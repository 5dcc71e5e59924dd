//! The blocks of a stable LSD radix sort, 8 bits per pass, in the
//! "onesweep" shape (one read and one write of the keys per pass):
//! [`RadixKey`] (the order-preserving bits of a key), [`radix_histogram`]
//! (every pass's digit totals, in one read before the passes) and
//! [`radix_onesweep`] (one tile of one pass: its stable ranking, a
//! per-digit decoupled look-back over the tiles before it, and the
//! scatter through shared memory).
//!
//! A pass over digit `shift..shift + 8` of `len` keys has one block per
//! tile of `BLOCK * ITEMS` keys, taking tiles in order from a counter. A
//! key's place is the number of keys of smaller digits (from the
//! histogram), plus those of its digit in earlier tiles (the look-back),
//! plus those before it in its tile (the ranking): stable. Keys go out
//! with a `u32` value each (their input index on the first pass of
//! `sort_pairs`).

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::{DeviceAtomic, Scope};
use crate::device::shared::SharedSlice;
use crate::device::sync::{nanosleep, sync_threads};
use crate::device::thread::{block_rank, block_thread_rank, grid_blocks};
use crate::device::unroll::unrolled;
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

/// [`digit`] computed anew: the shift passed through an opaque move, so
/// that the compiler recomputes a key's digit (and its counter's address)
/// where it is used again rather than keeping it in a register from its
/// first use.
#[inline(always)]
fn digit_again<K: RadixKey>(key: K, shift: u32, flip: u64) -> usize {
    digit(key, super::opaque(shift), flip)
}

/// The digit of `key` at bit `shift`, of the key's bits xor `flip` (all
/// ones for a descending sort).
#[inline(always)]
fn digit<K: RadixKey>(key: K, shift: u32, flip: u64) -> usize {
    if K::BYTES <= 4 {
        // In 32 bits (`shift < 32` for these keys): half the instructions
        // (a shift, and one xor-and with the shifted `flip`, which a loop
        // computes once).
        ((((key.ordered() as u32) >> shift) ^ ((flip as u32) >> shift)) as usize) & (RADIX_BINS - 1)
    } else {
        (((key.ordered() ^ flip) >> shift) as usize) & (RADIX_BINS - 1)
    }
}

/// Counts every pass's digits of `len` keys (the block's grid-stride
/// share of tiles of `BLOCK` x 8 consecutive keys) into `bins` (shared,
/// `passes * RADIX_BINS` counters), then adds them to
/// `totals[pass * RADIX_BINS + digit]` (zeroed by the host first). Every
/// thread of the block calls it.
///
/// # Safety
/// `input` holds `len` keys every thread can read, unchanged while the
/// kernel runs; `totals` has `passes * RADIX_BINS` counters, accessed only
/// atomically while it runs; `passes <= K::BYTES`; `BLOCK` is the
/// launch's block size.
///
/// ```
/// use cuda_mem::device::wide::{radix_histogram, RADIX_BINS};
/// let keys = [0x0102u16, 0x0101, 0x0201];
/// let mut totals = vec![0u32; 2 * RADIX_BINS];
/// let bins = cuda_mem::shared_array![u32; 512];
/// // SAFETY: as the contract says (one block of one thread on the host).
/// unsafe { radix_histogram::<u16, 1>(keys.as_ptr(), 3, 0, 2, totals.as_mut_ptr(), bins.as_slice()) };
/// assert_eq!((totals[1], totals[2]), (2, 1)); // low bytes 0x02, 0x01, 0x01
/// assert_eq!((totals[RADIX_BINS + 1], totals[RADIX_BINS + 2]), (2, 1)); // high bytes
/// ```
#[inline(always)]
pub unsafe fn radix_histogram<K: RadixKey, const BLOCK: usize>(
    input: *const K,
    len: usize,
    flip: u64,
    passes: u32,
    totals: *mut u32,
    bins: SharedSlice<'_, u32>,
) {
    let rank = block_thread_rank() as usize;
    let all = passes as usize * RADIX_BINS;
    let mut b = rank;
    while b < all {
        bins.store(b, 0);
        b += BLOCK;
    }
    sync_threads();
    // Every pass (a sort's histogram): the passes' loop unrolled, in its
    // own copy of the loop.
    if passes == K::BYTES {
        // SAFETY: the caller's contract.
        unsafe { count_share::<K, BLOCK, true>(input, len, flip, passes, bins) };
    } else {
        // SAFETY: the caller's contract.
        unsafe { count_share::<K, BLOCK, false>(input, len, flip, passes, bins) };
    }
    sync_threads();
    let mut b = rank;
    while b < all {
        let c = bins.load(b);
        if c != 0 {
            // SAFETY: `b < passes * RADIX_BINS`, a counter of `totals`,
            // accessed atomically only.
            unsafe { DeviceAtomic::from_ptr(totals.add(b)) }.fetch_add(c, Scope::Device);
        }
        b += BLOCK;
    }
}

/// `radix_histogram`'s count: the block's grid-stride share of tiles of
/// the keys, `HISTOGRAM_BATCH` loads in flight per thread before they are
/// counted; each key's digit of each pass into `bins`. `ALL`: `passes` is
/// `K::BYTES` (a constant: its loop unrolled; a function of its own, as a
/// branch on the count would be merged back into one loop).
///
/// # Safety
/// As `radix_histogram`'s.
#[inline(always)]
unsafe fn count_share<K: RadixKey, const BLOCK: usize, const ALL: bool>(
    input: *const K,
    len: usize,
    flip: u64,
    passes: u32,
    bins: SharedSlice<'_, u32>,
) {
    let passes = if ALL { K::BYTES } else { passes };
    let count = |key: K| {
        let mut pass = 0;
        while pass < passes {
            bins.add(
                pass as usize * RADIX_BINS + digit(key, pass * RADIX_BITS, flip),
                1,
            );
            pass += 1;
        }
    };
    // Tiles of `BLOCK * HISTOGRAM_BATCH` consecutive keys, a grid-stride
    // share of them per block: row `k` of a tile is `BLOCK` consecutive
    // keys, one per thread. (Not `wide::load_rows`: its last tile loads
    // every row before counting, which took the `u32` kernel from 46 to 52
    // registers and 5 blocks a multiprocessor to 4; here the last tile
    // counts each key as it loads it. Calling it for the whole tiles alone
    // took the `u64` kernel from 47 to 51, 5 blocks to 4.)
    let tile = BLOCK * HISTOGRAM_BATCH;
    let lane = block_thread_rank() as usize;
    let mut first = block_rank() * tile;
    let step = grid_blocks() * tile;
    while first < len {
        let mut keys = [K::from_ordered(0); HISTOGRAM_BATCH];
        if len - first >= tile {
            unrolled::<HISTOGRAM_BATCH>(|k| {
                // SAFETY: `first + k * BLOCK + lane < first + tile <= len`;
                // the caller vouches for the memory.
                keys[k] = unsafe { input.add(first + k * BLOCK + lane).read() };
            });
            unrolled::<HISTOGRAM_BATCH>(|k| count(keys[k]));
        } else {
            unrolled::<HISTOGRAM_BATCH>(|k| {
                let i = first + k * BLOCK + lane;
                if i < len {
                    // SAFETY: `i < len`; the caller vouches for the memory.
                    count(unsafe { input.add(i).read() });
                }
            });
        }
        match first.checked_add(step) {
            Some(next) => first = next,
            None => break,
        }
    }
}

/// Keys each thread of a histogram block loads before counting them (a
/// tile's rows). On an H200 the histogram of 10^7 + 7 `u32` keys took
/// 28-30 µs with tiles of 8 rows, against 38-39 loading one key at a time
/// and CUB's 31: the sort of 2^20 `u32` keys 69 against 75 µs. Batches of
/// 16 measured the same as 8; batches grid-stride apart instead of
/// consecutive rows 0.5% slower at 2^28. The host sizes the histogram's
/// grid by it (`algo::sort`).
pub(crate) const HISTOGRAM_BATCH: usize = 8;

/// The look-back state of a pass: one 64-bit word per tile and digit, the
/// flag (2 bits), the pass it belongs to (8 bits) and the count. Zeroed
/// once per sort: a word of an earlier pass reads as not published yet.
/// (CUB's 32-bit words, tried for sorts of fewer than 2^29 keys with the
/// pass's parity in place of the pass and a 64-bit fallback above, measured
/// slower on an H200: `u32` keys 512 µs at 2^24 against 484, 7.16 ms at
/// 2^28 against 6.74; `(u32, u32)` pairs 664 µs against 634, 9.47 ms
/// against 8.95. The passes spilled 12-16 bytes more at 80 registers.)
#[derive(Clone, Copy)]
struct DigitStatus {
    words: *mut u64,
    epoch: u64,
}

/// Not published yet.
const EMPTY: u64 = 0;
/// The tile's own count.
const AGGREGATE: u64 = 1;
/// The count of the tiles up to and including this one.
const INCLUSIVE: u64 = 2;

impl DigitStatus {
    #[inline(always)]
    fn word(&self, entry: usize) -> &DeviceAtomic<u64> {
        // SAFETY: the caller of `radix_onesweep` gives `tiles * RADIX_BINS`
        // words, and `entry` is below that; accessed atomically only.
        unsafe { DeviceAtomic::from_ptr(self.words.add(entry)) }
    }

    #[inline(always)]
    fn publish(&self, entry: usize, flag: u64, count: u64) {
        self.word(entry)
            .store((flag << 62) | (self.epoch << 54) | count, Scope::Device);
    }

    /// An entry's word: `(flag, count)` once published in this pass, else
    /// `None`.
    #[inline(always)]
    fn decode(&self, word: u64) -> Option<(u64, u64)> {
        let (flag, epoch) = (word >> 62, (word >> 54) & 0xff);
        (flag != EMPTY && epoch == self.epoch).then_some((flag, word & ((1 << 54) - 1)))
    }

    /// The entry once published in this pass: `(flag, count)`.
    #[inline(always)]
    fn wait(&self, entry: usize) -> (u64, u64) {
        let mut pause = FIRST_PAUSE_NS;
        loop {
            if let Some(published) = self.decode(self.word(entry).load(Scope::Device)) {
                return published;
            }
            nanosleep(pause);
            pause = (pause * 2).min(LAST_PAUSE_NS);
        }
    }

    /// The count of digit `d`'s keys in the tiles before tile `t` (`t >
    /// 0`): the tiles' entries walked back, one by one, to the first
    /// inclusive one. (Reading 8 or 16 tiles at once, their loads in
    /// flight together, measured no faster on an H200: 2^24 `u32` keys
    /// 536 against 532 µs, 2^28 7.76 against 7.46 ms. Nor did the pauses
    /// between polls: fixed at 32 ns, or none, the bench's `(u32, u32)`
    /// pairs at 2^28 took 9.02 ms all three ways, same run. In an Nsight
    /// Compute profile of a pass of 10^7 pairs, this walk averages 7.4
    /// steps a digit against CUB's 4.8, and the barrier after it holds
    /// about a seventh of the block's stall samples.)
    #[inline(always)]
    fn before(&self, t: usize, d: usize) -> u64 {
        let mut before = 0;
        let mut p = t;
        while p > 0 {
            p -= 1;
            let (flag, count) = self.wait(p * RADIX_BINS + d);
            before += count;
            if flag == INCLUSIVE {
                break;
            }
        }
        before
    }
}

/// The first and the longest pause between polls of a look-back entry
/// not published yet, in nanoseconds.
const FIRST_PAUSE_NS: u32 = 32;
const LAST_PAUSE_NS: u32 = 512;

/// The bytes of the look-back state of a pass over `tiles` tiles (8 per
/// tile and digit), zeroed once per sort.
///
/// ```
/// assert_eq!(cuda_mem::device::wide::radix_status_bytes(2), 2 * 256 * 8);
/// ```
pub const fn radix_status_bytes(tiles: usize) -> usize {
    tiles * RADIX_BINS * 8
}

/// The block's shared memory for [`radix_onesweep`].
pub struct RadixScratch<'a, K> {
    /// Each warp's running count of each digit in the tile, then the
    /// first place in the tile of the warp's keys of each digit:
    /// `RADIX_BINS` per warp.
    pub warp_counts: SharedSlice<'a, u32>,
    /// For each digit, the place in the output of the tile's first key of
    /// that digit, less that key's place in the tile: `RADIX_BINS`.
    pub next: SharedSlice<'a, u32>,
    /// The block scan's partials: `BLOCK.div_ceil(32)`.
    pub sums: SharedSlice<'a, u64>,
    /// The tile's keys in their sorted order: `BLOCK * ITEMS`.
    pub keys: SharedSlice<'a, K>,
    /// Their values: `BLOCK * ITEMS` (unused for keys alone).
    pub values: SharedSlice<'a, u32>,
    /// The tile's index: one.
    pub ticket: SharedSlice<'a, u32>,
}

impl<K> Clone for RadixScratch<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for RadixScratch<'_, K> {}

/// Sorts one tile of one pass (digit at `pass * 8`) of `len` keys into
/// `keys_out` (and `u32` values into `values_out`): the block takes the
/// next tile from `counter`; each warp reads its `ITEMS` rows of 32
/// consecutive keys once, into registers (places past `len` hold padding
/// of the largest digit), and counts its keys of each digit. The tile's
/// count of each digit is published at once, before any key is ranked; a
/// block scan gives each digit its first place in the tile (and, in tile
/// 0, in the pass: tile 0's entries carry the digits' first places); each
/// warp then ranks its rows (the lanes of a digit found by 8 ballots, and
/// one shared `fetch_add` per group of lanes with one digit) and puts its
/// keys in shared memory in their sorted order. The values are read only
/// then, in the keys' rows. Each digit then looks back (one thread per
/// digit) over the tiles before for the number of its keys there (the
/// values' loads in flight meanwhile), the values go into shared memory
/// in the keys' order, and keys and values go out from shared memory,
/// consecutive threads to consecutive places. Stable.
/// `ITEMS` is at most 32.
///
/// `values_in` null: the values are the keys' input indices (the first
/// pass of `sort_pairs`); `values_out` null: keys only.
///
/// # Safety
/// - `keys_in` (and `values_in`, unless null) hold `len` elements every
///   thread can read, unchanged while the kernel runs; `keys_out` (and
///   `values_out`, unless null) have `len` elements, this launch's alone,
///   overlapping neither input.
/// - `totals` holds this pass's `RADIX_BINS` digit totals of these keys
///   ([`radix_histogram`] with the same `flip`).
/// - `status` holds [`radix_status_bytes`]`(tiles)` bytes, 8-aligned,
///   zeroed before the sort's first pass and used by no other launch
///   meanwhile, `pass < 255`; `counter` was 0 when this pass started and
///   is this launch's alone. The grid has one block per tile,
///   `len.div_ceil(BLOCK * ITEMS)`.
/// - Every thread of the block calls it, `BLOCK` is the launch's block
///   size (below 32 or a multiple of it), `len` is below 2^32, and
///   `scratch` has the lengths [`RadixScratch`] states.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn radix_onesweep<K: RadixKey, const BLOCK: usize, const ITEMS: usize>(
    keys_in: *const K,
    keys_out: *mut K,
    values_in: *const u32,
    values_out: *mut u32,
    len: usize,
    pass: u32,
    flip: u64,
    totals: *const u32,
    status: *mut u64,
    counter: &DeviceAtomic<u32>,
    scratch: RadixScratch<'_, K>,
) {
    let lanes = const { super::warp_lanes(BLOCK) };
    const { assert!(ITEMS > 0 && ITEMS <= 32, "1 to 32 keys per thread") };
    let warps = BLOCK.div_ceil(lanes);
    let rank = block_thread_rank() as usize;
    let (lane, warp) = (rank % lanes, rank / lanes);
    let tile = BLOCK * ITEMS;
    let shift = pass * RADIX_BITS;
    let status = DigitStatus {
        words: status,
        epoch: u64::from(pass) + 1,
    };
    let t = super::lookback::take_ticket(counter, scratch.ticket);
    let tile_first = t * tile;
    let end = len.min(tile_first + tile);
    let first = tile_first + warp * lanes * ITEMS;
    // Lanes up to and including this one.
    let up_to_me = warp::lanemask_le();
    // Every warp of the block is whole, or the block is one warp of
    // `lanes`: a constant mask.
    let warp_mask = warp::FULL_MASK >> (32 - lanes as u32);
    let counts_of = |w: usize, d: usize| w * RADIX_BINS + d;
    let counts = |d: usize| counts_of(warp, d);
    let digit = |key: K| digit(key, shift, flip);

    // The warp's rows, read once: row `j` is `lanes` consecutive keys.
    // Places past `len` (in the last tile) hold padding whose bits, xor
    // `flip`, are all ones: its digit is the largest of every pass, and it
    // follows every key of the tile in the tile's order, so it ranks after
    // all of them and nothing below needs a bound but the loads and the
    // stores to the output. (It adds to the last tile's count of the
    // largest digit, which no tile after the last reads.)
    let in_warp = end.saturating_sub(first).min(lanes * ITEMS) as u32;
    // SAFETY: the caller vouches for `len` keys at `keys_in`, and
    // `first + in_warp <= len`.
    let keys: [K; ITEMS] = unsafe {
        super::load_rows(
            keys_in,
            (first, lanes, lane),
            in_warp,
            K::from_ordered(!flip),
            // Whole rows (every tile but the last) without compares: on
            // an H200 `u32` keys 2^28 6.58 ms against 6.70, pairs of 22 a
            // thread 8.29 against 8.71 with compares at 20.
            true,
        )
    };
    // The warp's count of each digit: one shared add per key, none
    // waiting on another.
    let mut d = lane;
    while d < RADIX_BINS {
        scratch.warp_counts.store(counts(d), 0);
        d += lanes;
    }
    warp::sync_warp();
    unrolled::<ITEMS>(|j| scratch.warp_counts.add(counts(digit(keys[j])), 1));
    sync_threads();
    // Per digit (a run of digits per thread): each warp's first place
    // among the tile's keys of the digit, and the tile's count of it,
    // published at once, before the keys are ranked (tile 0 publishes
    // after the scan below).
    let per = const { RADIX_BINS.div_ceil(BLOCK) };
    // A digit's count in the tile in the low half; in tile 0, the pass's
    // total of the digit in the high half, for the digits' first places.
    let packed = |d: usize, count: u32| {
        let total = if t == 0 {
            // SAFETY: `d < RADIX_BINS`, inside the pass's totals.
            u64::from(unsafe { totals.add(d).read() })
        } else {
            0
        };
        (total << 32) | u64::from(count)
    };
    let digits = (rank * per).min(RADIX_BINS)..((rank + 1) * per).min(RADIX_BINS);
    let mut mine = 0u64;
    for d in digits.clone() {
        let mut running = 0;
        let mut w = 0;
        while w < warps {
            let at = w * RADIX_BINS + d;
            let c = scratch.warp_counts.load(at);
            scratch.warp_counts.store(at, running);
            running += c;
            w += 1;
        }
        // The count, for the look-back below.
        scratch.next.store(d, running);
        if t != 0 {
            status.publish(t * RADIX_BINS + d, AGGREGATE, u64::from(running));
        }
        mine += packed(d, running);
    }
    // The tile's keys of smaller digits (and, in tile 0, the pass's): one
    // block scan of both halves (neither half carries: each sums to at
    // most `len < 2^32`, padding included).
    let (mut before, _) =
        crate::device::block::exclusive_scan::<u64, BLOCK>(mine, 0, |a, b| a + b, scratch.sums);
    for d in digits.clone() {
        let count = scratch.next.load(d);
        let (start, global) = (before as u32, (before >> 32) as u32);
        before += packed(d, count);
        // The warps' first places in the tile, from the digit's.
        let mut w = 0;
        while w < warps {
            let at = w * RADIX_BINS + d;
            scratch
                .warp_counts
                .store(at, scratch.warp_counts.load(at) + start);
            w += 1;
        }
        // Tile 0 knows the place in the output of its first key of the
        // digit: the pass's keys of smaller digits.
        if t == 0 {
            status.publish(d, INCLUSIVE, u64::from(global) + u64::from(count));
            scratch.next.store(d, global.wrapping_sub(start));
        }
    }
    sync_threads();
    // Rank each row: the group of lanes with the same digit (8 ballots)
    // takes its places in the tile from the warp's running place of the
    // digit (one `fetch_add` by the group's highest lane, whose old value
    // it hands on), each lane after the group's lanes below it. The adds
    // of the warp's rows take effect in row order (a warp's shared atomics
    // to one element do), so keys keep their order: stable. The keys and
    // their places stay in registers. (ptxas puts a branch around the
    // leader's add and a divergence check before the hand-on shuffle, so a
    // warp waits for each row's add before the next row's ballots. The
    // add predicated in PTX, no branch, became a branch again in SASS and
    // measured no faster.)
    let mut at = [0u32; ITEMS];
    unrolled::<ITEMS>(|j| {
        // The digit again: for keys up to 4 bytes, alone or with values,
        // computed anew, so that each key's digit and counter address from
        // the count above are not kept in registers until here (they would
        // take 2 of the 80 per key: H200, `(u32, u32)` pairs in 384 threads
        // of 20 keys without spills, 2^24 620 against 633 µs and 2^28 8.60
        // against 9.03 ms of 16 keys that kept them; keys alone fit 22 a
        // thread only so, 2^28 6.36 against 6.56 ms for 20 that kept
        // them); keys of 8 bytes keep them (8 a thread; not measured
        // otherwise).
        let d = if K::BYTES > 4 {
            digit(keys[j])
        } else {
            digit_again(keys[j], shift, flip)
        };
        let peers = warp::match_low_bits_ptx::<RADIX_BITS>(warp_mask, d as u32);
        let leader = 31 - peers.leading_zeros();
        // The group's lanes up to this one: all of them at the leader.
        let place = (peers & up_to_me).count_ones();
        let taken = if lane as u32 == leader {
            scratch.warp_counts.fetch_add(counts(d), place)
        } else {
            0
        };
        // Into shared memory in the tile's sorted order at once (padding
        // included: the ranks are a permutation of the tile's places, so
        // `min` changes none; it spares the bound check a compare and a
        // branch), so that the key's register is free from here: only its
        // place stays, for the values (none for keys alone).
        let place = ((warp::shfl_idx(taken, leader) + place - 1) as usize).min(tile - 1);
        scratch.keys.store(place, keys[j]);
        at[j] = place as u32;
    });
    // The values moved with the keys (unless they are the keys' indices
    // or there are none), read only now, in the keys' rows, so that their
    // registers are not held through the ranking; their loads are in
    // flight during the look-back.
    let carried: [u32; ITEMS] = if values_in.is_null() || values_out.is_null() {
        [0; ITEMS]
    } else {
        // SAFETY: the caller vouches for `len` values at `values_in`, and
        // `first + in_warp <= len`.
        unsafe { super::load_rows(values_in, (first, lanes, lane), in_warp, 0, true) }
    };
    // The place in the output of each digit's first key in the tile, for
    // the tiles after the first: the pass's keys of smaller digits and
    // the tiles' before of this digit (the look-back, which the ranking
    // gave the tiles before time to publish). The last warp's running
    // place of a digit is now the end of the digit's keys in the tile.
    if t != 0 {
        sync_threads();
        for d in digits {
            let count = scratch.next.load(d);
            let start = scratch.warp_counts.load(counts_of(warps - 1, d)) - count;
            let before = status.before(t, d);
            status.publish(t * RADIX_BINS + d, INCLUSIVE, before + u64::from(count));
            scratch.next.store(d, (before as u32).wrapping_sub(start));
        }
    }
    // The values (or the keys' indices) into shared memory in the keys'
    // order.
    if !values_out.is_null() {
        unrolled::<ITEMS>(|j| {
            let value = if values_in.is_null() {
                (first + j * lanes + lane) as u32
            } else {
                carried[j]
            };
            scratch.values.store(at[j] as usize, value);
        });
    }
    sync_threads();
    // ... and out, consecutive threads to consecutive places: the tile's
    // first `here` places, its keys (the padding after them), each key
    // with its value. (All the keys first, then the values to places kept
    // in registers, measured slower on an H200: `(u32, u32)` pairs 2^24
    // 665 against 625 µs, 2^28 9.48 against 8.94 ms.)
    let here = end.saturating_sub(tile_first) as u32;
    let out = |r: u32| {
        let key = scratch.keys.load(r as usize);
        let place = scratch.next.load(digit(key)).wrapping_add(r) as usize;
        // SAFETY: `place < len` (the places of a pass are a permutation of
        // `0..len`), written by this thread alone.
        unsafe { keys_out.add(place).write(key) };
        if !values_out.is_null() {
            // SAFETY: as for the key.
            unsafe { values_out.add(place).write(scratch.values.load(r as usize)) };
        }
    };
    if here as usize == tile {
        // A whole tile (all but the last): no bounds.
        unrolled::<ITEMS>(|k| out((rank + k * BLOCK) as u32));
    } else {
        unrolled::<ITEMS>(|k| {
            let r = (rank + k * BLOCK) as u32;
            if r < here {
                out(r);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole sort on the host model (tiles of one-thread blocks, one
    /// after the other): the histogram once, then each pass's tiles. The
    /// values are the input indices, so stability shows.
    fn sort<K: RadixKey, const ITEMS: usize>(keys: &[K], descending: bool) -> (Vec<K>, Vec<u32>) {
        sort_flipped::<K, ITEMS>(keys, if descending { u64::MAX } else { 0 })
    }

    /// `radix_histogram` of `keys` on the host model (one block of one
    /// thread): the totals of the first `passes` passes.
    fn histogram<K: RadixKey>(keys: &[K], flip: u64, passes: u32) -> Vec<u32> {
        let mut totals = vec![0u32; passes as usize * RADIX_BINS];
        let bins = crate::shared_array![u32; 2048];
        // SAFETY: one block; `keys.len()` keys; room for `passes` passes'
        // totals (`passes <= K::BYTES <= 8`, 2048 shared counters).
        unsafe {
            radix_histogram::<K, 1>(
                keys.as_ptr(),
                keys.len(),
                flip,
                passes,
                totals.as_mut_ptr(),
                bins.as_slice(),
            );
        }
        totals
    }

    /// [`sort`] by the keys' bits xor any `flip`.
    fn sort_flipped<K: RadixKey, const ITEMS: usize>(keys: &[K], flip: u64) -> (Vec<K>, Vec<u32>) {
        let len = keys.len();
        let tiles = len.div_ceil(ITEMS).max(1);
        let passes = K::BYTES;
        let totals = histogram(keys, flip, passes);
        let mut status = vec![0u64; radix_status_bytes(tiles) / 8];
        let (mut a, mut b) = (keys.to_vec(), keys.to_vec());
        let (mut va, mut vb) = (vec![0u32; len], vec![0u32; len]);
        let (warp_counts, next, values, ticket) = (
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 256],
            crate::shared_array![u32; 32],
            crate::shared_array![u32; 1],
        );
        let sums = crate::shared_array![u64; 1];
        // Tiles of up to 32 keys (`radix_onesweep`'s most a thread).
        let tile_keys = crate::shared_array![K; 32];
        let scratch = RadixScratch {
            warp_counts: warp_counts.as_slice(),
            next: next.as_slice(),
            sums: sums.as_slice(),
            keys: tile_keys.as_slice(),
            values: values.as_slice(),
            ticket: ticket.as_slice(),
        };
        for pass in 0..passes {
            let counter = DeviceAtomic::new(0u32);
            let values_in = if pass == 0 {
                core::ptr::null()
            } else {
                va.as_ptr()
            };
            for _ in 0..tiles {
                // SAFETY: the contract: this pass's totals, the state zeroed
                // once for the sort, a fresh counter, distinct buffers.
                unsafe {
                    radix_onesweep::<K, 1, ITEMS>(
                        a.as_ptr(),
                        b.as_mut_ptr(),
                        values_in,
                        vb.as_mut_ptr(),
                        len,
                        pass,
                        flip,
                        totals.as_ptr().add(pass as usize * RADIX_BINS),
                        status.as_mut_ptr(),
                        &counter,
                        scratch,
                    );
                }
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

    /// The shipped tiles' lengths (keys alone 32, with values 22, 23 and
    /// 16), over whole tiles, a partial last one and one key past a tile:
    /// stable in both orders.
    #[test]
    fn the_shipped_tile_lengths_sort_stably() {
        fn check<const ITEMS: usize>() {
            for len in [1, ITEMS - 1, ITEMS, ITEMS + 1, 5 * ITEMS + 3] {
                let keys: Vec<u32> = (0..len as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761) >> (i % 29))
                    .collect();
                for descending in [false, true] {
                    let mut want: Vec<(u32, u32)> = keys.iter().copied().zip(0..).collect();
                    if descending {
                        want.sort_by_key(|&(k, _)| core::cmp::Reverse(k));
                    } else {
                        want.sort_by_key(|&(k, _)| k);
                    }
                    let (sorted, indices) = sort::<u32, ITEMS>(&keys, descending);
                    assert_eq!(
                        sorted.into_iter().zip(indices).collect::<Vec<_>>(),
                        want,
                        "{ITEMS} a thread, len {len}, descending {descending}"
                    );
                }
            }
        }
        check::<32>();
        check::<23>();
        check::<22>();
        check::<16>();
    }

    /// The histogram counts every key once per pass, with all passes or
    /// fewer, over whole tiles and a partial last one: against counts made
    /// here.
    #[test]
    fn histogram_counts_every_pass_of_every_key() {
        for len in [0usize, 1, 7, 8, 9, 64, 1001] {
            let keys: Vec<u32> = (0..len as u32)
                .map(|i| i.wrapping_mul(0x9e37_79b9).rotate_left(i % 13))
                .collect();
            for passes in 1..=4u32 {
                for flip in [0u64, u64::MAX] {
                    let totals = histogram(&keys, flip, passes);
                    let mut want = vec![0u32; passes as usize * RADIX_BINS];
                    for &k in &keys {
                        let k = k ^ flip as u32;
                        for p in 0..passes {
                            want[(p as usize) * RADIX_BINS + ((k >> (8 * p)) & 0xff) as usize] += 1;
                        }
                    }
                    assert_eq!(totals, want, "len {len}, passes {passes}, flip {flip:x}");
                }
            }
        }
    }

    /// A `flip` that is neither 0 nor all ones orders by the flipped bits,
    /// its padding included (it once took the padding for a key: the
    /// digit xor-ed the unshifted `flip`).
    #[test]
    fn any_flip_orders_by_the_flipped_bits() {
        for flip in [0xffu64, 0xff00, 0x1234_5678_9abc_def0, 0x8000] {
            for len in [1usize, 7, 100, 333] {
                let keys: Vec<u16> = (0..len as u32)
                    .map(|i| (i.wrapping_mul(40503) >> 3) as u16)
                    .collect();
                let mut want: Vec<(u16, u32)> = keys.iter().copied().zip(0..).collect();
                want.sort_by_key(|&(k, _)| k ^ flip as u16); // stable
                let (sorted, indices) = sort_flipped::<u16, 3>(&keys, flip);
                assert_eq!(
                    sorted.into_iter().zip(indices).collect::<Vec<_>>(),
                    want,
                    "flip {flip:#x}, len {len}"
                );
                let wide: Vec<u64> = keys
                    .iter()
                    .map(|&k| u64::from(k) * 0x0001_0001_0001_0001)
                    .collect();
                let mut want: Vec<u64> = wide.clone();
                want.sort_by_key(|&k| k ^ flip);
                assert_eq!(
                    sort_flipped::<u64, 5>(&wide, flip).0,
                    want,
                    "flip {flip:#x}, len {len}"
                );
            }
        }
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

    /// A word of an earlier pass is not this pass's: the look-back waits.
    #[test]
    fn status_words_carry_their_pass() {
        let mut words = [0u64; 2];
        let first = DigitStatus {
            words: words.as_mut_ptr(),
            epoch: 1,
        };
        first.publish(0, INCLUSIVE, 7);
        assert_eq!(first.wait(0), (INCLUSIVE, 7));
        let second = DigitStatus {
            words: words.as_mut_ptr(),
            epoch: 2,
        };
        second.publish(1, AGGREGATE, 3);
        assert_eq!(second.wait(1), (AGGREGATE, 3));
        let w = words[0];
        assert_eq!((w >> 54) & 0xff, 1, "the first pass's word");
    }
}
