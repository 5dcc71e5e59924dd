//! [`scan_tile`]: one tile of a single-pass device-wide scan (decoupled
//! look-back), and the shared memory it needs ([`ScanScratch`]).

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::DeviceAtomic;
use crate::device::block;
use crate::device::ops::Operator;
use crate::device::shared::SharedSlice;
use crate::device::thread::block_thread_rank;
use crate::device::unroll::unrolled;
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
/// assert_eq!(ScanScratch::<u32>::partials_len(256), 9);
/// ```
#[derive(Clone, Copy)]
pub struct ScanScratch<'a, T> {
    /// The warps' totals and the tile's prefix: at least
    /// [`partials_len`](Self::partials_len)`(BLOCK)`.
    pub partials: SharedSlice<'a, T>,
    /// The tile's index, one element.
    pub ticket: SharedSlice<'a, u32>,
}

impl<T: DeviceCopy> ScanScratch<'_, T> {
    /// The length of `partials`: one per warp, and one more.
    pub const fn partials_len(block: usize) -> usize {
        block.div_ceil(32) + 1
    }
}

/// Elements per 16-byte vector of a tile's loads and stores: 16 bytes of
/// `T` (4-, 8- or 16-byte elements, when `ITEMS` is a multiple), else 1.
const fn per_vector<T>(items: usize) -> usize {
    let size = size_of::<T>();
    if (size == 4 || size == 8 || size == 16) && items.is_multiple_of(16 / size) {
        16 / size
    } else {
        1
    }
}

/// Element `k` of the 16 bytes `words`, a `T` of 16 / `V` bytes.
#[inline(always)]
fn element<T: DeviceCopy>(words: &[u32; 4], k: usize) -> T {
    // SAFETY: `k * size_of::<T>() + size_of::<T>() <= 16` (the caller's
    // `k < 16 / size_of::<T>()`), and the bytes were a `T` in memory.
    unsafe {
        words
            .as_ptr()
            .cast::<u8>()
            .add(k * size_of::<T>())
            .cast::<T>()
            .read_unaligned()
    }
}

/// The 16 bytes of the `16 / size_of::<T>()` elements `items[from..]`.
#[inline(always)]
fn words<T: DeviceCopy, const ITEMS: usize>(items: &[T; ITEMS], from: usize) -> [u32; 4] {
    let mut words = [0u32; 4];
    let per = 16 / size_of::<T>();
    let mut k = 0;
    while k < per {
        // SAFETY: element `k` of `per` fills bytes `k * size..(k + 1) *
        // size` of the 16; `from + k < ITEMS` (the caller's).
        unsafe {
            words
                .as_mut_ptr()
                .cast::<u8>()
                .add(k * size_of::<T>())
                .cast::<T>()
                .write_unaligned(items[from + k]);
        }
        k += 1;
    }
    words
}

