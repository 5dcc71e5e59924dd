//! [`Stream`], a stream that only cuda-mem queues work on (what the calls
//! take for a stream, a `Stream` or cudarc's `Arc<CudaStream>`, is
//! [`AsStream`], `order::streams`').
//!
//! Every call on a cudarc stream asks the driver whether the stream is
//! capturing a CUDA graph (`cuStreamIsCapturing`, 15-18 ns on an H200's
//! host): cudarc's safe `begin_capture` can start a capture there at any
//! moment, and work recorded into it would replay later, after its memory
//! is freed. A `Stream` gives out no `CudaStream`, and its context handle
//! is one cuda-mem keeps to itself (see `order::streams::sealed_context`),
//! so nothing can begin a capture on it, and calls on it skip the query.

use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::order::streams::AsStream;

/// A stream for cuda-mem's work that costs no capture check: the calls that
/// take a stream accept it wherever they accept cudarc's `Arc<CudaStream>`
/// (see [`AsStream`]), and skip the driver query those make on every call
/// (`cuStreamIsCapturing`: whether cudarc's `begin_capture` started a graph
/// capture on the stream since the last call).
///
/// The price is that a `Stream` is cuda-mem's alone: it hands out no
/// `CudaStream` (so cudarc's calls, which could begin a capture on it,
/// cannot be given one), and [`Graph::capture`](crate::Graph::capture)
/// records on cudarc streams only (a graph recorded there may be launched
/// on a `Stream`). For cudarc's own work (its kernels, cuBLAS, NCCL), use a
/// stream from `ctx.new_stream()`; cuda-mem orders its buffers across both
/// kinds.
///
/// A `Stream` belongs to a device's primary context (the one
/// [`cuda_mem::context`](crate::context) returns). Clones are the same
/// stream; it is destroyed when the last clone, and the last operation
/// cuda-mem queued on it, are gone. An error the driver reports where no
/// call can return it (a failed destroy) is kept with the `Stream`s of the
/// device, not in `ctx` (`CudaContext::check_err`): the next call on any
/// `Stream` of the device returns it.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, Stream};
///
/// let ctx = cuda_mem::context(0)?;
/// let stream = Stream::new(&ctx)?;
/// let mut buf = DeviceBuffer::<f32>::new(&ctx, 1 << 20)?;
/// buf.fill_async(1.5, &stream)?;
/// stream.synchronize()?;
/// assert!(buf.to_vec()?.iter().all(|&x| x == 1.5));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// Nothing reaches the `CudaStream` inside, which is what lets calls skip
/// the check:
///
/// ```compile_fail,E0599
/// # let ctx = cuda_mem::context(0).unwrap();
/// let stream = cuda_mem::Stream::new(&ctx).unwrap();
/// stream.begin_capture(cuda_mem::cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED);
/// ```
#[derive(Clone)]
pub struct Stream {
    /// A stream of the sealed context (`order::streams::sealed_context`).
    stream: Arc<CudaStream>,
    /// The context the caller made the stream for.
    ctx: Arc<CudaContext>,
}

impl Stream {
    /// A new stream on `ctx`'s device (non-blocking, like cudarc's
    /// `new_stream`).
    ///
    /// # Errors
    ///
    /// `Err(NotSupported)` when `ctx` is not a device's primary context
    /// (a context cudarc made with `CudaContext::new_non_primary` or the
    /// like: use a stream from `ctx.new_stream()` there), and the driver's
    /// errors of making the stream.
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = cuda_mem::Stream::new(&ctx)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        // The context's state first, made from `ctx` if it is new: the
        // calls on the stream look the state up through the sealed handle,
        // which must never become the state's own (`ContextState::ctx`,
        // which buffers hand out).
        ContextState::of(ctx)?;
        let sealed = crate::order::streams::sealed_context(ctx)?;
        let stream = sealed.new_stream().op("cuStreamCreate")?;
        Ok(Self {
            stream,
            ctx: ctx.clone(),
        })
    }

    /// Blocks until every operation queued on the stream so far is done.
    ///
    /// ```no_run
    /// # let ctx = cuda_mem::context(0)?;
    /// let stream = cuda_mem::Stream::new(&ctx)?;
    /// stream.synchronize()?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().op("cuStreamSynchronize")
    }

    /// The context the stream was made for (the `ctx` of [`Stream::new`]).
    ///
    /// ```no_run
    /// # let ctx = cuda_mem::context(0)?;
    /// let stream = cuda_mem::Stream::new(&ctx)?;
    /// assert_eq!(stream.context().cu_ctx(), ctx.cu_ctx());
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The driver's handle of the stream, for raw driver calls.
    ///
    /// Such calls are `unsafe`, and here they promise one thing more than
    /// the driver asks: that they neither begin a graph capture on this
    /// stream (`cuStreamBeginCapture`) nor make it wait for an event
    /// recorded on a capturing stream (which would make it join the
    /// capture). cuda-mem's calls on a `Stream` rely on it never capturing
    /// (they skip the driver's check).
    ///
    /// ```no_run
    /// # let ctx = cuda_mem::context(0)?;
    /// let stream = cuda_mem::Stream::new(&ctx)?;
    /// assert!(!stream.cu_stream().is_null());
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn cu_stream(&self) -> sys::CUstream {
        self.stream.cu_stream()
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("cu_stream", &self.stream.cu_stream())
            .field("cu_ctx", &self.ctx.cu_ctx())
            .finish()
    }
}

impl crate::order::streams::sealed::Sealed for Stream {}
impl AsStream for Stream {
    #[inline(always)]
    fn __cuda_stream(&self, _: crate::order::streams::sealed::Token) -> &Arc<CudaStream> {
        &self.stream
    }
}
