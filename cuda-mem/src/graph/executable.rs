//! The executable graph and its launch: [`Graph`] (what it holds, how each
//! launch is ordered against the buffers' other work, its outputs between
//! launches, new fill values) and its drop, which waits for the last launch.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::buffers::buffer::PoolBuffer;
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::current::on_stream;
use crate::error::{DriverResultExt, Error, Result};
use crate::graph::held::{sealed::Part, Held, HeldBuffers, Recorded};
use crate::graph::memory_nodes::{output_of, Output, OwnedMemory};
use crate::graph::raw;
use crate::graph::recording::FillParam;
use crate::order::streams::AsStream;
use crate::order::StreamOrder;

/// Work recorded once and replayed with [`launch`](Graph::launch): buffer
/// operations (fills, memsets, copies, host copies through pinned memory)
/// and typed kernel launches ([`#[kernel]`](macro@crate::kernel)),
/// captured from a closure by [`Graph::capture`].
///
/// The graph holds the buffers it was given (`A`: `&mut` those it may
/// write, `&` those it only reads) for as long as it lives. A launch is
/// ordered like any operation on those buffers: it waits for their earlier
/// work on other streams, and their later work, host access and frees wait
/// for it.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, Graph};
///
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut a = DeviceBuffer::<f32>::new(&ctx, 1 << 20)?;
/// let mut b = DeviceBuffer::<f32>::new(&ctx, 1 << 20)?;
/// let mut graph = Graph::capture(&stream, (&mut a, &mut b), |s, (mut a, mut b)| {
///     a.fill_async(1.5, s)?;
///     b.copy_from_async(&a, s)?;
///     Ok(())
/// })?;
/// for _ in 0..100 {
///     graph.launch(&stream)?; // one driver call for the recorded work
/// }
/// drop(graph); // gives the buffers back
/// assert!(b.to_vec()?.iter().all(|&x| x == 1.5));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// The buffers stay borrowed while the graph lives: dropping one is a
/// compile error,
///
/// ```compile_fail,E0505
/// use cuda_mem::prelude::*;
/// # let ctx = cuda_mem::context(0)?;
/// # let stream = ctx.new_stream()?;
/// let mut a = cuda_mem::DeviceBuffer::<f32>::new(&ctx, 16)?;
/// let mut graph = cuda_mem::Graph::capture(&stream, (&mut a,), |s, (mut a,)| a.fill_async(1.0, s))?;
/// drop(a); // the graph still writes it
/// graph.launch(&stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// and so is reading one the graph writes from the host,
///
/// ```compile_fail,E0502
/// use cuda_mem::prelude::*;
/// # let ctx = cuda_mem::context(0)?;
/// # let stream = ctx.new_stream()?;
/// let mut out = cuda_mem::PinnedBuffer::<f32>::new(&ctx, 16)?;
/// let mut graph = cuda_mem::Graph::capture(&stream, (&mut out,), |s, (mut out,)| out.fill_async(1.0, s))?;
/// graph.launch(&stream)?;
/// let host = out.as_slice()?; // the graph may still write it
/// graph.launch(&stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// or with `to_vec`:
///
/// ```compile_fail,E0502
/// use cuda_mem::prelude::*;
/// # let ctx = cuda_mem::context(0)?;
/// # let stream = ctx.new_stream()?;
/// let mut out = cuda_mem::DeviceBuffer::<f32>::new(&ctx, 16)?;
/// let mut graph = cuda_mem::Graph::capture(&stream, (&mut out,), |s, (mut out,)| out.fill_async(1.0, s))?;
/// let host = out.to_vec()?;
/// graph.launch(&stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// Use [`buffers`](Graph::buffers) between launches instead. The recording
/// closure's handles cannot leave it either:
///
/// ```compile_fail,E0521
/// use cuda_mem::prelude::*;
/// # let ctx = cuda_mem::context(0)?;
/// # let stream = ctx.new_stream()?;
/// let mut a = cuda_mem::DeviceBuffer::<f32>::new(&ctx, 16)?;
/// let mut stash = None;
/// let graph = cuda_mem::Graph::capture(&stream, (&mut a,), |s, (a,)| {
///     stash = Some(a); // would outlive the recording
///     Ok(())
/// })?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct Graph<A: Recorded> {
    pub(super) buffers: A,
    pub(super) state: Arc<ContextState>,
    pub(super) graph: sys::CUgraph,
    pub(super) exec: sys::CUgraphExec,
    /// What the recorded work reads at every launch (fill values).
    pub(super) kept: Vec<Box<dyn Any + Send>>,
    /// The stream of the latest launch (`None` before the first): `Drop`
    /// waits for it.
    pub(super) last: Option<Arc<CudaStream>>,
    /// Whether the graph has memory nodes (temporaries, outputs).
    pub(super) memory_nodes: bool,
    /// This graph's [`Output`]s' tag.
    pub(super) id: u64,
    /// The memory nodes that the graph allocates and does not free
    /// ([`Recorder::output`](crate::Recorder::output)): allocated by each launch, freed before the
    /// next (or by `Drop`).
    pub(super) outputs: Vec<Box<dyn OwnedMemory>>,
    /// Whether `outputs` are allocated: by a launch, and not freed since.
    pub(super) outputs_live: bool,
    /// The sum of the held memory's [`StreamOrder::changes`] right after
    /// the latest launch ordered it (see `launch`).
    pub(super) ordered: Option<u64>,
}

