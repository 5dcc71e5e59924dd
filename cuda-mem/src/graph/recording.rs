//! Recording: the [`Recorder`] that the closure of
//! [`Graph::capture`](crate::Graph::capture) gets (the capturing stream, and
//! the graph's own memory nodes: temporaries and outputs), and the fills it
//! records whose value changes later ([`FillParam`]).

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::rc::Rc;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::buffers::buffer::PoolBuffer;
use crate::buffers::ops::MemoryMut;
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::graph::held::Held;
use crate::graph::memory_nodes::{output_of, Output, OwnedMemory};
use crate::graph::raw;
use crate::memory::raw::RawMemory;
use crate::order::capture::Allowed;

/// Tags for [`Output`]s: one per capture.
pub(super) static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fill recorded by [`Recorder::fill_param`], whose value
/// [`Graph::set_fill`](crate::Graph::set_fill) changes without recording the graph again.
pub struct FillParam<T> {
    pub(super) graph: u64,
    /// The memset node (a `CUgraphNode` of the graph).
    pub(super) node: usize,
    /// The memset's element size: 1, 2 or 4 bytes.
    pub(super) width: u32,
    pub(super) _t: PhantomData<fn(T)>,
}

impl<T> Clone for FillParam<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for FillParam<T> {}

impl<T> std::fmt::Debug for FillParam<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FillParam")
            .field("graph", &self.graph)
            .field("memset_bytes", &self.width)
            .finish()
    }
}

/// What the recording closure of [`Graph::capture`](crate::Graph::capture) gets besides the
/// buffers: the capturing stream (it derefs to `Arc<CudaStream>`, so
/// `buf.fill_async(v, rec)` queues on it) and the graph's own memory,
/// allocated by memory nodes of the graph: [`temporary`](Recorder::temporary)
/// (allocated and freed inside the graph) and [`output`](Recorder::output)
/// (kept until the next launch).
pub struct Recorder<'s> {
    pub(super) stream: &'s Arc<CudaStream>,
    pub(super) state: &'s Arc<ContextState>,
    pub(super) id: u64,
    /// Each in its own cell, so that work may use several at once.
    pub(super) outputs: RefCell<Vec<SharedOutput>>,
    /// The temporaries whose use has been recorded, freed (free nodes) at
    /// the end of the recording.
    pub(super) temporaries: RefCell<Vec<RawMemory>>,
    /// Memory nodes recorded so far.
    pub(super) nodes: Cell<usize>,
}

impl Drop for Recorder<'_> {
    /// Outputs left here belong to a recording that failed or unwound:
    /// their graph is discarded, so nothing ever allocated them.
    fn drop(&mut self) {
        for output in self.outputs.take() {
            if let Ok(output) = Rc::try_unwrap(output) {
                output.into_inner().never_allocated();
            }
        }
        self.temporaries
            .take()
            .into_iter()
            .for_each(RawMemory::never_allocated);
    }
}

/// An output while recording.
type SharedOutput = Rc<RefCell<Box<dyn OwnedMemory>>>;

impl std::ops::Deref for Recorder<'_> {
    type Target = Arc<CudaStream>;

    /// The capturing stream.
    fn deref(&self) -> &Arc<CudaStream> {
        self.stream
    }
}

impl crate::order::streams::sealed::Sealed for Recorder<'_> {}
/// A capture records on a cudarc stream (`Graph::capture` takes no
/// `Stream`), which the recorder also dereferences to.
impl crate::order::streams::AsStream for Recorder<'_> {
    #[inline(always)]
    fn __cuda_stream(&self, _: crate::order::streams::sealed::Token) -> &Arc<CudaStream> {
        self.stream
    }
}

impl std::fmt::Debug for Recorder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("stream", &self.stream.cu_stream())
            .finish_non_exhaustive()
    }
}

/// A temporary graph node's buffer until it is freed in the graph: if the
/// recording unwinds instead, the graph is discarded and nothing was ever
/// allocated.
struct Unfreed<'s, T: DeviceCopy>(Option<Box<PoolBuffer<T>>>, &'s CudaStream);

impl<T: DeviceCopy> Drop for Unfreed<'_, T> {
    fn drop(&mut self) {
        if let Some(buffer) = self.0.take() {
            // Off the capture's list before its box is freed: the key (the
            // box's address) may name another allocation next.
            crate::order::capture::forbid(self.1, buffer.elems().mem.order.key());
            buffer.into_raw().never_allocated();
        }
    }
}

