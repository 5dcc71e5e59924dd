//! The capture: [`Graph::capture`](crate::Graph::capture) records what its
//! closure queues (registered as cuda-mem's own capture, so that only the
//! listed buffers are recorded), and [`Capturing`] ends the capture on every
//! path, checking that it is still the one begun here.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::context::ContextState;
use crate::error::{Error, Result};
use crate::graph::executable::Graph;
use crate::graph::held::{HeldBuffers, Recorded};
use crate::graph::memory_nodes::OwnedMemory;
use crate::graph::raw;
use crate::graph::recording::{Recorder, NEXT_ID};
use crate::order::capture::{Allowed, Registration};

/// Ends a capture on drop (also when the recording closure panics), so the
/// stream never stays capturing.
struct Capturing<'s> {
    stream: &'s CudaStream,
    registration: Option<Registration>,
    /// The id of the capture sequence begun here.
    ours: u64,
}

impl Capturing<'_> {
    /// Ends the capture: the graph, and what it must keep.
    fn end(mut self) -> (Result<sys::CUgraph>, Vec<Box<dyn Any + Send>>) {
        let graph = self.end_ours();
        let kept = self
            .registration
            .take()
            .map(Registration::end)
            .unwrap_or_default();
        (graph, kept)
    }

    /// Ends the capture begun here, after checking that it is still the
    /// one the stream records.
    ///
    /// The recording closure has the stream, and cudarc's safe
    /// `CudaStream::end_capture` ends any capture: it would hand the user an
    /// executable graph of the recorded operations, which entered no
    /// allocation's order (nothing ran) and which nothing holds, so it could
    /// be launched after the buffers are freed; and operations queued after
    /// it would run at once, unordered. Neither can be undone, and the
    /// buffers go back to the caller when this returns: the process is
    /// aborted instead (a capture that the driver invalidated is still ours
    /// and ends with an `Err`).
    fn end_ours(&self) -> Result<sys::CUgraph> {
        use sys::CUstreamCaptureStatus::*;
        match raw::capture_info(self.stream) {
            // Ours, still recording.
            Ok((CU_STREAM_CAPTURE_STATUS_ACTIVE, id, _)) if id == self.ours => {}
            // Ended by someone else (and maybe another begun).
            Ok((CU_STREAM_CAPTURE_STATUS_NONE | CU_STREAM_CAPTURE_STATUS_ACTIVE, _, _)) => stolen(),
            // The driver gives no id for an invalidated capture, whose end
            // is an `Err` (no graph comes out); a failed query leaves the
            // end to say. Not caught: a capture ended through cudarc, then
            // a new one begun and invalidated on the same stream inside the
            // closure, or ended and re-begun by another thread between this
            // check and the end below.
            _ => {}
        }
        raw::end_capture(self.stream)
    }
}

/// See [`Capturing::end_ours`].
#[cold]
fn stolen() -> ! {
    eprintln!(
        "cuda-mem: the capture of Graph::capture was ended by someone else (cudarc's \
         end_capture on the capturing stream?); the operations it recorded hold no buffer and \
         could run after the buffers are freed: aborting"
    );
    std::process::abort()
}

impl Drop for Capturing<'_> {
    fn drop(&mut self) {
        if let Some(registration) = self.registration.take() {
            if let Ok(graph) = self.end_ours() {
                raw::destroy_graph(graph);
            }
            // Released once the stream records no more: memory dropped
            // inside the capture is freed behind its queued work.
            drop(registration.end());
        }
    }
}