// SAFETY: the driver handles may be used from any thread (never from two at
// once: launches take `&mut self`); the buffers are `A`'s to be sent.
unsafe impl<A: Recorded + Send> Send for Graph<A> {}

impl<A: Recorded> Graph<A> {
    /// Runs the recorded work on `stream` (any stream of the graph's
    /// context that cuda-mem can order), after earlier work on the graph's
    /// buffers; later work on them, host access and their frees wait for it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # let ctx = cuda_mem::context(0)?;
    /// # let (s1, s2) = (ctx.new_stream()?, ctx.new_stream()?);
    /// # let mut a = cuda_mem::DeviceBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = cuda_mem::Graph::capture(&s1, (&mut a,), |s, (mut a,)| a.fill_async(3, s))?;
    /// graph.launch(&s1)?;
    /// graph.launch(&s2)?; // waits for the launch on s1 (the same buffer)
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The stream's errors as for any operation (another context, a stream
    /// cuda-mem cannot order, one that is capturing), `Err` when a listed
    /// buffer is being recorded into another graph right now, and the
    /// driver's errors.
    pub fn launch(&mut self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        // Refuses every capturing stream but one that cuda-mem records on.
        self.state.check_stream(stream)?;
        if crate::order::capture::is_recording(stream) {
            return Err(Error::UnsupportedStream(
                "it is capturing a graph; a graph is launched outside captures (record its \
                 operations into the new graph instead)",
            ));
        }
        let Self {
            buffers,
            outputs,
            outputs_live,
            exec,
            ordered,
            last,
            ..
        } = self;
        let (buffers, outputs, exec) = (&*buffers, &outputs[..], *exec);
        // The sum of the held memory's change counts (each only grows, so
        // the sum moves whenever one does). Visited, not listed: the
        // relaunch below needs no list.
        let changes = || {
            let mut sum = 0u64;
            buffers.visit(&mut |p: Part<'_>| sum = sum.wrapping_add(p.mem.order.changes()));
            for output in outputs {
                sum = sum.wrapping_add(output.part().mem.order.changes());
            }
            sum
        };
        // Every allocation and range, for the ledgers.
        let orders = || -> Vec<(&StreamOrder, Range<usize>)> {
            let mut listed = crate::graph::held::sealed::Parts::new();
            buffers.list(&mut listed);
            outputs.iter().for_each(|o| listed.push(o.part()));
            listed
                .into_iter()
                .map(|p| (&*p.mem.order, p.range))
                .collect()
        };
        // The previous launch's outputs, freed here rather than by the
        // driver at the launch (`AUTO_FREE_ON_LAUNCH`), so that every
        // allocation of the graph has a free that tools see.
        let freed = if *outputs_live { outputs } else { &[] };
        let mut queue = || -> Result<()> {
            // A failure below leaks what is left rather than freeing twice.
            *outputs_live = false;
            for output in freed.iter().map(|o| o.part()).filter(|o| o.mem.bytes > 0) {
                // SAFETY: an output the graph's latest launch allocated,
                // which nothing uses after the launch queued next (every
                // use queued before is ordered before `stream`; the graph
                // holds the output).
                unsafe { crate::memory::allocation::free_on_stream(output.mem.addr, stream) }?;
            }
            // Queued as the stream's context's work, that context current
            // or not, as kernel launches are (a driver that wants the
            // context current fails the call, and `on_stream` makes it again
            // bound). One `cuCtxGetCurrent` fewer per launch than binding
            // first: host instructions added to a graph of ten buffers 232 ->
            // 197 (`bash examples/host-cost/run graph`).
            // SAFETY: a live executable of the stream's context (checked
            // above); every buffer it touches is held by `self` and ordered
            // on `stream` (below); what else it reads is in `kept`.
            on_stream(stream, "cuGraphLaunch", |s| unsafe {
                sys::cuGraphLaunch(exec, s)
            })?;
            *outputs_live = true;
            Ok(())
        };
        // Relaunched on the stream of the latest launch, with no operation
        // ordered on any of the memory since that launch ordered it (and no
        // capture that could hold some of it): the memory's ledgers already
        // say what this launch would enter (work on `stream`, whose queue
        // orders this launch after the last), so they are left as they are.
        // Only reads of shared buffers can happen elsewhere meanwhile, which
        // need no order with the launch's (every write to held memory goes
        // through `&mut self`).
        let same_stream = last.as_ref().is_some_and(|last| Arc::ptr_eq(last, stream));
        let seen = changes();
        let unchanged = same_stream && *ordered == Some(seen) && !crate::order::capture::any();
        if unchanged {
            queue()?;
            if changes() != seen {
                // Another thread used a shared buffer meanwhile (a host
                // wait may have dropped the previous launch's entry): the
                // launch is entered now, as the slow path would have.
                *ordered = None;
                StreamOrder::run_all(&mut orders(), stream, || Ok(()))?;
                *ordered = Some(changes());
            }
        } else {
            *ordered = None;
            StreamOrder::run_all(&mut orders(), stream, || {
                queue()?;
                // Read while every order is locked: a change made after
                // this launch was entered shows as a different sum.
                *ordered = Some(changes());
                Ok(())
            })?;
        }
        if !same_stream {
            *last = Some(stream.clone());
        }
        Ok(())
    }

    /// The buffers the graph holds, between launches: [`Held`] handles for
    /// those it may write (every operation, and host access to pinned and
    /// unified memory, which waits for the launches), `&` for those it only
    /// reads.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut input = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// # let mut output = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut input, &mut output), |s, (input, mut output)| {
    ///     output.copy_from_async(&*input, s)
    /// })?;
    /// let (mut input, output) = graph.buffers();
    /// input.as_mut_slice()?.copy_from_slice(&[4, 3, 2, 1]);
    /// graph.launch(&stream)?;
    /// let (_, output) = graph.buffers();
    /// assert_eq!(output.as_slice()?, [4, 3, 2, 1]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn buffers(&mut self) -> HeldBuffers<'_, A> {
        self.buffers.__held()
    }

