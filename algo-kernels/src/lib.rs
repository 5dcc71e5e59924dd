//! The kernels of `cuda_mem::algo`, written in Rust and compiled to PTX for
//! `nvptx64-nvidia-cuda`: reductions (sum, min, max, count of a value, the
//! first index of the minimum or maximum) and single-pass scans (inclusive
//! or exclusive; sum, min or max) of `i32`, `u32`, `i64`, `u64`, `f32` and
//! `f64`. The PTX ships inside the cuda-mem package
//! (`cuda-mem/ptx/algo-kernels.ptx`); the `ptx` test of `tests/` rebuilds it
//! and fails when it differs (`CUDA_MEM_BLESS_PTX=1` writes the fresh one).
//!
//! Every kernel is a thin entry over the device std's blocks
//! (`cuda_mem::device::wide`), which a user kernel can run on its own types:
//!
//! - `cuda_mem_reduce_<op>_<T>(input, len, state, output)`: `op` over
//!   the input into `output[0]` in one launch, with a grid that fills the
//!   device: each block reduces its tiles, and the last block to finish
//!   combines the blocks' results (`reduce_across_blocks`); `state` is
//!   the arrivals counter (16 bytes, 0 at the launch and again after it)
//!   and then one slot per block.
//! - `cuda_mem_count_<T>(input, len, value, state, output)`: the same,
//!   counting the elements equal to `value` (`==`: NaN equals nothing)
//!   into a `u64`.
//! - `cuda_mem_arg<min|max>_<T>(input, len, state, output, index_only)`:
//!   the same over pairs `[index, key]` of the first extreme element, the
//!   key an `i64` in the reduction's order (NaN counts as the extreme of
//!   both, as in `Min` / `Max`), which the host turns back into the value;
//!   the last block writes the pair, or only the index.
//! - `cuda_mem_scan_<op>_<T>(input, output, len, inclusive, init, state)`:
//!   one block per tile; `state` is a zeroed tile counter (16 bytes) and
//!   the look-back's `TileStatus`.
//! - `cuda_mem_select_flagged_<T>(input, flags, len, output, selected,
//!   state)`, `cuda_mem_unique_<T>(input, len, output, selected, state)`
//!   and `cuda_mem_rle_heads_<T>(input, len, starts, runs, state)`: one
//!   block per tile of a stream compaction (`select_tile`, the same
//!   `state`), the last tile writing the count; then
//!   `cuda_mem_rle_gather_<T>(input, len, starts, runs, values, counts)`
//!   turns the runs' starts into their values and lengths.
//!
//! - `cuda_mem_radix_histogram_<K>`, `cuda_mem_radix_onesweep_<K>` and
//!   `cuda_mem_radix_onesweep_keys_<K>` (keys alone) for `K` of
//!   `u8`-`u64`, `i8`-`i64`, `f32`, `f64`: a stable LSD radix sort
//!   (`radix_histogram`: every pass's digit totals at once; then per pass
//!   `radix_onesweep`, one block per tile), and `cuda_mem_gather_bytes`
//!   (`sort_pairs`' values by their keys' final indices), and
//!   `cuda_mem_segment_marks` (the segments of a segmented sort).
//!
//! - `cuda_mem_histogram_even_<C>_<T>(input, len, bins, lower, upper,
//!   closed, counts)` and `cuda_mem_histogram_range_<C>_<T>(input, len, levels,
//!   bins, counts)` for samples of every integer type and `f32` / `f64`,
//!   counters `C` of `u32` or `u64` (`histogram_tiles`; the host zeroes the
//!   counters first).
//!
//! Blocks have 256 threads (the radix passes of keys of up to 4 bytes with
//! values 384); a thread takes 64 bytes of a tile (16 elements of 4 bytes,
//! 8 of 8), or 8 elements of any size in the arg reductions and the
//! compactions.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

#[cfg(target_arch = "nvptx64")]
mod device {
    use core::arch::asm;
    use cuda_mem::device::ops::{Max, Min, Operator, Sum};
    use cuda_mem::device::shared::{
        ld_shared, ld_shared_v4, st_shared, st_shared_v4, SharedAddr, SharedScalar, SharedWindow,
    };
    use cuda_mem::device::warp::sync_warp;
    use cuda_mem::device::wide::{
        histogram_tiles, radix_histogram, radix_onesweep, range_bin, reduce_across_blocks,
        reduce_tiles, scan_tile, select_tile, HistogramSample, RadixKey, RadixScratch, ScanKind,
        ScanScratch, SelectScratch, TileStatus, RADIX_BINS,
    };
    use cuda_mem::device::{
        block_rank, block_thread_rank, grid_blocks, grid_stride, sync_threads, DeviceAtomic, Scope,
        SharedArray, SharedSlice,
    };
    use cuda_mem::soa::__table::{self as soa_table, SoaTable, SOA_BLOCK, SOA_TILE_BYTES};
    use cuda_mem::soa::MAX_FIELDS;

    /// Threads per block, in every kernel (the host launches this many).
    const BLOCK: usize = 256;
    /// The per-warp partials of a block reduction or scan, and one more.
    const PARTIALS: usize = BLOCK / 32 + 1;
    /// Elements per thread of 4- and 8-byte types.
    const ITEMS4: usize = 16;
    const ITEMS8: usize = 8;
    /// Threads per block of the scans (the host launches this many).
    const SCAN_BLOCK: usize = 128;
    /// Elements per thread of a scan tile of elements of `size` bytes:
    /// 4096-element tiles of 4 bytes (H200, exclusive sum of `u32` at 2^24
    /// against CUB's: 0.98, was 0.94-0.96 with 3072; at 2^20 1.03 and 2^28
    /// 1.01; tiles of 256 threads did worse, 0.89-0.91 at 2^24); 1536 of 8
    /// bytes (not measured otherwise: 16 per thread would take 110-125
    /// registers).
    const fn scan_items(size: usize) -> usize {
        if size == 4 {
            32
        } else {
            12
        }
    }
    /// The bytes before the look-back state in a scan's `state`: the counter.
    const COUNTER_BYTES: usize = 16;

    /// An arg-min or arg-max value: `[index, key]`, the key (`i64` bits)
    /// in the order of the reduction, which the host turns back into the
    /// value.
    type Pair = [u64; 2];

    /// The keys of the arg reductions, signed integers in the order of
    /// `Min`: the smaller key wins `argmin`, the larger `argmax`, the lower
    /// index on a tie. Floats: NaN is the extreme of both (`i64::MIN` /
    /// `i64::MAX`), otherwise the total order (`-0.0` before `+0.0`), the
    /// key of `f32::total_cmp` sign-extended.
    trait Element: Copy {
        fn min_key(self) -> i64;
        fn max_key(self) -> i64;
    }

    macro_rules! integer_element {
        ($($t:ty, $key:expr);*) => {$(
            impl Element for $t {
                #[inline(always)]
                fn min_key(self) -> i64 { let key: fn($t) -> i64 = $key; key(self) }
                #[inline(always)]
                fn max_key(self) -> i64 { self.min_key() }
            }
        )*};
    }
    integer_element!(
        i32, |x| x as i64;
        u32, |x| x as i64;
        i64, |x| x;
        u64, |x| (x ^ (1 << 63)) as i64
    );

    macro_rules! float_element {
        ($($t:ty, $bits:ty, $int:ty);*) => {$(
            impl Element for $t {
                #[inline(always)]
                fn min_key(self) -> i64 {
                    let bits = self.to_bits() as $int;
                    let key = bits ^ (((bits >> (<$int>::BITS - 1)) as $bits) >> 1) as $int;
                    if self.is_nan() { i64::MIN } else { key as i64 }
                }
                #[inline(always)]
                fn max_key(self) -> i64 {
                    if self.is_nan() { i64::MAX } else { self.min_key() }
                }
            }
        )*};
    }
    float_element!(f32, u32, i32; f64, u64, i64);

    /// A float min / max reduction over keys in place of the floats: the
    /// operator's order as the integer order of `Key` (the key of
    /// `total_cmp`, `-0.0` below `+0.0`; a NaN the extreme that wins, which
    /// decodes to a NaN), so each element costs one integer `min` / `max`
    /// where the float operator's own `apply` takes ten instructions.
    trait FloatKey: Copy {
        /// The key's type: the signed integer of the float's width.
        type Key: cuda_mem::DeviceCopy + Ord;
        /// The key: the largest for a NaN when `MAX` (a max), the smallest
        /// for a min.
        fn key<const MAX: bool>(self) -> Self::Key;
        /// The float of a key (a NaN for a NaN's).
        fn from_key(key: Self::Key) -> Self;
        /// The key of the operator's identity: `-inf` for a max, `+inf`
        /// for a min (below every NaN's, above every other key).
        fn identity_key<const MAX: bool>() -> Self::Key;
        /// The block reduction's partials of keys.
        fn key_partials() -> SharedArray<Self::Key, PARTIALS>;
    }

    macro_rules! float_key {
        ($($t:ty, $bits:ty, $int:ty, $partials:ident);*) => {$(
            impl FloatKey for $t {
                type Key = $int;
                #[inline(always)]
                fn key<const MAX: bool>(self) -> $int {
                    // `Element`'s key, in the float's width (no non-NaN
                    // float has `$int::MIN` or `MAX` for its key).
                    match (self.is_nan(), MAX) {
                        (true, true) => <$int>::MAX,
                        (true, false) => <$int>::MIN,
                        (false, _) => self.min_key() as $int,
                    }
                }
                #[inline(always)]
                fn from_key(key: $int) -> $t {
                    // The key's transform is its own inverse (it keeps the
                    // sign bit): a NaN's `MIN` / `MAX` decode to NaNs.
                    let bits = key ^ (((key >> (<$int>::BITS - 1)) as $bits) >> 1) as $int;
                    <$t>::from_bits(bits as $bits)
                }
                #[inline(always)]
                fn identity_key<const MAX: bool>() -> $int {
                    (if MAX { <$t>::NEG_INFINITY } else { <$t>::INFINITY }).key::<MAX>()
                }
                #[inline(always)]
                fn key_partials() -> SharedArray<$int, PARTIALS> {
                    $partials()
                }
            }
        )*};
    }
    float_key!(f32, u32, i32, partials_i32; f64, u64, i64, partials_i64);

    /// Integer `min` (or `max` when `MAX`) of keys, with the identity it
    /// carries.
    #[derive(Clone, Copy)]
    struct KeyOp<K, const MAX: bool>(K);

    impl<K: cuda_mem::DeviceCopy + Ord, const MAX: bool> Operator<K> for KeyOp<K, MAX> {
        #[inline(always)]
        fn identity(self) -> K {
            self.0
        }
        #[inline(always)]
        fn apply(self, a: K, b: K) -> K {
            if MAX {
                a.max(b)
            } else {
                a.min(b)
            }
        }
    }

    /// Whether a builtin operator is the max (for [`FloatKey`]'s kernels).
    trait Extreme {
        const MAX: bool;
    }
    impl Extreme for Min {
        const MAX: bool = false;
    }
    impl Extreme for Max {
        const MAX: bool = true;
    }

    /// The first index of the extreme key: `MAX` picks the order.
    #[derive(Clone, Copy)]
    struct Arg<const MAX: bool>;

