//! Warp-level operations: the lane, lane masks, votes (`ballot`, `any`,
//! `all`), matches ([`match_any`], [`match_low_bits`]), shuffles (`idx`,
//! `up`, `down`, `xor`) of any [`DeviceCopy`] value
//! whose size is a multiple of 4 bytes, and warp reductions ([`sum`], [`min`], [`max`]).
//!
//! Warps are the block's threads 32 by 32, in [`block_thread_rank`] order.
//! The functions without a mask argument act on the whole warp
//! (`membermask = 0xffffffff`): every non-exited lane of the warp must call
//! the same function (a lane that never comes makes the others wait
//! forever; exited lanes and the missing lanes of a block whose size is not
//! a multiple of 32 are fine, but a shuffle from such a lane returns an
//! unspecified value). The `_in` variants take a mask of the lanes that
//! take part; the calling lane is always added to it, since PTX leaves a
//! call by a lane outside its own mask undefined. These are the `.sync`
//! instructions of sm_70 and later.
//!
//! On other targets a warp is one lane: lane 0, masks of one bit, votes
//! return the caller's own predicate and shuffles its own value.

use super::thread::{block_size, block_thread_rank};
use crate::copy::device_copy::DeviceCopy;

/// Threads per warp on every NVIDIA GPU.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::WARP_SIZE, 32);
/// ```
pub const WARP_SIZE: u32 = 32;

/// The mask of all 32 lanes.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::FULL_MASK.count_ones(), 32);
/// ```
pub const FULL_MASK: u32 = 0xffff_ffff;

/// The calling thread's lane in its warp (`%laneid`, `0..32`).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::lane_id(), 0);
/// ```
#[inline(always)]
pub fn lane_id() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    return super::special_register!("%laneid");
    #[cfg(not(target_arch = "nvptx64"))]
    return 0;
}

/// The calling thread's warp's index in its block: `block_thread_rank() / 32`.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::warp_id(), 0);
/// ```
#[inline(always)]
pub fn warp_id() -> u32 {
    block_thread_rank() / WARP_SIZE
}

/// The number of lanes of the calling thread's warp that exist:
/// 32, or fewer in the last warp of a block whose size is not a multiple
/// of 32.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::lanes_in_warp(), 1); // the one-thread model
/// ```
#[inline(always)]
pub fn lanes_in_warp() -> u32 {
    let first = block_thread_rank() & !(WARP_SIZE - 1);
    let left = block_size() - first;
    if left < WARP_SIZE {
        left
    } else {
        WARP_SIZE
    }
}

/// The lanes executing this instruction together now (`activemask`). Not a
/// substitute for a known mask: which lanes run together after divergence is
/// up to the hardware.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::active_mask(), 1);
/// ```
#[inline(always)]
pub fn active_mask() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let mask: u32;
        // SAFETY: reads which lanes are active; no memory, no precondition.
        unsafe {
            core::arch::asm!(
                "activemask.b32 {m};",
                m = out(reg32) mask,
                options(nomem, nostack, preserves_flags)
            );
        }
        mask
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        1
    }
}

macro_rules! lane_masks {
    ($($(#[$doc:meta])* $name:ident = $reg:literal, host $host:literal;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            return super::special_register!($reg);
            #[cfg(not(target_arch = "nvptx64"))]
            return $host;
        }
    )*};
}

lane_masks! {
    /// The bit of the calling lane (`%lanemask_eq`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::warp::lanemask_eq(), 1 << cuda_mem::device::warp::lane_id());
    /// ```
    lanemask_eq = "%lanemask_eq", host 1;
    /// The bits of the lanes below the calling one (`%lanemask_lt`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::warp::lanemask_lt(), 0);
    /// ```
    lanemask_lt = "%lanemask_lt", host 0;
    /// The bits of the lanes up to and including the calling one (`%lanemask_le`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::warp::lanemask_le(), 1);
    /// ```
    lanemask_le = "%lanemask_le", host 1;
    /// The bits of the lanes above the calling one (`%lanemask_gt`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::warp::lanemask_gt(), 0);
    /// ```
    lanemask_gt = "%lanemask_gt", host 0;
    /// The bits of the calling lane and those above it (`%lanemask_ge`).
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::warp::lanemask_ge(), 1);
    /// ```
    lanemask_ge = "%lanemask_ge", host 1;
}

