//! [`reduce_tiles`]: a block's share of a device-wide reduction, and
//! [`reduce_across_blocks`]: the blocks' totals combined in the block that
//! finishes last, which makes the reduction one launch.

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::{DeviceAtomic, Scope};
use crate::device::block;
use crate::device::memory::load_global_v4;
use crate::device::ops::Operator;
use crate::device::shared::SharedSlice;
use crate::device::slice::DeviceSlice;
use crate::device::sync::{fence, sync_threads_or};
use crate::device::thread::{block_rank, block_thread_rank, grid_blocks};

/// `op` over `map(i, input[i])` for the elements of this block's tiles,
/// returned to every thread of the block: a block's share of a
/// device-wide reduction, whose blocks' results [`reduce_across_blocks`]
/// combines in the same launch (or a second launch of one block, this
/// function again over them with `map` passing values through).
///
/// The array is cut into tiles of `BLOCK * ITEMS` elements; block `b` of
/// the grid takes tiles `b`, `b + grid_blocks()`, and so on. Each thread
/// loads its `ITEMS` elements of a tile (`BLOCK` apart: every load of a
/// warp is one coalesced access) before it combines them, so that `ITEMS`
/// loads are in flight; full tiles are loaded without bounds checks, the
/// last partial tile with them. `op` must be associative and commutative
/// (the combination order is not the array's), and `map` gets each
/// element's index in the array.
///
/// Every thread of the block must call it (it ends with a block
/// reduction: `scratch` holds at least `BLOCK / 32` values, rounded up),
/// with `BLOCK` the launch's block size, below 32 or a multiple of it.
///
/// Whole tiles of 4-, 8- and 16-byte elements at a 16-aligned `input` are
/// read with 16-byte loads.
///
/// # Safety
/// `input` points to `len` elements that every thread can read (device,
/// pool, unified or mapped pinned memory: global memory) and that nothing
/// writes while the kernel runs.
///
/// ```
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::device::wide::reduce_tiles;
/// let data: Vec<u32> = (1..=100).collect();
/// let scratch = cuda_mem::shared_array![u64; 1];
/// // The host model: one block of one thread does every tile.
/// // SAFETY: `data` holds `len` elements and nothing writes them.
/// let total = unsafe {
///     reduce_tiles::<u32, u64, _, 1, 16>(data.as_ptr(), data.len(), |_, x| u64::from(x), Sum, scratch.as_slice())
/// };
/// assert_eq!(total, 5050);
/// ```
#[inline(always)]
pub unsafe fn reduce_tiles<T, U, O, const BLOCK: usize, const ITEMS: usize>(
    input: *const T,
    len: usize,
    map: impl Fn(usize, T) -> U,
    op: O,
    scratch: SharedSlice<'_, U>,
) -> U
where
    T: DeviceCopy,
    U: DeviceCopy,
    O: Operator<U>,
{
    const { super::warp_lanes(BLOCK) };
    const { assert!(ITEMS > 0, "a tile has at least one element per thread") };
    let tile = BLOCK * ITEMS;
    let rank = block_thread_rank() as usize;
    let (full_tiles, grid) = (len / tile, grid_blocks());
    let mut acc = op.identity();
    let mut t = block_rank();
    // 16-byte loads when the elements tile 16-byte vectors (4-, 8- and
    // 16-byte elements, the input 16-aligned): a thread's `ITEMS` elements
    // are `ITEMS / per` vectors, `BLOCK` vectors apart.
    let size = size_of::<T>();
    let per = if matches!(size, 4 | 8 | 16) {
        16 / size
    } else {
        0
    };
    let vectors = per > 0 && ITEMS.is_multiple_of(per) && (input as usize).is_multiple_of(16);
    while t < full_tiles {
        if vectors {
            let base = t * tile;
            let at = |k: usize| base + ((k / per) * BLOCK + rank) * per + k % per;
            let mut words = [0u32; 4];
            let items: [T; ITEMS] = core::array::from_fn(|k| {
                if k % per == 0 {
                    // SAFETY: tile `t` is whole, so the vector's 16 bytes are
                    // elements below `len`, 16-aligned (`input` is); the
                    // caller vouches for the memory (global).
                    words = unsafe { load_global_v4(input.add(at(k)).cast::<[u32; 4]>()) };
                }
                element(words, k % per)
            });
            let mut k = 0;
            while k < ITEMS {
                acc = op.apply(acc, map(at(k), items[k]));
                k += 1;
            }
        } else {
            let first = t * tile + rank;
            // SAFETY: tile `t` is whole, so every `first + j * BLOCK` is
            // below `len`; the caller vouches for the memory.
            let items: [T; ITEMS] =
                core::array::from_fn(|j| unsafe { input.add(first + j * BLOCK).read() });
            let mut j = 0;
            while j < ITEMS {
                acc = op.apply(acc, map(first + j * BLOCK, items[j]));
                j += 1;
            }
        }
        t += grid;
    }
    if t == full_tiles {
        // The last, partial tile (if any) is this block's.
        let first = t * tile + rank;
        let mut j = 0;
        while j < ITEMS {
            let i = first + j * BLOCK;
            if i < len {
                // SAFETY: `i < len`; the caller vouches for the memory.
                acc = op.apply(acc, map(i, unsafe { input.add(i).read() }));
            }
            j += 1;
        }
    }
    block::reduce::<U, BLOCK>(acc, |a, b| op.apply(a, b), scratch)
}

