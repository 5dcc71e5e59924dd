//! Barriers (a block's threads wait for each other) and memory fences (a
//! thread's memory accesses are ordered for the threads of a [`Scope`]).
//!
//! The barriers are PTX's `barrier.sync` / `barrier.red` on barrier 0, the
//! non-`.aligned` forms, so a barrier in code that only some threads of a
//! warp reach is not undefined behaviour (it waits for the block's other
//! threads, and hangs if they never come: keep every barrier where all
//! non-exited threads of the block reach it). A barrier also orders memory:
//! what a thread wrote before it is visible to the block's threads after it.
//!
//! On other targets a block is one thread: barriers return at once (a
//! barrier with a predicate returns the thread's own answer) and fences are
//! `core::sync::atomic::fence`.

use super::atomic::Scope;

/// Waits until every thread of the block has reached a barrier
/// (`__syncthreads()`); memory accesses before it are visible to the block's
/// threads after it.
///
/// ```
/// cuda_mem::device::sync_threads(); // one thread on the host: returns at once
/// ```
#[inline(always)]
pub fn sync_threads() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a barrier touches no memory the program can see; it is not
    // `nomem`, so the compiler keeps memory accesses on their side of it.
    unsafe {
        core::arch::asm!("barrier.sync 0;", options(nostack, preserves_flags));
    }
}

/// [`sync_threads`], returning how many of the block's threads passed
/// `true` (`__syncthreads_count`).
///
/// ```
/// assert_eq!(cuda_mem::device::sync_threads_count(true), 1);
/// ```
#[inline(always)]
pub fn sync_threads_count(predicate: bool) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let count: u32;
        // SAFETY: as for `sync_threads`.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred %p;",
                "setp.ne.u32 %p, {pred}, 0;",
                "barrier.red.popc.u32 {count}, 0, %p;",
                "}}",
                pred = in(reg32) predicate as u32,
                count = out(reg32) count,
                options(nostack, preserves_flags)
            );
        }
        count
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        predicate as u32
    }
}

/// [`sync_threads`], returning whether every thread of the block passed
/// `true` (`__syncthreads_and`).
///
/// ```
/// assert!(!cuda_mem::device::sync_threads_and(false));
/// ```
#[inline(always)]
pub fn sync_threads_and(predicate: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let all: u32;
        // SAFETY: as for `sync_threads`.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred %p, %q;",
                "setp.ne.u32 %p, {pred}, 0;",
                "barrier.red.and.pred %q, 0, %p;",
                "selp.u32 {all}, 1, 0, %q;",
                "}}",
                pred = in(reg32) predicate as u32,
                all = out(reg32) all,
                options(nostack, preserves_flags)
            );
        }
        all != 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        predicate
    }
}

/// [`sync_threads`], returning whether any thread of the block passed
/// `true` (`__syncthreads_or`).
///
/// ```
/// assert!(cuda_mem::device::sync_threads_or(true));
/// ```
#[inline(always)]
pub fn sync_threads_or(predicate: bool) -> bool {
    #[cfg(target_arch = "nvptx64")]
    {
        let any: u32;
        // SAFETY: as for `sync_threads`.
        unsafe {
            core::arch::asm!(
                "{{",
                ".reg .pred %p, %q;",
                "setp.ne.u32 %p, {pred}, 0;",
                "barrier.red.or.pred %q, 0, %p;",
                "selp.u32 {any}, 1, 0, %q;",
                "}}",
                pred = in(reg32) predicate as u32,
                any = out(reg32) any,
                options(nostack, preserves_flags)
            );
        }
        any != 0
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        predicate
    }
}

/// A sequentially consistent fence for `scope` (`fence.sc.cta`, `.gpu`,
/// `.sys`; `Scope::Device` is CUDA's `__threadfence()`): the calling
/// thread's memory accesses before it are ordered before those after it, as
/// seen by the threads of `scope`. Publish data, then [`fence`], then set a
/// flag with an atomic; read the flag, [`fence`], then read the data.
///
/// ```
/// use cuda_mem::device::{fence, Scope};
/// fence(Scope::Device);
/// fence(Scope::Block);
/// fence(Scope::System);
/// ```
#[inline(always)]
pub fn fence(scope: Scope) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence only orders memory accesses; not `nomem`, so the
    // compiler keeps accesses on their side of it too.
    unsafe {
        match scope {
            Scope::Block => core::arch::asm!("fence.sc.cta;", options(nostack, preserves_flags)),
            Scope::Device => core::arch::asm!("fence.sc.gpu;", options(nostack, preserves_flags)),
            Scope::System => core::arch::asm!("fence.sc.sys;", options(nostack, preserves_flags)),
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = scope;
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// Suspends the calling thread for about `nanoseconds` (PTX `nanosleep`,
/// at most 1 ms; the hardware may wake it earlier or later): the back-off
/// of a thread that polls a flag another block sets, so that its loads do
/// not crowd the memory system that the block it waits for is using. On
/// other targets it returns at once.
///
/// ```
/// // A bounded poll with a growing back-off.
/// let mut delay = 32;
/// for _ in 0..3 {
///     cuda_mem::device::nanosleep(delay);
///     delay = (delay * 2).min(1024);
/// }
/// ```
#[inline(always)]
pub fn nanosleep(nanoseconds: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `nanosleep` suspends the thread only; it touches no memory.
    unsafe {
        core::arch::asm!(
            "nanosleep.u32 {t};",
            t = in(reg32) nanoseconds,
            options(nostack, preserves_flags, nomem)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = nanoseconds;
    }
}
