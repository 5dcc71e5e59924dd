//! The captures cuda-mem itself runs ([`Graph::capture`](crate::Graph::capture)):
//! which streams are recording a graph for cuda-mem right now, which
//! allocations (and byte ranges) each one may record work on, and what the
//! recording keeps alive for the graph (fill values it reads at replay).
//!
//! A capturing stream is otherwise refused by every call (see
//! `order::streams::check_orderable`), because cuda-mem cannot order work that
//! replays later. A capture registered here is the exception: its graph
//! holds a borrow of every buffer in its list for as long as it lives and
//! orders each launch on them (see `graph`), so the operations on those
//! buffers may be recorded. Operations on any other memory, and uses of the
//! listed buffers elsewhere (another stream, the host) while the capture
//! runs, are refused with an `Err` that names the remedy.
//!
//! The lookups cost one atomic load when no capture is running.

use std::any::Any;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use cudarc::driver::CudaStream;

use crate::error::{Error, Result};

/// One allocation a capture may record work on: the address of its
/// `StreamOrder` (its identity while it lives) and the bytes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Allowed {
    pub(crate) key: usize,
    pub(crate) range: Range<usize>,
}

/// A capture under way.
struct Active {
    /// `(CUstream, CUcontext)` of the capturing stream.
    stream: (usize, usize),
    allowed: Vec<Allowed>,
    /// What the recorded work reads at every replay (fill values), handed to
    /// the graph when the capture ends.
    kept: Vec<Box<dyn Any + Send>>,
    /// What must outlive the recording but not the capture (memory dropped
    /// while the stream recorded, behind work queued before), dropped as
    /// soon as the capture has ended.
    deferred: Vec<Box<dyn Any + Send>>,
}

/// The captures running now, in every thread.
static ACTIVE: Mutex<Vec<Active>> = Mutex::new(Vec::new());
/// `ACTIVE.len()`, read without the lock.
static COUNT: AtomicUsize = AtomicUsize::new(0);

fn lock() -> MutexGuard<'static, Vec<Active>> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

fn key_of(stream: &CudaStream) -> (usize, usize) {
    (
        stream.cu_stream() as usize,
        stream.context().cu_ctx() as usize,
    )
}

/// What an operation on an allocation may do while captures run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No capture concerns it: order it as usual.
    Order,
    /// It is being recorded by a cuda-mem capture: queue it without
    /// entering it in the allocation's order (nothing runs now; the graph's
    /// launches are ordered instead).
    Record,
}

/// The registration of a capture, removed when dropped.
pub(crate) struct Registration {
    stream: (usize, usize),
}

impl Registration {
    /// Registers `stream` as recording for cuda-mem, allowed to touch
    /// `allowed` only. Refused if it is already registered.
    pub(crate) fn begin(stream: &CudaStream, allowed: Vec<Allowed>) -> Result<Self> {
        let key = key_of(stream);
        let mut active = lock();
        if active.iter().any(|a| a.stream == key) {
            return Err(Error::UnsupportedStream(
                "it is already recording a graph for cuda-mem; a capture cannot start inside \
                 another on the same stream (use another stream)",
            ));
        }
        active.push(Active {
            stream: key,
            allowed,
            kept: Vec::new(),
            deferred: Vec::new(),
        });
        COUNT.fetch_add(1, Ordering::SeqCst);
        Ok(Self { stream: key })
    }

    /// Ends the registration (once the capture has ended) and returns what
    /// the recorded work keeps alive; what was only deferred until the
    /// capture's end is dropped here, outside the registry's lock.
    pub(crate) fn end(self) -> Vec<Box<dyn Any + Send>> {
        let (kept, deferred) = remove(self.stream);
        std::mem::forget(self);
        drop(deferred);
        kept
    }
}

type Lists = (Vec<Box<dyn Any + Send>>, Vec<Box<dyn Any + Send>>);

fn remove(stream: (usize, usize)) -> Lists {
    let removed = {
        let mut active = lock();
        match active.iter().position(|a| a.stream == stream) {
            Some(i) => {
                COUNT.fetch_sub(1, Ordering::SeqCst);
                Some(active.swap_remove(i))
            }
            None => None,
        }
    };
    removed.map_or_else(Default::default, |a| (a.kept, a.deferred))
}

impl Drop for Registration {
    fn drop(&mut self) {
        drop(remove(self.stream));
    }
}

/// Lets the capture recording on `stream` record work on `allowed` too
/// (memory the graph allocates itself).
pub(crate) fn allow(stream: &CudaStream, allowed: Allowed) {
    let key = key_of(stream);
    if let Some(a) = lock().iter_mut().find(|a| a.stream == key) {
        a.allowed.push(allowed);
    }
}

/// Takes the allocation `key` off the list of the capture recording on
/// `stream` (its memory is freed in the graph: the key may name another
/// allocation next).
pub(crate) fn forbid(stream: &CudaStream, key: usize) {
    let stream = key_of(stream);
    if let Some(a) = lock().iter_mut().find(|a| a.stream == stream) {
        a.allowed.retain(|a| a.key != key);
    }
}

/// Whether any capture is recording for cuda-mem now (one atomic load).
#[inline]
pub(crate) fn any() -> bool {
    COUNT.load(Ordering::SeqCst) > 0
}

/// Whether `stream` is recording a graph for cuda-mem. With no capture
/// under way it costs its callers one load: the rest is out of line.
#[inline]
pub(crate) fn is_recording(stream: &CudaStream) -> bool {
    any() && is_recording_while_capturing(stream)
}