/// The end of a one-launch reduction over the whole grid: every block hands
/// in its `total` (as [`reduce_tiles`] returns it), and the block that hands
/// in last combines the totals of every block with `op` and gets the result,
/// `Some` in each of its threads; every other block gets `None` (and may
/// return). `arrivals` is back at 0 when the kernel ends, so that the next
/// launch on the same stream can take the same memory without zeroing it.
/// A grid of one block gets its own `total` back and touches neither
/// pointer.
///
/// Each block's thread 0 writes the total to `partials[block_rank()]`,
/// then (after a device-scope fence) counts itself in `arrivals`; the
/// block whose count completes the grid fences again, so it sees every
/// total, and reduces them with all its threads. The combination order is
/// not the blocks' (`op` associative and commutative, as for
/// [`reduce_tiles`]). Every thread of the block must call it, with `BLOCK`
/// the launch's block size and `scratch` holding `BLOCK / 32` values
/// (rounded up); it ends with barriers, so `scratch` may be the one
/// [`reduce_tiles`] used.
///
/// # Safety
/// `partials` points to room for one `U` per block of the grid and
/// `arrivals` to an aligned `u32` that is 0 when the kernel starts: global
/// memory that no other kernel or copy accesses while this one runs (one
/// launch at a time, as launches on one stream are).
///
/// ```
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::device::wide::{reduce_across_blocks, reduce_tiles};
/// let data: Vec<u64> = (1..=1000).collect();
/// let scratch = cuda_mem::shared_array![u64; 1];
/// let (mut partials, mut arrivals) = ([0u64; 1], 0u32);
/// // The host model's grid is one block (of one thread).
/// // SAFETY: `data` holds `len` elements that nothing writes; `partials`
/// // has one slot per block, `arrivals` is 0 and this launch's alone.
/// let total = unsafe {
///     let mine = reduce_tiles::<u64, u64, _, 1, 16>(data.as_ptr(), data.len(), |_, x| x, Sum, scratch.as_slice());
///     reduce_across_blocks::<u64, _, 1>(mine, partials.as_mut_ptr(), &mut arrivals, Sum, scratch.as_slice())
/// };
/// assert_eq!(total, Some(500_500));
/// assert_eq!(arrivals, 0);
/// ```
#[inline(always)]
pub unsafe fn reduce_across_blocks<U, O, const BLOCK: usize>(
    total: U,
    partials: *mut U,
    arrivals: *mut u32,
    op: O,
    scratch: SharedSlice<'_, U>,
) -> Option<U>
where
    U: DeviceCopy,
    O: Operator<U>,
{
    const { super::warp_lanes(BLOCK) };
    let grid = grid_blocks();
    if grid == 1 {
        return Some(total);
    }
    let rank = block_thread_rank() as usize;
    let mut last = false;
    if rank == 0 {
        // SAFETY: the caller's contract: a slot per block, an aligned
        // counter only atomics touch while the kernel runs.
        last = unsafe { arrive(total, partials, arrivals, block_rank(), grid) };
    }
    if !sync_threads_or(last) {
        return None;
    }
    // Thread 0 fenced after the last arrival; the barrier orders every
    // thread of this block after it, so the loads below see every total.
    let mut acc = op.identity();
    let mut b = rank;
    while b < grid {
        // SAFETY: `b` is a block of the grid, whose total is written.
        acc = op.apply(acc, unsafe { partials.add(b).read() });
        b += BLOCK;
    }
    Some(block::reduce::<U, BLOCK>(
        acc,
        |a, b| op.apply(a, b),
        scratch,
    ))
}

