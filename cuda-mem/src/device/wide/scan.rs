//! [`scan_tile`]: one tile of a single-pass device-wide scan (decoupled
//! look-back), and the shared memory it needs ([`ScanScratch`]).

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::DeviceAtomic;
use crate::device::block;
use crate::device::ops::Operator;
use crate::device::shared::SharedSlice;
use crate::device::thread::block_thread_rank;
use crate::device::warp;
use crate::device::wide::lookback::{take_ticket, tile_prefix, TileStatus};

/// Which scan: element `i` of the output combines the inputs `0..=i`
/// (inclusive) or `0..i` (exclusive), after the scan's initial value.
///
/// ```
/// use cuda_mem::device::wide::ScanKind;
/// assert_ne!(ScanKind::Inclusive, ScanKind::Exclusive);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `out[i] = init op in[0] op ... op in[i]`.
    Inclusive,
    /// `out[i] = init op in[0] op ... op in[i - 1]` (`out[0] = init`).
    Exclusive,
}

/// The block's shared memory for [`scan_tile`], declared by the kernel
/// (`shared_array!`) with the lengths below.
///
/// ```
/// use cuda_mem::device::wide::ScanScratch;
/// assert_eq!(ScanScratch::<u32>::exchange_len(256, 16), 8 * 33 * 16);
/// assert_eq!(ScanScratch::<u32>::partials_len(256), 9);
/// ```
#[derive(Clone, Copy)]
pub struct ScanScratch<'a, T> {
    /// The warps' exchanges between loaded order and per-thread runs:
    /// at least [`exchange_len`](Self::exchange_len)`(BLOCK, ITEMS)`.
    pub exchange: SharedSlice<'a, T>,
    /// The warps' totals and the tile's prefix: at least
    /// [`partials_len`](Self::partials_len)`(BLOCK)`.
    pub partials: SharedSlice<'a, T>,
    /// The tile's index, one element.
    pub ticket: SharedSlice<'a, u32>,
}

impl<T: DeviceCopy> ScanScratch<'_, T> {
    /// The length of `exchange` for blocks of `block` threads and `items`
    /// elements per thread: each warp's `32 * items` elements with one
    /// element of padding per 32 (no bank conflicts).
    pub const fn exchange_len(block: usize, items: usize) -> usize {
        let lanes = super::warp_lanes(block);
        block.div_ceil(lanes) * padded(lanes * items)
    }

    /// The length of `partials`: one per warp, and one more.
    pub const fn partials_len(block: usize) -> usize {
        block.div_ceil(32) + 1
    }
}

/// Index `i` of a warp's exchange region, with one element of padding
/// after every 32 (lane `l` of a blocked read touches `l * ITEMS + k`).
#[inline(always)]
const fn padded(i: usize) -> usize {
    i + i / 32
}