    impl<const MAX: bool> Operator<Pair> for Arg<MAX> {
        #[inline(always)]
        fn identity(self) -> Pair {
            // The worst key at the largest index: any element wins against
            // it, or ties and has a lower index.
            [u64::MAX, if MAX { i64::MIN } else { i64::MAX } as u64]
        }
        #[inline(always)]
        fn apply(self, a: Pair, b: Pair) -> Pair {
            let (ka, kb) = (a[1] as i64, b[1] as i64);
            let better = if MAX { ka > kb } else { ka < kb };
            if better || ka == kb && a[0] <= b[0] {
                a
            } else {
                b
            }
        }
    }

    /// Hands the block's `total` in (`reduce_across_blocks` over `state`:
    /// the arrivals counter, then one slot per block at `COUNTER_BYTES`)
    /// and, in the last block to finish, gives the grid's result to
    /// `write` on thread 0.
    ///
    /// # Safety
    /// `state` is 16-aligned with a slot per block of the grid, its counter
    /// 0 at the launch, this launch's alone while it runs.
    #[inline(always)]
    unsafe fn finish<U: cuda_mem::DeviceCopy, O: Operator<U>>(
        total: U,
        state: *mut u8,
        op: O,
        scratch: SharedSlice<'_, U>,
        write: impl FnOnce(U),
    ) {
        // SAFETY: the caller's contract.
        let all = unsafe {
            reduce_across_blocks::<U, O, BLOCK>(
                total,
                state.add(COUNTER_BYTES).cast(),
                state.cast(),
                op,
                scratch,
            )
        };
        if let Some(all) = all {
            if block_thread_rank() == 0 {
                write(all);
            }
        }
    }