/// Block `block` of `grid` hands in its `total` (one thread of it): writes
/// it to its slot, then counts itself in `arrivals`. Returns whether it is
/// the last of the grid; then it has reset `arrivals` to 0 and fenced, so
/// the caller sees every block's total.
///
/// # Safety
/// As for [`reduce_across_blocks`]; each block of `grid` calls it once.
#[inline(always)]
unsafe fn arrive<U: DeviceCopy>(
    total: U,
    partials: *mut U,
    arrivals: *mut u32,
    block: usize,
    grid: usize,
) -> bool {
    // SAFETY: the caller's contract.
    unsafe { partials.add(block).write(total) };
    // The total before the count: a block that counts after this one and
    // fences sees it.
    fence(Scope::Device);
    // SAFETY: aligned, live, and accessed by atomics alone meanwhile.
    let counter = unsafe { DeviceAtomic::from_ptr(arrivals) };
    let arrived = counter.fetch_add(1, Scope::Device) as usize + 1;
    if arrived != grid {
        return false;
    }
    // Every block has counted (so none touches `arrivals` again): ready
    // for the next launch, which the kernel's end orders after this store.
    counter.store(0, Scope::Device);
    fence(Scope::Device);
    true
}

/// Element `e` of a 16-byte vector of `T`s (of 4, 8 or 16 bytes), from the
/// words by name (an index into them the compiler does not unroll would
/// put them in local memory).
#[inline(always)]
fn element<T: DeviceCopy>(words: [u32; 4], e: usize) -> T {
    let [a, b, c, d] = words;
    let pick = |i: usize| match i {
        0 => a,
        1 => b,
        2 => c,
        _ => d,
    };
    let size = size_of::<T>();
    let parts = [pick(e * size / 4), pick(e * size / 4 + 1), pick(2), pick(3)];
    let bits: [u32; 4] = match size {
        4 => [parts[0], 0, 0, 0],
        8 => [parts[0], parts[1], 0, 0],
        _ => [a, b, c, d],
    };
    // SAFETY: the element's bytes are the first `size` bytes of `bits`
    // (little-endian), `size <= 16`; any bytes are a `T` (`DeviceCopy`).
    unsafe { core::mem::transmute_copy::<[u32; 4], T>(&bits) }
}

