//! CUDA graphs of cuda-mem work: [`Graph::capture`] records buffer
//! operations and typed kernel launches once, and [`Graph::launch`] replays
//! them, ordered against every other use of the buffers.
//!
//! # Why a replay is safe
//!
//! - **The graph holds its buffers.** The buffers are given to
//!   [`Graph::capture`] up front, as `&mut` (the graph may write them) or `&`
//!   (it only reads them), and the [`Graph`] keeps those borrows for as long
//!   as it lives: no buffer it records can be dropped, moved or touched from
//!   the host meanwhile (compile errors). The recording closure and
//!   [`Graph::buffers`] get them back as [`Held`] handles, which have the
//!   buffer operations but never give out the `&mut` itself (a
//!   `mem::swap` would free the recorded memory under the graph).
//! - **Only those buffers are recorded.** While the capture runs, the
//!   capturing stream is registered as cuda-mem's (module `capture`): an
//!   operation on it that touches memory not in the list is refused, and so
//!   is any use of a listed buffer on another stream or from the host. A
//!   stream that cudarc's `begin_capture` (or anything but this API) made
//!   capture is refused as before.
//! - **Nothing runs while recording, so nothing is entered then.** The
//!   recorded operations enter no allocation's order. Each
//!   [`launch`](Graph::launch) instead orders the launch's stream after
//!   earlier work on every listed byte range (on other streams) and then
//!   enters the launch as an operation on those ranges, exactly as one
//!   operation on all of them would: later work, host access and the frees
//!   wait for it.
//! - **Memory the graph allocates is the graph's.** Pool allocations on the
//!   capturing stream are memory nodes, which exist only while a launch
//!   runs (or, for an output, until the next launch), so
//!   `PoolBuffer::new` there is refused. [`Recorder::temporary`] allocates
//!   and frees one inside the graph, and its buffer cannot leave the
//!   closure it is lent to; [`Recorder::output`] leaves one allocated (the
//!   graph is instantiated to free it before each relaunch), reachable
//!   through [`Graph::output`] only after a launch, ordered like the
//!   graph's buffers and freed stream-ordered when the graph is dropped
//!   (or not at all if no launch ever allocated it).
//! - **Replays read nothing that is gone.** Fill values that a fill kernel
//!   reads from memory are copied into pinned memory the graph keeps; every
//!   other operation's values are parameters of its node.
//! - **Dropping the graph is safe at any time.** It waits for its last
//!   launch (launches of one executable run in order), then frees what the
//!   launches read (kept fill values), frees its outputs stream-ordered,
//!   destroys the executable and trims the device's cached graph memory;
//!   the buffers' orders still hold the launches, so whatever uses the
//!   buffers next waits for them too.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::ops::Range;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::buffers::buffer::{Buffer, HostAccessible, MemoryKind, PoolBuffer};
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::ops::{sealed::Engine, Memory, MemoryMut};
use crate::buffers::pitched::PitchedBuffer;
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::{Elems, View, ViewMut};
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::raw::RawMemory;
use crate::order::capture::{Allowed, Registration};
use crate::order::StreamOrder;

/// The thin layer over the driver's graph calls.
mod raw {
    use super::*;

    /// `cuStreamBeginCapture` in relaxed mode: the capture constrains the
    /// capturing stream only, so unrelated calls of this thread (an
    /// allocation, a synchronous copy elsewhere) do not break it.
    pub(super) fn begin_capture(stream: &CudaStream) -> Result<()> {
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
        // SAFETY: a live stream (borrowed), not capturing (checked by the caller).
        unsafe { sys::cuStreamBeginCapture_v2(stream.cu_stream(), mode).result() }
            .op("cuStreamBeginCapture")
    }