    /// One tile of a compaction (`select_tile`) over the scan's `state`
    /// layout (the counter, then the tiles' `TileStatus`), 8 elements per
    /// thread.
    ///
    /// # Safety
    /// As `select_tile`'s; `state` zeroed, 16-aligned, this launch's.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn compact<T: Copy + cuda_mem::DeviceCopy, U: cuda_mem::DeviceCopy>(
        input: *const T,
        len: u64,
        keep: impl Fn(usize, T) -> bool,
        emit: impl Fn(usize, T) -> U,
        output: *mut U,
        selected: *mut u64,
        state: *mut u8,
    ) {
        let (counts, ticket) = (partials_u32(), ticket());
        let scratch = SelectScratch {
            counts: counts.as_slice(),
            ticket: ticket.as_slice(),
        };
        let len = len as usize;
        let tiles = len.div_ceil(BLOCK * ITEMS8).max(1);
        // SAFETY: the caller's contract: a zeroed counter, then the zeroed
        // state of `tiles` tiles, 16-aligned.
        unsafe {
            let counter = DeviceAtomic::from_ptr(state.cast::<u32>());
            let status = TileStatus::new(state.add(COUNTER_BYTES), tiles);
            select_tile::<T, U, BLOCK, ITEMS8>(
                input, len, keep, emit, output, selected, status, counter, scratch,
            );
        }
    }

    /// The shared arrays of the kernels, declared once per type and length
    /// (a `shared_array!` place is one `.shared` symbol of the module,
    /// which every kernel using it gets a copy of per block).
    macro_rules! scratch {
        ($($name:ident: $t:ty, $n:expr;)*) => {$(
            #[inline(always)]
            fn $name() -> SharedArray<$t, { $n }> {
                cuda_mem::shared_array![$t; $n]
            }
        )*};
    }
    scratch! {
        partials_i32: i32, PARTIALS;
        partials_u32: u32, PARTIALS;
        partials_i64: i64, PARTIALS;
        partials_u64: u64, PARTIALS;
        partials_f32: f32, PARTIALS;
        partials_f64: f64, PARTIALS;
        partials_pair: Pair, PARTIALS;
        radix_sums: u64, RADIX_PAIRS_BLOCK4 / 32 + 1;
        ticket: u32, 1;
        radix_counts: u32, RADIX_COUNTS;
        radix_histogram_bins: u32, RADIX_HISTOGRAM_BINS;
        histogram_shared: u32, HISTOGRAM_SHARED;
        histogram_shared_bytes: u32, HISTOGRAM_SHARED_BYTES;
    }

    /// The most bins a histogram counts in shared memory (16 KiB of `u32`s);
    /// more go straight to the global counters.
    const HISTOGRAM_SHARED: usize = 4096;
    /// The shared memory of byte samples: the bin of each byte value, then
    /// 32 copies of up to 256 counters, one per lane (33 KiB).
    const HISTOGRAM_SHARED_BYTES: usize = 256 + 32 * 256;

    /// The histogram kernels of one sample type and one counter type.
    macro_rules! histogram_kernels {
        ($($t:ty, $c:ty, $even:ident, $range:ident;)*) => {$(
            /// Adds the samples' bins among `bins` equal bins over
            /// `[lower, upper)` (`[lower, upper]` when `closed` is not 0)
            /// to `counts` (`even_bin`). Any grid.
            ///
            /// # Safety
            /// `input` holds `len` samples; `counts` `bins` counters,
            /// accessed only atomically while the kernel runs.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $even(
                input: *const $t,
                len: u64,
                bins: u32,
                lower: $t,
                upper: $t,
                closed: u32,
                counts: *mut $c,
            ) {
                let (bytes, words) = (histogram_shared_bytes(), histogram_shared());
                let shared = if size_of::<$t>() == 1 { bytes.as_slice() } else { words.as_slice() };
                let closed = closed != 0;
                // SAFETY: the caller's contract; `even_bin` is below `bins`.
                unsafe {
                    histogram_tiles::<$t, $c, BLOCK>(
                        input, len as usize, |x| x.even_bin(lower, upper, closed, bins), bins, counts,
                        shared,
                    );
                }
            }

            /// Adds the samples' bins among the `bins + 1` ascending
            /// `levels` to `counts` (`range_bin`). Any grid.
            ///
            /// # Safety
            /// As for the even histogram, and `levels` holds `bins + 1`
            /// samples, unchanged while the kernel runs.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $range(
                input: *const $t,
                len: u64,
                levels: *const $t,
                bins: u32,
                counts: *mut $c,
            ) {
                let (bytes, words) = (histogram_shared_bytes(), histogram_shared());
                let shared = if size_of::<$t>() == 1 { bytes.as_slice() } else { words.as_slice() };
                let n = bins as usize + 1;
                // SAFETY: the caller's contract; `range_bin` is below
                // `bins`, and reads levels `0..n` only.
                unsafe {
                    histogram_tiles::<$t, $c, BLOCK>(
                        input, len as usize, |x| range_bin(x, n, |k| levels.add(k).read()), bins,
                        counts, shared,
                    );
                }
            }
        )*};
    }
    histogram_kernels! {
        u8, u32, cuda_mem_histogram_even_u32_u8, cuda_mem_histogram_range_u32_u8;
        i8, u32, cuda_mem_histogram_even_u32_i8, cuda_mem_histogram_range_u32_i8;
        u16, u32, cuda_mem_histogram_even_u32_u16, cuda_mem_histogram_range_u32_u16;
        i16, u32, cuda_mem_histogram_even_u32_i16, cuda_mem_histogram_range_u32_i16;
        u32, u32, cuda_mem_histogram_even_u32_u32, cuda_mem_histogram_range_u32_u32;
        i32, u32, cuda_mem_histogram_even_u32_i32, cuda_mem_histogram_range_u32_i32;
        u64, u32, cuda_mem_histogram_even_u32_u64, cuda_mem_histogram_range_u32_u64;
        i64, u32, cuda_mem_histogram_even_u32_i64, cuda_mem_histogram_range_u32_i64;
        f32, u32, cuda_mem_histogram_even_u32_f32, cuda_mem_histogram_range_u32_f32;
        f64, u32, cuda_mem_histogram_even_u32_f64, cuda_mem_histogram_range_u32_f64;
        u8, u64, cuda_mem_histogram_even_u64_u8, cuda_mem_histogram_range_u64_u8;
        i8, u64, cuda_mem_histogram_even_u64_i8, cuda_mem_histogram_range_u64_i8;
        u16, u64, cuda_mem_histogram_even_u64_u16, cuda_mem_histogram_range_u64_u16;
        i16, u64, cuda_mem_histogram_even_u64_i16, cuda_mem_histogram_range_u64_i16;
        u32, u64, cuda_mem_histogram_even_u64_u32, cuda_mem_histogram_range_u64_u32;
        i32, u64, cuda_mem_histogram_even_u64_i32, cuda_mem_histogram_range_u64_i32;
        u64, u64, cuda_mem_histogram_even_u64_u64, cuda_mem_histogram_range_u64_u64;
        i64, u64, cuda_mem_histogram_even_u64_i64, cuda_mem_histogram_range_u64_i64;
        f32, u64, cuda_mem_histogram_even_u64_f32, cuda_mem_histogram_range_u64_f32;
        f64, u64, cuda_mem_histogram_even_u64_f64, cuda_mem_histogram_range_u64_f64;
    }

    /// Threads per block of a radix sort pass (the host launches this
    /// many): 256 for keys alone and for keys of 8 bytes with values; 384
    /// for keys of up to 4 bytes with values (`RADIX_PAIRS_BLOCK4`), whose
    /// values' tile is then in the dynamic shared memory (the keys' 33 KB
    /// and the counters' 13 KB fill the 48 KB of static shared memory that
    /// ptxas allows; the values' 33 KB are dynamic). Both at 768 threads
    /// per SM (3 blocks of 256 or 2 of 384 at 80 registers). On an H200,
    /// tiles of pairs of 384 threads measured faster than of 256 (2^24 626
    /// µs against 673, 2^28 8.94 ms against 9.55, 16 pairs a thread each),
    /// and 512 threads of 12 at 64 registers slower (680 µs, 9.63 ms).
    const RADIX_BLOCK: usize = 256;
    const RADIX_PAIRS_BLOCK4: usize = 384;
    /// Threads per block of the narrow passes with values (below), the
    /// passes of devices with too little shared memory for a block of 384.
    const RADIX_NARROW_BLOCK: usize = 256;
    /// Elements per thread of a radix sort pass's tile (the host's
    /// `algo::sort::Pass::items` must match each). Keys of up to 4 bytes:
    /// - alone, 32 a thread (256 x 32, 80 registers without spills: the
    ///   ranking computes each key's digit anew, whole rows load without
    ///   compares, and each key goes to shared memory as soon as it is
    ///   ranked, so its register is free before the next row's). On an
    ///   H200, `u32` keys at 2^20 / 2^24 / 2^28 in a probe of this shape
    ///   (two rounds): 77 / 409-411 / 5417 µs against CUB's 79-88 /
    ///   468-470 / 6365-6374; at 22 a thread, keys stored after the whole
    ///   ranking: 1.08 / 1.02 / 0.993 of CUB.
    /// - with values, 22 a thread in blocks of 384 (the plain pass: two
    ///   blocks fit the 164 KB of shared memory of an A100's SM), or 23
    ///   where two blocks of that fit an SM (the wide pass, 4-byte keys: the
    ///   228 KB of an H100 or H200; 4 bytes a thread spilled), or 16 in
    ///   blocks of 256 where more of those threads fit an SM (the narrow
    ///   pass: a block of 384 x 22 takes an SM alone or does not fit, as
    ///   4-byte keys on Turing).
    ///   `(u32, u32)` pairs on an H200 at 2^24 / 2^28, 384 x 23 in the
    ///   same probe: 572-575 / 7864-7891 µs against CUB's 558-562 /
    ///   7459-7492 (384 x 22 with keys stored after the whole ranking:
    ///   0.93-0.94 / 0.89 of CUB; 16, 20 and 22 a thread in one earlier
    ///   run: 2^24 628, 630 and 603 µs, 2^28 8.94, 8.71 and 8.29 ms).
    /// Keys of 8 bytes: 8, alone or with values.
    const RADIX_ITEMS4_KEYS: usize = 32;
    const RADIX_ITEMS4_PAIRS: usize = 22;
    const RADIX_ITEMS4_WIDE: usize = 23;
    const RADIX_ITEMS4_NARROW: usize = 16;
    const RADIX_ITEMS8: usize = 8;
    /// A radix pass's counters: the warps' digit counts and the digits'
    /// places, for blocks of up to `RADIX_PAIRS_BLOCK4` threads (its keys:
    /// `radix_tile_*`; the block scan's sums: `radix_sums`; the values in
    /// sorted order: the dynamic shared memory).
    const RADIX_COUNTS: usize = (RADIX_PAIRS_BLOCK4 / 32 + 1) * RADIX_BINS;
    /// The histogram's counters: every pass's bins (8 passes of 64-bit keys).
    const RADIX_HISTOGRAM_BINS: usize = 8 * RADIX_BINS;

    /// The bits a sort's keys are xor-ed with from its `descending`
    /// parameter (0 ascending, `u32::MAX` descending): none, or all. Made
    /// by a multiply, not a select, so that the compiler keeps each key's
    /// xor one instruction rather than a complement and a select.
    #[inline(always)]
    fn flip_of(descending: u32) -> u64 {
        u64::from(descending) * 0x1_0000_0001
    }

    /// A radix pass's tile (`radix_onesweep`) with the kernel's shared
    /// memory: `tile` the keys' place in it, `values` the values' (empty
    /// for keys alone).
    ///
    /// # Safety
    /// As the onesweep kernels'.
    #[inline(always)]
    unsafe fn onesweep<K: RadixKey, const BLOCK: usize, const ITEMS: usize>(
        counts: SharedSlice<'_, u32>,
        (tile, values): (SharedSlice<'_, K>, SharedSlice<'_, u32>),
        (keys_in, keys_out): (*const K, *mut K),
        (values_in, values_out): (*const u32, *mut u32),
        (len, pass, descending): (u64, u32, u32),
        totals: *const u32,
        status: *mut u64,
        counter: *mut u32,
    ) {
        let Some((warp_counts, next)) = counts.split_at((BLOCK / 32) * RADIX_BINS) else {
            return;
        };
        let (ticket, sums) = (ticket(), radix_sums());
        let scratch = RadixScratch {
            warp_counts,
            next,
            sums: sums.as_slice(),
            keys: tile,
            values,
            ticket: ticket.as_slice(),
        };
        let flip = flip_of(descending);
        // SAFETY: the caller's contract; `flip` is 0 or all ones.
        unsafe {
            let counter = DeviceAtomic::from_ptr(counter);
            radix_onesweep::<K, BLOCK, ITEMS>(
                keys_in,
                keys_out,
                values_in,
                values_out,
                len as usize,
                pass,
                flip,
                totals,
                status,
                counter,
                scratch,
            );
        }
    }

    /// Radix passes with values, each over keys of type `$t`, in blocks of
    /// `$block` threads of `$items` keys: one tile of one pass
    /// (`radix_onesweep`), one block per tile. `descending`: 0, or
    /// `u32::MAX` for a descending sort (`flip_of`).
    macro_rules! pairs_kernels {
        ($($t:ty, $block:ident, $items:ident, $name:ident;)*) => {$(
            /// One tile of one pass with values (`radix_onesweep`): one
            /// block per tile.
            ///
            /// # Safety
            /// As `radix_onesweep`'s: `totals` this pass's digit totals;
            /// `status` the sort's look-back state, zeroed before its first
            /// pass; `counter` zeroed before this pass; outputs of `len`
            /// elements overlapping no input; `values_in` may be null (the
            /// keys' indices), `values_out` not (a null one traps).
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(
                keys_in: *const $t,
                keys_out: *mut $t,
                values_in: *const u32,
                values_out: *mut u32,
                len: u64,
                pass: u32,
                descending: u32,
                totals: *const u32,
                status: *mut u64,
                counter: *mut u32,
            ) {
                // Not null: the compiler knows it, and compiles the keys'
                // path of `radix_onesweep` out.
                assert!(!values_out.is_null(), "radix pass with values: values_out is null");
                // The keys' tile is static shared memory, the values' the
                // first `$block * $items` words of the dynamic shared
                // memory (the host launches that many bytes).
                let (tile, counts) = (cuda_mem::shared_array![$t; $block * $items], radix_counts());
                // SAFETY: the kernel's only view of its dynamic shared memory.
                let dynamic = unsafe { cuda_mem::dynamic_shared!(u32) };
                let Some((values, _)) = dynamic.split_at($block * $items) else {
                    return;
                };
                // SAFETY: the caller's contract.
                unsafe {
                    onesweep::<$t, $block, $items>(
                        counts.as_slice(), (tile.as_slice(), values), (keys_in, keys_out),
                        (values_in, values_out), (len, pass, descending), totals, status, counter,
                    );
                }
            }
        )*};
    }

    /// The kernels of a radix sort over keys of one type: the digit
    /// totals, the pass of keys alone, and the plain pass with values.
    macro_rules! radix_kernels {
        ($($t:ty, $keys_block:ident, $keys_items:ident, $pairs_block:ident, $pairs_items:ident, $histogram:ident, $onesweep:ident, $keys:ident;)*) => {$(
            /// Every pass's digit totals (`radix_histogram`), added to
            /// `totals` (zeroed first). Any grid. `descending`: 0, or
            /// `u32::MAX` for a descending sort (`flip_of`).
            ///
            /// # Safety
            /// `input` holds `len` keys; `totals` `passes * RADIX_BINS`
            /// counters, accessed only atomically; `passes` at most the
            /// key's bytes.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $histogram(
                input: *const $t,
                len: u64,
                descending: u32,
                passes: u32,
                totals: *mut u32,
            ) {
                let bins = radix_histogram_bins();
                let flip = flip_of(descending);
                // SAFETY: the caller's contract.
                unsafe {
                    radix_histogram::<$t, BLOCK>(input, len as usize, flip, passes, totals, bins.as_slice());
                }
            }

            pairs_kernels! { $t, $pairs_block, $pairs_items, $onesweep; }

            /// `$onesweep` for keys alone: its code with the values' loads,
            /// stores and registers compiled out (their pointers are null
            /// constants here, not parameters), in its own tiles.
            ///
            /// # Safety
            /// As for `$onesweep`, with no values.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $keys(
                keys_in: *const $t,
                keys_out: *mut $t,
                len: u64,
                pass: u32,
                descending: u32,
                totals: *const u32,
                status: *mut u64,
                counter: *mut u32,
            ) {
                let (tile, counts) =
                    (cuda_mem::shared_array![$t; $keys_block * $keys_items], radix_counts());
                // No values: an empty slice of the counters' tail.
                let Some((_, no_values)) = counts.as_slice().split_at(RADIX_COUNTS) else {
                    return;
                };
                // SAFETY: the caller's contract, no values.
                unsafe {
                    onesweep::<$t, $keys_block, $keys_items>(
                        counts.as_slice(), (tile.as_slice(), no_values), (keys_in, keys_out),
                        (core::ptr::null(), core::ptr::null_mut()), (len, pass, descending),
                        totals, status, counter,
                    );
                }
            }
        )*};
    }
    radix_kernels! {
        u8, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_u8, cuda_mem_radix_onesweep_u8, cuda_mem_radix_onesweep_keys_u8;
        i8, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_i8, cuda_mem_radix_onesweep_i8, cuda_mem_radix_onesweep_keys_i8;
        u16, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_u16, cuda_mem_radix_onesweep_u16, cuda_mem_radix_onesweep_keys_u16;
        i16, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_i16, cuda_mem_radix_onesweep_i16, cuda_mem_radix_onesweep_keys_i16;
        u32, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_u32, cuda_mem_radix_onesweep_u32, cuda_mem_radix_onesweep_keys_u32;
        i32, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_i32, cuda_mem_radix_onesweep_i32, cuda_mem_radix_onesweep_keys_i32;
        u64, RADIX_BLOCK, RADIX_ITEMS8, RADIX_BLOCK, RADIX_ITEMS8, cuda_mem_radix_histogram_u64, cuda_mem_radix_onesweep_u64, cuda_mem_radix_onesweep_keys_u64;
        i64, RADIX_BLOCK, RADIX_ITEMS8, RADIX_BLOCK, RADIX_ITEMS8, cuda_mem_radix_histogram_i64, cuda_mem_radix_onesweep_i64, cuda_mem_radix_onesweep_keys_i64;
        f32, RADIX_BLOCK, RADIX_ITEMS4_KEYS, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_PAIRS, cuda_mem_radix_histogram_f32, cuda_mem_radix_onesweep_f32, cuda_mem_radix_onesweep_keys_f32;
        f64, RADIX_BLOCK, RADIX_ITEMS8, RADIX_BLOCK, RADIX_ITEMS8, cuda_mem_radix_histogram_f64, cuda_mem_radix_onesweep_f64, cuda_mem_radix_onesweep_keys_f64;
    }
    // The wide passes with values of 4-byte keys (384 x 23, where two
    // blocks fit an SM) and the narrow ones of keys of up to 4 bytes (256 x
    // 16, where more of their threads fit an SM than of a plain pass).
    pairs_kernels! {
        u32, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_WIDE, cuda_mem_radix_onesweep_wide_u32;
        i32, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_WIDE, cuda_mem_radix_onesweep_wide_i32;
        f32, RADIX_PAIRS_BLOCK4, RADIX_ITEMS4_WIDE, cuda_mem_radix_onesweep_wide_f32;
        u8, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_u8;
        i8, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_i8;
        u16, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_u16;
        i16, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_i16;
        u32, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_u32;
        i32, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_i32;
        f32, RADIX_NARROW_BLOCK, RADIX_ITEMS4_NARROW, cuda_mem_radix_onesweep_narrow_f32;
    }

    /// Marks the starts of segments `1..count - 1` of a segmented sort:
    /// `marks[offsets[k]] += 1` for each `offsets[k] < len` (atomically:
    /// empty segments share a start), so that an inclusive sum of `marks`
    /// (zeroed first) gives each element its segment. Any grid.
    ///
    /// # Safety
    /// `offsets` holds `count` offsets; `marks` `len` counters, accessed
    /// only atomically while the kernel runs.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn cuda_mem_segment_marks(
        offsets: *const u32,
        count: u64,
        marks: *mut u32,
        len: u64,
    ) {
        let inner = (count as usize).saturating_sub(2);
        for k in grid_stride(inner) {
            // SAFETY: `k + 1 < count`; an offset below `len` is a counter.
            unsafe {
                let at = offsets.add(k + 1).read();
                if u64::from(at) < len {
                    DeviceAtomic::from_ptr(marks.add(at as usize)).fetch_add(1, Scope::Device);
                }
            }
        }
    }

    /// `dst[i] = src[indices[i]]` for `len` elements of `size` bytes
    /// (`sort_pairs`' values, any type): whole 4-byte words when `size` is a
    /// multiple of 4 and the buffers are 4-aligned, else bytes. Any grid.
    ///
    /// # Safety
    /// `indices` holds `len` indices below `len`; `src` and `dst` hold
    /// `len` elements of `size` bytes, `dst` this launch's alone and
    /// overlapping nothing else.
    #[no_mangle]
    pub unsafe extern "ptx-kernel" fn cuda_mem_gather_bytes(
        src: *const u8,
        indices: *const u32,
        dst: *mut u8,
        len: u64,
        size: u64,
    ) {
        let size = size as usize;
        let words = size % 4 == 0 && (src as usize) % 4 == 0 && (dst as usize) % 4 == 0;
        // SAFETY: the caller's contract: in bounds for every `i < len`.
        unsafe {
            for i in grid_stride(len as usize) {
                let from = indices.add(i).read() as usize * size;
                let to = i * size;
                if words {
                    let mut w = 0;
                    while w < size / 4 {
                        let word = src.add(from + 4 * w).cast::<u32>().read();
                        dst.add(to + 4 * w).cast::<u32>().write(word);
                        w += 1;
                    }
                } else {
                    let mut b = 0;
                    while b < size {
                        dst.add(to + b).write(src.add(from + b).read());
                        b += 1;
                    }
                }
            }
        }
    }

    /// The kernels of one element type.
    macro_rules! kernels {
        (@reduce $t:ty, $items:expr, $partials:ident, $name:ident, $op:ident) => {
            /// `$op` over `len` elements into `output[0]`, in one launch.
            ///
            /// # Safety
            /// `input` holds `len` elements; `output` room for one; `state`
            /// as `finish` takes it.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(input: *const $t, len: u64, state: *mut u8, output: *mut $t) {
                let scratch = $partials();
                // SAFETY: the caller's contract.
                unsafe {
                    let total = reduce_tiles::<$t, $t, $op, BLOCK, { $items }>(
                        input, len as usize, |_, x| x, $op, scratch.as_slice(),
                    );
                    finish(total, state, $op, scratch.as_slice(), |all| output.write(all));
                }
            }
        };
        (@keys $t:ty, $items:expr, $partials:ident, $name:ident, $op:ident) => {
            /// `$op` over `len` elements into `output[0]`, in one launch,
            /// on their keys (`FloatKey`).
            ///
            /// # Safety
            /// `input` holds `len` elements; `output` room for one; `state`
            /// as `finish` takes it.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(input: *const $t, len: u64, state: *mut u8, output: *mut $t) {
                const MAX: bool = <$op as Extreme>::MAX;
                let scratch = <$t as FloatKey>::key_partials();
                let op = KeyOp::<_, MAX>(<$t as FloatKey>::identity_key::<MAX>());
                // SAFETY: the caller's contract.
                unsafe {
                    let total = reduce_tiles::<$t, <$t as FloatKey>::Key, _, BLOCK, { $items }>(
                        input, len as usize, |_, x| x.key::<MAX>(), op, scratch.as_slice(),
                    );
                    finish(total, state, op, scratch.as_slice(), |all| {
                        output.write(<$t as FloatKey>::from_key(all))
                    });
                }
            }
        };
        (@arg $t:ty, $items:expr, $name:ident, $max:expr) => {
            /// The first extreme element of `len` into `output`, in one
            /// launch: the pair, or only its index when `index_only` is not
            /// 0.
            ///
            /// # Safety
            /// `input` holds `len` elements; `output` room for a pair (or a
            /// `u64`); `state` as `finish` takes it, with pairs' slots.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(
                input: *const $t,
                len: u64,
                state: *mut u8,
                output: *mut u64,
                index_only: u32,
            ) {
                let scratch = partials_pair();
                let key = |x: $t| if $max { x.max_key() } else { x.min_key() };
                // SAFETY: the caller's contract.
                unsafe {
                    let total = reduce_tiles::<$t, Pair, _, BLOCK, { $items }>(
                        input, len as usize, |i, x| [i as u64, key(x) as u64], Arg::<$max>, scratch.as_slice(),
                    );
                    finish(total, state, Arg::<$max>, scratch.as_slice(), |all| {
                        if index_only != 0 {
                            output.write(all[0]);
                        } else {
                            output.cast::<Pair>().write(all);
                        }
                    });
                }
            }
        };
        (@select $t:ty, $select_flagged:ident, $unique:ident, $rle_heads:ident, $rle_gather:ident) => {
            /// One tile of `select_flagged`: the elements whose flag is not
            /// 0, in order, and (the last tile) how many.
            ///
            /// # Safety
            /// As `select_tile`'s: `input` and `flags` hold `len` elements,
            /// `output` room for them, `selected` for a `u64`; `state` is
            /// zeroed, this launch's (`COUNTER_BYTES` plus the tiles'
            /// `TileStatus`); one block per tile.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $select_flagged(
                input: *const $t,
                flags: *const u8,
                len: u64,
                output: *mut $t,
                selected: *mut u64,
                state: *mut u8,
            ) {
                // SAFETY: the caller's contract; `i < len` in `keep`.
                unsafe {
                    compact(input, len, |i, _| flags.add(i).read() != 0, |_, x| x, output, selected, state);
                }
            }

            /// One tile of `unique`: the first element of each run of
            /// equal (`==`) elements, in order, and (the last tile) how many.
            ///
            /// # Safety
            /// As for `select_flagged`, without flags.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $unique(
                input: *const $t,
                len: u64,
                output: *mut $t,
                selected: *mut u64,
                state: *mut u8,
            ) {
                // SAFETY: the caller's contract; `0 < i < len` for the
                // element before.
                unsafe {
                    compact(
                        input, len, |i, x| i == 0 || x != input.add(i - 1).read(), |_, x| x,
                        output, selected, state,
                    );
                }
            }

            /// One tile of a run-length encoding's first pass: the index of
            /// the first element of each run (as `unique`), and (the last
            /// tile) how many runs.
            ///
            /// # Safety
            /// As for `unique`, with `starts` room for `len` `u32`s.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $rle_heads(
                input: *const $t,
                len: u64,
                starts: *mut u32,
                runs: *mut u64,
                state: *mut u8,
            ) {
                // SAFETY: as for `unique`.
                unsafe {
                    compact(
                        input, len, |i, x| i == 0 || x != input.add(i - 1).read(), |i, _| i as u32,
                        starts, runs, state,
                    );
                }
            }

            /// A run-length encoding's second pass: for each run `k` of
            /// `*runs`, its value `input[starts[k]]` and its length (to the
            /// next start, or to `len`). Any grid (a grid-stride loop).
            ///
            /// # Safety
            /// `starts` holds `*runs` ascending indices below `len` (the
            /// first pass's), `input` `len` elements; `values` and `counts`
            /// have room for `*runs` elements, this launch's alone.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $rle_gather(
                input: *const $t,
                len: u64,
                starts: *const u32,
                runs: *const u64,
                values: *mut $t,
                counts: *mut u32,
            ) {
                // SAFETY: the caller's contract.
                unsafe {
                    let m = runs.read() as usize;
                    for k in grid_stride(m) {
                        let start = starts.add(k).read();
                        let end = if k + 1 < m { starts.add(k + 1).read() } else { len as u32 };
                        values.add(k).write(input.add(start as usize).read());
                        counts.add(k).write(end - start);
                    }
                }
            }
        };
        (@scan $t:ty, $partials:ident, $name:ident, $op:ident) => {
            /// One tile of a scan with `$op`, per block.
            ///
            /// # Safety
            /// `input` and `output` hold `len` elements (they may be the
            /// same); the grid has `len.div_ceil(SCAN_BLOCK * ITEMS)` blocks;
            /// `state` is zeroed, aligned to 16, and this launch's alone,
            /// `COUNTER_BYTES` plus the tiles' `TileStatus` long.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $name(
                input: *const $t,
                output: *mut $t,
                len: u64,
                inclusive: u32,
                init: $t,
                state: *mut u8,
            ) {
                let (partials, ticket) = ($partials(), ticket());
                let scratch = ScanScratch {
                    partials: partials.as_slice(),
                    ticket: ticket.as_slice(),
                };
                let len = len as usize;
                let tiles = len.div_ceil(SCAN_BLOCK * scan_items(size_of::<$t>()));
                let kind = if inclusive != 0 { ScanKind::Inclusive } else { ScanKind::Exclusive };
                // SAFETY: the caller's contract: a zeroed counter, then the
                // zeroed state of `tiles` tiles, 16-aligned.
                unsafe {
                    let counter = DeviceAtomic::from_ptr(state.cast::<u32>());
                    let status = TileStatus::new(state.add(COUNTER_BYTES), tiles);
                    scan_tile::<$t, $op, SCAN_BLOCK, { scan_items(size_of::<$t>()) }>(
                        input, output, len, kind, init, $op, status, counter, scratch,
                    );
                }
            }
        };
        (
            $t:ty, $items:expr, $partials:ident,
            reduce: $sum:ident, $min:ident, $max:ident, extremes by $extremes:ident,
            count: $count:ident,
            arg: $argmin:ident, $argmax:ident,
            scan: $scan_sum:ident, $scan_min:ident, $scan_max:ident,
            select: $select_flagged:ident, $unique:ident, $rle_heads:ident, $rle_gather:ident
        ) => {
            // 8 per thread whatever the size, as the arg reductions.
            kernels!(@select $t, $select_flagged, $unique, $rle_heads, $rle_gather);
            kernels!(@reduce $t, $items, $partials, $sum, Sum);
            kernels!(@$extremes $t, $items, $partials, $min, Min);
            kernels!(@$extremes $t, $items, $partials, $max, Max);
            // 8 per thread whatever the size: with 16, the pair arithmetic
            // makes the loop too long for LLVM to unroll, and the loaded
            // elements go to local memory.
            kernels!(@arg $t, ITEMS8, $argmin, false);
            kernels!(@arg $t, ITEMS8, $argmax, true);
            kernels!(@scan $t, $partials, $scan_sum, Sum);
            kernels!(@scan $t, $partials, $scan_min, Min);
            kernels!(@scan $t, $partials, $scan_max, Max);

            /// Counts the elements equal to `value` into `output[0]` (a
            /// `u64`), in one launch.
            ///
            /// # Safety
            /// `input` holds `len` elements; `output` room for one; `state`
            /// as `finish` takes it, with `u64` slots.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $count(input: *const $t, len: u64, value: $t, state: *mut u8, output: *mut u64) {
                let scratch = partials_u64();
                // SAFETY: the caller's contract.
                unsafe {
                    let total = reduce_tiles::<$t, u64, Sum, BLOCK, { $items }>(
                        input, len as usize, |_, x| u64::from(x == value), Sum, scratch.as_slice(),
                    );
                    finish(total, state, Sum, scratch.as_slice(), |all| output.write(all));
                }
            }
        };
    }

    kernels!(i32, ITEMS4, partials_i32,
        reduce: cuda_mem_reduce_sum_i32, cuda_mem_reduce_min_i32, cuda_mem_reduce_max_i32, extremes by reduce,
        count: cuda_mem_count_i32,
        arg: cuda_mem_argmin_i32, cuda_mem_argmax_i32,
        scan: cuda_mem_scan_sum_i32, cuda_mem_scan_min_i32, cuda_mem_scan_max_i32,
        select: cuda_mem_select_flagged_i32, cuda_mem_unique_i32, cuda_mem_rle_heads_i32, cuda_mem_rle_gather_i32);
    kernels!(u32, ITEMS4, partials_u32,
        reduce: cuda_mem_reduce_sum_u32, cuda_mem_reduce_min_u32, cuda_mem_reduce_max_u32, extremes by reduce,
        count: cuda_mem_count_u32,
        arg: cuda_mem_argmin_u32, cuda_mem_argmax_u32,
        scan: cuda_mem_scan_sum_u32, cuda_mem_scan_min_u32, cuda_mem_scan_max_u32,
        select: cuda_mem_select_flagged_u32, cuda_mem_unique_u32, cuda_mem_rle_heads_u32, cuda_mem_rle_gather_u32);
    kernels!(i64, ITEMS8, partials_i64,
        reduce: cuda_mem_reduce_sum_i64, cuda_mem_reduce_min_i64, cuda_mem_reduce_max_i64, extremes by reduce,
        count: cuda_mem_count_i64,
        arg: cuda_mem_argmin_i64, cuda_mem_argmax_i64,
        scan: cuda_mem_scan_sum_i64, cuda_mem_scan_min_i64, cuda_mem_scan_max_i64,
        select: cuda_mem_select_flagged_i64, cuda_mem_unique_i64, cuda_mem_rle_heads_i64, cuda_mem_rle_gather_i64);
    kernels!(u64, ITEMS8, partials_u64,
        reduce: cuda_mem_reduce_sum_u64, cuda_mem_reduce_min_u64, cuda_mem_reduce_max_u64, extremes by reduce,
        count: cuda_mem_count_u64,
        arg: cuda_mem_argmin_u64, cuda_mem_argmax_u64,
        scan: cuda_mem_scan_sum_u64, cuda_mem_scan_min_u64, cuda_mem_scan_max_u64,
        select: cuda_mem_select_flagged_u64, cuda_mem_unique_u64, cuda_mem_rle_heads_u64, cuda_mem_rle_gather_u64);
    kernels!(f32, ITEMS4, partials_f32,
        reduce: cuda_mem_reduce_sum_f32, cuda_mem_reduce_min_f32, cuda_mem_reduce_max_f32, extremes by keys,
        count: cuda_mem_count_f32,
        arg: cuda_mem_argmin_f32, cuda_mem_argmax_f32,
        scan: cuda_mem_scan_sum_f32, cuda_mem_scan_min_f32, cuda_mem_scan_max_f32,
        select: cuda_mem_select_flagged_f32, cuda_mem_unique_f32, cuda_mem_rle_heads_f32, cuda_mem_rle_gather_f32);
    kernels!(f64, ITEMS8, partials_f64,
        reduce: cuda_mem_reduce_sum_f64, cuda_mem_reduce_min_f64, cuda_mem_reduce_max_f64, extremes by keys,
        count: cuda_mem_count_f64,
        arg: cuda_mem_argmin_f64, cuda_mem_argmax_f64,
        scan: cuda_mem_scan_sum_f64, cuda_mem_scan_min_f64, cuda_mem_scan_max_f64,
        select: cuda_mem_select_flagged_f64, cuda_mem_unique_f64, cuda_mem_rle_heads_f64, cuda_mem_rle_gather_f64);

    /// The transpositions of `cuda_mem::soa`, in units `$u` (4-byte words,
    /// or bytes for structs whose fields are not all whole words): each
    /// block stages a tile of whole structs in shared memory and moves it
    /// field by field, so that both the array of structs and each field's
    /// array are read and written in consecutive units. A thread's unit
    /// within a field steps by `SOA_BLOCK` units: the element and the unit
    /// in it advance by `SOA_BLOCK / size` and `SOA_BLOCK % size`, with a
    /// carry, and no division in the loop.
    /// Field `f` of one of the arrays of the `SoaTable` parameter (the
    /// third) of the kernel `$name`: the regions' `u64`s at byte `8 * f`,
    /// the offsets' and sizes' `u32`s after them. Read by address
    /// (`ld.param` with a register address, which PTX allows for kernel
    /// parameters), as the fill kernels read their pattern: indexing the
    /// Rust parameter would copy all of it (1 KiB) to every thread's local
    /// memory first.
    macro_rules! table_entry {
        ($name:ident, regions, $f:expr) => {
            table_entry!(@read $name, u64, "ld.param.u64", reg64, 8 * $f)
        };
        ($name:ident, offsets, $f:expr) => {
            table_entry!(@read $name, u32, "ld.param.u32", reg32, 8 * MAX_FIELDS + 4 * $f)
        };
        ($name:ident, sizes, $f:expr) => {
            table_entry!(@read $name, u32, "ld.param.u32", reg32, 12 * MAX_FIELDS + 4 * $f)
        };
        (@read $name:ident, $t:ty, $ld:literal, $reg:ident, $byte:expr) => {{
            let value: $t;
            // SAFETY: `f < MAX_FIELDS`: the byte lies inside the table, the
            // kernel's third parameter (8-byte aligned, as are the entries
            // read); the asm only reads it.
            unsafe {
                asm!(
                    "{{",
                    ".reg .u64 %table_addr;",
                    concat!("mov.u64 %table_addr, ", stringify!($name), "_param_2;"),
                    "add.u64 %table_addr, %table_addr, {byte};",
                    concat!($ld, " {value}, [%table_addr];"),
                    "}}",
                    byte = in(reg64) ($byte) as u64,
                    value = out($reg) value,
                    options(pure, readonly, nostack, preserves_flags)
                );
            }
            value
        }};
    }

    macro_rules! soa_kernels {
        ($u:ty, $scatter:ident, $gather:ident) => {
            /// `table`'s fields of the `len` structs at `aos` to their own
            /// arrays.
            ///
            /// # Safety
            /// `aos` holds `len` structs of `table.stride` units (at most
            /// `SOA_TILE_BYTES` bytes), each field `f < table.fields`
            /// inside them, `table.regions[f]` `len * table.sizes[f]`
            /// units of this launch's alone; `SOA_BLOCK` threads a block.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $scatter(aos: *const $u, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![$u; SOA_TILE_BYTES / size_of::<$u>()];
                let stride = table.stride as usize;
                let per_tile = SOA_TILE_BYTES / size_of::<$u>() / stride;
                let len = len as usize;
                let t = block_thread_rank() as usize;
                let mut first = block_rank() * per_tile;
                while first < len {
                    let units = per_tile.min(len - first) * stride;
                    // SAFETY: `first * stride + u` lies in the `len` structs.
                    let src = unsafe { aos.add(first * stride) };
                    let mut u = t;
                    while u < units {
                        // SAFETY: as above, `u < units`.
                        tile.store(u, unsafe { src.add(u).read() });
                        u += SOA_BLOCK;
                    }
                    sync_threads();
                    let mut f = 0;
                    while f < fields {
                        let offset = table_entry!($scatter, offsets, f) as usize;
                        let size = table_entry!($scatter, sizes, f) as usize;
                        let count = units / stride * size;
                        let dst = table_entry!($scatter, regions, f) as *mut $u;
                        let (step_e, step_j) = (SOA_BLOCK / size, SOA_BLOCK % size);
                        let (mut e, mut j, mut k) = (t / size, t % size, t);
                        while k < count {
                            let unit = tile.load(e * stride + offset + j);
                            // SAFETY: `first * size + k` lies in the field's
                            // `len * size` units (`k < count`).
                            unsafe { dst.add(first * size + k).write(unit) };
                            k += SOA_BLOCK;
                            e += step_e;
                            j += step_j;
                            if j >= size {
                                j -= size;
                                e += 1;
                            }
                        }
                        f += 1;
                    }
                    sync_threads();
                    first += grid_blocks() * per_tile;
                }
            }

            /// The reverse of the scatter: `table`'s fields from their own
            /// arrays into the `len` structs at `aos` (every unit of which
            /// the fields cover).
            ///
            /// # Safety
            /// As for the scatter, with `aos` this launch's alone and the
            /// fields' arrays read.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $gather(aos: *mut $u, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![$u; SOA_TILE_BYTES / size_of::<$u>()];
                let stride = table.stride as usize;
                let per_tile = SOA_TILE_BYTES / size_of::<$u>() / stride;
                let len = len as usize;
                let t = block_thread_rank() as usize;
                let mut first = block_rank() * per_tile;
                while first < len {
                    let units = per_tile.min(len - first) * stride;
                    let mut f = 0;
                    while f < fields {
                        let offset = table_entry!($gather, offsets, f) as usize;
                        let size = table_entry!($gather, sizes, f) as usize;
                        let count = units / stride * size;
                        let src = table_entry!($gather, regions, f) as *const $u;
                        let (step_e, step_j) = (SOA_BLOCK / size, SOA_BLOCK % size);
                        let (mut e, mut j, mut k) = (t / size, t % size, t);
                        while k < count {
                            // SAFETY: `first * size + k` lies in the field's
                            // `len * size` units (`k < count`).
                            let unit = unsafe { src.add(first * size + k).read() };
                            tile.store(e * stride + offset + j, unit);
                            k += SOA_BLOCK;
                            e += step_e;
                            j += step_j;
                            if j >= size {
                                j -= size;
                                e += 1;
                            }
                        }
                        f += 1;
                    }
                    sync_threads();
                    // SAFETY: `first * stride + u` lies in the `len` structs.
                    let dst = unsafe { aos.add(first * stride) };
                    let mut u = t;
                    while u < units {
                        // SAFETY: as above, `u < units`.
                        unsafe { dst.add(u).write(tile.load(u)) };
                        u += SOA_BLOCK;
                    }
                    sync_threads();
                    first += grid_blocks() * per_tile;
                }
            }
        };
    }

    /// Words of a warp's own tile in the warp-tile transpositions: the
    /// block's shared tile cut into one part per warp.
    const WARP_UNITS: usize = soa_table::WARP_TILE_BYTES / 4;
    /// Loads a lane issues before it stores any of them: words, or quads
    /// in the gather's field phase.
    const SOA_BATCH: u32 = 8;
    const QUAD_BATCH: u32 = 4;
    /// The largest struct of the byte-word transpositions, in bytes: at
    /// least 8 structs a warp tile, so that every tile's bytes of a field
    /// start on 4 bytes.
    const BYTEWORD_MAX: u32 = soa_table::BYTEWORD_MAX as u32;

    // The warp tiles are arrays of `u128` so that their quads are 16-byte
    // aligned (`STS.128` / `LDS.128` need it).
    const _: () = assert!(core::mem::align_of::<u128>() >= 16);

    /// Four words on a 16-byte boundary: what one vector load or store
    /// moves.
    #[derive(Clone, Copy)]
    #[repr(C, align(16))]
    struct Quad([u32; 4]);

    // The warp tiles' shared accesses, by shared-window address
    // (`cuda_mem::device::shared`'s `SharedWindow`): plain `ld.shared` /
    // `st.shared` of a word, a halfword, a byte (`ld_shared` / `st_shared`
    // of a `u32`, `u16`, `u8`) or four words (`ld_shared_v4` /
    // `st_shared_v4`): one `LDS` / `STS`, with no bounds check: the kernels
    // keep every address inside their warp's part of the tile, as each
    // one's comment says.
    //
    // Safety (of each): the address is inside the calling warp's part of
    // the tile, aligned to the access (16, 4, 2 or 1 bytes); the warp's
    // lanes access each word from one lane at a time between `sync_warp`s,
    // or only read it.

    /// A unit the byte-word kernels move a field in when its offset and
    /// size allow: a word or a halfword, read and written in the tile by
    /// shared-window address (`ld_shared` / `st_shared`).
    trait TileUnit: SharedScalar {
        const ZERO: Self;
    }

    impl TileUnit for u32 {
        const ZERO: Self = 0;
    }

    impl TileUnit for u16 {
        const ZERO: Self = 0;
    }

    /// Where a lane's units (of `B` bytes: words, or bytes) of one field lie
    /// in a warp's tile as it walks them `span` at a time (32 units, or 32
    /// groups of 4): unit `k` of the field's units in the tile (struct `k /
    /// size`, unit `k % size` of the field in it) is the unit at window
    /// address `place`, kept raw (`SharedWindow::addr`): with a
    /// `SharedWindow` field, the byte-word gather compiled to other code (32
    /// more branches in place of `min` / `selp`). `u32` arithmetic; the one
    /// division is in `new`.
    #[derive(Clone, Copy)]
    struct UnitWalk<const B: u32> {
        place: SharedAddr,
        j: u32,
        size: u32,
        step_j: u32,
        advance: u32,
        wrap: u32,
    }

    impl<const B: u32> UnitWalk<B> {
        /// The walk from unit `k` of the field at unit `offset` of structs
        /// of `stride` units, `size` (at least 1) of them, in the tile at
        /// window address `part`, `span` units a step.
        #[inline(always)]
        fn new(
            k: u32,
            (offset, size): (u32, u32),
            stride: u32,
            (part, span): (SharedWindow, u32),
        ) -> Self {
            let (e, j) = (k / size, k % size);
            let (step_e, step_j) = (span / size, span % size);
            UnitWalk {
                place: part.addr() + B * (e * stride + offset + j),
                j,
                size,
                step_j,
                advance: B * (step_e * stride + step_j),
                wrap: B * (stride - size),
            }
        }

        /// The places of units `k..k + 4` (those the field has; the others
        /// lie past the tile's structs).
        #[inline(always)]
        fn quad(&self) -> [SharedWindow; 4] {
            let (mut place, mut j) = (self.place, self.j);
            core::array::from_fn(|_| {
                let at = place;
                place += B;
                j += 1;
                if j == self.size {
                    j = 0;
                    place += self.wrap;
                }
                SharedWindow::from_addr(at)
            })
        }

        /// The place of unit `k`.
        #[inline(always)]
        fn place(&self) -> SharedWindow {
            SharedWindow::from_addr(self.place)
        }

        /// On to unit `k + span`.
        #[inline(always)]
        fn step(&mut self) {
            self.place += self.advance;
            self.j += self.step_j;
            if self.j >= self.size {
                self.j -= self.size;
                self.place += self.wrap;
            }
        }
    }

    /// Field `f`'s `(offset, size)` in units, trapping unless the field
    /// lies inside the struct of `stride` units: what keeps every
    /// `UnitWalk` place inside its warp's tile.
    #[inline(always)]
    fn field_in(offset: u32, size: u32, stride: u32) -> (u32, u32) {
        assert!(
            offset <= stride && size <= stride - offset,
            "an SoA field outside its struct"
        );
        (offset, size)
    }

    /// A lane's walk over a warp tile's units (of `B` bytes) in field order
    /// (field 0's `n * size` units, then field 1's, ...), `span` units a
    /// step (32, or 128 when the lanes take quads, each field's units then
    /// whole quads): where each unit is in the tile and in its field's
    /// array.
    struct FieldWalk<E, const B: u32> {
        /// The fields' `(offset, size, the address of the tile's first
        /// struct's units)`.
        entry: E,
        fields: usize,
        n: u32,
        stride: u32,
        /// The tile's window address, and the units of a step.
        at: (SharedWindow, u32),
        /// The field, and the unit `k` of its `count = n * size` units.
        f: usize,
        k: u32,
        count: u32,
        unit: UnitWalk<B>,
        src: *const u8,
    }

    impl<E: Fn(usize) -> (u32, u32, *const u8), const B: u32> FieldWalk<E, B> {
        /// The walk from unit `k` of the tile of `n` structs of `stride`
        /// words at window address `part`, `span` units a step.
        #[inline(always)]
        fn start(
            k: u32,
            (n, stride): (u32, u32),
            at: (SharedWindow, u32),
            fields: usize,
            entry: E,
        ) -> Self {
            let mut walk = FieldWalk {
                entry,
                fields,
                n,
                stride,
                at,
                f: 0,
                k,
                count: 0,
                unit: UnitWalk::new(0, (0, 1), 1, (SharedWindow::from_addr(0), 1)),
                src: core::ptr::null(),
            };
            walk.enter();
            walk
        }

        /// Enters field `f` (or a later one, where `k` is beyond `f`'s units).
        fn enter(&mut self) {
            while self.f < self.fields {
                let (offset, size, src) = (self.entry)(self.f);
                let field = field_in(offset, size, self.stride);
                self.count = self.n * size;
                if self.k < self.count {
                    self.unit = UnitWalk::new(self.k, field, self.stride, self.at);
                    self.src = src;
                    return;
                }
                self.k -= self.count;
                self.f += 1;
            }
        }

        /// The unit's place in the tile and its address in its field's
        /// array.
        #[inline(always)]
        fn word(&mut self) -> (SharedWindow, *const u32) {
            let at = (self.unit.place(), self.unit_at().cast());
            self.step();
            at
        }

        /// The places of the quad of units from this one and its address
        /// in its field's array.
        #[inline(always)]
        fn quad(&mut self) -> ([SharedWindow; 4], *const Quad) {
            let at = (self.unit.quad(), self.unit_at().cast());
            self.step();
            at
        }

        /// The address of unit `k` in its field's array.
        #[inline(always)]
        fn unit_at(&self) -> *const u8 {
            self.src.wrapping_add((B * self.k) as usize)
        }

        /// On to the lane's next unit, `span` on. Past the tile's last unit
        /// the walk yields what no caller uses.
        #[inline(always)]
        fn step(&mut self) {
            self.k += self.at.1;
            if self.k < self.count {
                self.unit.step();
            } else {
                self.k -= self.count;
                self.f += 1;
                self.enter();
            }
        }
    }

    /// Where a warp's tiles are in the warp-tile transpositions: structs
    /// `first..first + per_tile`, then `step` structs on; its lane, the
    /// window address of its part of the block's shared tile, and whether
    /// its tiles of the array of structs are moved in 16-byte quads.
    struct WarpTiles {
        per_tile: usize,
        lane: u32,
        part: SharedWindow,
        first: usize,
        step: usize,
        quads: bool,
    }

    impl WarpTiles {
        /// This thread's warp's tiles, for structs of `stride` words (at
        /// most `WARP_UNITS`) at `aos`, in the block's `tile`.
        #[inline(always)]
        fn new(stride: u32, aos: *const u32, tile: *mut u32) -> WarpTiles {
            let t = block_thread_rank() as usize;
            let (lane, warp) = (t % 32, t / 32);
            let per_tile = soa_table::warp_tile_structs(stride as usize);
            // Every tile starts on 16 bytes when `aos` does: it starts a
            // multiple of `per_tile` structs in.
            let quads = (aos as usize).is_multiple_of(16)
                && (per_tile.is_multiple_of(4) || stride.is_multiple_of(4));
            WarpTiles {
                per_tile,
                lane: lane as u32,
                // `from_ptr` of the generic address, as before the
                // accessors moved to the device std (the array's `window()`
                // would save the conversion: a change of the code of its
                // own).
                part: SharedWindow::from_ptr(tile) + (4 * warp * WARP_UNITS) as u32,
                first: (block_rank() * (SOA_BLOCK / 32) + warp) * per_tile,
                step: grid_blocks() * (SOA_BLOCK / 32) * per_tile,
                quads,
            }
        }
    }

    /// Copies `units` words from `src` into a warp's part of the tile (at
    /// window address `part`): the lanes take every 32nd quad (16-byte
    /// loads, `SOA_BATCH` in flight) when `quads`, then every 32nd word.
    ///
    /// # Safety
    /// `src` is readable for `units` words, 16-byte aligned when `quads`;
    /// `units <= WARP_UNITS`; the warp's lanes call it alike, between
    /// `sync_warp`s.
    #[inline(always)]
    unsafe fn load_tile(src: *const u32, units: u32, lane: u32, part: SharedWindow, quads: bool) {
        let mut u = lane;
        if quads {
            let from = src.cast::<Quad>();
            let (count, mut q) = (units / 4, lane);
            while q + 32 * (SOA_BATCH - 1) < count {
                // SAFETY: quads `q + 32 * i < count` lie in `src`'s words.
                let v: [Quad; SOA_BATCH as usize] = core::array::from_fn(|i| unsafe {
                    from.add((q + 32 * i as u32) as usize).read()
                });
                for (i, quad) in v.iter().enumerate() {
                    // SAFETY: word `4 * (q + 32 * i) < units` of the part,
                    // 16-byte aligned (the part is); this lane's alone.
                    unsafe { st_shared_v4(part + 16 * (q + 32 * i as u32), quad.0) };
                }
                q += 32 * SOA_BATCH;
            }
            while q < count {
                // SAFETY: as in the batches.
                unsafe { st_shared_v4(part + 16 * q, from.add(q as usize).read().0) };
                q += 32;
            }
            u += 4 * count;
        }
        while u + 32 * (SOA_BATCH - 1) < units {
            // SAFETY: words `u + 32 * i < units` of `src`.
            let v: [u32; SOA_BATCH as usize] =
                core::array::from_fn(|i| unsafe { src.add((u + 32 * i as u32) as usize).read() });
            for (i, word) in v.iter().enumerate() {
                // SAFETY: word `u + 32 * i < units` of the part; this lane's.
                unsafe { st_shared(part + 4 * (u + 32 * i as u32), *word) };
            }
            u += 32 * SOA_BATCH;
        }
        while u < units {
            // SAFETY: as in the batches.
            unsafe { st_shared(part + 4 * u, src.add(u as usize).read()) };
            u += 32;
        }
    }

    /// Copies `units` words of a warp's part of the tile out to `dst`, in
    /// quads when `quads`: the reverse of `load_tile`.
    ///
    /// # Safety
    /// `dst` is writable for `units` words, this warp's alone, 16-byte
    /// aligned when `quads`; `units <= WARP_UNITS`; the warp's lanes call it
    /// alike, between `sync_warp`s.
    #[inline(always)]
    unsafe fn store_tile(dst: *mut u32, units: u32, lane: u32, part: SharedWindow, quads: bool) {
        let mut u = lane;
        if quads {
            let to = dst.cast::<Quad>();
            let (count, mut q) = (units / 4, lane);
            while q < count {
                // SAFETY: quad `q < count` of the part and of `dst`.
                unsafe { to.add(q as usize).write(Quad(ld_shared_v4(part + 16 * q))) };
                q += 32;
            }
            u += 4 * count;
        }
        while u < units {
            // SAFETY: word `u < units` of the part and of `dst`.
            unsafe { dst.add(u as usize).write(ld_shared::<u32>(part + 4 * u)) };
            u += 32;
        }
    }

    /// The transpositions in 4-byte words with a tile per warp: each warp
    /// moves its own `warp_tile_structs(stride)` structs through its part
    /// of the shared tile, with `sync_warp` between its phases and no block
    /// barrier, so that the warps of a block overlap their loads and stores
    /// instead of waiting for each other. The array of structs moves in
    /// 16-byte quads where it is 16-byte aligned; loads are issued
    /// `SOA_BATCH` at a time. For structs of at most `WARP_UNITS` words.
    macro_rules! soa_warp_kernels {
        ($scatter:ident, $gather:ident) => {
            /// As the block-tile scatter, for structs of at most
            /// `WARP_UNITS` words.
            ///
            /// # Safety
            /// As for the block-tile scatter, and `table.stride <=
            /// WARP_UNITS`.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $scatter(aos: *const u32, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![u128; SOA_TILE_BYTES / 16];
                let stride = table.stride;
                let len = len as usize;
                let WarpTiles { per_tile, lane, part, mut first, step, quads } =
                    WarpTiles::new(stride, aos, tile.as_ptr().cast());
                while first < len {
                    let n = per_tile.min(len - first) as u32;
                    // SAFETY: the tile's `n` structs lie in the `len` at
                    // `aos`; `n * stride <= WARP_UNITS`; 16-byte aligned
                    // when `quads` (`WarpTiles::new`).
                    unsafe { load_tile(aos.add(first * stride as usize), n * stride, lane, part, quads) };
                    sync_warp();
                    let mut f = 0;
                    while f < fields {
                        let offset = table_entry!($scatter, offsets, f);
                        let size = table_entry!($scatter, sizes, f);
                        let field = field_in(offset, size, stride);
                        let count = n * size;
                        // SAFETY: the tile's units of field `f` start
                        // `first * size` units into its region.
                        let dst = unsafe { (table_entry!($scatter, regions, f) as *mut u32).add(first * size as usize) };
                        if lane < count {
                            let mut unit = UnitWalk::<4>::new(lane, field, stride, (part, 32));
                            let mut k = lane;
                            while k < count {
                                // SAFETY: unit `k % size` of struct `k / size
                                // < n` of the tile (the field lies inside the
                                // struct: `field_in`), stored before the
                                // `sync_warp`; `dst + k` lies in the field's
                                // `len * size` units.
                                unsafe { dst.add(k as usize).write(ld_shared::<u32>(unit.place())) };
                                unit.step();
                                k += 32;
                            }
                        }
                        f += 1;
                    }
                    sync_warp();
                    first += step;
                }
            }

            /// As the block-tile gather, for structs of at most
            /// `WARP_UNITS` words.
            ///
            /// # Safety
            /// As for the block-tile gather (the fields cover every word of
            /// the struct: a lane's count of units is the tile's words),
            /// and `table.stride <= WARP_UNITS`.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $gather(aos: *mut u32, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![u128; SOA_TILE_BYTES / 16];
                let stride = table.stride;
                let len = len as usize;
                let WarpTiles { per_tile, lane, part, mut first, step, quads } =
                    WarpTiles::new(stride, aos, tile.as_ptr().cast());
                // Whether the fields' units move in quads (in tiles of a
                // multiple of 4 structs).
                let mut field_quads = per_tile.is_multiple_of(4);
                let mut f = 0;
                while f < fields {
                    field_quads &= table_entry!($gather, regions, f).is_multiple_of(16);
                    f += 1;
                }
                while first < len {
                    let n = per_tile.min(len - first) as u32;
                    let units = n * stride;
                    // The tile's units in field order, every 32nd this
                    // lane's (or every 32nd quad): whole batches of loads
                    // across the fields, however few units each field has
                    // in the tile, the last batch cut short by predicates.
                    let entry = |f| {
                        let size = table_entry!($gather, sizes, f);
                        let region = table_entry!($gather, regions, f) as *const u8;
                        // SAFETY: the tile's structs' units of field `f`
                        // start `first * size` units into its region.
                        let src = unsafe { region.add(4 * first * size as usize) };
                        (table_entry!($gather, offsets, f), size, src)
                    };
                    if field_quads && n.is_multiple_of(4) {
                        // Every field's units of the tile are whole quads
                        // from a 16-byte boundary: `first` and `n` are
                        // multiples of 4, the regions 16-byte aligned.
                        let mut walk =
                            FieldWalk::<_, 4>::start(4 * lane, (n, stride), (part, 128), fields, entry);
                        let mut left = (units / 4 - lane.min(units / 4)).div_ceil(32);
                        while left > 0 {
                            let b = left.min(QUAD_BATCH);
                            let at = [walk.quad(), walk.quad(), walk.quad(), walk.quad()];
                            // SAFETY: each of the first `b` is quad `k / 4`
                            // of its field's `n * size / 4` quads from the
                            // tile's first struct on (the walk stays within
                            // this lane's `left`), 16-byte aligned.
                            let v: [Quad; QUAD_BATCH as usize] = core::array::from_fn(|i| {
                                if (i as u32) < b {
                                    unsafe { at[i].1.read() }
                                } else {
                                    Quad([0; 4])
                                }
                            });
                            for i in 0..QUAD_BATCH as usize {
                                if (i as u32) < b {
                                    let places = at[i].0;
                                    // SAFETY: four words of this warp's
                                    // tile (the walk's, of a field inside
                                    // the struct), this lane's alone until
                                    // the `sync_warp` below.
                                    unsafe {
                                        st_shared(places[0], v[i].0[0]);
                                        st_shared(places[1], v[i].0[1]);
                                        st_shared(places[2], v[i].0[2]);
                                        st_shared(places[3], v[i].0[3]);
                                    }
                                }
                            }
                            left -= b;
                        }
                    } else {
                        let mut walk = FieldWalk::<_, 4>::start(lane, (n, stride), (part, 32), fields, entry);
                        let mut left = (units - lane.min(units)).div_ceil(32);
                        while left > 0 {
                            let b = left.min(SOA_BATCH);
                            let at = [
                                walk.word(),
                                walk.word(),
                                walk.word(),
                                walk.word(),
                                walk.word(),
                                walk.word(),
                                walk.word(),
                                walk.word(),
                            ];
                            // SAFETY: each of the first `b` is unit `k < n *
                            // size` of its field's units from the tile's
                            // first struct on (the walk stays within this
                            // lane's `left`).
                            let v: [u32; SOA_BATCH as usize] = core::array::from_fn(|i| {
                                if (i as u32) < b {
                                    unsafe { at[i].1.read() }
                                } else {
                                    0
                                }
                            });
                            for i in 0..SOA_BATCH as usize {
                                if (i as u32) < b {
                                    // SAFETY: a word of this warp's tile
                                    // (the walk's), this lane's alone until
                                    // the `sync_warp` below.
                                    unsafe { st_shared(at[i].0, v[i]) };
                                }
                            }
                            left -= b;
                        }
                    }
                    sync_warp();
                    // SAFETY: the tile's `n` structs lie in the `len` at
                    // `aos`, this launch's; 16-byte aligned when `quads`.
                    unsafe { store_tile(aos.add(first * stride as usize), units, lane, part, quads) };
                    sync_warp();
                    first += step;
                }
            }
        };
    }
    /// The first `valid` (fewer than 4) bytes at `src`, one at a time, as
    /// the low bytes of a word. Inlined: a `.func` of its own would carry
    /// the crate's hash in its name, which depends on where the crate is
    /// built, and the shipped PTX must not.
    ///
    /// # Safety
    /// `src` is readable for `valid` bytes.
    #[inline(always)]
    unsafe fn load_group(src: *const u8, valid: u32) -> u32 {
        let mut v = 0;
        let mut b = 0;
        while b < valid.min(4) {
            // SAFETY: byte `b < valid` of the caller's.
            v |= (unsafe { src.add(b as usize).read() } as u32) << (8 * b);
            b += 1;
        }
        v
    }

    /// A field's `count` units `U` (of `B` bytes) of the tile at window
    /// address `part` out to `dst`, every 32nd this lane's: the field's
    /// `(offset, size)` and the struct's `stride` in units.
    ///
    /// # Safety
    /// The field lies inside the struct (`field_in`), the tile holds the
    /// `count / size` structs (stored before a `sync_warp`), `dst` is
    /// writable for `count` units, aligned to `U`, and the places are
    /// aligned to `U` (the struct's and the field's bytes are multiples of
    /// `B`).
    #[inline(always)]
    unsafe fn scatter_units<U: TileUnit, const B: u32>(
        dst: *mut U,
        count: u32,
        lane: u32,
        (field, stride, part): ((u32, u32), u32, SharedWindow),
    ) {
        if lane < count {
            let mut unit = UnitWalk::<B>::new(lane, field, stride, (part, 32));
            let mut k = lane;
            while k < count {
                // SAFETY: unit `k < count` of the field in the tile and in
                // `dst` (the caller).
                unsafe { dst.add(k as usize).write(ld_shared::<U>(unit.place())) };
                unit.step();
                k += 32;
            }
        }
    }

    /// A compile-time check that `put_each!` reaches every element.
    #[inline(always)]
    fn at_most_16<T, const N: usize>(_: &[T; N]) {
        const { assert!(N <= 16) };
    }

    /// `$put(i, $v[i])` for each `i` of the array `$v` (of at most 16),
    /// unrolled: called with constant `i`, so that `$v` stays in registers
    /// (a loop over it may put it on the stack).
    macro_rules! put_each {
        ($put:ident, $v:ident) => {
            at_most_16(&$v);
            put_each!(@each $put, $v; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
        };
        (@each $put:ident, $v:ident; $($i:literal)*) => {
            $( if let Some(&x) = $v.get($i) { $put($i, x) } )*
        };
    }

    /// The reverse of `scatter_units`: a field's `count` units from `src`
    /// into the tile, in batches of `N` loads cut short by predicates: the
    /// longer the batch, the more bytes in flight on each round trip to
    /// memory (see the byte-word gather).
    ///
    /// # Safety
    /// As for `scatter_units`, with `src` readable for `count` units, and
    /// the lane alone writing its units of the tile until the next
    /// `sync_warp`.
    #[inline(always)]
    unsafe fn gather_units<U: TileUnit, const B: u32, const N: usize>(
        src: *const U,
        count: u32,
        lane: u32,
        (field, stride, part): ((u32, u32), u32, SharedWindow),
    ) {
        if lane < count {
            let mut unit = UnitWalk::<B>::new(lane, field, stride, (part, 32));
            let mut k = lane;
            while k < count {
                let b = (count - k).div_ceil(32).min(N as u32);
                // SAFETY: units `k + 32 * i < count` of `src`.
                let from = unsafe { src.add(k as usize) };
                let v: [U; N] = core::array::from_fn(|i| {
                    if k + 32 * (i as u32) < count {
                        unsafe { from.add(32 * i).read() }
                    } else {
                        U::ZERO
                    }
                });
                let mut put = |i: u32, x: U| {
                    if i < b {
                        // SAFETY: unit `k + 32 * i < count` of the field in
                        // the tile, this lane's (the caller).
                        unsafe { st_shared(unit.place(), x) };
                        unit.step();
                    }
                };
                put_each!(put, v);
                k += 32 * b;
            }
        }
    }

    /// The transpositions of structs whose size is a multiple of 4 bytes
    /// (at most `BYTEWORD_MAX` bytes) with fields of any byte size: the
    /// array of structs moves through the warp tiles in words and quads as
    /// in the word kernels. A field whose offset and size are whole words
    /// (or halfwords) moves in them: one `LDS`/`STS` in the tile and one
    /// access in memory a unit. Any other field's array moves in words of
    /// 4 of its bytes (a lane takes 4 consecutive bytes of the array: 4
    /// `LDS.U8`/`STS.U8` in the tile and one 4-byte access in memory, the
    /// field's last bytes in a tile one at a time). The table is in bytes.
    macro_rules! soa_byteword_kernels {
        ($scatter:ident, $gather:ident) => {
            /// As the block-tile byte scatter, for structs of a multiple of
            /// 4 bytes, at most `BYTEWORD_MAX`.
            ///
            /// # Safety
            /// As for the block-tile byte scatter, with `aos` 4-byte
            /// aligned, `table.stride` a multiple of 4 and at most
            /// `BYTEWORD_MAX`, and every region 4-byte aligned.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $scatter(aos: *const u32, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![u128; SOA_TILE_BYTES / 16];
                let stride = table.stride;
                let words = stride / 4;
                assert!(stride.is_multiple_of(4) && (4..=BYTEWORD_MAX).contains(&stride));
                let len = len as usize;
                // At least 8 structs a tile (`BYTEWORD_MAX`), a multiple of
                // 8: every tile's bytes of a field start on 4 bytes.
                let WarpTiles { per_tile, lane, part, mut first, step, quads } =
                    WarpTiles::new(words, aos, tile.as_ptr().cast());
                while first < len {
                    let n = per_tile.min(len - first) as u32;
                    // SAFETY: the tile's `n` structs lie in the `len` at
                    // `aos`; `n * words <= WARP_UNITS`; 16-byte aligned
                    // when `quads`.
                    unsafe { load_tile(aos.add(first * words as usize), n * words, lane, part, quads) };
                    sync_warp();
                    let mut f = 0;
                    while f < fields {
                        let offset = table_entry!($scatter, offsets, f);
                        let size = table_entry!($scatter, sizes, f);
                        let field = field_in(offset, size, stride);
                        let count = n * size;
                        // SAFETY: the tile's bytes of field `f` start
                        // `first * size` bytes into its region; 4-byte
                        // aligned (the region is, and `first` is a multiple
                        // of `per_tile`, of 8).
                        let dst = unsafe { (table_entry!($scatter, regions, f) as *mut u8).add(first * size as usize) };
                        // Fields of whole words or halfwords move in them.
                        // SAFETY: the field's `count` bytes at `dst` in
                        // units aligned to them (`dst` is 4-byte aligned,
                        // `offset`, `size` and `stride` multiples of the
                        // unit), inside the struct (`field_in`).
                        if offset.is_multiple_of(4) && size.is_multiple_of(4) {
                            let at = ((offset / 4, size / 4), stride / 4, part);
                            unsafe { scatter_units::<u32, 4>(dst.cast(), count / 4, lane, at) };
                        } else if offset.is_multiple_of(2) && size.is_multiple_of(2) {
                            let at = ((offset / 2, size / 2), stride / 2, part);
                            unsafe { scatter_units::<u16, 2>(dst.cast(), count / 2, lane, at) };
                        } else if 4 * lane < count {
                            let mut unit = UnitWalk::<1>::new(4 * lane, field, stride, (part, 128));
                            let mut k = 4 * lane;
                            while k + 4 <= count {
                                let p = unit.quad();
                                // SAFETY: bytes `k..k + 4` of the field's
                                // `count` in the tile (inside the struct:
                                // `field_in`), stored before the
                                // `sync_warp`; `dst + k` is 4-byte aligned,
                                // in the field's `len * size` bytes.
                                unsafe {
                                    let v = ld_shared::<u8>(p[0]) as u32
                                        | (ld_shared::<u8>(p[1]) as u32) << 8
                                        | (ld_shared::<u8>(p[2]) as u32) << 16
                                        | (ld_shared::<u8>(p[3]) as u32) << 24;
                                    dst.add(k as usize).cast::<u32>().write(v);
                                }
                                unit.step();
                                k += 128;
                            }
                            if k < count {
                                let p = unit.quad();
                                let mut b = 0;
                                while k + b < count {
                                    // SAFETY: as above, byte `k + b <
                                    // count`.
                                    unsafe { dst.add((k + b) as usize).write(ld_shared::<u8>(p[b as usize])) };
                                    b += 1;
                                }
                            }
                        }
                        f += 1;
                    }
                    sync_warp();
                    first += step;
                }
            }

            /// As the block-tile byte gather, for structs of a multiple of 4
            /// bytes, at most `BYTEWORD_MAX`.
            ///
            /// # Safety
            /// As for the scatter, with `aos` this launch's alone and the
            /// fields' arrays read.
            #[no_mangle]
            pub unsafe extern "ptx-kernel" fn $gather(aos: *mut u32, len: u64, table: SoaTable) {
                let fields = (table.fields as usize).min(MAX_FIELDS);
                let tile = cuda_mem::shared_array![u128; SOA_TILE_BYTES / 16];
                let stride = table.stride;
                let words = stride / 4;
                assert!(stride.is_multiple_of(4) && (4..=BYTEWORD_MAX).contains(&stride));
                let len = len as usize;
                let WarpTiles { per_tile, lane, part, mut first, step, quads } =
                    WarpTiles::new(words, aos, tile.as_ptr().cast());
                while first < len {
                    let n = per_tile.min(len - first) as u32;
                    // Field by field, every 32nd unit (or group of 4 of
                    // its bytes) this lane's, in batches of loads cut
                    // short by predicates.
                    let mut f = 0;
                    while f < fields {
                        let offset = table_entry!($gather, offsets, f);
                        let size = table_entry!($gather, sizes, f);
                        let field = field_in(offset, size, stride);
                        let count = n * size;
                        // SAFETY: the tile's bytes of field `f` start
                        // `first * size` bytes into its region; 4-byte
                        // aligned (the region is, and `first` is a multiple
                        // of `per_tile`, of 8).
                        let src = unsafe { (table_entry!($gather, regions, f) as *const u8).add(first * size as usize) };
                        let groups = count.div_ceil(4);
                        // Fields of whole words or halfwords move in them,
                        // in batches of 16: a field's loads wait for memory
                        // once a tile or so (a lane holds about 10 of a
                        // tile's structs), and the warps of a single wave
                        // need the bytes in flight. Measured on an H200 for
                        // the 12-byte struct of the bench (a word, two
                        // halfwords, 1 and 3 bytes): the gather at
                        // 1315-1390 GB/s against 1235-1291 with batches of
                        // 8 (three runs each); the 4-byte groups of the
                        // other fields in batches of 16 were slower
                        // (1260-1284), so they keep `SOA_BATCH`.
                        // SAFETY: as in the scatter; the lane's units of the
                        // tile are its own until the `sync_warp`.
                        if offset.is_multiple_of(4) && size.is_multiple_of(4) {
                            let at = ((offset / 4, size / 4), stride / 4, part);
                            unsafe { gather_units::<u32, 4, { 2 * SOA_BATCH as usize }>(src.cast(), count / 4, lane, at) };
                        } else if offset.is_multiple_of(2) && size.is_multiple_of(2) {
                            let at = ((offset / 2, size / 2), stride / 2, part);
                            unsafe { gather_units::<u16, 2, { 2 * SOA_BATCH as usize }>(src.cast(), count / 2, lane, at) };
                        } else if lane < groups {
                            let mut unit = UnitWalk::<1>::new(4 * lane, field, stride, (part, 128));
                            // Batches of 4: the kernel then fits 48
                            // registers (5 blocks per SM) without a limit.
                            const GROUP_BATCH: usize = 4;
                            let mut g = lane;
                            while g < groups {
                                let b = (groups - g).div_ceil(32).min(GROUP_BATCH as u32);
                                // SAFETY: group `g + 32 * i < count / 4` of
                                // the field's `count` bytes: 4 of them in
                                // its array, 4-byte aligned.
                                let from = unsafe { src.add(4 * g as usize).cast::<u32>() };
                                let v: [u32; GROUP_BATCH] = core::array::from_fn(|i| {
                                    if g + 32 * (i as u32) < count / 4 {
                                        unsafe { from.add(32 * i).read() }
                                    } else {
                                        0
                                    }
                                });
                                // Called with constant `i`, so that `v`
                                // stays in registers.
                                let mut put = |i: u32, word: u32| {
                                    if i < b {
                                        let at = 4 * (g + 32 * i);
                                        let valid = (count - at).min(4);
                                        // A field's last bytes in the tile,
                                        // fewer than 4: one at a time.
                                        // SAFETY: `valid` bytes of the
                                        // field's array.
                                        let word = if valid < 4 {
                                            unsafe { load_group(src.add(at as usize), valid) }
                                        } else {
                                            word
                                        };
                                        for (byte, &place) in unit.quad().iter().enumerate() {
                                            if (byte as u32) < valid {
                                                // SAFETY: a byte of the
                                                // field in this warp's
                                                // tile (inside the struct:
                                                // `field_in`), this lane's
                                                // until the `sync_warp`.
                                                unsafe { st_shared(place, (word >> (8 * byte)) as u8) };
                                            }
                                        }
                                        unit.step();
                                    }
                                };
                                put_each!(put, v);
                                g += 32 * b;
                            }
                        }
                        f += 1;
                    }
                    sync_warp();
                    // SAFETY: the tile's `n` structs lie in the `len` at
                    // `aos`, this launch's; 16-byte aligned when `quads`.
                    unsafe { store_tile(aos.add(first * words as usize), n * words, lane, part, quads) };
                    sync_warp();
                    first += step;
                }
            }
        };
    }

    soa_kernels!(u32, cuda_mem_soa_scatter_words, cuda_mem_soa_gather_words);
    soa_warp_kernels!(cuda_mem_soa_scatter_warps, cuda_mem_soa_gather_warps);
    soa_kernels!(u8, cuda_mem_soa_scatter_bytes, cuda_mem_soa_gather_bytes);
    soa_byteword_kernels!(
        cuda_mem_soa_scatter_bytewords,
        cuda_mem_soa_gather_bytewords
    );
}
