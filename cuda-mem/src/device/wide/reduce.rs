//! [`reduce_tiles`]: a block's share of a two-pass device-wide reduction.

use crate::copy::device_copy::DeviceCopy;
use crate::device::block;
use crate::device::memory::load_global_v4;
use crate::device::ops::Operator;
use crate::device::shared::SharedSlice;
use crate::device::slice::DeviceSlice;
use crate::device::thread::{block_rank, block_thread_rank, grid_blocks};

/// `op` over `map(i, input[i])` for the elements of this block's tiles,
/// returned to every thread of the block: the first pass of a device-wide
/// reduction, whose second pass reduces the blocks' results with one block
/// (this function again, over them, with `map` passing values through).
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
