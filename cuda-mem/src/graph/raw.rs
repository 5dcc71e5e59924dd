//! The thin layer over the driver's graph calls: begin and end a capture,
//! ask about it, instantiate, update a memset node, destroy and trim.

use cudarc::driver::{sys, CudaStream};

use crate::error::{DriverResultExt, Error, Result};

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
        u64::from(sys::CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0)
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