    /// `cuStreamEndCapture`: the graph recorded (or the error that broke the
    /// capture, whose partial graph is destroyed here). The stream is not
    /// capturing afterwards either way.
    pub(super) fn end_capture(stream: &CudaStream) -> Result<sys::CUgraph> {
        let mut graph = std::ptr::null_mut();
        // SAFETY: a live stream that this thread set capturing; `graph` is a
        // valid out-pointer.
        let ended = unsafe { sys::cuStreamEndCapture(stream.cu_stream(), &mut graph).result() };
        match ended {
            Ok(()) if !graph.is_null() => Ok(graph),
            Ok(()) => Err(Error::InvalidArgument(
                "the capture recorded no graph (a bug in cuda-mem; please report it)",
            )),
            Err(e) => {
                destroy_graph(graph);
                Err(Error::driver(
                    "cuStreamEndCapture (something inside the capture broke it: a host-synchronous \
                     call such as stream.synchronize() on the capturing stream, or work on it \
                     that a graph cannot hold; the stream is usable again)",
                    e,
                ))
            }
        }
    }

    /// `cuGraphInstantiate`; with `auto_free`, the memory nodes the graph
    /// does not free are freed before each relaunch
    /// (`CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`).
    pub(super) fn instantiate(graph: sys::CUgraph, auto_free: bool) -> Result<sys::CUgraphExec> {
        let flags = if auto_free {
            u64::from(
                sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0,
            )
        } else {
            0
        };
        let mut exec = std::ptr::null_mut();
        // SAFETY: a live graph; `exec` is a valid out-pointer.
        unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, flags).result() }
            .op("cuGraphInstantiate")?;
        Ok(exec)
    }

    /// `cuDeviceGraphMemTrim` of the current context's device.
    pub(super) fn trim_graph_memory() -> Result<()> {
        let mut device = 0;
        // SAFETY: a valid out-pointer; the caller bound the context.
        unsafe { sys::cuCtxGetDevice(&mut device).result() }.op("cuCtxGetDevice")?;
        // SAFETY: a valid device; only cached memory that no graph uses is freed.
        unsafe { sys::cuDeviceGraphMemTrim(device).result() }.op("cuDeviceGraphMemTrim")
    }

    /// The capture status of `stream`, and while it is active the unique
    /// id of its capture sequence and the graph it records into (the driver
    /// writes them only then).
    pub(super) fn capture_info(
        stream: &CudaStream,
    ) -> Result<(sys::CUstreamCaptureStatus, u64, sys::CUgraph)> {
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let (mut id, mut graph) = (0, std::ptr::null_mut());
        // SAFETY: a live stream; valid out-pointers (the dependencies are not asked for).
        unsafe {
            sys::cuStreamGetCaptureInfo_v2(
                stream.cu_stream(),
                &mut status,
                &mut id,
                &mut graph,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
            .result()
        }
        .op("cuStreamGetCaptureInfo")?;
        Ok((status, id, graph))
    }

    /// The node the capture on `stream` recorded last
    /// (`cuStreamGetCaptureInfo`: its one current dependency).
    pub(super) fn last_node(stream: &CudaStream) -> Result<sys::CUgraphNode> {
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let (mut id, mut deps, mut count) = (0, std::ptr::null(), 0usize);
        // SAFETY: a live stream; valid out-pointers (the graph is not asked for).
        unsafe {
            sys::cuStreamGetCaptureInfo_v2(
                stream.cu_stream(),
                &mut status,
                &mut id,
                std::ptr::null_mut(),
                &mut deps,
                &mut count,
            )
            .result()
        }
        .op("cuStreamGetCaptureInfo")?;
        if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE || count != 1 {
            return Err(Error::InvalidArgument(
                "the fill did not record exactly one node (a bug in cuda-mem; please report it)",
            ));
        }
        // SAFETY: the driver returned `count == 1` nodes at `deps`, valid
        // until the next call on the stream.
        Ok(unsafe { *deps })
    }

    /// Sets the value of the memset node `node` of `graph`'s executable
    /// `exec` for later launches, after checking its element size.
    pub(super) fn set_memset_value(
        exec: sys::CUgraphExec,
        node: sys::CUgraphNode,
        element_size: u32,
        value: u32,
        ctx: sys::CUcontext,
    ) -> Result<()> {
        let mut params = std::mem::MaybeUninit::<sys::CUDA_MEMSET_NODE_PARAMS>::uninit();
        // SAFETY: a memset node of the live graph that `exec` was
        // instantiated from; a valid out-pointer.
        unsafe { sys::cuGraphMemsetNodeGetParams(node, params.as_mut_ptr()).result() }
            .op("cuGraphMemsetNodeGetParams")?;
        // SAFETY: written by the successful call above.
        let mut params = unsafe { params.assume_init() };
        if params.elementSize != element_size {
            return Err(Error::InvalidArgument(
                "the recorded fill is not the memset it was (a bug in cuda-mem; please report it)",
            ));
        }
        params.value = value;
        // SAFETY: the same node, destination and shape, a new value (any
        // bytes are valid elements); launches already queued keep the old one.
        unsafe { sys::cuGraphExecMemsetNodeSetParams(exec, node, &params, ctx).result() }
            .op("cuGraphExecMemsetNodeSetParams")
    }

    /// `cuGraphDestroy` of a graph (or nothing, for null).
    pub(super) fn destroy_graph(graph: sys::CUgraph) {
        if !graph.is_null() {
            // SAFETY: a graph this module owns, destroyed once; instantiated
            // executables do not depend on it.
            let _ = unsafe { sys::cuGraphDestroy(graph) };
        }
    }
}

