//! [`select_tile`]: one tile of a single-pass stream compaction (the
//! elements that pass a test, in order), the block of `select_flagged`,
//! `unique` and run-length encoding.

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::DeviceAtomic;
use crate::device::block;
use crate::device::ops::Sum;
use crate::device::shared::SharedSlice;
use crate::device::thread::block_thread_rank;
use crate::device::warp;
use crate::device::wide::lookback::{take_ticket, tile_prefix, TileStatus};

/// The block's shared memory for [`select_tile`]: the warps' counts and
/// the tile's prefix (at least [`SelectScratch::counts_len`]), and the
/// tile's index.
///
/// ```
/// assert_eq!(cuda_mem::device::wide::SelectScratch::counts_len(256), 9);
/// ```
#[derive(Clone, Copy)]
pub struct SelectScratch<'a> {
    /// At least [`counts_len`](Self::counts_len)`(BLOCK)` elements.
    pub counts: SharedSlice<'a, u32>,
    /// One element.
    pub ticket: SharedSlice<'a, u32>,
}

impl SelectScratch<'_> {
    /// The length of `counts`: one per warp, and one more.
    pub const fn counts_len(block: usize) -> usize {
        block.div_ceil(32) + 1
    }
}

/// Compacts one tile of `BLOCK * ITEMS` elements: the block takes the next
/// tile from `counter`, tests each element (`keep(i, input[i])`), and
/// writes `emit(i, input[i])` of the kept ones to `output`, in input order,
/// after those of the tiles before it (a decoupled look-back over the
/// tiles' counts); the block of the last tile writes the number kept in
/// all to `selected`.
///
/// Each warp reads 32 consecutive elements per row (coalesced), counts a
/// row's kept elements with one ballot, and every kept element learns its
/// place from the ballots, the warps' counts (a block scan) and the tiles
/// before (the look-back): no shared-memory exchange of the elements.
///
/// The grid has exactly one block per tile, `len.div_ceil(BLOCK * ITEMS)`
/// of them (at least one, so that `selected` is written when `len` is 0).
///
/// # Safety
/// - `input` points to `len` elements every thread can read, unchanged
///   while the kernel runs; `keep` and `emit` read only such memory.
/// - `output` has room for every kept element (at most `len`) and
///   `selected` for one `u64`, both this launch's alone, overlapping
///   nothing it reads.
/// - `counter` was 0 when the kernel started, and `status`'s memory zero
///   (for at least one tile); both are this launch's alone.
/// - Every thread of the block calls it once, `BLOCK` is the launch's
///   block size (below 32 or a multiple of it), and `len` is below 2^32.
///
/// ```
/// use cuda_mem::device::DeviceAtomic;
/// use cuda_mem::device::wide::{select_tile, SelectScratch, TileStatus};
/// let data: Vec<u32> = (0..10).collect();
/// let mut out = vec![0u32; 10];
/// let mut selected = 0u64;
/// let tiles = 10usize.div_ceil(4); // BLOCK 1, ITEMS 4
/// let mut state = vec![0u64; TileStatus::<u32>::bytes(tiles).div_ceil(8)];
/// let counter = DeviceAtomic::new(0u32);
/// let (counts, ticket) = (cuda_mem::shared_array![u32; 2], cuda_mem::shared_array![u32; 1]);
/// let scratch = SelectScratch { counts: counts.as_slice(), ticket: ticket.as_slice() };
/// // The host model: one-thread blocks, one after the other.
/// for _ in 0..tiles {
///     // SAFETY: as the contract says; zeroed state, a fresh counter.
///     unsafe {
///         let status = TileStatus::new(state.as_mut_ptr().cast(), tiles);
///         select_tile::<u32, u32, 1, 4>(
///             data.as_ptr(), 10, |_, x| x % 3 == 0, |_, x| x * 10,
///             out.as_mut_ptr(), &mut selected, status, &counter, scratch,
///         );
///     }
/// }
/// assert_eq!((selected, &out[..4]), (4, &[0, 30, 60, 90][..]));
/// ```
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn select_tile<T, U, const BLOCK: usize, const ITEMS: usize>(
    input: *const T,
    len: usize,
    keep: impl Fn(usize, T) -> bool,
    emit: impl Fn(usize, T) -> U,
    output: *mut U,
    selected: *mut u64,
    status: TileStatus<'_, u32>,
    counter: &DeviceAtomic<u32>,
    scratch: SelectScratch<'_>,
) where
    T: DeviceCopy,
    U: DeviceCopy,
{
    let lanes = const { super::warp_lanes(BLOCK) };
    const { assert!(ITEMS > 0 && ITEMS <= 32, "1 to 32 elements per thread") };
    let rank = block_thread_rank() as usize;
    let (lane, warp) = (rank % lanes, rank / lanes);
    let tile = take_ticket(counter, scratch.ticket);
    let tiles = len.div_ceil(BLOCK * ITEMS).max(1);
    let first = tile * BLOCK * ITEMS + warp * lanes * ITEMS;
    let whole = first + lanes * ITEMS <= len;
    let in_warp = len.saturating_sub(first).min(lanes * ITEMS) as u32;

    // Row `j` of the warp: `lanes` consecutive elements, one per lane (past
    // the end, zero bytes: a valid `T`, never kept below).
    // SAFETY: the caller vouches for `len` elements at `input`; zero
    // bytes are a `T` (`DeviceCopy`).
    let items: [T; ITEMS] = unsafe {
        super::load_rows(
            input,
            (first, lanes, lane),
            in_warp,
            core::mem::zeroed(),
            false,
        )
    };
    let mut masks = [0u32; ITEMS];
    let mut warp_count = 0u32;
    let mut j = 0;
    while j < ITEMS {
        let i = first + j * lanes + lane;
        masks[j] = warp::ballot((whole || i < len) && keep(i, items[j]));
        warp_count += masks[j].count_ones();
        j += 1;
    }

    // The warps' counts in order: lane 0 of each warp brings its warp's.
    let mine = if lane == 0 { warp_count } else { 0 };
    let (before_warp, aggregate) =
        block::exclusive_scan::<u32, BLOCK>(mine, 0, |a, b| a.wrapping_add(b), scratch.counts);
    let before_warp = warp::shfl_idx(before_warp, 0);

    // The tiles before this one.
    let slot = (scratch.counts, SelectScratch::counts_len(BLOCK) - 1);
    // SAFETY: this block holds `tile` (its ticket) and asks once.
    let prefix = unsafe { tile_prefix(&status, tile, aggregate, Sum, slot) };
    if tile == tiles - 1 && rank == 0 {
        // SAFETY: the last tile's thread 0 alone writes `selected`.
        unsafe { selected.write(u64::from(prefix.wrapping_add(aggregate))) };
    }

    // Each kept element's place: the tiles, warps and rows before it, and
    // the lanes of its row before it.
    let below = warp::lanemask_lt();
    let mut at = prefix.wrapping_add(before_warp);
    let mut j = 0;
    while j < ITEMS {
        if masks[j] & (1 << lane) != 0 {
            let i = first + j * lanes + lane;
            let place = at.wrapping_add((masks[j] & below).count_ones()) as usize;
            // SAFETY: the `place`-th kept element, below the number kept
            // (at most `len`); each place is written by one thread.
            unsafe { output.add(place).write(emit(i, items[j])) };
        }
        at = at.wrapping_add(masks[j].count_ones());
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the tiles one after the other with one-thread blocks.
    fn select<const ITEMS: usize>(
        data: &[i64],
        keep: impl Fn(usize, i64) -> bool,
    ) -> (Vec<u64>, u64) {
        let tiles = data.len().div_ceil(ITEMS).max(1);
        let mut state = vec![0u64; TileStatus::<u32>::bytes(tiles).div_ceil(8)];
        let counter = DeviceAtomic::new(0u32);
        let (counts, ticket) = (crate::shared_array![u32; 2], crate::shared_array![u32; 1]);
        let scratch = SelectScratch {
            counts: counts.as_slice(),
            ticket: ticket.as_slice(),
        };
        let mut out = vec![u64::MAX; data.len()];
        let mut selected = u64::MAX;
        for _ in 0..tiles {
            // SAFETY: the contract: lengths, zeroed state, a fresh counter.
            unsafe {
                let status = TileStatus::new(state.as_mut_ptr().cast(), tiles);
                select_tile::<i64, u64, 1, ITEMS>(
                    data.as_ptr(),
                    data.len(),
                    &keep,
                    |i, _| i as u64,
                    out.as_mut_ptr(),
                    &mut selected,
                    status,
                    &counter,
                    scratch,
                );
            }
        }
        out.truncate(selected as usize);
        (out, selected)
    }

    #[test]
    fn the_kept_elements_come_out_in_order_at_every_size() {
        for len in [0usize, 1, 2, 6, 7, 8, 9, 31, 33, 100, 257] {
            let data: Vec<i64> = (0..len as i64).map(|i| (i * 7919) % 13).collect();
            let want: Vec<u64> = (0..len)
                .filter(|&i| data[i] % 3 == 0)
                .map(|i| i as u64)
                .collect();
            let (got, n) = select::<7>(&data, |_, x| x % 3 == 0);
            assert_eq!((got, n), (want.clone(), want.len() as u64), "len {len}");
            let (got, _) = select::<1>(&data, |_, x| x % 3 == 0);
            assert_eq!(got, want, "len {len}, one per thread");
            let (all, n) = select::<16>(&data, |_, _| true);
            assert_eq!(n as usize, len);
            assert_eq!(all, (0..len as u64).collect::<Vec<_>>());
            assert_eq!(select::<4>(&data, |_, _| false).1, 0);
        }
    }
}
