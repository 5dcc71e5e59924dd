//! [`TileStatus`]: the state of a decoupled look-back, one entry per tile.
//!
//! Tile `t` publishes its own aggregate as soon as it knows it, then its
//! inclusive prefix (everything up to and including `t`) once it has looked
//! back. A later tile reads its predecessors' entries 32 at a time (one per
//! lane of a warp), waits for those not published yet, and combines them
//! back to the nearest inclusive prefix: a few reads instead of a chain
//! through every earlier tile.
//!
//! Two layouts, chosen by the size of `T`:
//! - 4-byte values share one 64-bit word with their flag (the flag in the
//!   high half): one relaxed 64-bit store publishes both, one relaxed load
//!   reads both, no fence.
//! - Other values live beside a 32-bit flag: the value is written, then a
//!   device-scope fence, then the flag; a reader that sees the flag fences
//!   before it reads the value (CUDA's fence-flag pattern).

use core::marker::PhantomData;

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::{DeviceAtomic, Scope};
use crate::device::ops::Operator;
use crate::device::shared::SharedSlice;
use crate::device::sync::{fence, nanosleep, sync_threads};
use crate::device::thread::block_thread_rank;
use crate::device::warp;

/// The look-back of the scans and compactions ([`TileStatus`]'s
/// `exclusive_prefix`): a tile this many tiles or more from the start
/// (whose predecessors are then mostly still running) first sleeps
/// [`FIRST_WAIT_NS`], about the latency of a write reaching L2, so that
/// its first polls find the window published; a window with entries not
/// published yet is polled again every [`POLL_PAUSE_NS`]. The shape of
/// CUB's delays for sm_90. H200, measured on the scans (the compactions
/// not timed apart): exclusive sum of `u32` at 2^28 847 -> 704 µs (CUB
/// 694), at 2^24 60.4 -> 54.3 µs (CUB 56.8), against a first poll at once
/// and pauses doubling from 32 to 512 ns.
const FIRST_WAIT_AFTER_TILES: usize = 500;
const FIRST_WAIT_NS: u32 = 1200;
const POLL_PAUSE_NS: u32 = 640;

/// No value yet.
const EMPTY: u32 = 0;
/// The tile's own aggregate.
const AGGREGATE: u32 = 1;
/// The inclusive prefix up to and including the tile.
const INCLUSIVE: u32 = 2;

/// The look-back state of `tiles` tiles over global memory that the host
/// zeroed before the kernel ([`TileStatus::bytes`] of it).
///
/// ```
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::device::wide::TileStatus;
/// // The host model: zeroed memory, one-lane warps.
/// let mut memory = vec![0u64; TileStatus::<u32>::bytes(2).div_ceil(8)];
/// // SAFETY: zeroed, 8-aligned, used by nothing else; one thread publishes each tile.
/// let status = unsafe { TileStatus::<u32>::new(memory.as_mut_ptr().cast(), 2) };
/// unsafe { status.publish_inclusive(0, 5) };
/// assert_eq!(status.exclusive_prefix(1, Sum), 5);
/// ```
pub struct TileStatus<'a, T> {
    base: *mut u8,
    tiles: usize,
    _memory: PhantomData<&'a core::cell::UnsafeCell<T>>,
}

impl<T> Clone for TileStatus<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for TileStatus<'_, T> {}

/// Whether `T` shares a 64-bit word with its flag.
const fn packed<T>() -> bool {
    size_of::<T>() == 4 && align_of::<T>() <= 4
}

/// Where the values of the split layout start: after the flags, aligned
/// for `T` (and to 16 bytes).
const fn values_offset<T>(tiles: usize) -> usize {
    let align = if align_of::<T>() > 16 {
        align_of::<T>()
    } else {
        16
    };
    (tiles * 4).div_ceil(align) * align
}