/// The buffers a [`Graph`] records work on: `&mut` a buffer (the graph may
/// write it), `&` a buffer (it only reads it), an exclusive or shared view
/// by value, or a tuple of those (up to 12). Buffers are any
/// [`Buffer`] kind (device, pinned, unified, pool), a [`PitchedBuffer`], a
/// [`DeviceVec`], or views of them.
///
/// [`HeldBuffers`] is how the recording closure and [`Graph::buffers`] see
/// them: a [`Held`] for `&mut` buffers and exclusive views, `&` for shared
/// ones, the view itself for shared views.
pub trait Recorded: sealed::Listed + for<'r> HeldAt<'r> {
    /// The buffers as [`HeldBuffers`].
    #[doc(hidden)]
    fn __held(&mut self) -> HeldBuffers<'_, Self>;
}

/// The buffers `A` (a [`Recorded`]) as the recording closure of
/// [`Graph::capture`] and [`Graph::buffers`] get them, borrowed for `'r`.
pub type HeldBuffers<'r, A> = <A as HeldAt<'r>>::Held;

/// The type of [`HeldBuffers`] (the second parameter, always the default,
/// makes `Self: 'r` implied wherever the trait is used for every `'r`).
#[doc(hidden)]
pub trait HeldAt<'r, Implied = &'r Self> {
    /// The held form.
    type Held;
}

pub(crate) mod sealed {
    /// The memory a recorded value stands for. Not nameable outside the crate.
    pub trait Listed {
        /// Appends every allocation and byte range of `self`.
        fn list<'s>(&'s self, out: &mut Vec<Part<'s>>);
    }

    /// One buffer or view that a graph may hold.
    pub trait Target {
        /// Its allocation and byte range.
        fn memory(&self) -> Part<'_>;
    }

    /// An allocation and a byte range of it.
    pub struct Part<'s> {
        pub(crate) mem: &'s super::RawMemory,
        pub(crate) range: super::Range<usize>,
    }
}

use sealed::Part;

fn part<T: DeviceCopy>(elems: Elems<'_, T>) -> Part<'_> {
    Part {
        mem: elems.mem,
        range: elems.span(),
    }
}

impl<T: DeviceCopy, K: MemoryKind> sealed::Target for Buffer<T, K> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for PitchedBuffer<T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for DeviceVec<T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for View<'_, T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems)
    }
}
impl<T: DeviceCopy> sealed::Target for ViewMut<'_, T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems)
    }
}