    /// An [`Output`] of this graph ([`Recorder::output`](crate::Recorder::output)): the memory its
    /// latest launch allocated and wrote, until the next launch (which
    /// frees it and allocates it again, at the same address, after every
    /// use of it queued before). Host access and other work on it wait for
    /// the launch.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let input = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3])?;
    /// let mut out = None;
    /// let mut graph = Graph::capture(&stream, (&input,), |rec, (input,)| {
    ///     let o = rec.output::<u32>(3)?;
    ///     rec.with_output(&o, |mut o| o.copy_from_async(input, rec))?;
    ///     out = Some(o);
    ///     Ok(())
    /// })?;
    /// let out = out.unwrap();
    /// graph.launch(&stream)?;
    /// assert_eq!(graph.output(&out)?.to_vec()?, [1, 2, 3]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(InvalidArgument)` before the first launch (the memory does not
    /// exist yet) and for an `Output` of another graph.
    pub fn output<T: DeviceCopy + Send + 'static>(
        &mut self,
        output: &Output<T>,
    ) -> Result<Held<'_, PoolBuffer<T>>> {
        if output.graph != self.id {
            return Err(Error::InvalidArgument(
                "this Output belongs to another graph; ask the graph that recorded it",
            ));
        }
        if !self.outputs_live {
            return Err(Error::InvalidArgument(
                "the graph has not been launched yet (or its latest launch failed), and its \
                 outputs are allocated by its launches; call launch first",
            ));
        }
        output_of(&mut self.outputs, output)
    }
}

