//! Stream ordering of the operations on one allocation.
//!
//! Each allocation remembers the stream that holds its latest queued operation.
//! An operation on the same stream needs nothing (streams run in order). An
//! operation on another stream first makes that stream wait for an event
//! recorded on the previous one, so all operations on an allocation form one
//! chain, whatever streams they use. Waiting for the allocation (before host
//! access or a free) records the event and waits for it on the host.
//!
//! The event is created once per allocation and re-recorded; nothing is
//! allocated per operation, and operations on one stream cost no extra driver
//! call at all.

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
    /// Created on the first cross-stream hand-over or host wait.
    event: Option<CudaEvent>,
}

impl OrderState {
    /// Makes `stream` wait for everything queued so far.
    fn order_before(&mut self, ctx: &ContextState, stream: &Arc<CudaStream>) -> Result<()> {
        let Some(last) = self.last.clone() else {
            return Ok(());
        };
        if last.cu_stream() == stream.cu_stream() {
            return Ok(());
        }
        let event = self.event(ctx)?;
        event.record(&last).op("cuEventRecord")?;
        stream.wait(event).op("cuStreamWaitEvent")?;
        Ok(())
    }

    fn event(&mut self, ctx: &ContextState) -> Result<&CudaEvent> {
        if self.event.is_none() {
            self.event = Some(ctx.ctx.new_event(None).op("cuEventCreate")?);
        }
        Ok(self.event.as_ref().expect("just set"))
    }

    fn set_last(&mut self, stream: &Arc<CudaStream>) {
        if self.last.as_ref().map(|s| s.cu_stream()) != Some(stream.cu_stream()) {
            self.last = Some(stream.clone());
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

    /// Blocks the host until every queued operation on this allocation is done.
    pub(crate) fn wait(&self, ctx: &ContextState) -> Result<()> {
        let mut state = self.lock();
        let Some(last) = state.last.clone() else {
            return Ok(());
        };
        let event = state.event(ctx)?;
        event.record(&last).op("cuEventRecord")?;
        event.synchronize().op("cuEventSynchronize")?;
        state.last = None;
        Ok(())
    }

    /// Makes `stream` wait for every queued operation, without recording it as
    /// the latest user (for callers that synchronise `stream` themselves).
    pub(crate) fn wait_on(&self, ctx: &ContextState, stream: &CudaStream) -> Result<()> {
        let mut state = self.lock();
        let Some(last) = state.last.clone() else {
            return Ok(());
        };
        if last.cu_stream() == stream.cu_stream() {
            return Ok(());
        }
        let event = state.event(ctx)?;
        event.record(&last).op("cuEventRecord")?;
        stream.wait(event).op("cuStreamWaitEvent")
    }

    /// The stream of the latest queued operation, if any.
    pub(crate) fn last_stream(&self) -> Option<Arc<CudaStream>> {
        self.lock().last.clone()
    }
}