impl<M: sealed::Target + ?Sized> sealed::Listed for &mut M {
    fn list<'s>(&'s self, out: &mut Vec<Part<'s>>) {
        out.push((**self).memory());
    }
}
impl<M: sealed::Target + ?Sized> sealed::Listed for &M {
    fn list<'s>(&'s self, out: &mut Vec<Part<'s>>) {
        out.push((**self).memory());
    }
}
impl<T: DeviceCopy> sealed::Listed for ViewMut<'_, T> {
    fn list<'s>(&'s self, out: &mut Vec<Part<'s>>) {
        out.push(sealed::Target::memory(self));
    }
}
impl<T: DeviceCopy> sealed::Listed for View<'_, T> {
    fn list<'s>(&'s self, out: &mut Vec<Part<'s>>) {
        out.push(sealed::Target::memory(self));
    }
}

impl<'r, M: sealed::Target + ?Sized> HeldAt<'r> for &mut M {
    type Held = Held<'r, M>;
}
impl<M: sealed::Target + ?Sized> Recorded for &mut M {
    fn __held(&mut self) -> Held<'_, M> {
        Held(&mut **self)
    }
}
impl<'r, M: sealed::Target + ?Sized> HeldAt<'r> for &M {
    type Held = &'r M;
}
impl<M: sealed::Target + ?Sized> Recorded for &M {
    fn __held(&mut self) -> &M {
        self
    }
}
impl<'r, 'v, T: DeviceCopy> HeldAt<'r> for ViewMut<'v, T> {
    type Held = Held<'r, ViewMut<'v, T>>;
}
impl<T: DeviceCopy> Recorded for ViewMut<'_, T> {
    fn __held(&mut self) -> HeldBuffers<'_, Self> {
        Held(self)
    }
}
impl<'v, T: DeviceCopy> HeldAt<'_> for View<'v, T> {
    type Held = View<'v, T>;
}
impl<T: DeviceCopy> Recorded for View<'_, T> {
    fn __held(&mut self) -> HeldBuffers<'_, Self> {
        *self
    }
}

macro_rules! tuples {
    ($(($($name:ident),*);)*) => { $(
        impl<$($name: sealed::Listed),*> sealed::Listed for ($($name,)*) {
            #[allow(non_snake_case, unused_variables)]
            fn list<'s>(&'s self, out: &mut Vec<Part<'s>>) {
                let ($($name,)*) = self;
                $($name.list(out);)*
            }
        }
        impl<'r, $($name: HeldAt<'r>),*> HeldAt<'r> for ($($name,)*) {
            type Held = ($($name::Held,)*);
        }
        impl<$($name: Recorded),*> Recorded for ($($name,)*) {
            #[allow(non_snake_case, clippy::unused_unit)]
            fn __held(&mut self) -> HeldBuffers<'_, Self> {
                let ($($name,)*) = self;
                ($($name.__held(),)*)
            }
        }
    )* };
}

tuples! {
    ();
    (A);
    (A, B);
    (A, B, C);
    (A, B, C, D);
    (A, B, C, D, E);
    (A, B, C, D, E, F);
    (A, B, C, D, E, F, G);
    (A, B, C, D, E, F, G, H);
    (A, B, C, D, E, F, G, H, I);
    (A, B, C, D, E, F, G, H, I, J);
    (A, B, C, D, E, F, G, H, I, J, K);
    (A, B, C, D, E, F, G, H, I, J, K, L);
}

