//! [`Completion`]: a [`Future`] that resolves when the work queued on one or
//! more streams, up to the moment it was made, has finished.
//!
//! Each stream gets one `cuStreamAddCallback`, which the driver calls on a
//! thread of its own once everything queued before it is done (exactly once,
//! with the error status if the context failed). The callback counts itself
//! off and wakes the task that polled last; it makes no CUDA call and takes
//! one short lock. Nothing polls the GPU and no thread is started per future.
//!
//! The shared state is reference-counted: each queued callback owns one
//! count, so a future that is dropped or forgotten before its callbacks ran
//! leaves them a live state to count off (and a forgotten one leaks that
//! state, a few dozen bytes, when they have). Dropping a `Completion` cancels
//! nothing: the GPU work and the callbacks run on.

use std::ffi::c_void;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use cudarc::driver::{sys, CudaStream, DriverError};

use crate::error::{DriverResultExt, Error, Result};
use crate::order::streams::AsStream;
use crate::order::streams::{check_orderable, is_capturing};

/// A [`Future`] of the completion of GPU work: resolves to `Ok(())` once
/// every operation queued on its streams before it was made has finished, or
/// to the driver's error if the context failed meanwhile. Work queued later
/// is not waited for.
///
/// Make one for a stream with [`Completion::of_stream`] (after a typed
/// launch, a graph launch, or any `_async` call), or for all the queued work
/// on a buffer with [`Memory::completion`](crate::Memory::completion). It
/// needs no particular runtime: the driver's callback wakes whatever
/// [`Waker`] polled it last (tokio, async-std, `pollster`,
/// `futures::executor`).
///
/// Dropping it cancels nothing, and it borrows nothing: the memory, not the
/// future, keeps track of the work queued on it, so a buffer dropped while a
/// forgotten completion's work still runs waits for that work as always.
///
/// ```no_run
/// # async fn f() -> cuda_mem::Result<()> {
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut buf = cuda_mem::DeviceBuffer::<f32>::new(&ctx, 1 << 20)?;
/// buf.fill_async(1.0, &stream)?; // queued, returns at once
/// cuda_mem::Completion::of_stream(&stream)?.await?; // the thread is free meanwhile
/// # Ok(()) }
/// ```
#[must_use = "a completion does nothing unless awaited or polled"]
pub struct Completion {
    /// `None` when there was nothing to wait for.
    shared: Option<Arc<Shared>>,
}

/// What the callbacks and the future share.
struct Shared {
    state: Mutex<State>,
}

struct State {
    /// Callbacks still to run.
    pending: usize,
    /// The first error status a callback brought.
    failed: Option<sys::CUresult>,
    /// The task to wake when `pending` reaches 0.
    waker: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; a poisoned one is still
        // consistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Completion {
    /// The completion of the work queued on `stream` so far.
    ///
    /// `Err(UnsupportedStream)` for the per-thread or legacy default stream
    /// (use a stream of `ctx.new_stream()`) and for a stream that is
    /// capturing a graph (the callback would become a node of the graph:
    /// launch the graph, then make the completion on the stream it runs
    /// on).
    ///
    /// ```no_run
    /// # async fn f(stream: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let done = cuda_mem::Completion::of_stream(stream)?;
    /// done.await?; // in any async runtime
    /// # Ok(()) }
    /// ```
    pub fn of_stream(stream: &impl AsStream) -> Result<Self> {
        let stream = crate::order::streams::cuda_stream(stream);
        check_orderable(stream)?;
        // `check_orderable` asked the driver: the stream captures nothing,
        // or records a graph for cuda-mem, which the registry knows without
        // a second driver call.
        if crate::order::capture::is_recording(stream) {
            return Err(capturing());
        }
        Self::callbacks(std::slice::from_ref(stream))
    }

    /// The completion of the work queued so far on every stream of
    /// `streams`: for the streams with queued uses of a buffer, which
    /// cuda-mem ordered work on (the legacy default stream among them, where
    /// it queues the calls that take no stream).
    pub(crate) fn of_streams(streams: &[Arc<CudaStream>]) -> Result<Self> {
        if streams.is_empty() {
            return Ok(Self { shared: None });
        }
        for stream in streams {
            if is_capturing(stream)? {
                return Err(capturing());
            }
        }
        Self::callbacks(streams)
    }

