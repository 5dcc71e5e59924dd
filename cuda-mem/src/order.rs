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
//! extra driver call at all.

use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{CudaEvent, CudaStream};

use crate::context::ContextState;
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
    /// Created on the first cross-stream hand-over or host wait.
    event: Option<CudaEvent>,
}

/// Whether a host wait comes with exclusive access to the whole allocation
/// (its owner dropping or freeing it, or `&mut` to the buffer), which proves
/// that every deferred use has been launched.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Shared,
    Exclusive,
}

impl OrderState {
    /// Every stream that may hold work on the allocation: `last`, then the
    /// deferred ones, without repeats.
    fn pending(&self, i: usize) -> Option<&Arc<CudaStream>> {
        let last = self.last.iter();
        let deferred = self
            .deferred
            .iter()
            .filter(|d| self.last.as_ref().map(|l| l.cu_stream()) != Some(d.cu_stream()));
        last.chain(deferred).nth(i)
    }

    fn event<'e>(event: &'e mut Option<CudaEvent>, ctx: &ContextState) -> Result<&'e CudaEvent> {
        if event.is_none() {
            *event = Some(ctx.ctx.new_event(None).op("cuEventCreate")?);
        }
        Ok(event.as_ref().expect("just set"))
    }

    /// Makes `stream` wait for everything queued so far.
    fn order_before(&mut self, ctx: &ContextState, stream: &CudaStream) -> Result<()> {
        let mut i = 0;
        while let Some(p) = self.pending(i) {
            if p.cu_stream() != stream.cu_stream() {
                let p = p.clone();
                let event = Self::event(&mut self.event, ctx)?;
                event.record(&p).op("cuEventRecord")?;
                stream.wait(event).op("cuStreamWaitEvent")?;
            }
            i += 1;
        }
        Ok(())
    }

    fn set_last(&mut self, stream: &Arc<CudaStream>) {
        if self.last.as_ref().map(|s| s.cu_stream()) != Some(stream.cu_stream()) {
            self.last = Some(stream.clone());
        }
    }

    fn add_deferred(&mut self, stream: &Arc<CudaStream>) {
        if !self
            .deferred
            .iter()
            .any(|d| d.cu_stream() == stream.cu_stream())
        {
            self.deferred.push(stream.clone());
        }
    }
}

impl StreamOrder {
    /// An order whose first operation must come after work already queued on
    /// `stream` (the allocation itself, for stream-ordered allocations).
    pub(crate) fn after(stream: &Arc<CudaStream>) -> Self {
        Self {
            state: Mutex::new(OrderState {
                last: Some(stream.clone()),
                deferred: Vec::new(),
                event: None,
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
        ctx: &ContextState,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let mut state = self.lock();
        state.order_before(ctx, stream)?;
        // Even if `enqueue` fails part-way, the stream may hold work now.
        state.set_last(stream);
        enqueue()
    }

    /// Like [`StreamOrder::run`] for a deferred use: `claim` returns what the
    /// caller launches on `stream` later (a kernel argument), and `stream`
    /// stays in every later wait until an exclusive one.
    pub(crate) fn run_deferred<R>(
        &self,
        ctx: &ContextState,
        stream: &Arc<CudaStream>,
        claim: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let mut state = self.lock();
        state.order_before(ctx, stream)?;
        state.set_last(stream);
        state.add_deferred(stream);
        claim()
    }

    /// Like [`StreamOrder::run`] for an operation on two allocations (a copy).
    /// Locks in address order, so two threads copying in opposite directions
    /// cannot deadlock; `a` and `b` may be the same allocation.
    pub(crate) fn run_pair<R>(
        a: &Self,
        b: &Self,
        ctx: &ContextState,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        if std::ptr::eq(a, b) {
            return a.run(ctx, stream, enqueue);
        }
        let (first, second) = if (a as *const Self) < (b as *const Self) {
            (a, b)
        } else {
            (b, a)
        };
        let mut first = first.lock();
        let mut second = second.lock();
        first.order_before(ctx, stream)?;
        second.order_before(ctx, stream)?;
        first.set_last(stream);
        second.set_last(stream);
        enqueue()
    }

    /// Blocks the host until every queued operation on this allocation is
    /// done. An [`Access::Exclusive`] wait also ends the deferred uses.
    pub(crate) fn wait(&self, ctx: &ContextState, access: Access) -> Result<()> {
        let mut state = self.lock();
        let mut i = 0;
        while let Some(p) = state.pending(i) {
            let p = p.clone();
            let event = OrderState::event(&mut state.event, ctx)?;
            event.record(&p).op("cuEventRecord")?;
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
    pub(crate) fn wait_on(&self, ctx: &ContextState, stream: &CudaStream) -> Result<()> {
        self.lock().order_before(ctx, stream)
    }

    /// The stream to free a stream-ordered allocation on: the latest one,
    /// after it has been made to wait for every deferred use (the owner is
    /// dropping the memory, so every kernel argument has been launched).
    pub(crate) fn stream_for_free(
        &self,
        ctx: &ContextState,
        fallback: &Arc<CudaStream>,
    ) -> Result<Arc<CudaStream>> {
        let mut state = self.lock();
        let stream = state.last.clone().unwrap_or_else(|| fallback.clone());
        state.order_before(ctx, &stream)?;
        state.deferred.clear();
        Ok(stream)
    }
}