/// Scans one tile of `BLOCK * ITEMS` elements: the block takes the next
/// tile index from `counter` and loads the tile into registers (each warp
/// reads rows of 16-byte vectors, one per lane, where the elements tile
/// them and the memory is aligned; rows of single elements otherwise).
/// Each lane scans its vector; a warp scan per row joins the lanes, a
/// running total the rows, and a block scan the warps. The block then
/// publishes its aggregate, looks back (warp 0) for the prefix of the
/// tiles before it, publishes its inclusive prefix, and writes its part of
/// `output` in the rows it read.
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
///   lengths [`ScanScratch`] states. `ITEMS` is 1 to 32 (checked at
///   compile time).
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
/// let (partials, ticket) = (cuda_mem::shared_array![u32; 2], cuda_mem::shared_array![u32; 1]);
/// let scratch = ScanScratch { partials: partials.as_slice(), ticket: ticket.as_slice() };
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
    const { assert!(ITEMS > 0 && ITEMS <= 32, "1 to 32 elements per thread") };
    let rank = block_thread_rank() as usize;
    assert!(
        rank < BLOCK,
        "scan_tile: BLOCK is not the launch's block size"
    );
    let (lane, warp) = (rank % lanes, rank / lanes);
    let tile = take_ticket(counter, scratch.ticket);
    let first = tile * BLOCK * ITEMS + warp * lanes * ITEMS;
    let whole = first + lanes * ITEMS <= len;
    let identity = op.identity();
    // Element `j` of the thread: row `j / V` of the warp's rows of `lanes`
    // vectors of `V`, the lane's vector, element `j % V` of it.
    let v = const { per_vector::<T>(ITEMS) };
    let at = |j: usize| first + (j / v) * lanes * v + lane * v + j % v;
    let aligned = |p: usize| v > 1 && whole && (p + first * size_of::<T>()).is_multiple_of(16);

    let mut items = [identity; ITEMS];
    if aligned(input as usize) {
        unrolled::<ITEMS>(|j| {
            if j.is_multiple_of(v) {
                // SAFETY: the warp's rows are inside `len` (`whole`), the
                // vector 16-aligned (`aligned`); the caller vouches for the
                // memory.
                let words = unsafe {
                    crate::device::memory::load_global_v4(input.add(at(j)).cast::<[u32; 4]>())
                };
                let mut k = 0;
                while k < v {
                    items[j + k] = element(&words, k);
                    k += 1;
                }
            }
        });
    } else {
        unrolled::<ITEMS>(|j| {
            let i = at(j);
            if whole || i < len {
                // SAFETY: `i < len`; the caller vouches for the memory.
                items[j] = unsafe { input.add(i).read() };
            }
        });
    }

    // Each vector's inclusive scan; then per row, the lanes' vectors
    // joined by a warp scan, after the rows before (`running`). `before`
    // keeps each vector's prefix (at its first element) for an exclusive
    // scan.
    let mut before = [identity; ITEMS];
    let mut running = identity;
    unrolled::<ITEMS>(|j| {
        if j % v != 0 {
            items[j] = op.apply(items[j - 1], items[j]);
        }
        if j % v == v - 1 {
            let (lanes_before, through_lane) =
                warp::scans_in_block::<T, BLOCK>(items[j], identity, |a, b| op.apply(a, b));
            let row_total = warp::shfl_idx(through_lane, lanes as u32 - 1);
            let prefix = op.apply(running, lanes_before);
            let from = j + 1 - v;
            before[from] = prefix;
            let mut k = from;
            while k <= j {
                items[k] = op.apply(prefix, items[k]);
                k += 1;
            }
            running = op.apply(running, row_total);
        }
    });

    // The warps before this one, and the tile's aggregate: a block scan of
    // each warp's total (its last lane's; the other lanes add nothing).
    let (warps_before, aggregate) = block::exclusive_scan::<T, BLOCK>(
        if lane == lanes - 1 { running } else { identity },
        identity,
        |a, b| op.apply(a, b),
        scratch.partials,
    );

    // The tiles before this one.
    let slot = (scratch.partials, ScanScratch::<T>::partials_len(BLOCK) - 1);
    // SAFETY: this block holds `tile` (its ticket) and asks once.
    let prefix = unsafe { tile_prefix(&status, tile, aggregate, op, slot) };
    let start = op.apply(op.apply(init, prefix), warps_before);

    // The outputs, in place of the inputs, the last first (an exclusive
    // output reads the inclusive value before it).
    unrolled::<ITEMS>(|r| {
        let j = ITEMS - 1 - r;
        items[j] = match kind {
            ScanKind::Inclusive => op.apply(start, items[j]),
            ScanKind::Exclusive if j.is_multiple_of(v) => op.apply(start, before[j]),
            ScanKind::Exclusive => op.apply(start, items[j - 1]),
        };
    });
    if aligned(output as usize) {
        unrolled::<ITEMS>(|j| {
            if j.is_multiple_of(v) {
                // SAFETY: as for the loads: inside `len`, 16-aligned; the
                // caller gives this launch `output` alone, and this tile's
                // elements to this block.
                unsafe {
                    crate::device::memory::store_global_v4(
                        output.add(at(j)).cast::<[u32; 4]>(),
                        words(&items, j),
                    );
                }
            }
        });
    } else {
        unrolled::<ITEMS>(|j| {
            let i = at(j);
            if whole || i < len {
                // SAFETY: `i < len`, as above.
                unsafe { output.add(i).write(items[j]) };
            }
        });
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
        let (partials, ticket) = (crate::shared_array![i64; 2], crate::shared_array![u32; 1]);
        let scratch = ScanScratch {
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
                // 16-byte vectors of two, and single elements where the
                // input is not 16-aligned (one element in).
                if len > 0 {
                    let mut out = vec![i64::MIN + 3; len - 1];
                    scan::<_, 16>(&data[1..], &mut out, kind, -4, Sum);
                    assert_eq!(
                        out,
                        reference(&data[1..], kind, -4, |a, b| a + b),
                        "sum one element in, {kind:?} {len}"
                    );
                }
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
        let (partials, ticket) = (crate::shared_array![i64; 2], crate::shared_array![u32; 1]);
        let scratch = ScanScratch {
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