/// [`reduce_tiles`] over a kernel's read-only slice parameter: safe, since
/// a [`DeviceSlice`] is readable by every thread and nothing writes it
/// while the kernel runs. The same calling rules (every thread of the
/// block calls it, `BLOCK` is the launch's block size, `scratch` holds
/// `BLOCK / 32` values).
///
/// ```
/// use cuda_mem::device::ops::Max;
/// use cuda_mem::device::wide::reduce_slice;
/// use cuda_mem::device::DeviceSlice;
/// let data = [3.5f32, -1.0, 9.25, 2.0];
/// // A kernel parameter on the device; here, the host model's.
/// // SAFETY: `data` outlives the slice and nothing writes it meanwhile.
/// let input = unsafe { DeviceSlice::from_raw_parts(data.as_ptr(), data.len()) };
/// let scratch = cuda_mem::shared_array![f32; 1];
/// let top = reduce_slice::<f32, f32, _, 1, 16>(&input, |_, x| x, Max, scratch.as_slice());
/// assert_eq!(top, 9.25);
/// ```
#[inline(always)]
pub fn reduce_slice<T, U, O, const BLOCK: usize, const ITEMS: usize>(
    input: &DeviceSlice<'_, T>,
    map: impl Fn(usize, T) -> U,
    op: O,
    scratch: SharedSlice<'_, U>,
) -> U
where
    T: DeviceCopy,
    U: DeviceCopy,
    O: Operator<U>,
{
    let elements = input.as_slice();
    // SAFETY: a `DeviceSlice` parameter's elements are readable by every
    // thread, and the host side holds a shared borrow of the memory for the
    // kernel's run, so nothing writes them meanwhile.
    unsafe {
        reduce_tiles::<T, U, O, BLOCK, ITEMS>(elements.as_ptr(), elements.len(), map, op, scratch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ops::{Max, Min, Sum};

    /// Every size around the tile, on the host model (one block of one
    /// thread takes every tile), from a 16-aligned start (16-byte loads)
    /// and from one element further (one element per load): the same
    /// results as the iterator folds.
    /// Blocks handing in one after the other (the host model runs one
    /// at a time): only the last is told so, it sees every total, and it
    /// leaves the counter at 0 for the next launch, twice in a row.
    #[test]
    fn the_last_block_to_arrive_is_the_only_one_told_and_resets_the_counter() {
        let mut partials = [0u64; 5];
        let mut arrivals = 0u32;
        for launch in 0..2u64 {
            for block in 0..5 {
                // SAFETY: five slots, an aligned counter of this test's only.
                let last = unsafe {
                    arrive(
                        10 * launch + block as u64,
                        partials.as_mut_ptr(),
                        &mut arrivals,
                        block,
                        5,
                    )
                };
                assert_eq!(last, block == 4, "launch {launch}, block {block}");
                assert_eq!(arrivals, if block == 4 { 0 } else { block as u32 + 1 });
            }
            assert_eq!(partials, core::array::from_fn(|b| 10 * launch + b as u64));
        }
    }

    #[test]
    fn the_block_covers_every_element_once() {
        let scratch = crate::shared_array![u64; 1];
        let scratch_i = crate::shared_array![i32; 1];
        // 16-aligned storage: element 0 starts a vector, element 1 does not.
        let mut storage: Vec<u128> = vec![0; 300];
        for len in [0usize, 1, 2, 15, 16, 17, 31, 32, 33, 100, 1000] {
            for skip in [0usize, 1] {
                // SAFETY: the storage holds 1200 `i32`s; `skip + len` of them.
                let data: &mut [i32] = unsafe {
                    core::slice::from_raw_parts_mut(
                        storage.as_mut_ptr().cast::<i32>().add(skip),
                        len,
                    )
                };
                for (i, x) in data.iter_mut().enumerate() {
                    *x = (i as i32 * 7919) % 1013 - 500;
                }
                // SAFETY: `data` holds `len` elements; nothing writes them.
                unsafe {
                    let count = reduce_tiles::<i32, u64, _, 1, 16>(
                        data.as_ptr(),
                        len,
                        |_, _| 1u64,
                        Sum,
                        scratch.as_slice(),
                    );
                    assert_eq!(count, len as u64);
                    let index_sum = reduce_tiles::<i32, u64, _, 1, 4>(
                        data.as_ptr(),
                        len,
                        |i, _| i as u64,
                        Sum,
                        scratch.as_slice(),
                    );
                    assert_eq!(index_sum, (len as u64) * (len as u64).saturating_sub(1) / 2);
                    let lo = reduce_tiles::<i32, i32, _, 1, 16>(
                        data.as_ptr(),
                        len,
                        |_, x| x,
                        Min,
                        scratch_i.as_slice(),
                    );
                    assert_eq!(lo, data.iter().copied().min().unwrap_or(i32::MAX));
                    let hi = reduce_tiles::<i32, i32, _, 1, 3>(
                        data.as_ptr(),
                        len,
                        |_, x| x,
                        Max,
                        scratch_i.as_slice(),
                    );
                    assert_eq!(hi, data.iter().copied().max().unwrap_or(i32::MIN));
                }
            }
        }
    }
}