/// Waits until every lane of the warp has reached a warp barrier
/// (`__syncwarp()`), ordering their memory accesses.
///
/// ```
/// cuda_mem::device::warp::sync_warp();
/// ```
#[inline(always)]
pub fn sync_warp() {
    sync_warp_in(FULL_MASK)
}

/// Waits until the lanes of `mask` (and the calling lane) have reached a
/// warp barrier (`__syncwarp(mask)`).
///
/// ```
/// cuda_mem::device::warp::sync_warp_in(0b11);
/// ```
#[inline(always)]
pub fn sync_warp_in(mask: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the calling lane is in the mask (added); a barrier has no
    // other precondition. Not `nomem`: it orders memory.
    unsafe {
        core::arch::asm!(
            "bar.warp.sync {m};",
            m = in(reg32) mask | lanemask_eq(),
            options(nostack, preserves_flags)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = mask;
}

/// A vote of the whole warp: bit `i` is set when lane `i` passed `true`
/// (`__ballot_sync(0xffffffff, p)`).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::ballot(true), 1);
/// ```
#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    ballot_in(FULL_MASK, predicate)
}

/// [`ballot`] among the lanes of `mask` (and the caller); lanes outside it
/// read as 0.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::ballot_in(0b1, false), 0);
/// ```
#[inline(always)]
pub fn ballot_in(mask: u32, predicate: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let votes: u32;
        // SAFETY: the calling lane is in the mask (added); no memory access.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred %p;",
                "setp.ne.u32 %p, {pred}, 0;",
                "vote.sync.ballot.b32 {d}, %p, {m};",
                "}}",
                pred = in(reg32) predicate as u32,
                m = in(reg32) mask | lanemask_eq(),
                d = out(reg32) votes,
                options(nomem, nostack, preserves_flags)
            );
        }
        votes
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = mask;
        predicate as u32
    }
}

/// The lanes of the warp whose `value` equals the caller's, the caller
/// included (`__match_any_sync(0xffffffff, value)`, PTX `match.any.sync`,
/// sm_70 and up): the peers of a digit in a radix sort, of a key in a
/// histogram. Every existing lane of the warp must call it.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::match_any(7), 1); // a warp of one lane
/// ```
#[inline(always)]
pub fn match_any(value: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let peers: u32;
        let mask = existing_lanes();
        // SAFETY: the lanes of the mask are the warp's existing lanes, the
        // caller among them; no memory access.
        unsafe {
            core::arch::asm!(
                "match.any.sync.b32 {d}, {v}, {m};",
                v = in(reg32) value,
                m = in(reg32) mask,
                d = out(reg32) peers,
                options(nomem, nostack, preserves_flags)
            );
        }
        peers
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = value;
        1
    }
}

/// The lanes of the warp whose `value` has the same low `BITS` bits as
/// the caller's, the caller included: [`match_any`] of `value %
/// 2^BITS`, made of `BITS` ballots (one per bit). For a few bits (the 8
/// of a radix digit) this is faster than `match.any`, a slow instruction
/// of the memory pipe on sm_70 to sm_90 (CUB ranks its radix digits the
/// same way). Every existing lane of the warp must call it.
///
/// ```
/// use cuda_mem::device::warp::match_low_bits;
/// assert_eq!(match_low_bits::<8>(0x1ff), 1); // a warp of one lane
/// ```
#[inline(always)]
pub fn match_low_bits<const BITS: u32>(value: u32) -> u32 {
    match_low_bits_in::<BITS>(existing_lanes(), value)
}

