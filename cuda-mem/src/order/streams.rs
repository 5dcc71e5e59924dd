//! Which streams cuda-mem can order work on: [`check_orderable`] refuses the
//! per-thread and legacy default streams (one handle, several streams) and a
//! stream capturing a CUDA graph outside cuda-mem's own capture;
//! [`is_capturing`] asks the driver whether a stream is capturing; the
//! sealed contexts ([`sealed_context`]) are where the streams of
//! [`Stream`](crate::Stream) live, which no capture can reach, so
//! [`check_orderable`] does not ask about them; [`AsStream`] is what the
//! calls that queue work take for their stream.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::error::{DriverResultExt, Error, Result};
use crate::order::capture;

/// The most sealed contexts a process makes: one per device.
const MAX_SEALED: usize = 64;

/// The sealed contexts, one per device, made on the first
/// [`Stream`](crate::Stream) of each and kept until the process exits (so
/// that no other `CudaContext` can ever sit at one's address).
static SEALED: Mutex<Vec<Arc<CudaContext>>> = Mutex::new(Vec::new());

/// The addresses of [`SEALED`]'s contexts, for the lock-free test of every
/// operation's stream ([`is_sealed`]): the first [`SEALED_COUNT`] are set,
/// each before the count that covers it is published.
static SEALED_AT: [AtomicPtr<CudaContext>; MAX_SEALED] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_SEALED];
/// How many of [`SEALED_AT`] are set, and [`JOINED`], in one word: the
/// test of every operation's stream is one load.
static SEALED_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Set in [`SEALED_COUNT`] once a [`Stream`](crate::Stream)'s stream was
/// found to have joined a capture (see [`refuse_joined`]): from then on, no
/// stream counts as sealed, and every call asks the driver again.
const JOINED: usize = 1 << (usize::BITS - 1);

/// The sealed context of `ctx`'s device: a second `CudaContext` for the
/// same primary context, whose `Arc` cuda-mem never hands out, so that a
/// stream made from it (a [`Stream`](crate::Stream)'s) can reach a capture
/// only through cuda-mem: cudarc's safe `begin_capture` needs a
/// `&CudaStream`, which nothing gives out for such a stream, and every
/// stream of the context is one cuda-mem made. Made on first use.
///
/// `Err(NotSupported)` for a context that is not its device's primary one
/// (cudarc makes no second handle of it). The caller has made the
/// context's state (`ContextState::of`) from `ctx` first, so that the
/// state never holds the sealed handle (`ContextState::lookup` refuses it).
pub(crate) fn sealed_context(ctx: &Arc<CudaContext>) -> Result<Arc<CudaContext>> {
    if !ctx.is_primary() {
        return Err(Error::NotSupported(
            "a cuda_mem::Stream belongs to a device's primary context (cuda_mem::context or \
             cudarc's CudaContext::new); on this context, use a stream from ctx.new_stream()",
        ));
    }
    let mut sealed = SEALED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(found) = sealed.iter().find(|s| s.cu_ctx() == ctx.cu_ctx()) {
        return Ok(found.clone());
    }
    if sealed.len() == MAX_SEALED {
        return Err(Error::NotSupported(
            "this process already made cuda_mem::Streams on 64 devices; use streams from \
             ctx.new_stream() on the others",
        ));
    }
    let made = CudaContext::new(ctx.ordinal()).op("cuDevicePrimaryCtxRetain")?;
    if made.cu_ctx() != ctx.cu_ctx() {
        return Err(Error::NotSupported(
            "the device's primary context changed while a cuda_mem::Stream was made; make it again",
        ));
    }
    // SAFETY: no `CudaSlice` is ever made in this context (its `Arc` stays
    // in this module and in the streams of `Stream`s, which cuda-mem only
    // queues its own work on), so none needs cudarc's event tracking; off,
    // the first `new_stream` does not synchronise the whole context.
    unsafe { made.disable_event_tracking() };
    // Kept first, so that an address is published only while its context
    // is kept.
    let index = sealed.len();
    sealed.push(made.clone());
    SEALED_AT[index].store(Arc::as_ptr(&made).cast_mut(), Ordering::Relaxed);
    SEALED_COUNT.fetch_add(1, Ordering::Release);
    Ok(made)
}

/// Whether `ctx` is a sealed context (see [`sealed_context`]).
#[inline]
pub(crate) fn is_sealed_context(ctx: &CudaContext) -> bool {
    listed(ctx, SEALED_COUNT.load(Ordering::Acquire))
}