impl<'a, T: DeviceCopy> TileStatus<'a, T> {
    /// The bytes the state of `tiles` tiles takes (8 per tile for 4-byte
    /// values; 4 plus twice the value's size otherwise, and alignment),
    /// for the host to allocate and zero, aligned to 16 bytes.
    ///
    /// ```
    /// use cuda_mem::device::wide::TileStatus;
    /// assert_eq!(TileStatus::<f32>::bytes(10), 80);
    /// assert_eq!(TileStatus::<f64>::bytes(10), 48 + 160);
    /// ```
    pub const fn bytes(tiles: usize) -> usize {
        if packed::<T>() {
            tiles * 8
        } else {
            values_offset::<T>(tiles) + 2 * tiles * size_of::<T>()
        }
    }

    /// The state over `base`.
    ///
    /// # Safety
    /// `base` is aligned to 16 bytes (and to `T`) and points to
    /// [`bytes(tiles)`](Self::bytes) bytes of memory that every thread of
    /// the kernel reaches (global memory), zero when the kernel started and
    /// accessed by nothing but this state's methods while `'a` lasts.
    #[inline(always)]
    pub unsafe fn new(base: *mut u8, tiles: usize) -> Self {
        Self {
            base,
            tiles,
            _memory: PhantomData,
        }
    }