/// [`match_low_bits`] among the lanes of `mask` (the caller among them,
/// and every one of them calling it); lanes outside it are never peers.
/// A constant `mask` (`FULL_MASK` where every warp is whole) lets the
/// compiler emit plain ballots.
///
/// ```
/// use cuda_mem::device::warp::{match_low_bits_in, FULL_MASK};
/// assert_eq!(match_low_bits_in::<4>(FULL_MASK, 0xa), 1);
/// ```
#[inline(always)]
pub fn match_low_bits_in<const BITS: u32>(mask: u32, value: u32) -> u32 {
    const { assert!(BITS > 0 && BITS <= 32, "1 to 32 bits") };
    let mut peers = mask;
    let mut bit = 0;
    while bit < BITS {
        // The lanes whose bit is the caller's: the ballot of the bit, xor
        // all ones where the caller's is clear (an and-xor; the compiler's
        // select of the ballot or its complement takes more).
        let votes = ballot_in(mask, value & (1 << bit) != 0);
        let clear = ((value >> bit) & 1).wrapping_sub(1);
        peers &= votes ^ clear;
        bit += 1;
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A warp of one lane: the caller alone.
        peers &= 1;
    }
    peers
}

/// [`match_low_bits_in`] in four instructions a bit (the ballot, its
/// complement under the bit's predicate, the and), written in PTX: the
/// radix sort's ranking (`device::wide::radix`), 8 bits over whole warps.
/// Not the public function's body: ptxas 13.5 fails to allocate
/// predicates ("Register allocation failed with register count of 7")
/// for a kernel that matches 8 bits of one value and 3 of another this
/// way, and the integer form compiles everywhere.
#[inline(always)]
pub(crate) fn match_low_bits_ptx<const BITS: u32>(mask: u32, value: u32) -> u32 {
    const { assert!(BITS > 0 && BITS <= 32, "1 to 32 bits") };
    #[cfg(target_arch = "nvptx64")]
    {
        let mask = mask | lanemask_eq();
        let mut peers = mask;
        let mut bit = 0;
        while bit < BITS {
            // SAFETY: the calling lane is in the mask (added); no memory
            // access.
            unsafe {
                core::arch::asm!(
                    "{{",
                    ".reg .pred %p;",
                    ".reg .b32 %v;",
                    "setp.ne.u32 %p, {bit}, 0;",
                    "vote.sync.ballot.b32 %v, %p, {m};",
                    "@!%p not.b32 %v, %v;",
                    "and.b32 {peers}, {peers}, %v;",
                    "}}",
                    bit = in(reg32) value & (1 << bit),
                    m = in(reg32) mask,
                    peers = inout(reg32) peers,
                    options(nomem, nostack, preserves_flags)
                );
            }
            bit += 1;
        }
        peers
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        match_low_bits_in::<BITS>(mask, value)
    }
}

/// Whether any lane of the warp passed `true` (`__any_sync`).
///
/// ```
/// assert!(cuda_mem::device::warp::any(true));
/// ```
#[inline(always)]
pub fn any(predicate: bool) -> bool {
    any_in(FULL_MASK, predicate)
}

/// [`any`] among the lanes of `mask` (and the caller).
///
/// ```
/// assert!(!cuda_mem::device::warp::any_in(0b1, false));
/// ```
#[inline(always)]
pub fn any_in(mask: u32, predicate: bool) -> bool {
    vote::<false>(mask, predicate)
}

/// Whether every lane of the warp passed `true` (`__all_sync`).
///
/// ```
/// assert!(!cuda_mem::device::warp::all(false));
/// ```
#[inline(always)]
pub fn all(predicate: bool) -> bool {
    all_in(FULL_MASK, predicate)
}

/// [`all`] among the lanes of `mask` (and the caller).
///
/// ```
/// assert!(cuda_mem::device::warp::all_in(0b1, true));
/// ```
#[inline(always)]
pub fn all_in(mask: u32, predicate: bool) -> bool {
    vote::<true>(mask, predicate)
}