/// Whether `ctx` is among the first `count` (a load of [`SEALED_COUNT`],
/// whose [`JOINED`] bit is ignored) of [`SEALED_AT`].
#[inline(always)]
fn listed(ctx: &CudaContext, count: usize) -> bool {
    let ctx = std::ptr::from_ref(ctx).cast_mut();
    SEALED_AT[..(count & !JOINED).min(MAX_SEALED)]
        .iter()
        .any(|at| at.load(Ordering::Relaxed) == ctx)
}

/// Whether `stream` belongs to a sealed context (see [`sealed_context`]):
/// a [`Stream`](crate::Stream)'s, which no capture can reach, and which
/// cuda-mem's calls therefore do not ask about.
#[inline(always)]
pub(crate) fn is_sealed(stream: &CudaStream) -> bool {
    // One load: whether any `Stream` was made, whether a join was seen,
    // and how many addresses to look through.
    let count = SEALED_COUNT.load(Ordering::Acquire);
    count != 0 && count & JOINED == 0 && listed(stream.context(), count)
}

/// After `stream` waited for an event of another stream (the ledger's
/// hand-over, `order::wait_for`): refuses the operation if `stream` is a
/// [`Stream`](crate::Stream)'s and has joined a graph capture by that wait.
///
/// `OrderState::record_on` asks whether the other stream is capturing
/// before it records the event there, but another thread's cudarc
/// `begin_capture` can start a capture on it in between: the event is then
/// recorded in the capture, and the stream that waits for it joins the
/// capture. A cudarc stream's next call would see that and be refused; a
/// `Stream`'s calls do not ask, so the join is caught here, where it
/// happens, before the operation is queued: refused, and from then on
/// every call on every stream asks the driver again ([`JOINED`]).
#[inline]
pub(crate) fn refuse_joined(stream: &CudaStream) -> Result<()> {
    if !is_sealed(stream) || !ask_capturing(stream)? {
        return Ok(());
    }
    SEALED_COUNT.fetch_or(JOINED, Ordering::SeqCst);
    Err(Error::UnsupportedStream(
        "a cuda_mem::Stream waited for a stream on which another thread began a CUDA graph \
         capture meanwhile, which made it join the capture; the operation was not queued; end \
         that capture, and do not share memory with a stream while it begins one",
    ))
}

/// Refuses a stream whose work cuda-mem cannot order against the other uses
/// of an allocation:
///
/// - the per-thread default stream (handle `0x2`): one handle that is a
///   different stream on every thread, so two uses from two threads look
///   like one stream and would not be ordered;
/// - the legacy default stream passed by handle (`0x0`, `0x1`): cuda-mem
///   queues its own stream-less calls there, in its own order; work a caller
///   queues on it through its own handle is refused like the per-thread one,
///   so that only streams with one identity reach the ordering;
/// - a stream that is capturing a CUDA graph (cudarc's `begin_capture`):
///   work recorded there runs later, at every launch of the graph, where
///   cuda-mem cannot order it (and may run after the buffer is freed).
///   Only a capture of cuda-mem's own (`Graph::capture`, see `capture`)
///   passes: its graph holds and orders the memory it records.
///
/// A [`Stream`](crate::Stream)'s stream ([`is_sealed`]) is not asked about:
/// nothing can begin a capture on it (`Graph::capture` takes cudarc
/// streams only), nor make it wait for an event of a capturing stream
/// (cuda-mem's own waits refuse those, see `OrderState::record_on`).
#[inline]
pub(crate) fn check_orderable(stream: &CudaStream) -> Result<()> {
    // Every operation's path: one driver call (none for a `Stream`), and
    // the refusals (and the error of a failed call) out of line.
    if stream.cu_stream() as usize > 2 && (is_sealed(stream) || not_capturing(stream)) {
        return Ok(());
    }
    refuse(stream)
}