/// A buffer (or exclusive view) that a [`Graph`] holds exclusively, as the
/// recording closure and [`Graph::buffers`] get it: every operation of the
/// buffer ([`Memory`], [`MemoryMut`], kernel arguments, and for pinned and
/// unified memory [`as_slice`](Held::as_slice) /
/// [`as_mut_slice`](Held::as_mut_slice)), but never the `&mut` to the buffer
/// itself, which could swap the recorded memory away.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
///
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut input = PinnedBuffer::<f32>::new(&ctx, 1024)?;
/// let mut device = DeviceBuffer::<f32>::new(&ctx, 1024)?;
/// let mut graph = Graph::capture(&stream, (&mut input, &mut device), |s, (input, mut device)| {
///     device.copy_from_host_async(&*input, s)
/// })?;
/// for step in 0..10 {
///     let (mut input, _) = graph.buffers();
///     input.as_mut_slice()?.fill(step as f32); // waits for the previous launch
///     graph.launch(&stream)?;
/// }
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct Held<'r, M: ?Sized>(&'r mut M);

impl<T: DeviceCopy, M: Memory<T> + ?Sized> Engine<T> for Held<'_, M> {
    fn elems(&self) -> Elems<'_, T> {
        self.0.elems()
    }
}
impl<T: DeviceCopy, M: Memory<T> + ?Sized> Memory<T> for Held<'_, M> {}
impl<T: DeviceCopy, M: MemoryMut<T> + ?Sized> MemoryMut<T> for Held<'_, M> {}

impl<T: DeviceCopy, H: HostAccessible> Held<'_, Buffer<T, H>> {
    /// The buffer's [`as_slice`](Buffer::as_slice): waits for queued work
    /// on it (the graph's launches included).
    ///
    /// ```no_run
    /// # use cuda_mem::{Graph, PinnedBuffer};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut out = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut out,), |s, (mut out,)| {
    ///     cuda_mem::MemoryMut::fill_async(&mut out, 7, s)
    /// })?;
    /// graph.launch(&stream)?;
    /// let (out,) = graph.buffers();
    /// assert_eq!(out.as_slice()?, [7; 4]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.0.as_slice()
    }

    /// The buffer's [`as_mut_slice`](Buffer::as_mut_slice): waits for
    /// queued work on it (the graph's launches included). Between launches,
    /// the way to change a graph's input from the host.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut input = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// # let mut device = DeviceBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut input, &mut device), |s, (input, mut device)| {
    ///     device.copy_from_host_async(&*input, s)
    /// })?;
    /// graph.buffers().0.as_mut_slice()?.copy_from_slice(&[1, 2, 3, 4]);
    /// graph.launch(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.0.as_mut_slice()
    }
}

impl<T: DeviceCopy, H: HostAccessible> std::ops::Deref for Held<'_, Buffer<T, H>> {
    type Target = Buffer<T, H>;

    /// Shared access to a host-accessible buffer, so that it can be the
    /// source of an asynchronous host copy (`copy_from_host_async(&*input, s)`).
    fn deref(&self) -> &Buffer<T, H> {
        self.0
    }
}

impl<M: ?Sized> Held<'_, M> {
    /// The held buffer, shared.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut a = DeviceBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut a,), |s, (mut a,)| a.fill_async(1, s))?;
    /// let (a,) = graph.buffers();
    /// assert_eq!(a.get().len(), 4);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn get(&self) -> &M {
        self.0
    }
}

impl<M: ?Sized> std::fmt::Debug for Held<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held(..)")
    }
}

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
    buffers: A,
    state: Arc<ContextState>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    /// What the recorded work reads at every launch (fill values).
    kept: Vec<Box<dyn Any + Send>>,
    /// The stream of the latest launch (`None` before the first): `Drop`
    /// waits for it.
    last: Option<Arc<CudaStream>>,
    /// Whether the graph has memory nodes (temporaries, outputs).
    memory_nodes: bool,
    /// This graph's [`Output`]s' tag.
    id: u64,
    /// The memory nodes that the graph allocates and does not free
    /// ([`Recorder::output`]): allocated by each launch, freed before the
    /// next (or by `Drop`).
    outputs: Vec<Box<dyn OwnedMemory>>,
    /// Whether `outputs` are allocated: by a launch, and not freed since.
    outputs_live: bool,
    /// The sum of the held memory's [`StreamOrder::changes`] right after
    /// the latest launch ordered it (see `launch`).
    ordered: Option<u64>,
}

