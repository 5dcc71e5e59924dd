//! Stream ordering of the operations on one allocation.
//!
//! Each allocation remembers the stream that holds its latest queued operation.
//! An operation on the same stream needs nothing (streams run in order). An
//! operation on another stream first makes that stream wait for an event
//! recorded on the previous one, so all operations on an allocation form one
//! chain, whatever streams they use. Waiting for the allocation (before host
//! access or a free) records the event and waits for it on the host.
//!
//! Kernel arguments (and the pointers cudarc's `DevicePtr` traits hand out)
//! are *deferred* uses: the launch comes after the claim, at a time cuda-mem
//! cannot see, possibly after other operations on other streams (two
//! read-only arguments of one buffer, or the two halves of `split_at_mut`, can
//! be claimed on two streams before either launch). The streams of deferred
//! uses are therefore kept in a set that every later operation, every host
//! wait and the free also wait for. An event recorded "now" on such a stream
//! may precede a launch still to come; that is harmless for operations, which
//! the borrow rules keep off memory a live claim covers, and it cannot happen
//! for a free or an exclusive host wait, which need every borrow (every
//! kernel argument) to have ended. Those exclusive waits clear the set.
//!
//! The event is created once per allocation and re-recorded (a wait captures
//! the event as last recorded, so one event serves any number of streams);
//! nothing is allocated per operation, and operations on one stream cost no
//! extra driver call at all. A peer copy queues work on an allocation from a
//! stream of another context; an event can only be recorded on a stream of
//! its own context, so an allocation keeps one event per context whose
//! streams have used it (almost always just one).

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{CudaEvent, CudaStream};

use crate::error::{DriverResultExt, Result};

#[derive(Default)]
pub(crate) struct StreamOrder {
    state: Mutex<OrderState>,
}

#[derive(Default)]
struct OrderState {
    /// The stream of the latest queued operation, if any may still be running.
    last: Option<Arc<CudaStream>>,
    /// Streams of deferred uses (kernel arguments) since the last exclusive wait.
    deferred: Vec<Arc<CudaStream>>,
    /// One event per context, created on the first cross-stream hand-over or
    /// host wait from a stream of that context.
    events: Vec<CudaEvent>,
}

/// Whether a host wait comes with exclusive access to the whole allocation
/// (its owner dropping or freeing it, or `&mut` to the buffer), which proves
/// that every deferred use has been launched.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Shared,
    Exclusive,
}

/// Whether an operation runs as it is queued or is a claim for a later launch.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    Now,
    Deferred,
}

impl OrderState {
    /// Every stream that may hold work on the allocation: `last`, then the
    /// deferred ones, without repeats.
    fn pending(&self, i: usize) -> Option<&Arc<CudaStream>> {
        let last = self.last.iter();
        let deferred = self
            .deferred
            .iter()
            .filter(|d| !self.last.as_ref().is_some_and(|l| same_stream(l, d)));
        last.chain(deferred).nth(i)
    }

    /// Records this allocation's event of `stream`'s context on `stream`.
    ///
    /// Refuses a stream that began capturing a CUDA graph after it used the
    /// allocation: an event recorded there is a node of the graph, and a
    /// stream that waited for it would join the capture, so the operation
    /// being ordered would be recorded too and replay later, untracked.
    fn record_on<'e>(events: &'e mut Vec<CudaEvent>, stream: &CudaStream) -> Result<&'e CudaEvent> {
        if crate::context::is_capturing(stream)? {
            return Err(crate::error::Error::UnsupportedStream(
                "a stream that used this memory is now capturing a CUDA graph; end the capture \
                 before using the memory elsewhere",
            ));
        }
        let ctx = stream.context();
        let index = match events.iter().position(|e| e.context() == ctx) {
            Some(index) => index,
            None => {
                events.push(ctx.new_event(None).op("cuEventCreate")?);
                events.len() - 1
            }
        };
        let event = &events[index];
        event.record(stream).op("cuEventRecord")?;
        Ok(event)
    }

    /// Makes `stream` wait for everything queued so far.
    fn order_before(&mut self, stream: &CudaStream) -> Result<()> {
        let mut i = 0;
        while let Some(p) = self.pending(i) {
            if !same_stream(p, stream) {
                let p = p.clone();
                let event = Self::record_on(&mut self.events, &p)?;
                stream.wait(event).op("cuStreamWaitEvent")?;
            }
            i += 1;
        }
        Ok(())
    }

    fn set_last(&mut self, stream: &Arc<CudaStream>) {
        if !self.last.as_ref().is_some_and(|s| same_stream(s, stream)) {
            self.last = Some(stream.clone());
        }
    }

    fn add_deferred(&mut self, stream: &Arc<CudaStream>) {
        if !self.deferred.iter().any(|d| same_stream(d, stream)) {
            self.deferred.push(stream.clone());
        }
    }
}

