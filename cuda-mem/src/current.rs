//! The calling thread's current context: making a context current
//! ([`bind`], which every operation that needs one calls), and queuing a
//! driver call on a stream as its context's work without making that
//! context current ([`on_stream`]).

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::error::{DriverResultExt, Result};

/// Makes `ctx` current on the calling thread: cudarc's `bind_to_thread`
/// (the errors recorded in the context are returned, and cleared, first;
/// the context is set only when another one is current), with the common
/// case, `ctx` current already, inlined into every operation.
#[inline]
pub(crate) fn bind(ctx: &CudaContext) -> Result<()> {
    if is_current(ctx) {
        return ctx.check_err().op("cuCtxSetCurrent");
    }
    bind_other(ctx)
}

/// Whether `ctx` is the calling thread's current context (`false` when the
/// driver cannot say).
#[inline(always)]
fn is_current(ctx: &CudaContext) -> bool {
    let mut current = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the call only reads this thread's current
    // context.
    let asked = unsafe { sys::cuCtxGetCurrent(&mut current) };
    asked == sys::CUresult::CUDA_SUCCESS && current == ctx.cu_ctx()
}

/// [`bind`] when `ctx` is not current (or the driver could not say).
#[cold]
#[inline(never)]
fn bind_other(ctx: &CudaContext) -> Result<()> {
    ctx.bind_to_thread().op("cuCtxSetCurrent")
}

/// The stream handles that name no context of their own: the null stream,
/// `CU_STREAM_LEGACY` (1) and `CU_STREAM_PER_THREAD` (2). Work queued on
/// them goes to the calling thread's current context.
const CURRENT_CONTEXT_STREAMS: usize = 2;

/// Runs `call`, a driver call that queues work on `stream` (it is given the
/// stream's handle), as the stream's context's work, and labels its error
/// with `op`.
///
/// A stream names its context, and the driver queues stream work in that
/// context whatever context is current on the calling thread (measured on
/// the H200, driver 580: memsets, copies and launches on a stream of one
/// context, with another context or none current, succeed and land in the
/// stream's). So the common case makes no context current first: it
/// returns the errors recorded in the context (as [`bind`] does) and makes
/// the call. Two cases bind first, as every call did before:
/// - the handles that name no context ([`CURRENT_CONTEXT_STREAMS`]: a
///   context's default stream in cudarc is the null stream), whose work
///   goes to the current context;
/// - a failed call while another context is current (a driver that wants
///   the stream's context current): it is bound and the call made again.
///   A call that fails with its context current fails as it is. (Inside a
///   graph capture, a driver that failed the call may have invalidated
///   the capture already: the retry does not undo that. The measured
///   driver never fails these calls so.)
#[inline(always)]
pub(crate) fn on_stream(
    stream: &CudaStream,
    op: &'static str,
    call: impl Fn(sys::CUstream) -> sys::CUresult,
) -> Result<()> {
    let (ctx, s) = (stream.context(), stream.cu_stream());
    if s as usize <= CURRENT_CONTEXT_STREAMS {
        bind(ctx)?;
        return call(s).result().op(op);
    }
    ctx.check_err().op("cuCtxSetCurrent")?;
    match call(s) {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        failed => retry_bound(ctx, s, failed, op, &call),
    }
}

/// [`on_stream`] after `call` failed with `failed`: made again with the
/// stream's context current, unless it was current already.
#[cold]
#[inline(never)]
fn retry_bound(
    ctx: &CudaContext,
    s: sys::CUstream,
    failed: sys::CUresult,
    op: &'static str,
    call: &dyn Fn(sys::CUstream) -> sys::CUresult,
) -> Result<()> {
    if is_current(ctx) {
        return failed.result().op(op);
    }
    bind_other(ctx)?;
    call(s).result().op(op)
}

/// Runs `f`, then makes the context that was current before it current
/// again (or none, if none was): for drops of cudarc objects whose
/// destructors make their context current (a `CudaStream`'s does), where
/// the caller's operation itself leaves the current context alone. Costs
/// a driver query, and a second and a set only if `f` changed it.
///
/// # Safety
/// `f` does not destroy the context that is current when it starts.
pub(crate) unsafe fn keeping_current<R>(f: impl FnOnce() -> R) -> R {
    let mut before = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the call only reads this thread's
    // current context.
    let asked = unsafe { sys::cuCtxGetCurrent(&mut before) };
    let r = f();
    let mut after = std::ptr::null_mut();
    // SAFETY: as above.
    let asked_again = unsafe { sys::cuCtxGetCurrent(&mut after) };
    if asked == sys::CUresult::CUDA_SUCCESS
        && asked_again == sys::CUresult::CUDA_SUCCESS
        && after != before
    {
        // SAFETY: `before` was current on this thread when `f` started
        // (null: none), and `f` did not destroy it (the caller's promise).
        // A failed set leaves `f`'s context current, as without this.
        let _ = unsafe { sys::cuCtxSetCurrent(before) };
    }
    r
}