/// `vote.sync.all.pred` (ALL) or `vote.sync.any.pred`.
#[inline(always)]
fn vote<const ALL: bool>(mask: u32, predicate: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let result: u32;
        let mask = mask | lanemask_eq();
        // SAFETY: the calling lane is in the mask; no memory access.
        unsafe {
            if ALL {
                core::arch::asm!(
                    "{{",
                    ".reg .pred %p, %q;",
                    "setp.ne.u32 %p, {pred}, 0;",
                    "vote.sync.all.pred %q, %p, {m};",
                    "selp.u32 {d}, 1, 0, %q;",
                    "}}",
                    pred = in(reg32) predicate as u32,
                    m = in(reg32) mask,
                    d = out(reg32) result,
                    options(nomem, nostack, preserves_flags)
                );
            } else {
                core::arch::asm!(
                    "{{",
                    ".reg .pred %p, %q;",
                    "setp.ne.u32 %p, {pred}, 0;",
                    "vote.sync.any.pred %q, %p, {m};",
                    "selp.u32 {d}, 1, 0, %q;",
                    "}}",
                    pred = in(reg32) predicate as u32,
                    m = in(reg32) mask,
                    d = out(reg32) result,
                    options(nomem, nostack, preserves_flags)
                );
            }
        }
        result != 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = mask;
        predicate
    }
}

/// The four shuffle kinds of `shfl.sync`.
#[derive(Clone, Copy)]
enum Kind {
    Idx,
    Up,
    Down,
    Xor,
}

/// One 32-bit `shfl.sync.<kind>.b32` with the whole warp as its width (`c`
/// is `0x1f` for idx/down/bfly and `0` for up, as CUDA's width 32).
#[inline(always)]
fn shfl32(kind: Kind, mask: u32, value: u32, lane: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let out: u32;
        let mask = mask | lanemask_eq();
        // SAFETY: the calling lane is in the mask (added above); a shuffle
        // touches no memory.
        unsafe {
            match kind {
                Kind::Idx => core::arch::asm!(
                    "shfl.sync.idx.b32 {d}, {a}, {b}, 31, {m};",
                    d = out(reg32) out, a = in(reg32) value, b = in(reg32) lane, m = in(reg32) mask,
                    options(nomem, nostack, preserves_flags)
                ),
                Kind::Up => core::arch::asm!(
                    "shfl.sync.up.b32 {d}, {a}, {b}, 0, {m};",
                    d = out(reg32) out, a = in(reg32) value, b = in(reg32) lane, m = in(reg32) mask,
                    options(nomem, nostack, preserves_flags)
                ),
                Kind::Down => core::arch::asm!(
                    "shfl.sync.down.b32 {d}, {a}, {b}, 31, {m};",
                    d = out(reg32) out, a = in(reg32) value, b = in(reg32) lane, m = in(reg32) mask,
                    options(nomem, nostack, preserves_flags)
                ),
                Kind::Xor => core::arch::asm!(
                    "shfl.sync.bfly.b32 {d}, {a}, {b}, 31, {m};",
                    d = out(reg32) out, a = in(reg32) value, b = in(reg32) lane, m = in(reg32) mask,
                    options(nomem, nostack, preserves_flags)
                ),
            }
        }
        out
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = (kind, mask, lane);
        value
    }
}

/// Shuffles a value of any size that is a multiple of 4 bytes, one
/// 32-bit shuffle per word (two for an `f64`, four for a 16-byte pair).
#[inline(always)]
fn shfl<T: DeviceCopy>(kind: Kind, mask: u32, value: T, lane: u32) -> T {
    const {
        assert!(
            size_of::<T>() > 0 && size_of::<T>().is_multiple_of(4),
            "warp shuffles move values whose size is a non-zero multiple of 4 bytes"
        )
    };
    // The bytes of `T` are moved as words: a derived generic struct's real
    // layout is re-checked for this `T` (no padding), as the byte views do.
    const { crate::copy::private::check_layout::<T>() };
    let mut moved = core::mem::MaybeUninit::<T>::uninit();
    let from = (&value as *const T).cast::<u32>();
    let to = moved.as_mut_ptr().cast::<u32>();
    let mut word = 0;
    while word < size_of::<T>() / 4 {
        // SAFETY: `word` indexes one of the `size_of::<T>() / 4` words of
        // `value` and of `moved` (read and written unaligned: `T` may be
        // 2-aligned only if its size is a multiple of 4, never less
        // aligned than that matters here).
        unsafe {
            let bits = from.add(word).read_unaligned();
            to.add(word).write_unaligned(shfl32(kind, mask, bits, lane));
        }
        word += 1;
    }
    // SAFETY: every word of `moved` was written; `T: DeviceCopy` without
    // padding (checked above), so any bytes are a valid `T`.
    unsafe { moved.assume_init() }
}