impl Recorder<'_> {
    /// `len` elements that the graph allocates (a memory node), hands to
    /// `use_` to record work on, and frees (a free node) at the end of the
    /// graph, at every launch. Their contents are unspecified at first (any
    /// bytes are a valid `T`). Each is freed at the end of the graph rather
    /// than right after its use, so that no later allocation of the graph
    /// reuses its address (compute-sanitizer's memcheck misreports that as
    /// a leak): the temporaries of one graph do not share memory.
    ///
    /// ```no_run
    /// use cuda_mem::prelude::*;
    /// use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let a = DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3])?;
    /// let mut b = DeviceBuffer::<u32>::new(&ctx, 3)?;
    /// let mut graph = Graph::capture(&stream, (&a, &mut b), |rec, (a, mut b)| {
    ///     rec.temporary::<u32, _>(3, |mut tmp| {
    ///         tmp.copy_from_async(a, rec)?;
    ///         b.copy_from_async(&tmp, rec)
    ///     })
    /// })?;
    /// graph.launch(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(NotSupported)` without stream-ordered allocation, and the
    /// driver's errors of recording the nodes; `use_`'s error.
    pub fn temporary<T: DeviceCopy, R>(
        &self,
        len: usize,
        use_: impl FnOnce(Held<'_, PoolBuffer<T>>) -> Result<R>,
    ) -> Result<R> {
        let mut buffer = Unfreed(Some(self.node::<T>(len)?), self.stream);
        let result = match buffer.0.as_mut() {
            Some(b) => use_(Held(&mut **b)),
            None => unreachable!("set above"),
        };
        if let Some(b) = buffer.0.take() {
            // Off the capture's list while the box (whose address is the
            // key) still lives: once it is freed, the key may name another
            // allocation, of another thread, which must not be recorded.
            crate::order::capture::forbid(self.stream, b.elems().mem.order.key());
            self.temporaries.borrow_mut().push(b.into_raw());
        }
        result
    }

    /// `len` elements that the graph allocates (a memory node) and does not
    /// free: each launch allocates them (at one address, fixed for the
    /// graph's life) and leaves them, with what the launch wrote, for
    /// [`Graph::output`](crate::Graph::output) until the next launch frees them first. Record work
    /// on them with [`with_output`](Recorder::with_output).
    ///
    /// ```no_run
    /// use cuda_mem::prelude::*;
    /// use cuda_mem::Graph;
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let mut out = None;
    /// let mut graph = Graph::capture(&stream, (), |rec, ()| {
    ///     let o = rec.output::<f32>(1024)?;
    ///     rec.with_output(&o, |mut o| o.fill_async(0.5, rec))?;
    ///     out = Some(o);
    ///     Ok(())
    /// })?;
    /// graph.launch(&stream)?;
    /// let values = graph.output(&out.unwrap())?.to_vec()?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`temporary`](Recorder::temporary).
    pub fn output<T: DeviceCopy + Send + 'static>(&self, len: usize) -> Result<Output<T>> {
        let buffer: Box<dyn OwnedMemory> = self.node::<T>(len)?;
        let mut outputs = self.outputs.try_borrow_mut().map_err(|_| {
            Error::InvalidArgument(
                "Recorder::output inside with_output; create outputs before using them",
            )
        })?;
        outputs.push(Rc::new(RefCell::new(buffer)));
        Ok(Output {
            graph: self.id,
            index: outputs.len() - 1,
            _t: PhantomData,
        })
    }

    /// Records work on the [`Output`] `output` (one of this recording's):
    /// `use_` gets it as a [`Held`] pool buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let graph = cuda_mem::Graph::capture(&stream, (), |rec, ()| {
    ///     let (a, b) = (rec.output::<u8>(64)?, rec.output::<u8>(64)?);
    ///     rec.with_output(&a, |mut a| {
    ///         a.memset_async(7, rec)?;
    ///         rec.with_output(&b, |mut b| b.copy_from_async(&a, rec))
    ///     })
    /// })?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(InvalidArgument)` for an `Output` of another recording, or one
    /// `use_` already holds; `use_`'s error.
    pub fn with_output<T: DeviceCopy + Send + 'static, R>(
        &self,
        output: &Output<T>,
        use_: impl FnOnce(Held<'_, PoolBuffer<T>>) -> Result<R>,
    ) -> Result<R> {
        let cell = (output.graph == self.id)
            .then(|| self.outputs.borrow().get(output.index).cloned())
            .flatten()
            .ok_or(Error::InvalidArgument(
                "this Output was made by another graph's recording",
            ))?;
        let mut held = cell.try_borrow_mut().map_err(|_| {
            Error::InvalidArgument(
                "this Output is in use already (a with_output inside another for it)",
            )
        })?;
        let buffer = output_of(
            std::slice::from_mut(&mut *held),
            &Output::<T> {
                index: 0,
                ..*output
            },
        )?;
        use_(buffer)
    }

    /// Records `dst.fill_async(value, rec)` as a fill whose value
    /// [`Graph::set_fill`](crate::Graph::set_fill) can change later without a new capture (the
    /// fill's one memset node is updated in the executable). `dst` is a
    /// buffer or view the graph holds.
    ///
    /// ```no_run
    /// use cuda_mem::prelude::*;
    /// use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// let mut a = DeviceBuffer::<f32>::new(&ctx, 1 << 20)?;
    /// let mut param = None;
    /// let mut graph = Graph::capture(&stream, (&mut a,), |rec, (mut a,)| {
    ///     param = Some(rec.fill_param(&mut a, 0.5f32)?);
    ///     Ok(())
    /// })?;
    /// for step in 0..10 {
    ///     graph.set_fill(&param.unwrap(), step as f32)?;
    ///     graph.launch(&stream)?;
    /// }
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// `Err(NotSupported)` for a fill that is not one memset: a value whose
    /// bytes do not repeat every 1, 2 or 4 bytes (a kernel fill), an address
    /// not aligned to that period, or no elements; the fill's own errors.
    pub fn fill_param<T: DeviceCopy, M: MemoryMut<T> + ?Sized>(
        &self,
        dst: &mut M,
        value: T,
    ) -> Result<FillParam<T>> {
        let width = match dst.elems().fill_plan(&value) {
            crate::engine::fill::FillPlan::Memset8(_) => 1,
            crate::engine::fill::FillPlan::Memset16(_) => 2,
            crate::engine::fill::FillPlan::Memset32(_) => 4,
            _ => {
                return Err(Error::NotSupported(
                    "only a fill that is one memset can change its value in a graph: a value \
                     whose bytes repeat every 1, 2 or 4 bytes (any f32, u32, ...), over \
                     elements aligned to that, and at least one element",
                ))
            }
        };
        dst.fill_async(value, self.stream)?;
        let node = raw::last_node(self.stream)? as usize;
        Ok(FillParam {
            graph: self.id,
            node,
            width,
            _t: PhantomData,
        })
    }

    /// A memory node of `len` elements, listed as memory the capture may
    /// record work on.
    fn node<T: DeviceCopy>(&self, len: usize) -> Result<Box<PoolBuffer<T>>> {
        let bytes = crate::memory::raw::byte_len::<T>(len)?;
        let mem = RawMemory::graph_node(self.state.clone(), bytes, self.stream)?;
        // Boxed before its key is taken: the key is the order's address.
        let buffer = Box::new(PoolBuffer::<T>::from_raw(mem, len));
        let key = buffer.elems().mem.order.key();
        crate::order::capture::allow(
            self.stream,
            Allowed {
                key,
                range: 0..bytes,
            },
        );
        self.nodes.set(self.nodes.get() + 1);
        Ok(buffer)
    }

    /// Records the temporaries' free nodes, after all the recorded work (one
    /// stream: in order). At the end rather than after each one's use, so
    /// that no later allocation of the graph takes a temporary's address:
    /// compute-sanitizer's memcheck reports such an allocation (an output
    /// recorded after a temporary) as leaked once the graph is launched
    /// again. The price: the temporaries of one graph do not share memory.
    pub(super) fn free_temporaries(&self) -> Result<()> {
        let mut pending = self.temporaries.take().into_iter();
        for temporary in pending.by_ref() {
            if let Err(e) = temporary.free_graph_node(self.stream) {
                pending.for_each(RawMemory::never_allocated);
                return Err(e);
            }
        }
        Ok(())
    }

    /// The tag, the outputs and whether there are memory nodes, for the
    /// graph (every `with_output` has returned).
    pub(super) fn finish(self) -> (u64, Vec<Box<dyn OwnedMemory>>, bool) {
        let outputs = self
            .outputs
            .take()
            .into_iter()
            .filter_map(|cell| Rc::try_unwrap(cell).ok().map(RefCell::into_inner))
            .collect();
        (self.id, outputs, self.nodes.get() > 0)
    }
}