    /// The word of tile `t` (packed layout).
    #[inline(always)]
    fn word(&self, t: usize) -> &'a DeviceAtomic<u64> {
        assert!(t < self.tiles, "TileStatus: tile out of range");
        // SAFETY: in range of the `tiles` words at `base` (aligned, live for
        // `'a`, accessed only atomically: `new`'s contract).
        unsafe { DeviceAtomic::from_ptr(self.base.cast::<u64>().add(t)) }
    }

    /// The flag of tile `t` (split layout).
    #[inline(always)]
    fn flag(&self, t: usize) -> &'a DeviceAtomic<u32> {
        assert!(t < self.tiles, "TileStatus: tile out of range");
        // SAFETY: as for `word`: the flags come first, 4 bytes each.
        unsafe { DeviceAtomic::from_ptr(self.base.cast::<u32>().add(t)) }
    }

    /// The value slot of tile `t` for `kind` (split layout).
    #[inline(always)]
    fn slot(&self, t: usize, kind: u32) -> *mut T {
        let second = if kind == INCLUSIVE { self.tiles } else { 0 };
        // SAFETY: `t < tiles` (checked by the caller's `flag`), so the slot
        // is one of the `2 * tiles` values after the flags.
        unsafe {
            self.base
                .add(values_offset::<T>(self.tiles))
                .cast::<T>()
                .add(second + t)
        }
    }

    #[inline(always)]
    fn publish(&self, t: usize, kind: u32, value: T) {
        if packed::<T>() {
            // SAFETY: `T` has 4 bytes (packed), read as a `u32`.
            let bits: u32 = unsafe { core::mem::transmute_copy(&value) };
            self.word(t)
                .store((u64::from(kind) << 32) | u64::from(bits), Scope::Device);
        } else {
            let flag = self.flag(t);
            // SAFETY: the slot is in range (`flag` checked `t`); only the
            // one publisher of tile `t` writes it (the caller's contract),
            // and readers read it only after seeing this kind's flag, which
            // the fence orders after the write.
            unsafe { self.slot(t, kind).write(value) };
            fence(Scope::Device);
            flag.store(kind, Scope::Device);
        }
    }

    /// Publishes tile `t`'s own aggregate (before its look-back).
    ///
    /// # Safety
    /// One thread of the whole kernel publishes tile `t`, at most once with
    /// each method, the aggregate first.
    #[inline(always)]
    pub unsafe fn publish_aggregate(&self, t: usize, aggregate: T) {
        self.publish(t, AGGREGATE, aggregate);
    }

    /// Publishes the inclusive prefix of tiles `0..=t`.
    ///
    /// # Safety
    /// As for [`publish_aggregate`](Self::publish_aggregate).
    #[inline(always)]
    pub unsafe fn publish_inclusive(&self, t: usize, inclusive: T) {
        self.publish(t, INCLUSIVE, inclusive);
    }

    /// Tile `t`'s entry once published: its flag and value.
    #[inline(always)]
    fn read(&self, t: usize) -> (u32, T) {
        if packed::<T>() {
            let word = self.word(t).load(Scope::Device);
            let bits = word as u32;
            // SAFETY: 4 bytes back into a `T` (packed): any bits are a `T`.
            ((word >> 32) as u32, unsafe {
                core::mem::transmute_copy(&bits)
            })
        } else {
            let kind = self.flag(t).load(Scope::Device);
            if kind == EMPTY {
                // SAFETY: zero bytes are a valid `T` (`DeviceCopy`); the caller
                // waits for the flag and never uses this value.
                return (kind, unsafe { core::mem::zeroed() });
            }
            fence(Scope::Device);
            // SAFETY: the flag says the slot of `kind` is written, and the
            // fence orders this read after it; no one writes it again.
            (kind, unsafe { self.slot(t, kind).read() })
        }
    }

    /// The exclusive prefix of tile `t`: `op` over the values of tiles
    /// `0..t` (the identity for tile 0), waiting for predecessors that have
    /// not published. Called by every lane of one whole warp (32 lanes, or
    /// the whole block when it has fewer threads), which all get the
    /// result; `op` must be commutative (the window is combined nearest
    /// tile first).
    ///
    /// Tiles before `t` must be running or done (take tile indices from an
    /// atomic counter, in the order blocks start): a predecessor that never
    /// publishes makes this wait forever.
    ///
    /// ```
    /// use cuda_mem::device::ops::Max;
    /// use cuda_mem::device::wide::TileStatus;
    /// let mut memory = vec![0u64; TileStatus::<f64>::bytes(3).div_ceil(8)];
    /// // SAFETY: zeroed, aligned, used by nothing else; one publisher per tile.
    /// let status = unsafe { TileStatus::<f64>::new(memory.as_mut_ptr().cast(), 3) };
    /// unsafe {
    ///     status.publish_inclusive(0, 2.0);
    ///     status.publish_aggregate(1, 7.0);
    /// }
    /// assert_eq!(status.exclusive_prefix(2, Max), 7.0);
    /// ```
    #[inline(always)]
    pub fn exclusive_prefix<O: Operator<T>>(&self, t: usize, op: O) -> T {
        let lanes = warp::lanes_in_warp() as usize;
        let lane = warp::lane_id() as usize;
        let mut prefix = op.identity();
        if t >= FIRST_WAIT_AFTER_TILES {
            nanosleep(FIRST_WAIT_NS);
        }
        // The window: tiles `end - lanes .. end`, lane `i` on `end - 1 - i`.
        let mut end = t;
        while end > 0 {
            let mine = end.checked_sub(1 + lane);
            let (mut kind, mut value) = match mine {
                Some(p) => self.read(p),
                // Before tile 0: nothing, as if published.
                None => (INCLUSIVE, op.identity()),
            };
            // Not published yet: poll again after a pause, so that the
            // polls leave the memory system to the tiles being waited for.
            while warp::any(kind == EMPTY) {
                nanosleep(POLL_PAUSE_NS);
                if kind == EMPTY {
                    if let Some(p) = mine {
                        (kind, value) = self.read(p);
                    }
                }
            }
            // The nearest inclusive prefix in the window ends the look-back.
            let stop = warp::ballot(kind == INCLUSIVE).trailing_zeros() as usize;
            // The window's values in tile order (a higher lane is an earlier
            // tile): a tree over shuffles from higher lanes, so `op` need
            // not commute.
            let mut window = if lane <= stop { value } else { op.identity() };
            let mut step = 1;
            while step < lanes {
                let higher = warp::shfl_down(window, step as u32);
                let higher = if lane + step < lanes {
                    higher
                } else {
                    op.identity()
                };
                window = op.apply(higher, window);
                step *= 2;
            }
            let window = warp::shfl_idx(window, 0);
            prefix = op.apply(window, prefix);
            if stop < lanes {
                break;
            }
            end = end.saturating_sub(lanes);
        }
        prefix
    }
}