/// The `value` of lane `src_lane % 32` (`__shfl_sync(0xffffffff, v, src)`),
/// for any [`DeviceCopy`] type whose size is a multiple of 4 bytes (others
/// fail to compile), one 32-bit shuffle per word.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_idx(2.5f64, 0), 2.5);
/// ```
#[inline(always)]
pub fn shfl_idx<T: DeviceCopy>(value: T, src_lane: u32) -> T {
    shfl(Kind::Idx, FULL_MASK, value, src_lane)
}

/// The `value` of lane `lane_id() - delta`; lanes below `delta` get their own
/// (`__shfl_up_sync`).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_up(7u32, 1), 7);
/// ```
#[inline(always)]
pub fn shfl_up<T: DeviceCopy>(value: T, delta: u32) -> T {
    shfl(Kind::Up, FULL_MASK, value, delta)
}

/// The `value` of lane `lane_id() + delta`; lanes above `31 - delta` get
/// their own (`__shfl_down_sync`).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_down(-3i64, 4), -3);
/// ```
#[inline(always)]
pub fn shfl_down<T: DeviceCopy>(value: T, delta: u32) -> T {
    shfl(Kind::Down, FULL_MASK, value, delta)
}

/// The `value` of lane `lane_id() ^ lane_mask` (`__shfl_xor_sync`, a
/// butterfly).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_xor([1u16, 2], 16), [1, 2]);
/// ```
#[inline(always)]
pub fn shfl_xor<T: DeviceCopy>(value: T, lane_mask: u32) -> T {
    shfl(Kind::Xor, FULL_MASK, value, lane_mask)
}

/// [`shfl_idx`] among the lanes of `mask` (and the caller); reading a lane
/// outside the mask gives an unspecified value.
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_idx_in(0b1, 1u32, 0), 1);
/// ```
#[inline(always)]
pub fn shfl_idx_in<T: DeviceCopy>(mask: u32, value: T, src_lane: u32) -> T {
    shfl(Kind::Idx, mask, value, src_lane)
}

/// [`shfl_up`] among the lanes of `mask` (and the caller).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_up_in(0b1, 1u32, 1), 1);
/// ```
#[inline(always)]
pub fn shfl_up_in<T: DeviceCopy>(mask: u32, value: T, delta: u32) -> T {
    shfl(Kind::Up, mask, value, delta)
}

/// [`shfl_down`] among the lanes of `mask` (and the caller).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_down_in(0b1, 1u32, 1), 1);
/// ```
#[inline(always)]
pub fn shfl_down_in<T: DeviceCopy>(mask: u32, value: T, delta: u32) -> T {
    shfl(Kind::Down, mask, value, delta)
}

/// [`shfl_xor`] among the lanes of `mask` (and the caller).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::shfl_xor_in(0b1, 1u32, 1), 1);
/// ```
#[inline(always)]
pub fn shfl_xor_in<T: DeviceCopy>(mask: u32, value: T, lane_mask: u32) -> T {
    shfl(Kind::Xor, mask, value, lane_mask)
}

mod sealed {
    pub trait Sealed {}
}

