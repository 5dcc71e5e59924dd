//! Block-wide collectives over a compile-time block size: a reduction and
//! an exclusive scan of one value per thread, built from warp shuffles
//! ([`warp`]) and one small shared array of per-warp partials.
//!
//! The shared array is the caller's (a `shared_array!` in the kernel crate:
//! shared memory is declared where the kernel is compiled), of at least
//! `BLOCK / 32` elements (rounded up). Every thread of the block must call
//! the collective (it has barriers), with the same `BLOCK`, which must be
//! the launch's block size (checked: a mismatch traps). The scratch array
//! may be reused by the next call: each call ends with a barrier after its
//! last read of it.
//!
//! Safe: the partials move through relaxed shared-memory accesses
//! ([`SharedSlice::load`](super::SharedSlice::load) / `store`), which never
//! race; a thread that skips a call makes the others wait at the barrier
//! forever (a hang, not undefined behaviour), as with any barrier.
//!
//! ```
//! use cuda_mem::device::block;
//! let scratch = cuda_mem::shared_array![u32; 8];
//! // The block's sum of one value per thread (256 threads on the device;
//! // the host model is a block of one thread, so BLOCK is 1 here).
//! let total = block::sum::<u32, 1>(5, scratch.as_slice());
//! assert_eq!(total, 5);
//! ```

use super::shared::SharedSlice;
use super::sync::sync_threads;
use super::thread::block_size;
use super::warp::{self, WarpReduce, WARP_SIZE};
use crate::copy::device_copy::DeviceCopy;

/// The number of warps of a block of `BLOCK` threads.
const fn warps(block: usize) -> usize {
    block.div_ceil(WARP_SIZE as usize)
}

/// Checks the launch's block size and the scratch array's length.
#[inline(always)]
#[track_caller]
fn check<T: DeviceCopy, const BLOCK: usize>(scratch: &SharedSlice<'_, T>) {
    const { assert!(BLOCK > 0 && BLOCK <= 1024, "a block has 1 to 1024 threads") };
    assert!(
        block_size() as usize == BLOCK,
        "block collective: BLOCK is not the launch's block size"
    );
    assert!(
        scratch.len() >= warps(BLOCK),
        "block collective: the scratch array needs BLOCK / 32 elements (rounded up)"
    );
}

/// `op` over one `value` per thread of the block, returned to every thread
/// (`op` associative and commutative; values whose size is a multiple of
/// 4 bytes, as the warp shuffles move). `BLOCK` is the launch's block size; `scratch` holds at
/// least `BLOCK / 32` elements (rounded up). Two barriers.
///
/// ```
/// use cuda_mem::device::block;
/// let scratch = cuda_mem::shared_array![f32; 32];
/// let largest = block::reduce::<f32, 1>(2.5, |a, b| a.max(b), scratch.as_slice());
/// assert_eq!(largest, 2.5);
/// ```
#[inline(always)]
#[track_caller]
pub fn reduce<T: DeviceCopy, const BLOCK: usize>(
    value: T,
    op: impl Fn(T, T) -> T,
    scratch: SharedSlice<'_, T>,
) -> T {
    check::<T, BLOCK>(&scratch);
    let partial = warp::reduce_with(value, &op);
    if warps(BLOCK) == 1 {
        return partial;
    }
    let rank = super::block_thread_rank() as usize;
    let me = rank / WARP_SIZE as usize;
    if rank.is_multiple_of(WARP_SIZE as usize) {
        scratch.store(me, partial);
    }
    sync_threads();
    let mut total = scratch.load(0);
    let mut w = 1;
    while w < warps(BLOCK) {
        total = op(total, scratch.load(w));
        w += 1;
    }
    sync_threads();
    total
}

/// The sum of one `value` per thread of the block, returned to every
/// thread ([`reduce`] with `+`; integers wrap, float sums follow a fixed
/// tree).
///
/// ```
/// let scratch = cuda_mem::shared_array![u64; 8];
/// assert_eq!(cuda_mem::device::block::sum::<u64, 1>(7, scratch.as_slice()), 7);
/// ```
#[inline(always)]
#[track_caller]
pub fn sum<T: WarpReduce, const BLOCK: usize>(value: T, scratch: SharedSlice<'_, T>) -> T {
    reduce::<T, BLOCK>(value, T::__add, scratch)
}

/// The exclusive scan of one `value` per thread of the block, in
/// [`block_thread_rank`](super::block_thread_rank) order, with `op`
/// (associative): thread `r` gets `op` over the values of threads `0..r`
/// (thread 0 gets `identity`), and every thread gets the block's total, as
/// `(exclusive, total)`. A warp scan, the warps' totals through `scratch`
/// (at least `BLOCK / 32` elements, rounded up), two barriers.
///
/// ```
/// use cuda_mem::device::block;
/// let scratch = cuda_mem::shared_array![u32; 8];
/// let (before, total) = block::exclusive_scan::<u32, 1>(4, 0, |a, b| a + b, scratch.as_slice());
/// assert_eq!((before, total), (0, 4));
/// ```
#[inline(always)]
#[track_caller]
pub fn exclusive_scan<T: DeviceCopy, const BLOCK: usize>(
    value: T,
    identity: T,
    op: impl Fn(T, T) -> T,
    scratch: SharedSlice<'_, T>,
) -> (T, T) {
    check::<T, BLOCK>(&scratch);
    let (within, inclusive) = warp::scans(value, identity, &op);
    // The warp's total: its last lane's inclusive value.
    let rank = super::block_thread_rank() as usize;
    let me = rank / WARP_SIZE as usize;
    let last = (me * WARP_SIZE as usize + WARP_SIZE as usize).min(BLOCK) - 1;
    if rank == last {
        scratch.store(me, inclusive);
    }
    sync_threads();
    let (mut before, mut total) = (identity, identity);
    let mut w = 0;
    while w < warps(BLOCK) {
        let x = scratch.load(w);
        if w < me {
            before = op(before, x);
        }
        total = op(total, x);
        w += 1;
    }
    sync_threads();
    (op(before, within), total)
}

/// The exclusive sum of one `value` per thread of the block and the
/// block's total ([`exclusive_scan`] with `+` and 0; integers wrap).
///
/// ```
/// let scratch = cuda_mem::shared_array![u32; 8];
/// assert_eq!(cuda_mem::device::block::exclusive_sum::<u32, 1>(3, scratch.as_slice()), (0, 3));
/// ```
#[inline(always)]
#[track_caller]
pub fn exclusive_sum<T: WarpReduce + Default, const BLOCK: usize>(
    value: T,
    scratch: SharedSlice<'_, T>,
) -> (T, T) {
    exclusive_scan::<T, BLOCK>(value, T::default(), T::__add, scratch)
}