/// Whether `a` and `b` are one stream. The legacy default stream has the
/// handle null in every context, so the context is compared too.
fn same_stream(a: &CudaStream, b: &CudaStream) -> bool {
    a.cu_stream() == b.cu_stream() && a.context().cu_ctx() == b.context().cu_ctx()
}

impl StreamOrder {
    /// An order whose first operation must come after work already queued on
    /// `stream` (the allocation itself, for stream-ordered allocations).
    pub(crate) fn after(stream: &Arc<CudaStream>) -> Self {
        Self {
            state: Mutex::new(OrderState {
                last: Some(stream.clone()),
                deferred: Vec::new(),
                events: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, OrderState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `enqueue` (which queues work on `stream`) after every earlier
    /// operation on this allocation, and records `stream` as the latest.
    pub(crate) fn run<R>(
        &self,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.queue(stream, Use::Now, enqueue)
    }

    /// Like [`StreamOrder::run`] for a deferred use: `claim` returns what the
    /// caller launches on `stream` later (a kernel argument), and `stream`
    /// stays in every later wait until an exclusive one.
    pub(crate) fn run_deferred<R>(
        &self,
        stream: &Arc<CudaStream>,
        claim: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.queue(stream, Use::Deferred, claim)
    }

    fn queue<R>(
        &self,
        stream: &Arc<CudaStream>,
        use_: Use,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let mut state = self.lock();
        state.order_before(stream)?;
        // Even if `enqueue` fails part-way, the stream may hold work now.
        state.set_last(stream);
        if use_ == Use::Deferred {
            state.add_deferred(stream);
        }
        enqueue()
    }

    /// Like [`StreamOrder::run`] for an operation on two allocations (a copy).
    /// Locks in address order, so two threads copying in opposite directions
    /// cannot deadlock; `a` and `b` may be the same allocation.
    pub(crate) fn run_pair<R>(
        a: &Self,
        b: &Self,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        if std::ptr::eq(a, b) {
            return a.run(stream, enqueue);
        }
        let (first, second) = if (a as *const Self) < (b as *const Self) {
            (a, b)
        } else {
            (b, a)
        };
        let mut first = first.lock();
        let mut second = second.lock();
        first.order_before(stream)?;
        second.order_before(stream)?;
        first.set_last(stream);
        second.set_last(stream);
        enqueue()
    }

    /// Blocks the host until every queued operation on this allocation is
    /// done. An [`Access::Exclusive`] wait also ends the deferred uses.
    pub(crate) fn wait(&self, access: Access) -> Result<()> {
        let mut state = self.lock();
        let mut i = 0;
        while let Some(p) = state.pending(i) {
            let p = p.clone();
            let event = OrderState::record_on(&mut state.events, &p)?;
            event.synchronize().op("cuEventSynchronize")?;
            i += 1;
        }
        state.last = None;
        if access == Access::Exclusive {
            state.deferred.clear();
        }
        Ok(())
    }

    /// Makes `stream` wait for every queued operation, without recording it:
    /// for cudarc's safe calls, whose guard synchronises `stream` before they
    /// return (`DevicePtr` / `DevicePtrMut`).
    pub(crate) fn wait_on(&self, stream: &CudaStream) -> Result<()> {
        self.lock().order_before(stream)
    }

    /// The stream to free a stream-ordered allocation on: the latest one (if
    /// it belongs to the allocation's context, else `own`, the context's
    /// default stream), after it has been made to wait for every pending and
    /// deferred use (the owner is dropping the memory, so every kernel
    /// argument has been launched).
    pub(crate) fn stream_for_free(&self, own: &Arc<CudaStream>) -> Result<Arc<CudaStream>> {
        let mut state = self.lock();
        let stream = match &state.last {
            Some(last) if last.context().cu_ctx() == own.context().cu_ctx() => last.clone(),
            _ => own.clone(),
        };
        state.order_before(&stream)?;
        state.deferred.clear();
        Ok(stream)
    }
}