/// A type the warp reductions work on: `i32`, `u32`, `i64`, `u64` (sum
/// wraps), `f32`, `f64` (min and max ignore NaN like `f32::min`; the sum's
/// order of additions is a fixed tree, so it may differ from a sequential
/// sum by rounding). Sealed.
///
/// ```
/// fn total<T: cuda_mem::device::warp::WarpReduce>(x: T) -> T {
///     cuda_mem::device::warp::sum(x)
/// }
/// assert_eq!(total(3u64), 3);
/// ```
pub trait WarpReduce: DeviceCopy + sealed::Sealed {
    #[doc(hidden)]
    fn __add(self, other: Self) -> Self;
    #[doc(hidden)]
    fn __min(self, other: Self) -> Self;
    #[doc(hidden)]
    fn __max(self, other: Self) -> Self;
}

macro_rules! warp_int {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpReduce for $t {
            #[inline(always)]
            fn __add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline(always)]
            fn __min(self, other: Self) -> Self { Ord::min(self, other) }
            #[inline(always)]
            fn __max(self, other: Self) -> Self { Ord::max(self, other) }
        }
    )*};
}
warp_int!(i32, u32, i64, u64);

macro_rules! warp_float {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpReduce for $t {
            #[inline(always)]
            fn __add(self, other: Self) -> Self { self + other }
            #[inline(always)]
            fn __min(self, other: Self) -> Self { <$t>::min(self, other) }
            #[inline(always)]
            fn __max(self, other: Self) -> Self { <$t>::max(self, other) }
        }
    )*};
}
warp_float!(f32, f64);

/// Whether every warp of the block is whole (the block size is a multiple
/// of 32): then the collectives use the constant full mask, whose shuffles
/// compile to one `SHFL` each (a mask computed at run time makes the
/// compiler add a slow path for divergent warps).
#[inline(always)]
fn whole_warps() -> bool {
    super::thread::block_size().is_multiple_of(WARP_SIZE)
}

/// The mask of the lanes that exist in the calling thread's warp.
#[inline(always)]
fn existing_lanes() -> u32 {
    let lanes = lanes_in_warp();
    if lanes >= WARP_SIZE {
        FULL_MASK
    } else {
        (1u32 << lanes) - 1
    }
}

/// `op` over the lanes of the warp, returned to every lane: a butterfly
/// of `shfl.bfly` (5 shuffles, no broadcast) with the constant full mask
/// when the warps are whole, else a tree over `shfl.down` among the lanes
/// that exist (see [`lanes_in_warp`]; their mask is the shuffles' member
/// mask, so a partial last warp never names a missing lane), then lane 0's
/// result broadcast.
#[inline(always)]
fn reduce<T: DeviceCopy>(value: T, op: impl Fn(T, T) -> T) -> T {
    let mut v = value;
    if whole_warps() {
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            v = op(v, shfl_xor(v, offset));
            offset /= 2;
        }
        return v;
    }
    let lanes = lanes_in_warp();
    let mask = existing_lanes();
    let lane = lane_id();
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        let other = shfl_down_in(mask, v, offset);
        if lane + offset < lanes {
            v = op(v, other);
        }
        offset /= 2;
    }
    shfl_idx_in(mask, v, 0)
}

/// `op` over the lanes of the warp, returned to every lane, for any
/// [`DeviceCopy`] value whose size is a multiple of 4 bytes and any associative and commutative `op`
/// (the order in which lanes are combined is a fixed tree). Every existing,
/// non-exited lane of the warp must call it (missing lanes of a partial
/// last warp are left out correctly; lanes that returned early are not).
/// With whole warps (a block size that is a multiple of 32) it is 5
/// shuffles with a constant mask.
///
/// ```
/// let best = cuda_mem::device::warp::reduce_with(3u32, |a, b| a.max(b));
/// assert_eq!(best, 3); // a warp of one lane
/// ```
#[inline(always)]
pub fn reduce_with<T: DeviceCopy>(value: T, op: impl Fn(T, T) -> T) -> T {
    reduce(value, op)
}