impl<A: Recorded> Graph<A> {
    /// Changes the value of a fill recorded with
    /// [`Recorder::fill_param`](crate::Recorder::fill_param) for the launches
    /// queued after this call (those queued before keep the old value).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut a = cuda_mem::DeviceBuffer::<u32>::new(&ctx, 64)?;
    /// let mut param = None;
    /// let mut graph = cuda_mem::Graph::capture(&stream, (&mut a,), |rec, (mut a,)| {
    ///     param = Some(rec.fill_param(&mut a, 1u32)?);
    ///     Ok(())
    /// })?;
    /// graph.set_fill(&param.unwrap(), 7)?;
    /// graph.launch(&stream)?; // fills 7
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(InvalidArgument)` for a `FillParam` of another graph;
    /// `Err(NotSupported)` for a value that the recorded memset cannot
    /// write (its bytes must repeat with a period that divides the memset's
    /// element size, e.g. any value for a `u32` or `f32` memset).
    pub fn set_fill<T: DeviceCopy>(&mut self, param: &FillParam<T>, value: T) -> Result<()> {
        if param.graph != self.id {
            return Err(Error::InvalidArgument(
                "this FillParam belongs to another graph; ask the graph that recorded it",
            ));
        }
        let word = memset_value(crate::copy::device_copy::bytes_of(&value), param.width).ok_or(
            Error::NotSupported(
                "the recorded memset cannot write this value: its bytes do not repeat with a \
                 period dividing the memset's element size (record the fill with a value of \
                 the same kind)",
            ),
        )?;
        self.state.bind()?;
        raw::set_memset_value(
            self.exec,
            param.node as sys::CUgraphNode,
            param.width,
            word,
            self.state.ctx.cu_ctx(),
        )
    }
}

/// The memset value (of `width` bytes per element) that writes `value`,
/// if its bytes repeat with a period dividing `width`.
fn memset_value(value: &[u8], width: u32) -> Option<u32> {
    let period = crate::engine::fill::byte_period(value)?;
    if !(width as usize).is_multiple_of(period) {
        return None;
    }
    let mut word = [0u8; 4];
    for (i, b) in word.iter_mut().enumerate().take(width as usize) {
        *b = value[i % period];
    }
    Some(u32::from_le_bytes(word))
}

impl<A: Recorded> Drop for Graph<A> {
    fn drop(&mut self) {
        let _ = self.state.bind();
        // Launches of one executable run in order, so the last one's end is
        // all of theirs: waited for before anything they use is released.
        let finished = match &self.last {
            None => Ok(()),
            Some(stream) => wait_for(&self.state, stream),
        };
        if let Err(e) = finished {
            // Never free what a launch may still use: leak it all.
            crate::error::record_in(&self.state.ctx, Err(e));
            std::mem::forget(std::mem::take(&mut self.kept));
            std::mem::forget(std::mem::take(&mut self.outputs));
            return;
        }
        for output in std::mem::take(&mut self.outputs) {
            if self.outputs_live {
                // Freed stream-ordered behind its latest use, as any pool
                // buffer is.
                drop(output);
            } else {
                output.never_allocated();
            }
        }
        // SAFETY: the executable and graph this value owns, destroyed once,
        // after every launch of it has finished (waited above).
        unsafe {
            let _ = sys::cuGraphExecDestroy(self.exec);
        }
        raw::destroy_graph(self.graph);
        if self.memory_nodes {
            // The memory the graph's nodes kept cached goes back to the
            // device (`cuDeviceGraphMemTrim`; memory other graphs use stays).
            let _ = raw::trim_graph_memory();
        }
    }
}

/// Blocks until the work queued on `stream` so far is done; refused for a
/// stream that is capturing (an event recorded there would be a node).
fn wait_for(state: &ContextState, stream: &CudaStream) -> Result<()> {
    if crate::order::streams::is_capturing(stream)? {
        return Err(Error::UnsupportedStream(
            "a graph was dropped while the stream of its last launch is capturing a graph; its \
             executable and memory are leaked",
        ));
    }
    let event = state.ctx.new_event(None).op("cuEventCreate")?;
    event.record(stream).op("cuEventRecord")?;
    event.synchronize().op("cuEventSynchronize")
}

impl<A: Recorded> std::fmt::Debug for Graph<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("context", &self.state.ctx.cu_ctx())
            .field("kept_values", &self.kept.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::memset_value;

    #[test]
    fn a_fill_value_fits_a_memset_when_its_period_divides_the_element_size() {
        let f = 1.5f32.to_le_bytes();
        assert_eq!(memset_value(&f, 4), Some(1.5f32.to_bits()));
        assert_eq!(memset_value(&[7, 7, 7, 7], 4), Some(0x0707_0707));
        assert_eq!(memset_value(&[7], 1), Some(7));
        assert_eq!(memset_value(&[1, 2, 1, 2], 2), Some(0x0201));
        assert_eq!(memset_value(&[1, 2], 4), Some(0x0201_0201));
        // A 4-byte pattern in a 2-byte memset, and a period of 8.
        assert_eq!(memset_value(&f, 2), None);
        assert_eq!(memset_value(&1.5f64.to_le_bytes(), 4), None);
        assert_eq!(memset_value(&[1, 2, 3], 4), None);
    }
}
