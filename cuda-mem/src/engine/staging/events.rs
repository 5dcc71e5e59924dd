//! The raw event calls of staged copies (`record`, `wait`): cudarc's own
//! first return any error another thread stored in the context, which would
//! leave a chunk's queued DMA unrecorded or unwaited for.

use cudarc::driver::{sys, CudaEvent, CudaStream};

use crate::error::{DriverResultExt, Result};

/// Records `event` behind the work queued on `stream` so far (the raw call).
pub(super) fn record(event: &CudaEvent, stream: &CudaStream) -> Result<()> {
    // SAFETY: a live event and a live stream of the context current on this
    // thread (every lane of a copy binds it).
    unsafe { sys::cuEventRecord(event.cu_event(), stream.cu_stream()).result() }.op("cuEventRecord")
}

/// Waits until the work last recorded on `event` has finished (the raw
/// call).
pub(super) fn wait(event: &CudaEvent) -> Result<()> {
    // SAFETY: a live event of the context current on this thread.
    unsafe { sys::cuEventSynchronize(event.cu_event()).result() }.op("cuEventSynchronize")
}