impl<A: Recorded> Graph<A> {
    /// Records what `record` queues on `stream` into a graph that holds
    /// `buffers` (a tuple of `&mut` buffers the graph may write and `&`
    /// buffers it only reads; see [`Recorded`]).
    ///
    /// `record` gets a [`Recorder`] (it derefs to `stream`, so
    /// `buf.fill_async(v, rec)` queues there) and the buffers as [`Held`](crate::Held)
    /// handles (`&` for shared ones), and queues their operations
    /// (`fill_async`, `copy_from_async`, `copy_from_host_async` from pinned
    /// memory, kernel launches with them as arguments, ...) on `stream`.
    /// Nothing runs now: each [`launch`](Graph::launch) runs it all. Memory
    /// the graph allocates itself comes from the recorder:
    /// [`temporary`](Recorder::temporary) (freed inside the graph) and
    /// [`output`](Recorder::output) (kept until the next launch).
    ///
    /// `stream` is a cudarc stream (from `ctx.new_stream()`), not a
    /// [`Stream`](crate::Stream), which nothing may capture (its calls
    /// skip the capture check); the graph may be launched on either.
    ///
    /// ```no_run
    /// use cuda_mem::prelude::*;
    /// use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let src = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3])?;
    /// let mut dst = DeviceBuffer::<u32>::new(&ctx, 3)?;
    /// let mut graph = Graph::capture(&stream, (&src, &mut dst), |s, (src, mut dst)| {
    ///     dst.copy_from_async(src, s)
    /// })?;
    /// graph.launch(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(UnsupportedStream)` for a stream cuda-mem cannot order (the
    /// legacy or per-thread default stream, one that is capturing already);
    /// `Err(ContextMismatch)` and others for the stream as every operation
    /// checks it. Inside the capture, an operation on memory not in
    /// `buffers`, a use of a listed buffer on another stream or from the host,
    /// and every error of an operation are returned by the operation; the
    /// error `record` returns ends the capture, discards what was recorded,
    /// and is returned here, with `stream` usable as before. A capture that
    /// the driver invalidated (a host-synchronous call such as
    /// `stream.synchronize()` inside it) is an `Err` too.
    pub fn capture(
        stream: &Arc<CudaStream>,
        mut buffers: A,
        record: impl FnOnce(&Recorder<'_>, HeldBuffers<'_, A>) -> Result<()>,
    ) -> Result<Self> {
        let state = ContextState::of(stream.context())?;
        if stream.cu_stream().is_null() {
            return Err(Error::UnsupportedStream(
                "the legacy default stream cannot capture a graph; use a stream from `ctx.new_stream()`",
            ));
        }
        state.check_stream(stream)?;
        // Loaded now: a fill recorded below only launches the kernels.
        crate::engine::fill::preload(&state)?;
        let mut listed = crate::graph::held::sealed::Parts::new();
        buffers.list(&mut listed);
        let allowed = listed
            .iter()
            .map(|p| Allowed {
                key: p.mem.order.key(),
                range: p.range.clone(),
            })
            .collect();
        drop(listed);
        let registration = Registration::begin(stream, allowed)?;
        state.bind()?;
        raw::begin_capture(stream)?;
        let ours = match raw::capture_info(stream) {
            Ok((sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE, id, graph))
                if !graph.is_null() =>
            {
                id
            }
            other => {
                if let Ok(graph) = raw::end_capture(stream) {
                    raw::destroy_graph(graph);
                }
                other?;
                return Err(Error::InvalidArgument(
                    "the stream did not start capturing (a bug in cuda-mem; please report it)",
                ));
            }
        };
        // Declared before `capturing`, so dropped after it if `record`
        // unwinds: the capture ends and its list of allowed memory goes
        // before the outputs and temporaries are freed (a freed output's key,
        // still listed, could match a new allocation at the same address).
        let recorder = Recorder {
            stream,
            state: &state,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            outputs: RefCell::new(Vec::new()),
            temporaries: RefCell::new(Vec::new()),
            nodes: Cell::new(0),
        };
        let capturing = Capturing {
            stream,
            registration: Some(registration),
            ours,
        };
        let recorded =
            record(&recorder, buffers.__held()).and_then(|()| recorder.free_temporaries());
        let (graph, kept) = capturing.end();
        let (id, outputs, memory_nodes) = recorder.finish();
        let never_launched = |outputs: Vec<Box<dyn OwnedMemory>>| {
            outputs.into_iter().for_each(|o| o.never_allocated());
        };
        let graph = match (recorded, graph) {
            (Ok(()), Ok(graph)) => graph,
            (Ok(()), Err(e)) => {
                never_launched(outputs);
                return Err(e);
            }
            (Err(e), graph) => {
                if let Ok(graph) = graph {
                    raw::destroy_graph(graph);
                }
                never_launched(outputs);
                return Err(e);
            }
        };
        let exec = match raw::instantiate(graph, !outputs.is_empty()) {
            Ok(exec) => exec,
            Err(e) => {
                raw::destroy_graph(graph);
                never_launched(outputs);
                return Err(e);
            }
        };
        Ok(Self {
            buffers,
            state,
            graph,
            exec,
            kept,
            last: None,
            outputs_live: false,
            ordered: None,
            memory_nodes,
            id,
            outputs,
        })
    }
}