/// Whether the driver says that `stream`, not a legacy default stream, is
/// not capturing a CUDA graph: `false` when it is, and when the call fails
/// (then [`refuse`] asks again and returns the error).
#[inline(always)]
fn not_capturing(stream: &CudaStream) -> bool {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a live stream handle (the `CudaStream` is borrowed) and a valid
    // out-pointer; the call only reads the stream's capture state.
    let asked = unsafe { sys::cuStreamIsCapturing(stream.cu_stream(), &mut status) };
    asked == sys::CUresult::CUDA_SUCCESS
        && status == sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// [`check_orderable`]'s refusals: the default streams by handle, and a
/// capturing stream that no capture of cuda-mem's records on (asked again:
/// a capture that has ended since passes, as if checked a moment later; a
/// call that failed is made again, and its error returned if it fails again).
#[cold]
#[inline(never)]
fn refuse(stream: &CudaStream) -> Result<()> {
    match stream.cu_stream() as usize {
        0 | 1 => Err(Error::UnsupportedStream(
            "it is the legacy default stream, passed by handle; use a stream from \
             `ctx.new_stream()`, or the method without a stream argument (cuda-mem orders \
             those on the default stream itself)",
        )),
        2 => Err(Error::UnsupportedStream(
            "it is the per-thread default stream, which is a different stream on every \
             thread behind one handle; use a stream from `ctx.new_stream()`",
        )),
        _ if is_capturing(stream)? && !capture::is_recording(stream) => {
            Err(Error::UnsupportedStream(
                "it is capturing a CUDA graph, and work recorded there would replay later \
             without cuda-mem's ordering; end the capture first (or record on another stream)",
            ))
        }
        _ => Ok(()),
    }
}

/// Whether `stream` is capturing a CUDA graph (`cuStreamIsCapturing`). The
/// legacy default stream and a [`Stream`](crate::Stream)'s
/// ([`is_sealed`]) never capture.
#[inline]
pub(crate) fn is_capturing(stream: &CudaStream) -> Result<bool> {
    if stream.cu_stream().is_null() || is_sealed(stream) {
        return Ok(false);
    }
    ask_capturing(stream)
}

/// `cuStreamIsCapturing` of a stream that is not the legacy default one.
#[inline(always)]
fn ask_capturing(stream: &CudaStream) -> Result<bool> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a live stream handle (the `CudaStream` is borrowed) and a valid
    // out-pointer; the call only reads the stream's capture state.
    unsafe { sys::cuStreamIsCapturing(stream.cu_stream(), &mut status).result() }
        .op("cuStreamIsCapturing")?;
    Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}

/// The seal of [`AsStream`], and the token its method takes, so that only
/// cuda-mem can implement it or call it (the method hands out a
/// [`Stream`](crate::Stream)'s `CudaStream`).
pub(crate) mod sealed {
    pub trait Sealed {}

    /// Made by [`cuda_stream`](super::cuda_stream) alone.
    pub struct Token(pub(super) ());
}

/// A stream a cuda-mem call queues its work on: a [`Stream`](crate::Stream), cudarc's
/// `Arc<CudaStream>` (a stream from `ctx.new_stream()`), the
/// [`Recorder`](crate::graph::Recorder) of a graph capture, or a reference
/// to one of them. Sealed: implemented by cuda-mem only.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{AsStream, DeviceBuffer};
///
/// fn zero(buf: &mut DeviceBuffer<u32>, stream: &impl AsStream) -> cuda_mem::Result<()> {
///     buf.fill_async(0, stream)
/// }
///
/// let ctx = cuda_mem::context(0)?;
/// let mut buf = DeviceBuffer::<u32>::new(&ctx, 256)?;
/// zero(&mut buf, &ctx.new_stream()?)?;
/// zero(&mut buf, &cuda_mem::Stream::new(&ctx)?)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub trait AsStream: sealed::Sealed {
    /// The stream (cuda-mem's internal use).
    #[doc(hidden)]
    fn __cuda_stream(&self, token: sealed::Token) -> &Arc<CudaStream>;
}

/// The `CudaStream` of `stream`, for cuda-mem's internals: the one place
/// that makes the token.
#[inline(always)]
pub(crate) fn cuda_stream(stream: &(impl AsStream + ?Sized)) -> &Arc<CudaStream> {
    stream.__cuda_stream(sealed::Token(()))
}

impl sealed::Sealed for Arc<CudaStream> {}
impl AsStream for Arc<CudaStream> {
    #[inline(always)]
    fn __cuda_stream(&self, _: sealed::Token) -> &Arc<CudaStream> {
        self
    }
}

impl<S: AsStream + ?Sized> sealed::Sealed for &S {}
impl<S: AsStream + ?Sized> AsStream for &S {
    #[inline(always)]
    fn __cuda_stream(&self, token: sealed::Token) -> &Arc<CudaStream> {
        (**self).__cuda_stream(token)
    }
}