    /// A completion woken by a callback queued on each of `streams`
    /// (none capturing: checked by the callers).
    fn callbacks(streams: &[Arc<CudaStream>]) -> Result<Self> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                pending: streams.len(),
                failed: None,
                waker: None,
            }),
        });
        for (queued, stream) in streams.iter().enumerate() {
            if let Err(e) = add_callback(stream, &shared) {
                // The callbacks not queued never come: count them off, so
                // that the ones queued can still finish the state.
                shared.lock().pending -= streams.len() - queued;
                return Err(e);
            }
        }
        Ok(Self {
            shared: Some(shared),
        })
    }

    /// Whether the work has finished (successfully or not), without
    /// waiting.
    ///
    /// ```no_run
    /// # fn f(done: cuda_mem::Completion) {
    /// if done.is_complete() { /* `.await` returns at once */ }
    /// # }
    /// ```
    pub fn is_complete(&self) -> bool {
        self.shared.as_ref().is_none_or(|s| s.lock().pending == 0)
    }
}

/// Queues the callback on `stream`, with one count of `shared` for it.
fn add_callback(stream: &CudaStream, shared: &Arc<Shared>) -> Result<()> {
    stream.context().bind_to_thread().op("cuCtxSetCurrent")?;
    let data = Arc::into_raw(shared.clone()) as *mut c_void;
    // SAFETY: a live stream of the context bound above; `on_done` takes the
    // count `data` holds, and the driver calls it exactly once.
    let queued = unsafe { sys::cuStreamAddCallback(stream.cu_stream(), Some(on_done), data, 0) }
        .result()
        .op("cuStreamAddCallback");
    if queued.is_err() {
        // SAFETY: the driver did not take `data`: the count is still ours.
        drop(unsafe { Arc::from_raw(data as *const Shared) });
    }
    queued
}

/// The stream callback: counts itself off and, as the last one, wakes the
/// task. On a driver thread: no CUDA call, and no unwinding out of it.
unsafe extern "C" fn on_done(_stream: sys::CUstream, status: sys::CUresult, data: *mut c_void) {
    // SAFETY: `data` is the count `add_callback` made for this one call.
    let shared = unsafe { Arc::from_raw(data as *const Shared) };
    let waker = {
        let mut state = shared.lock();
        state.pending -= 1;
        if status != sys::CUresult::CUDA_SUCCESS {
            state.failed.get_or_insert(status);
        }
        if state.pending == 0 {
            state.waker.take()
        } else {
            None
        }
    };
    if let Some(waker) = waker {
        // A waker that panics must not unwind into the driver.
        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| waker.wake()));
    }
}

impl Future for Completion {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<()>> {
        let Some(shared) = &self.shared else {
            return Poll::Ready(Ok(()));
        };
        let mut state = shared.lock();
        if state.pending == 0 {
            return Poll::Ready(match state.failed {
                None => Ok(()),
                Some(status) => Err(Error::driver("cuStreamAddCallback", DriverError(status))),
            });
        }
        match &state.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => state.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl std::fmt::Debug for Completion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completion")
            .field("complete", &self.is_complete())
            .finish()
    }
}

/// The refusal of a completion on a capturing stream.
fn capturing() -> Error {
    Error::UnsupportedStream(
        "it is capturing a CUDA graph, where a completion callback would be a node of the \
         graph; await the graph's launch instead (Completion::of_stream on the stream it is \
         launched on)",
    )
}

#[cfg(test)]
mod tests {
    //! The callbacks' bookkeeping, with the driver's calls of `on_done`
    //! made by hand (no GPU): counting off, the one wake, errors, forgotten
    //! futures and panicking wakers.

    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    struct Panics;

    impl Wake for Panics {
        fn wake(self: Arc<Self>) {
            panic!("a waker that panics");
        }
    }