/// The tile the calling block works on: thread 0 takes the next index
/// from `counter` (so tiles start in order, and every earlier tile has a
/// block running or done), and every thread of the block gets it through
/// `ticket` (shared, one element). A barrier.
#[inline(always)]
pub(super) fn take_ticket(counter: &DeviceAtomic<u32>, ticket: SharedSlice<'_, u32>) -> usize {
    if block_thread_rank() == 0 {
        ticket.store(0, counter.fetch_add(1, Scope::Device));
    }
    sync_threads();
    ticket.load(0) as usize
}

/// The block's tile `t`'s exclusive prefix (`op` over the tiles before
/// it), for every thread of the block: thread 0 publishes the tile's
/// `aggregate` (the inclusive value for tile 0), warp 0 looks back, its
/// lane 0 publishes the inclusive value and hands the prefix to the block
/// through `slot` (shared). Every thread of the block calls it; one
/// barrier unless `t` is 0.
///
/// # Safety
/// The calling block is the one that holds tile `t` ([`take_ticket`]),
/// and calls this once for it.
#[inline(always)]
pub(super) unsafe fn tile_prefix<T: DeviceCopy, O: Operator<T>>(
    status: &TileStatus<'_, T>,
    t: usize,
    aggregate: T,
    op: O,
    slot: (SharedSlice<'_, T>, usize),
) -> T {
    let rank = block_thread_rank() as usize;
    let lanes = warp::lanes_in_warp() as usize;
    if t == 0 {
        if rank == 0 {
            // SAFETY: thread 0 of the one block holding tile 0 publishes it.
            unsafe { status.publish_inclusive(0, aggregate) };
        }
        return op.identity();
    }
    if rank == 0 {
        // SAFETY: thread 0 of the one block holding tile `t`, its
        // aggregate first, then (below) its inclusive prefix.
        unsafe { status.publish_aggregate(t, aggregate) };
    }
    if rank < lanes {
        let prefix = status.exclusive_prefix(t, op);
        if rank == 0 {
            // SAFETY: as above.
            unsafe { status.publish_inclusive(t, op.apply(prefix, aggregate)) };
            slot.0.store(slot.1, prefix);
        }
    }
    sync_threads();
    slot.0.load(slot.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ops::Sum;

    /// With one-lane warps, each step of the look-back reads one tile: the
    /// prefix comes from the aggregates back to the nearest inclusive entry.
    #[test]
    fn the_prefix_combines_aggregates_back_to_an_inclusive_entry() {
        for tiles in [1usize, 2, 5, 40] {
            let mut memory = vec![0u64; TileStatus::<u64>::bytes(tiles).div_ceil(8)];
            // SAFETY: zeroed, aligned, used by nothing else.
            let status = unsafe { TileStatus::<u64>::new(memory.as_mut_ptr().cast(), tiles) };
            // Tile i has aggregate i + 1; tile 0 and every 7th publish inclusive prefixes.
            for t in 0..tiles {
                let inclusive = (t as u64 + 1) * (t as u64 + 2) / 2;
                // SAFETY: one publisher per tile, aggregate first.
                unsafe {
                    status.publish_aggregate(t, t as u64 + 1);
                    if t % 7 == 0 {
                        status.publish_inclusive(t, inclusive);
                    }
                }
                let want = (t as u64) * (t as u64 + 1) / 2;
                assert_eq!(status.exclusive_prefix(t, Sum), want, "tile {t} of {tiles}");
            }
        }
    }

    #[test]
    fn packed_entries_keep_value_and_flag() {
        let mut memory = vec![0u64; 4];
        // SAFETY: zeroed, aligned, used by nothing else.
        let status = unsafe { TileStatus::<f32>::new(memory.as_mut_ptr().cast(), 4) };
        // SAFETY: one publisher per tile.
        unsafe {
            status.publish_inclusive(0, -0.0);
            status.publish_aggregate(1, f32::from_bits(0xffff_ffff));
        }
        assert_eq!(status.read(0).0, INCLUSIVE);
        assert_eq!(status.read(0).1.to_bits(), (-0.0f32).to_bits());
        assert_eq!(status.read(1).1.to_bits(), 0xffff_ffff);
        assert_eq!(status.read(2).0, EMPTY);
    }
}
