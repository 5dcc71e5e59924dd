//! Device-wide building blocks: what one block does in a reduction or a
//! scan over a whole array, the kernels of `cuda_mem::algo` are made of
//! these (for the builtin types and [`Sum`](super::ops::Sum),
//! [`Min`](super::ops::Min), [`Max`](super::ops::Max)), and a user kernel
//! runs them on its own types and [`Operator`](super::ops::Operator)s.
//!
//! - [`reduce_tiles`]: a block's share of a reduction (grid-stride
//!   over tiles, 16-byte loads where aligned, many in flight), mapped from each element
//!   and its index (a count, an arg-min); [`reduce_slice`], the same over a
//!   kernel's `DeviceSlice` parameter, safe; [`reduce_across_blocks`], the
//!   blocks' results combined by the last block to finish (one launch).
//! - [`scan_tile`]: one tile of a single-pass scan, decoupled look-back
//!   (Merrill & Garland, 2016) through a [`TileStatus`].
//! - [`select_tile`]: one tile of a single-pass stream compaction (the
//!   elements that pass a test, in order: `select_flagged`, `unique`, the
//!   runs of run-length encoding), the same look-back over the counts.
//! - [`radix_histogram`] and [`radix_onesweep`]: a stable LSD radix sort,
//!   8 bits at a time, over [`RadixKey`]s (integers and floats in an
//!   order-preserving `u64`; floats in `total_cmp`'s order): every pass's
//!   digit totals in one read, then per pass one tile per block: its
//!   stable ranking (8 ballots per row of a warp), a per-digit
//!   look-back over the tiles before, and the scatter through shared
//!   memory.
//! - [`histogram_tiles`]: a block's share of a histogram (shared-memory
//!   counters when the bins fit, then one atomic add per bin), with the
//!   bin rules [`even_bin`] and [`range_bin`].
//! - [`TileStatus`]: the per-tile aggregates and inclusive prefixes that
//!   the tiles publish and look back on.
//!
//! Both run with any block size that is a multiple of 32 or below it (the
//! host model's block is one thread: the unit tests run the same code on
//! one-thread blocks, one after the other).

mod histogram;
mod lookback;
mod radix;
mod reduce;
mod scan;
mod select;

use crate::device::unroll::unrolled;

pub use histogram::{even_bin, histogram_tiles, range_bin, HistogramSample};
pub use lookback::TileStatus;
// The host's `algo::sort` sizes the histogram's grid by it.
#[cfg(feature = "host")]
pub(crate) use radix::HISTOGRAM_BATCH;
pub use radix::{
    radix_histogram, radix_onesweep, radix_status_bytes, RadixKey, RadixScratch, RADIX_BINS,
    RADIX_BITS,
};
pub use reduce::{reduce_across_blocks, reduce_slice, reduce_tiles};
pub use scan::{scan_tile, ScanKind, ScanScratch};
pub use select::{select_tile, SelectScratch};

/// The number of threads of the warps of a block of `BLOCK` threads:
/// 32, or `BLOCK` when it is less (the host model). Checked at compile
/// time: `BLOCK` is below 32 or a multiple of it.
const fn warp_lanes(block: usize) -> usize {
    assert!(
        block > 0 && block <= 1024 && (block < 32 || block.is_multiple_of(32)),
        "device-wide blocks run with 1 to 31 threads, or a multiple of 32 up to 1024"
    );
    if block < 32 {
        block
    } else {
        32
    }
}

/// `value`, through a move the compiler cannot see through: what is
/// computed from the result is computed anew, not reused from `value`'s
/// earlier uses (which would keep it in registers meanwhile).
#[inline(always)]
fn opaque(value: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let out: u32;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!(
                "mov.b32 {o}, {i};",
                o = out(reg32) out,
                i = in(reg32) value,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        out
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        core::hint::black_box(value)
    }
}

/// Row `j` of a warp's rows in a tile: the `lanes` consecutive elements
/// `first + j * lanes ..`, one per lane (each load of a warp coalesced),
/// of which the first `count` exist (`past_end` for the others): one
/// 32-bit compare per element, or, where `whole_fast` and the rows are
/// all there (every warp's but the last tile's), none (a second copy of
/// the loads). The rows' loads are all issued before any is used.
///
/// # Safety
/// `input` holds `first + count` elements every thread can read,
/// unchanged while the kernel runs.
#[inline(always)]
unsafe fn load_rows<T: crate::copy::device_copy::DeviceCopy, const ITEMS: usize>(
    input: *const T,
    (first, lanes, lane): (usize, usize, usize),
    count: u32,
    past_end: T,
    whole_fast: bool,
) -> [T; ITEMS] {
    let mut items = [past_end; ITEMS];
    if whole_fast && count as usize >= ITEMS * lanes {
        unrolled::<ITEMS>(|j| {
            // SAFETY: below `first + count`; the caller vouches for the
            // memory.
            items[j] = unsafe { input.add(first + j * lanes + lane).read() };
        });
        return items;
    }
    unrolled::<ITEMS>(|j| {
        if ((j * lanes + lane) as u32) < count {
            // SAFETY: below `first + count`; the caller vouches for the
            // memory.
            items[j] = unsafe { input.add(first + j * lanes + lane).read() };
        }
    });
    items
}