/// [`is_recording`] while some capture is registered.
#[inline(never)]
fn is_recording_while_capturing(stream: &CudaStream) -> bool {
    let key = key_of(stream);
    lock().iter().any(|a| a.stream == key)
}

/// Keeps `value` alive for the graph that `stream` is recording (if any;
/// otherwise it is dropped at once): the graph drops it after its last
/// launch.
pub(crate) fn keep(stream: &CudaStream, value: Box<dyn Any + Send>) {
    let key = key_of(stream);
    if let Some(a) = lock().iter_mut().find(|a| a.stream == key) {
        a.kept.push(value);
    }
}

/// Keeps `value` until the capture recording on `stream` has ended (if
/// any; otherwise it is dropped at once): memory dropped while the stream
/// records, whose earlier work nothing can be ordered after until then.
pub(crate) fn defer(stream: &CudaStream, value: Box<dyn Any + Send>) {
    let key = key_of(stream);
    let mut active = lock();
    match active.iter_mut().find(|a| a.stream == key) {
        Some(a) => a.deferred.push(value),
        None => {
            drop(active);
            drop(value);
        }
    }
}

/// Whether an operation on `range` of the allocation `key` queued on
/// `stream` (`None`: a host wait) is recorded, ordered as usual, or refused.
/// With no capture under way (every operation's case) it costs its callers
/// one load: the rest is out of line.
#[inline(always)]
pub(crate) fn verdict(
    key: usize,
    range: &Range<usize>,
    stream: Option<&CudaStream>,
) -> Result<Verdict> {
    if !any() {
        return Ok(Verdict::Order);
    }
    verdict_while_capturing(key, range, stream)
}

/// [`verdict`] while some capture is registered.
#[inline(never)]
fn verdict_while_capturing(
    key: usize,
    range: &Range<usize>,
    stream: Option<&CudaStream>,
) -> Result<Verdict> {
    let stream = stream.map(key_of);
    judge(&lock(), key, range, stream)
}

/// [`verdict`] over the captures `active` (pure; tested on the CPU).
fn judge(
    active: &[Active],
    key: usize,
    range: &Range<usize>,
    stream: Option<(usize, usize)>,
) -> Result<Verdict> {
    if let Some(capture) = active.iter().find(|a| Some(a.stream) == stream) {
        let listed = capture.allowed.iter().any(|a| {
            a.key == key
                && (range.is_empty() || (a.range.start <= range.start && range.end <= a.range.end))
        });
        return if listed {
            Ok(Verdict::Record)
        } else {
            Err(Error::InvalidArgument(
                "this memory is not among the buffers given to Graph::capture, so the graph could \
                 not hold it while it lives; pass the buffer (or the view) in the capture's \
                 buffers tuple",
            ))
        };
    }
    let held = active
        .iter()
        .any(|a| a.allowed.iter().any(|a| a.key == key));
    if held {
        return Err(Error::InvalidArgument(
            "this memory is being recorded into a graph (Graph::capture) right now; inside the \
             capture, queue its operations on the capturing stream only (work elsewhere, and \
             host access, would run now rather than at the graph's launches), and use it \
             anywhere once the capture has returned",
        ));
    }
    Ok(Verdict::Order)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(stream: usize, allowed: &[(usize, Range<usize>)]) -> Active {
        Active {
            stream: (stream, 1),
            allowed: allowed
                .iter()
                .map(|(key, range)| Allowed {
                    key: *key,
                    range: range.clone(),
                })
                .collect(),
            kept: Vec::new(),
            deferred: Vec::new(),
        }
    }

    #[test]
    fn only_listed_ranges_are_recorded_on_the_capturing_stream() {
        let active = [capture(7, &[(100, 0..64), (200, 16..32)])];
        let on = |key, range: Range<usize>, s| judge(&active, key, &range, Some((s, 1)));
        assert_eq!(on(100, 0..64, 7).unwrap(), Verdict::Record);
        assert_eq!(on(100, 8..9, 7).unwrap(), Verdict::Record);
        assert_eq!(on(200, 16..32, 7).unwrap(), Verdict::Record);
        assert_eq!(on(200, 5..5, 7).unwrap(), Verdict::Record);
        // Outside the listed bytes, or another allocation.
        assert!(on(200, 0..20, 7)
            .unwrap_err()
            .to_string()
            .contains("buffers tuple"));
        assert!(on(100, 60..65, 7).is_err());
        assert!(on(300, 0..1, 7).is_err());
    }

    #[test]
    fn listed_memory_is_refused_elsewhere_while_the_capture_runs() {
        let active = [capture(7, &[(100, 0..64)])];
        let other_stream = judge(&active, 100, &(0..8), Some((8, 1)));
        assert!(other_stream
            .unwrap_err()
            .to_string()
            .contains("being recorded"));
        // The same handle in another context is another stream.
        assert!(judge(&active, 100, &(0..8), Some((7, 2))).is_err());
        assert!(judge(&active, 100, &(0..8), None).is_err());
        // Memory no capture lists is ordered as usual, on any stream.
        assert_eq!(
            judge(&active, 300, &(0..8), Some((8, 1))).unwrap(),
            Verdict::Order
        );
        assert_eq!(judge(&active, 300, &(0..8), None).unwrap(), Verdict::Order);
        assert_eq!(
            judge(&[], 100, &(0..8), Some((7, 1))).unwrap(),
            Verdict::Order
        );
    }
}