/// The inclusive scan of `value` over the lanes of the warp with `op`: lane
/// `i` gets `op` over the values of lanes `0..=i`, in lane order (`op`
/// associative; it need not commute). 5 `shfl.up` steps, with the constant
/// full mask when the warps are whole. Same calling rules as [`sum`].
///
/// ```
/// use cuda_mem::device::warp;
/// assert_eq!(warp::inclusive_scan(5u32, |a, b| a + b), 5); // one lane
/// ```
#[inline(always)]
pub fn inclusive_scan<T: DeviceCopy>(value: T, op: impl Fn(T, T) -> T) -> T {
    if whole_warps() {
        return inclusive_scan_whole(value, op);
    }
    let (lane, mask) = (lane_id(), existing_lanes());
    let mut v = value;
    let mut delta = 1;
    while delta < WARP_SIZE {
        let other = shfl_up_in(mask, v, delta);
        if lane >= delta {
            v = op(other, v);
        }
        delta *= 2;
    }
    v
}

/// The exclusive scan of `value` over the lanes of the warp with `op`: lane
/// `i` gets `op` over the values of lanes `0..i`, and lane 0 gets
/// `identity`. Same rules as [`inclusive_scan`].
///
/// ```
/// use cuda_mem::device::warp;
/// assert_eq!(warp::exclusive_scan(5u32, 0, |a, b| a + b), 0); // lane 0
/// ```
#[inline(always)]
pub fn exclusive_scan<T: DeviceCopy>(value: T, identity: T, op: impl Fn(T, T) -> T) -> T {
    scans(value, identity, op).0
}

/// [`inclusive_scan`] in a whole warp: 5 `shfl.up` steps with the
/// constant full mask.
#[inline(always)]
fn inclusive_scan_whole<T: DeviceCopy>(value: T, op: impl Fn(T, T) -> T) -> T {
    let lane = lane_id();
    let mut v = value;
    let mut delta = 1;
    while delta < WARP_SIZE {
        let other = shfl_up(v, delta);
        if lane >= delta {
            v = op(other, v);
        }
        delta *= 2;
    }
    v
}

/// The exclusive and the inclusive scan of `value` over the warp.
#[inline(always)]
pub(crate) fn scans<T: DeviceCopy>(value: T, identity: T, op: impl Fn(T, T) -> T) -> (T, T) {
    let inclusive = inclusive_scan(value, op);
    let before = if whole_warps() {
        shfl_up(inclusive, 1)
    } else {
        shfl_up_in(existing_lanes(), inclusive, 1)
    };
    let exclusive = if lane_id() == 0 { identity } else { before };
    (exclusive, inclusive)
}

/// [`scans`] in a block of `BLOCK` threads: where `BLOCK` is a multiple
/// of 32, the warps are whole at compile time, with no path for partial
/// warps (which a block size read at run time would add).
#[inline(always)]
pub(crate) fn scans_in_block<T: DeviceCopy, const BLOCK: usize>(
    value: T,
    identity: T,
    op: impl Fn(T, T) -> T,
) -> (T, T) {
    if !BLOCK.is_multiple_of(WARP_SIZE as usize) {
        return scans(value, identity, op);
    }
    let inclusive = inclusive_scan_whole(value, op);
    let before = shfl_up(inclusive, 1);
    let exclusive = if lane_id() == 0 { identity } else { before };
    (exclusive, inclusive)
}

/// The sum of `value` over the lanes of the warp, returned to every lane.
/// Every existing, non-exited lane of the warp must call it (missing lanes
/// of a partial last warp are left out correctly; lanes that returned early
/// are not).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::sum(4i32), 4); // a warp of one lane
/// ```
#[inline(always)]
pub fn sum<T: WarpReduce>(value: T) -> T {
    reduce(value, T::__add)
}

/// The minimum of `value` over the lanes of the warp, returned to every lane
/// (same rules as [`sum`]).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::min(-1.5f32), -1.5);
/// ```
#[inline(always)]
pub fn min<T: WarpReduce>(value: T) -> T {
    reduce(value, T::__min)
}

/// The maximum of `value` over the lanes of the warp, returned to every lane
/// (same rules as [`sum`]).
///
/// ```
/// assert_eq!(cuda_mem::device::warp::max(9u32), 9);
/// ```
#[inline(always)]
pub fn max<T: WarpReduce>(value: T) -> T {
    reduce(value, T::__max)
}