    /// A completion waiting for `n` callbacks, and the data each callback
    /// gets (as `add_callback` makes them).
    fn pending(n: usize) -> (Completion, Vec<*mut c_void>) {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                pending: n,
                failed: None,
                waker: None,
            }),
        });
        let data = (0..n)
            .map(|_| Arc::into_raw(shared.clone()) as *mut c_void)
            .collect();
        (
            Completion {
                shared: Some(shared),
            },
            data,
        )
    }

    fn call(data: *mut c_void, status: sys::CUresult) {
        // SAFETY: `data` is a count made by `pending` for this one call.
        unsafe { on_done(std::ptr::null_mut(), status, data) };
    }

    fn poll(done: &mut Completion, waker: &Waker) -> Poll<Result<()>> {
        Pin::new(done).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn the_last_callback_wakes_the_last_waker_once() {
        let (mut done, data) = pending(3);
        let (first, last) = (Arc::new(Count::default()), Arc::new(Count::default()));
        assert!(poll(&mut done, &Waker::from(first.clone())).is_pending());
        assert!(poll(&mut done, &Waker::from(last.clone())).is_pending());
        let mut data = data.into_iter();
        call(data.next().unwrap(), sys::CUresult::CUDA_SUCCESS);
        call(data.next().unwrap(), sys::CUresult::CUDA_SUCCESS);
        assert!(!done.is_complete());
        assert_eq!(last.0.load(Ordering::SeqCst), 0);
        call(data.next().unwrap(), sys::CUresult::CUDA_SUCCESS);
        assert!(done.is_complete());
        assert_eq!(
            first.0.load(Ordering::SeqCst),
            0,
            "a replaced waker was woken"
        );
        assert_eq!(last.0.load(Ordering::SeqCst), 1);
        assert!(matches!(
            poll(&mut done, &Waker::from(last.clone())),
            Poll::Ready(Ok(()))
        ));
        assert_eq!(last.0.load(Ordering::SeqCst), 1, "woken after it resolved");
    }

    #[test]
    fn a_failed_stream_keeps_its_first_error() {
        let (done, data) = pending(2);
        call(data[0], sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        call(data[1], sys::CUresult::CUDA_ERROR_LAUNCH_FAILED);
        // The first error is kept, for `poll` to return as the driver's
        // error (whose message needs the driver's `cuGetErrorName`, so it is
        // not made here).
        let state = done.shared.as_ref().unwrap().lock();
        assert_eq!(state.pending, 0);
        assert_eq!(
            state.failed,
            Some(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
        );
        drop(state);
        assert!(done.is_complete());
    }

    #[test]
    fn callbacks_after_the_future_is_gone_find_a_live_state() {
        // Dropped before its callbacks ran.
        let (done, data) = pending(2);
        drop(done);
        for d in data {
            call(d, sys::CUresult::CUDA_SUCCESS);
        }
        // Forgotten: its count leaks, the callbacks' are given back.
        let (done, data) = pending(2);
        let weak = Arc::downgrade(done.shared.as_ref().unwrap());
        std::mem::forget(done);
        for d in data {
            call(d, sys::CUresult::CUDA_SUCCESS);
        }
        assert_eq!(
            weak.strong_count(),
            1,
            "only the forgotten future's count is left"
        );
    }

    #[test]
    fn a_waker_that_panics_does_not_unwind_into_the_driver() {
        let (mut done, data) = pending(1);
        assert!(poll(&mut done, &Waker::from(Arc::new(Panics))).is_pending());
        call(data[0], sys::CUresult::CUDA_SUCCESS);
        assert!(done.is_complete());
        let waker = Waker::from(Arc::new(Count::default()));
        assert!(matches!(poll(&mut done, &waker), Poll::Ready(Ok(()))));
    }

    #[test]
    fn nothing_to_wait_for_is_complete_at_once() {
        let mut done = Completion::of_streams(&[]).unwrap();
        assert!(done.is_complete());
        let waker = Waker::from(Arc::new(Count::default()));
        assert!(matches!(poll(&mut done, &waker), Poll::Ready(Ok(()))));
    }
}