// SAFETY: the driver handles may be used from any thread (never from two at
// once: launches take `&mut self`); the buffers are `A`'s to be sent.
unsafe impl<A: Recorded + Send> Send for Graph<A> {}

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
    /// `buf.fill_async(v, rec)` queues there) and the buffers as [`Held`]
    /// handles (`&` for shared ones), and queues their operations
    /// (`fill_async`, `copy_from_async`, `copy_from_host_async` from pinned
    /// memory, kernel launches with them as arguments, ...) on `stream`.
    /// Nothing runs now: each [`launch`](Graph::launch) runs it all. Memory
    /// the graph allocates itself comes from the recorder:
    /// [`temporary`](Recorder::temporary) (freed inside the graph) and
    /// [`output`](Recorder::output) (kept until the next launch).
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
        let mut listed = Vec::new();
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
    pub fn launch(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        // Refuses every capturing stream but one that cuda-mem records on.
        self.state.check_stream(stream)?;
        if crate::order::capture::is_recording(stream) {
            return Err(Error::UnsupportedStream(
                "it is capturing a graph; a graph is launched outside captures (record its \
                 operations into the new graph instead)",
            ));
        }
        let mut listed = Vec::with_capacity(16);
        self.buffers.list(&mut listed);
        let first_output = listed.len();
        self.outputs.iter().for_each(|o| listed.push(o.part()));
        let changes = |listed: &[Part<'_>]| {
            listed
                .iter()
                .fold(0u64, |sum, p| sum.wrapping_add(p.mem.order.changes()))
        };
        // The previous launch's outputs, freed here rather than by the
        // driver at the launch (`AUTO_FREE_ON_LAUNCH`), so that every
        // allocation of the graph has a free that tools see.
        let freed = if self.outputs_live {
            &listed[first_output..]
        } else {
            &[]
        };
        let exec = self.exec;
        let outputs_live = &mut self.outputs_live;
        let mut queue = || -> Result<()> {
            // A failure below leaks what is left rather than freeing twice.
            *outputs_live = false;
            for output in freed.iter().filter(|o| o.mem.bytes > 0) {
                // SAFETY: an output the graph's latest launch allocated,
                // which nothing uses after the launch queued next (every
                // use queued before is ordered before `stream`; the graph
                // holds the output).
                unsafe { crate::memory::allocation::free_on_stream(output.mem.addr, stream) }?;
            }
            // SAFETY: a live executable of the stream's context (checked
            // above); every buffer it touches is held by `self` and ordered
            // on `stream` (below); what else it reads is in `kept`.
            unsafe { sys::cuGraphLaunch(exec, stream.cu_stream()).result() }.op("cuGraphLaunch")?;
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
        let same_stream = self
            .last
            .as_ref()
            .is_some_and(|last| Arc::ptr_eq(last, stream));
        let seen = changes(&listed);
        let unchanged = same_stream && self.ordered == Some(seen) && !crate::order::capture::any();
        self.state.bind()?;
        fn orders_of<'a>(listed: &[Part<'a>]) -> Vec<(&'a StreamOrder, Range<usize>)> {
            listed
                .iter()
                .map(|p| (&p.mem.order, p.range.clone()))
                .collect()
        }
        let ordered = &mut self.ordered;
        if unchanged {
            queue()?;
            if changes(&listed) != seen {
                // Another thread used a shared buffer meanwhile (a host
                // wait may have dropped the previous launch's entry): the
                // launch is entered now, as the slow path would have.
                *ordered = None;
                StreamOrder::run_all(&mut orders_of(&listed), stream, || Ok(()))?;
                *ordered = Some(changes(&listed));
            }
        } else {
            *ordered = None;
            StreamOrder::run_all(&mut orders_of(&listed), stream, || {
                queue()?;
                // Read while every order is locked: a change made after
                // this launch was entered shows as a different sum.
                *ordered = Some(changes(&listed));
                Ok(())
            })?;
        }
        if !same_stream {
            self.last = Some(stream.clone());
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

    /// An [`Output`] of this graph ([`Recorder::output`]): the memory its
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
    /// Changes the value of a fill recorded with [`Recorder::fill_param`]
    /// for the launches queued after this call (those queued before keep
    /// the old value).
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

/// The [`Output`] `output` among `outputs`, as a [`Held`].
fn output_of<'o, T: DeviceCopy + Send + 'static>(
    outputs: &'o mut [Box<dyn OwnedMemory>],
    output: &Output<T>,
) -> Result<Held<'o, PoolBuffer<T>>> {
    outputs
        .get_mut(output.index)
        .and_then(|o| o.as_any_mut().downcast_mut::<PoolBuffer<T>>())
        .map(Held)
        .ok_or(Error::InvalidArgument(
            "an Output that its graph does not have (a bug in cuda-mem; please report it)",
        ))
}