/// Scans one tile of `BLOCK * ITEMS` elements: the block takes the next
/// tile index from `counter`, loads the tile (each warp loads 32 rows of
/// `ITEMS` with coalesced reads, then gives each thread `ITEMS`
/// consecutive elements through shared memory), scans it, publishes its
/// aggregate, looks back (warp 0) for the prefix of the tiles before it,
/// publishes its inclusive prefix, and writes its part of `output`.
///
/// The grid has exactly one block per tile, `len.div_ceil(BLOCK * ITEMS)`
/// of them, and `status` that many tiles. `op` is associative (it need not
/// commute: every combination keeps the elements' order); `init` starts
/// the scan (the identity for a plain inclusive
/// scan, 0 for an exclusive sum).
///
/// # Safety
/// - `input` and `output` point to `len` elements every thread reaches
///   (they may be the same: in place); nothing else reads or writes
///   `output`, or writes `input`, while the kernel runs.
/// - `counter` was 0 when the kernel started, and `status`'s memory zero;
///   both are this launch's alone.
/// - Every thread of the block calls it once, `BLOCK` is the launch's
///   block size (below 32 or a multiple of it), and `scratch` has the
///   lengths [`ScanScratch`] states.
///
/// ```
/// use cuda_mem::device::DeviceAtomic;
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::device::wide::{scan_tile, ScanKind, ScanScratch, TileStatus};
/// let data: Vec<u32> = (1..=10).collect();
/// let mut out = vec![0u32; 10];
/// let tiles = 10usize.div_ceil(4); // BLOCK 1, ITEMS 4
/// let mut state = vec![0u64; TileStatus::<u32>::bytes(tiles).div_ceil(8)];
/// let counter = DeviceAtomic::new(0u32);
/// let (exchange, partials, ticket) = (
///     cuda_mem::shared_array![u32; 4],
///     cuda_mem::shared_array![u32; 2],
///     cuda_mem::shared_array![u32; 1],
/// );
/// let scratch = ScanScratch { exchange: exchange.as_slice(), partials: partials.as_slice(), ticket: ticket.as_slice() };
/// // The host model: one-thread blocks, one after the other.
/// for _ in 0..tiles {
///     // SAFETY: as the contract says; zeroed state, a fresh counter.
///     unsafe {
///         let status = TileStatus::new(state.as_mut_ptr().cast(), tiles);
///         scan_tile::<u32, _, 1, 4>(data.as_ptr(), out.as_mut_ptr(), 10, ScanKind::Exclusive, 0, Sum, status, &counter, scratch);
///     }
/// }
/// assert_eq!(out, [0, 1, 3, 6, 10, 15, 21, 28, 36, 45]);
/// ```
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub unsafe fn scan_tile<T, O, const BLOCK: usize, const ITEMS: usize>(
    input: *const T,
    output: *mut T,
    len: usize,
    kind: ScanKind,
    init: T,
    op: O,
    status: TileStatus<'_, T>,
    counter: &DeviceAtomic<u32>,
    scratch: ScanScratch<'_, T>,
) where
    T: DeviceCopy,
    O: Operator<T>,
{
    let lanes = const { super::warp_lanes(BLOCK) };
    const { assert!(ITEMS > 0, "a tile has at least one element per thread") };
    let rank = block_thread_rank() as usize;
    assert!(
        rank < BLOCK,
        "scan_tile: BLOCK is not the launch's block size"
    );
    let exchange = scratch.exchange;
    let (lane, warp) = (rank % lanes, rank / lanes);
    let tile = take_ticket(counter, scratch.ticket);
    let first = tile * BLOCK * ITEMS + warp * lanes * ITEMS;
    let whole = first + lanes * ITEMS <= len;

    // Load: row `j` of the warp's `lanes * ITEMS` elements is `lanes`
    // consecutive ones, one per lane.
    // SAFETY: the caller vouches for `len` elements at `input`.
    let items: [T; ITEMS] =
        unsafe { super::load_rows(input, len, (first, lanes, lane), op.identity()) };
    // Into shared memory, where lane `l`'s elements are `l * ITEMS ..` of
    // the warp's rows. Each thread then works on its own `ITEMS` slots
    // there (no array: a loop over an array with an expensive `op` may not
    // be unrolled, and the array would go to local memory).
    let region = warp * padded(lanes * ITEMS);
    let mut j = 0;
    while j < ITEMS {
        exchange.store(region + padded(j * lanes + lane), items[j]);
        j += 1;
    }
    warp::sync_warp();
    let mine = |k: usize| region + padded(lane * ITEMS + k);

    // The thread's total, then the block's exclusive scan of the totals.
    let mut total = exchange.load(mine(0));
    let mut k = 1;
    while k < ITEMS {
        total = op.apply(total, exchange.load(mine(k)));
        k += 1;
    }
    let (before, aggregate) = block::exclusive_scan::<T, BLOCK>(
        total,
        op.identity(),
        |a, b| op.apply(a, b),
        scratch.partials,
    );

    // The tiles before this one.
    let slot = (scratch.partials, ScanScratch::<T>::partials_len(BLOCK) - 1);
    // SAFETY: this block holds `tile` (its ticket) and asks once.
    let prefix = unsafe { tile_prefix(&status, tile, aggregate, op, slot) };
    let start = op.apply(op.apply(init, prefix), before);

    // The outputs, into the thread's slots, then back to rows of the warp.
    let (mut k, mut acc) = (0, start);
    while k < ITEMS {
        let through_k = op.apply(acc, exchange.load(mine(k)));
        let value = match kind {
            ScanKind::Inclusive => through_k,
            ScanKind::Exclusive => acc,
        };
        exchange.store(mine(k), value);
        acc = through_k;
        k += 1;
    }
    warp::sync_warp();
    // Whole rows without a test per element (a loop the compiler unrolls),
    // the last tile's rows with one.
    let row = |j: usize| {
        (
            first + j * lanes + lane,
            exchange.load(region + padded(j * lanes + lane)),
        )
    };
    let mut j = 0;
    if whole {
        while j < ITEMS {
            let (i, value) = row(j);
            // SAFETY: the warp's rows are inside `len`; the caller gives
            // this launch `output` alone, and this tile's elements to
            // this block.
            unsafe { output.add(i).write(value) };
            j += 1;
        }
    } else {
        while j < ITEMS {
            let (i, value) = row(j);
            if i < len {
                // SAFETY: as above, `i < len`.
                unsafe { output.add(i).write(value) };
            }
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ops::{Max, Min, Sum};

    /// Runs the tiles one after the other with one-thread blocks (the host
    /// model), which exercises the tiling, the bounds and the look-back.
    fn scan<O: Operator<i64>, const ITEMS: usize>(
        data: &[i64],
        out: &mut [i64],
        kind: ScanKind,
        init: i64,
        op: O,
    ) {
        let tiles = data.len().div_ceil(ITEMS);
        let mut state = vec![0u64; TileStatus::<i64>::bytes(tiles).div_ceil(8)];
        let counter = DeviceAtomic::new(0u32);
        let (exchange, partials, ticket) = (
            crate::shared_array![i64; 64],
            crate::shared_array![i64; 2],
            crate::shared_array![u32; 1],
        );
        let scratch = ScanScratch {
            exchange: exchange.as_slice(),
            partials: partials.as_slice(),
            ticket: ticket.as_slice(),
        };
        let (input, output) = (data.as_ptr(), out.as_mut_ptr());
        for _ in 0..tiles {
            // SAFETY: the contract: lengths, zeroed state, a fresh counter.
            unsafe {
                let status = TileStatus::new(state.as_mut_ptr().cast(), tiles);
                scan_tile::<i64, O, 1, ITEMS>(
                    input,
                    output,
                    data.len(),
                    kind,
                    init,
                    op,
                    status,
                    &counter,
                    scratch,
                );
            }
        }
    }

    fn reference(
        data: &[i64],
        kind: ScanKind,
        init: i64,
        op: impl Fn(i64, i64) -> i64,
    ) -> Vec<i64> {
        let mut acc = init;
        data.iter()
            .map(|&x| {
                let before = acc;
                acc = op(acc, x);
                if kind == ScanKind::Inclusive {
                    acc
                } else {
                    before
                }
            })
            .collect()
    }

    #[test]
    fn tiles_scan_like_a_loop_at_every_size() {
        for len in [0usize, 1, 2, 6, 7, 8, 9, 31, 33, 100, 257] {
            let data: Vec<i64> = (0..len as i64).map(|i| (i * 7919) % 1013 - 500).collect();
            for kind in [ScanKind::Inclusive, ScanKind::Exclusive] {
                let mut out = vec![i64::MIN + 3; len];
                scan::<_, 7>(&data, &mut out, kind, 10, Sum);
                assert_eq!(
                    out,
                    reference(&data, kind, 10, |a, b| a + b),
                    "sum {kind:?} {len}"
                );
                scan::<_, 1>(&data, &mut out, kind, i64::MAX, Min);
                assert_eq!(
                    out,
                    reference(&data, kind, i64::MAX, i64::min),
                    "min {kind:?} {len}"
                );
                scan::<_, 16>(&data, &mut out, kind, i64::MIN, Max);
                assert_eq!(
                    out,
                    reference(&data, kind, i64::MIN, i64::max),
                    "max {kind:?} {len}"
                );
            }
        }
    }

    #[test]
    fn in_place_scans_read_each_tile_before_writing_it() {
        let data: Vec<i64> = (0..50).collect();
        let mut buf = data.clone();
        let ptr = buf.as_mut_ptr();
        let tiles = 50usize.div_ceil(4);
        let mut state = vec![0u64; TileStatus::<i64>::bytes(tiles).div_ceil(8)];
        let counter = DeviceAtomic::new(0u32);
        let (exchange, partials, ticket) = (
            crate::shared_array![i64; 4],
            crate::shared_array![i64; 2],
            crate::shared_array![u32; 1],
        );
        let scratch = ScanScratch {
            exchange: exchange.as_slice(),
            partials: partials.as_slice(),
            ticket: ticket.as_slice(),
        };
        for _ in 0..tiles {
            // SAFETY: as in `scan`, with input and output the same memory.
            unsafe {
                let status = TileStatus::new(state.as_mut_ptr().cast(), tiles);
                scan_tile::<i64, _, 1, 4>(
                    ptr,
                    ptr,
                    50,
                    ScanKind::Inclusive,
                    0,
                    Sum,
                    status,
                    &counter,
                    scratch,
                );
            }
        }
        assert_eq!(buf, reference(&data, ScanKind::Inclusive, 0, |a, b| a + b));
    }
}
