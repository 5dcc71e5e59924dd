//! Which streams cuda-mem can order work on: [`check_orderable`] refuses the
//! per-thread and legacy default streams (one handle, several streams) and a
//! stream capturing a CUDA graph outside cuda-mem's own capture;
//! [`is_capturing`] asks the driver whether a stream is capturing.

use cudarc::driver::{sys, CudaStream};

use crate::error::{DriverResultExt, Error, Result};
use crate::order::capture;

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
#[inline]
pub(crate) fn check_orderable(stream: &CudaStream) -> Result<()> {
    // Every operation's path: one driver call, and the refusals (and the
    // error of a failed call) out of line.
    if stream.cu_stream() as usize > 2 && not_capturing(stream) {
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
/// legacy default stream never captures.
#[inline]
pub(crate) fn is_capturing(stream: &CudaStream) -> Result<bool> {
    if stream.cu_stream().is_null() {
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