/// A fill recorded by [`Recorder::fill_param`], whose value
/// [`Graph::set_fill`] changes without recording the graph again.
pub struct FillParam<T> {
    graph: u64,
    /// The memset node (a `CUgraphNode` of the graph).
    node: usize,
    /// The memset's element size: 1, 2 or 4 bytes.
    width: u32,
    _t: PhantomData<fn(T)>,
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

/// Tags for [`Output`]s: one per capture.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Memory that a graph allocates itself and keeps between launches.
trait OwnedMemory: Any + Send {
    fn part(&self) -> Part<'_>;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Drops it without a free: no launch allocated it.
    fn never_allocated(self: Box<Self>);
}

impl<T: DeviceCopy + Send + 'static> OwnedMemory for PoolBuffer<T> {
    fn part(&self) -> Part<'_> {
        part(self.elems())
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn never_allocated(self: Box<Self>) {
        self.into_raw().never_allocated();
    }
}

/// A handle to memory a graph allocates itself and keeps from one launch to
/// the next ([`Recorder::output`]); [`Recorder::with_output`] records work
/// on it, [`Graph::output`] reaches it between launches.
pub struct Output<T> {
    graph: u64,
    index: usize,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Output<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Output<T> {}

impl<T> std::fmt::Debug for Output<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("graph", &self.graph)
            .field("index", &self.index)
            .finish()
    }
}

/// What the recording closure of [`Graph::capture`] gets besides the
/// buffers: the capturing stream (it derefs to `Arc<CudaStream>`, so
/// `buf.fill_async(v, rec)` queues on it) and the graph's own memory,
/// allocated by memory nodes of the graph: [`temporary`](Recorder::temporary)
/// (allocated and freed inside the graph) and [`output`](Recorder::output)
/// (kept until the next launch).
pub struct Recorder<'s> {
    stream: &'s Arc<CudaStream>,
    state: &'s Arc<ContextState>,
    id: u64,
    /// Each in its own cell, so that work may use several at once.
    outputs: RefCell<Vec<SharedOutput>>,
    /// The temporaries whose use has been recorded, freed (free nodes) at
    /// the end of the recording.
    temporaries: RefCell<Vec<RawMemory>>,
    /// Memory nodes recorded so far.
    nodes: Cell<usize>,
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
    /// [`Graph::output`] until the next launch frees them first. Record work
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
    /// [`Graph::set_fill`] can change later without a new capture (the
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
    fn free_temporaries(&self) -> Result<()> {
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
    fn finish(self) -> (u64, Vec<Box<dyn OwnedMemory>>, bool) {
        let outputs = self
            .outputs
            .take()
            .into_iter()
            .filter_map(|cell| Rc::try_unwrap(cell).ok().map(RefCell::into_inner))
            .collect();
        (self.id, outputs, self.nodes.get() > 0)
    }
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
