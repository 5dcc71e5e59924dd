//! `order/`: stream ordering. It owns the ordering of the operations on byte
//! ranges of one allocation ([`StreamOrder`], below), which streams cuda-mem
//! can order work on at all (`streams`), and the graph captures cuda-mem runs
//! itself (`capture`: which streams record for it, and what they may touch).
//!
//! May use: `error` only (and the driver, through cudarc).
//!
//! # Stream ordering of the operations on byte ranges of one allocation
//!
//!
//! Each allocation keeps a small ledger of entries `(byte range, stream, now
//! or deferred)`: the ranges that queued operations may still use, and the
//! stream each was queued on. An operation on range R and stream S first makes
//! S wait, once per stream, for every other stream with an entry that overlaps
//! R, by recording an event on that stream and waiting for it on S. Entries
//! whose ranges are disjoint from R impose nothing, so disjoint views of one
//! allocation run concurrently on different streams, while overlapping ones
//! form one chain, whatever streams they use. An operation on the same stream
//! needs nothing (streams run in order): operations on one stream cost no
//! extra driver call at all.
//!
//! The operation then becomes an entry itself. A *now* entry that the new
//! range covers completely is dropped: S has just waited for it (or it was on
//! S), so any event recorded on S later captures it too, and every range that
//! overlaps the dropped entry overlaps the new one. An entry on S that already
//! covers the new range makes a new one unnecessary (for a deferred use, only
//! a deferred entry does), and touching entries of one stream and kind are
//! joined. The ledger is bounded
//! (`MAX_ENTRIES`): when it is full, the entries of each stream and kind are
//! joined into the range that spans them (more waits later, never fewer); if
//! that is still too many, S waits for every stream and the now entries become
//! one entry on S that spans them.
//!
//! Waiting for the allocation on the host (before host access or a free)
//! records the event on every stream with an entry and waits for it, after
//! which those now entries are complete and dropped.
//!
//! Kernel arguments (and the pointers cudarc's `DevicePtr` traits hand out)
//! are *deferred* uses: the launch comes after the claim, at a time cuda-mem
//! cannot see, possibly after other operations on other streams (two
//! read-only arguments of one buffer, or the two halves of `split_at_mut`, can
//! be claimed on two streams before either launch). Deferred entries are
//! therefore never dropped or stood for by another entry: every later
//! operation on an overlapping range, every host wait and the free wait for
//! their stream directly, with an event recorded at that later time. An event
//! recorded "now" on such a stream may precede a launch still to come; that is
//! harmless for operations, which the borrow rules keep off memory a live
//! claim covers, and it cannot happen for a free or an exclusive host wait,
//! which need every borrow (every kernel argument) to have ended. Those
//! exclusive waits clear the deferred entries.
//!
//! The event is created once per allocation and context and re-recorded: a
//! `cuStreamWaitEvent` uses the event as last recorded at the time of the
//! call and is not affected by later records (CUDA runtime and driver docs,
//! `cudaEventRecord`), so recording on X, waiting on S, then recording on Y
//! and waiting on S orders S after both. Nothing is allocated per operation
//! once the ledger has grown to its working size, and its first two entries
//! live inside the allocation's own bookkeeping (no heap allocation for a
//! buffer used on one stream). A peer copy queues work on
//! an allocation from a stream of another context; an event can only be
//! recorded on a stream of its own context, so an allocation keeps one event
//! per context whose streams have used it (almost always just one).
//!
//! The bookkeeping ([`Ledger`]) is pure, generic over the stream, and tested
//! on the CPU against a model of the driver's stream semantics.

pub(crate) mod capture;
pub(crate) mod completion;
pub(crate) mod streams;

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{sys, CudaEvent, CudaStream};
use smallvec::SmallVec;

use crate::current::on_stream;
use crate::error::{DriverResultExt, Result};
use crate::order::capture::Verdict;

/// Every byte of an allocation: the range of operations on all of it.
pub(crate) const WHOLE: Range<usize> = 0..usize::MAX;

/// The most entries a ledger holds before it joins them (see the module docs).
const MAX_ENTRIES: usize = 32;

/// How many entries a ledger holds without a heap allocation: one use on one
/// stream, and a kernel-argument claim beside it, are the common cases.
const INLINE_ENTRIES: usize = 2;

#[derive(Default)]
pub(crate) struct StreamOrder {
    state: Mutex<OrderState>,
    /// How many times `state` has been locked (see [`StreamOrder::changes`]).
    locks: AtomicU64,
}

#[derive(Default)]
struct OrderState {
    ledger: Ledger<Arc<CudaStream>>,
    /// One event per context, created on the first cross-stream hand-over or
    /// host wait from a stream of that context.
    events: Vec<CudaEvent>,
}

/// Whether a host wait comes with exclusive access to the whole allocation
/// (its owner dropping or freeing it, or `&mut` to the buffer), which proves
/// that every deferred use has been launched.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Access {
    Shared,
    Exclusive,
}

/// Whether an operation runs as it is queued or is a claim for a later launch.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Use {
    Now,
    Deferred,
}

/// A stream as the ledger sees it: something it can compare.
pub(crate) trait StreamId: Clone {
    /// Whether `self` and `other` are one stream.
    fn same(&self, other: &Self) -> bool;
}

impl StreamId for Arc<CudaStream> {
    fn same(&self, other: &Self) -> bool {
        // One `Arc` is one stream (the common case: a buffer used again and
        // again through the same handle), without reading either stream.
        Arc::ptr_eq(self, other) || same_stream(self, other)
    }
}

/// One queued use of `range` on `stream`.
#[derive(Clone, Debug)]
struct Entry<S> {
    range: Range<usize>,
    stream: S,
    use_: Use,
}

impl<S: StreamId> Entry<S> {
    /// Whether this entry makes a new `use_` of `range` on `stream`
    /// unnecessary: it is on `stream`, covers `range`, and is of a kind that
    /// stands for that use (either kind for a now use, which the stream's
    /// later events capture; only a deferred one for a deferred use, which
    /// must stay in every later wait until an exclusive one).
    fn stands_for(&self, range: &Range<usize>, stream: &S, use_: Use) -> bool {
        self.stream.same(stream)
            && covers(&self.range, range)
            && (self.use_ == Use::Deferred || use_ == Use::Now)
    }
}

/// Whether two byte ranges share a byte (an empty range shares none).
fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    a.start < b.end && b.start < a.end && !a.is_empty() && !b.is_empty()
}

/// Whether `outer` contains every byte of `inner`.
fn covers(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

/// The per-range bookkeeping of one allocation, without the driver: which
/// streams an operation must wait for, and what it leaves behind.
#[derive(Debug)]
pub(crate) struct Ledger<S> {
    entries: SmallVec<[Entry<S>; INLINE_ENTRIES]>,
}

impl<S> Default for Ledger<S> {
    fn default() -> Self {
        Self {
            entries: SmallVec::new(),
        }
    }
}

impl<S: StreamId> Ledger<S> {
    /// A ledger whose first operation on `range` must come after work
    /// already queued on `stream`: its one entry (none for an empty range).
    #[inline]
    pub(crate) fn after(stream: S, range: Range<usize>) -> Self {
        let mut ledger = Self::default();
        if !range.is_empty() {
            ledger.entries.push(Entry {
                range,
                stream,
                use_: Use::Now,
            });
        }
        ledger
    }

    /// The streams of the entries `hit` selects, each once, in ledger order.
    fn streams<'a>(
        &'a self,
        hit: impl Fn(&Entry<S>) -> bool + Copy + 'a,
    ) -> impl Iterator<Item = &'a S> + 'a {
        let entries = &self.entries;
        entries.iter().enumerate().filter_map(move |(i, e)| {
            let first = hit(e)
                && !entries[..i]
                    .iter()
                    .any(|p| hit(p) && p.stream.same(&e.stream));
            first.then_some(&e.stream)
        })
    }

    /// Orders an operation on `range` queued on `stream`: calls `wait(x)` for
    /// every stream x that `stream` must wait for first (each once), then,
    /// if `use_` is given, enters the operation. Nothing is entered when a
    /// wait fails.
    #[inline]
    pub(crate) fn order<E>(
        &mut self,
        range: Range<usize>,
        stream: &S,
        use_: Option<Use>,
        wait: impl FnMut(&S) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if self.needs_nothing(&range, stream, use_) {
            return Ok(());
        }
        self.order_and_enter(range, stream, use_, wait)
    }

    /// The common case, one buffer used again and again on one stream
    /// (inlined into every operation; the rest of [`Ledger::order`] is out
    /// of line): the ledger's one entry is on `stream`, so there is nothing
    /// to wait for, and it already stands for this operation (as `enter`
    /// would find), or none is entered.
    #[inline(always)]
    fn needs_nothing(&self, range: &Range<usize>, stream: &S, use_: Option<Use>) -> bool {
        match self.entries.as_slice() {
            [only] => match use_ {
                Some(use_) if !range.is_empty() => only.stands_for(range, stream, use_),
                // Nothing is entered.
                _ => only.stream.same(stream),
            },
            _ => false,
        }
    }

    /// [`Ledger::order`] past its common case.
    #[inline(never)]
    fn order_and_enter<E>(
        &mut self,
        range: Range<usize>,
        stream: &S,
        use_: Option<Use>,
        mut wait: impl FnMut(&S) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        if use_.is_some() && self.entries.len() >= MAX_ENTRIES {
            self.join_per_stream();
            if self.entries.len() >= MAX_ENTRIES {
                for x in self.streams(|e| !e.stream.same(stream)) {
                    wait(x)?;
                }
                // `stream` waited for every entry: later events on it capture
                // every queued operation, so one now entry on it spanning the
                // now entries stands for them all.
                let span = self
                    .entries
                    .iter()
                    .filter(|e| e.use_ == Use::Now)
                    .map(|e| e.range.clone())
                    .reduce(|a, b| a.start.min(b.start)..a.end.max(b.end));
                self.entries.retain(|e| e.use_ == Use::Deferred);
                if let Some(range) = span {
                    self.entries.push(Entry {
                        range,
                        stream: stream.clone(),
                        use_: Use::Now,
                    });
                }
                if let Some(use_) = use_ {
                    self.enter(range, stream, use_);
                }
                return Ok(());
            }
        }
        for x in self.streams(|e| overlaps(&e.range, &range) && !e.stream.same(stream)) {
            wait(x)?;
        }
        if let Some(use_) = use_ {
            self.enter(range, stream, use_);
        }
        Ok(())
    }

    /// Enters an operation that `stream` has been ordered for (every entry
    /// that overlaps `range` is on `stream` or was waited for by it).
    fn enter(&mut self, range: Range<usize>, stream: &S, use_: Use) {
        if range.is_empty() {
            return;
        }
        // Waited for (or on `stream`), and whatever overlaps them overlaps
        // the new entry: it stands for them. Never for a deferred entry,
        // whose launch may still come.
        self.entries
            .retain(|e| !(e.use_ == Use::Now && covers(&range, &e.range)));
        if self
            .entries
            .iter()
            .any(|e| e.stands_for(&range, stream, use_))
        {
            return;
        }
        let touching = self.entries.iter_mut().find(|e| {
            e.stream.same(stream)
                && e.use_ == use_
                && e.range.start <= range.end
                && range.start <= e.range.end
        });
        match touching {
            Some(e) => e.range = e.range.start.min(range.start)..e.range.end.max(range.end),
            None => self.entries.push(Entry {
                range,
                stream: stream.clone(),
                use_,
            }),
        }
    }

    /// Joins the entries of each stream and kind into the range spanning
    /// them: later operations wait for more, never for less.
    fn join_per_stream(&mut self) {
        let mut i = 0;
        while i < self.entries.len() {
            let mut j = i + 1;
            while j < self.entries.len() {
                let (a, b) = (&self.entries[i], &self.entries[j]);
                if a.stream.same(&b.stream) && a.use_ == b.use_ {
                    let b = self.entries.remove(j);
                    let a = &mut self.entries[i];
                    a.range = a.range.start.min(b.range.start)..a.range.end.max(b.range.end);
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
    }

    /// Waits on the host for everything queued: calls `wait(x)` for every
    /// stream with an entry (each once). The now entries are complete then;
    /// an [`Access::Exclusive`] wait also ends the deferred ones.
    pub(crate) fn host_wait<E>(
        &mut self,
        access: Access,
        mut wait: impl FnMut(&S) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        for x in self.streams(|_| true) {
            wait(x)?;
        }
        match access {
            Access::Exclusive => self.entries.clear(),
            Access::Shared => self.entries.retain(|e| e.use_ == Use::Deferred),
        }
        Ok(())
    }

    /// Ends the deferred entries: their owner is freeing the memory, so every
    /// kernel argument has been launched.
    fn end_deferred(&mut self) {
        self.entries.retain(|e| e.use_ == Use::Now);
    }

    /// The stream of the latest entry, if any.
    fn latest(&self) -> Option<&S> {
        self.entries.last().map(|e| &e.stream)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no queued use is entered.
    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl OrderState {
    /// Records this allocation's event of `stream`'s context on `stream`.
    ///
    /// Refuses a stream that began capturing a CUDA graph after it used the
    /// allocation: an event recorded there is a node of the graph, and a
    /// stream that waited for it would join the capture, so the operation
    /// being ordered would be recorded too and replay later, untracked.
    fn record_on<'e>(events: &'e mut Vec<CudaEvent>, stream: &CudaStream) -> Result<&'e CudaEvent> {
        if crate::order::streams::is_capturing(stream)? {
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
        // SAFETY: a live event of `stream`'s context, on a live stream.
        on_stream(stream, "cuEventRecord", |s| unsafe {
            sys::cuEventRecord(event.cu_event(), s)
        })?;
        Ok(event)
    }

    /// Makes `stream` wait for the queued operations that overlap `range`
    /// (on other streams), and enters the operation when `use_` is given.
    #[inline]
    fn order(
        &mut self,
        range: Range<usize>,
        stream: &Arc<CudaStream>,
        use_: Option<Use>,
    ) -> Result<()> {
        let events = &mut self.events;
        self.ledger.order(range, stream, use_, |x| {
            let event = Self::record_on(events, x)?;
            wait_for(stream, event)
        })
    }
}

/// Makes `stream` wait for `event` (recorded on another stream, of any
/// context), as `stream`'s context's work: the waits and records of the
/// ledger, like the operations they order, do not make a context current
/// (see `current::on_stream`). A [`Stream`](crate::Stream)'s stream that
/// joined a capture by the wait is refused (`streams::refuse_joined`).
fn wait_for(stream: &CudaStream, event: &CudaEvent) -> Result<()> {
    // SAFETY: a live stream and a live event (the ledger's `events` keep
    // it); `CU_EVENT_WAIT_DEFAULT` is 0.
    on_stream(stream, "cuStreamWaitEvent", |s| unsafe {
        sys::cuStreamWaitEvent(s, event.cu_event(), 0)
    })?;
    crate::order::streams::refuse_joined(stream)
}

/// Whether `a` and `b` are one stream. The legacy default stream has the
/// handle null in every context, so the context is compared too.
fn same_stream(a: &CudaStream, b: &CudaStream) -> bool {
    a.cu_stream() == b.cu_stream() && a.context().cu_ctx() == b.context().cu_ctx()
}

impl StreamOrder {
    /// An order whose first operation must come after work already queued on
    /// `stream` (the allocation of its `bytes`, for stream-ordered allocations).
    #[inline]
    pub(crate) fn after(stream: &Arc<CudaStream>, bytes: usize) -> Self {
        Self {
            state: Mutex::new(OrderState {
                ledger: Ledger::after(stream.clone(), 0..bytes),
                events: Vec::new(),
            }),
            locks: AtomicU64::new(0),
        }
    }

    #[inline]
    fn lock(&self) -> MutexGuard<'_, OrderState> {
        let guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // Counted once held: a count read under the lock covers every
        // change made before it. Only the holder writes it, so a load and a
        // store do (no read-modify-write on the path of every operation).
        let count = self.locks.load(Ordering::Relaxed);
        self.locks.store(count + 1, Ordering::Release);
        guard
    }

    /// A count that grows whenever an operation is ordered on the memory
    /// or the host waits for it (every change of the ledger, and more):
    /// unchanged since a graph launch ordered it, no operation has
    /// touched the memory since, and the ledger still says what it said
    /// after the launch.
    #[inline]
    pub(crate) fn changes(&self) -> u64 {
        self.locks.load(Ordering::SeqCst)
    }

    /// Runs `enqueue` (which queues work on `stream` over the byte `range`
    /// of the allocation) after every earlier operation on an overlapping
    /// range, and enters it.
    pub(crate) fn run<R>(
        &self,
        range: Range<usize>,
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.queue(range, stream, Use::Now, enqueue)
    }

    /// Runs `free` on `stream` after every queued use of the allocation, by
    /// its owner: `&mut` proves that no other thread holds the order (so no
    /// lock is taken) and that every kernel argument has been launched. The
    /// free itself is not entered: nothing uses the memory after it, and if
    /// it fails, it queued nothing, while the waits it asked for stay
    /// harmless (a later free orders again).
    #[inline]
    pub(crate) fn free_owned<R>(
        &mut self,
        stream: &Arc<CudaStream>,
        free: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        *self.locks.get_mut() += 1;
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        state.order(WHOLE, stream, None)?;
        free()
    }

    /// Like [`StreamOrder::run`] for a deferred use: `claim` returns what the
    /// caller launches on `stream` later (a kernel argument), and `stream`
    /// stays in every later wait that overlaps `range` until an exclusive one.
    pub(crate) fn run_deferred<R>(
        &self,
        range: Range<usize>,
        stream: &Arc<CudaStream>,
        claim: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        self.queue(range, stream, Use::Deferred, claim)
    }

    fn queue<R>(
        &self,
        range: Range<usize>,
        stream: &Arc<CudaStream>,
        use_: Use,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        if self.recorded(&range, stream)? {
            return enqueue();
        }
        let mut state = self.lock();
        // Entered before `enqueue`: even if it fails part-way, the stream may
        // hold work now.
        state.order(range, stream, Some(use_))?;
        enqueue()
    }

    /// This allocation's identity in `capture`'s lists.
    pub(crate) fn key(&self) -> usize {
        self as *const Self as usize
    }

    /// Whether an operation on `range` queued on `stream` is being recorded
    /// into a graph by `Graph::capture` (then it enters no ledger: nothing
    /// runs now, and the graph orders each of its launches), or `Err` when a
    /// capture refuses it (see `capture`).
    #[inline]
    fn recorded(&self, range: &Range<usize>, stream: &CudaStream) -> Result<bool> {
        Ok(capture::verdict(self.key(), range, Some(stream))? == Verdict::Record)
    }

    /// Like [`StreamOrder::run`] for an operation on two allocations (a copy
    /// into `range_a` of `a` from `range_b` of `b`). Locks in address order,
    /// so two threads copying in opposite directions cannot deadlock; `a`
    /// and `b` may be the same allocation.
    pub(crate) fn run_pair<R>(
        (a, range_a): (&Self, Range<usize>),
        (b, range_b): (&Self, Range<usize>),
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        // Both recorded, or neither: a capturing stream records or refuses.
        let recorded_a = a.recorded(&range_a, stream)?;
        if b.recorded(&range_b, stream)? && recorded_a {
            return enqueue();
        }
        if std::ptr::eq(a, b) {
            // Held while `enqueue` queues the copy, as in `queue`: another
            // thread's operation must not record an event on `stream` (and
            // so drop the entries it covers) before the copy is on it.
            let mut state = a.lock();
            state.order(range_a, stream, Some(Use::Now))?;
            state.order(range_b, stream, Some(Use::Now))?;
            return enqueue();
        }
        let ((first, first_range), (second, second_range)) =
            if (a as *const Self) < (b as *const Self) {
                ((a, range_a), (b, range_b))
            } else {
                ((b, range_b), (a, range_a))
            };
        let mut first = first.lock();
        let mut second = second.lock();
        first.order(first_range, stream, Some(Use::Now))?;
        second.order(second_range, stream, Some(Use::Now))?;
        enqueue()
    }

    /// Like [`StreamOrder::run`] for one operation on many byte ranges of
    /// many allocations (a graph launch): locks each allocation once, in
    /// address order (so that two threads cannot deadlock), orders `stream`
    /// after the earlier work on every range and enters it, and queues
    /// `enqueue` while still holding every lock (see `run_pair`). Refused
    /// when a capture records or holds one of the allocations.
    pub(crate) fn run_all<R>(
        parts: &mut [(&Self, Range<usize>)],
        stream: &Arc<CudaStream>,
        enqueue: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        for (order, range) in parts.iter() {
            if order.recorded(range, stream)? {
                return Err(crate::error::Error::UnsupportedStream(
                    "it is recording a graph; launch graphs outside captures",
                ));
            }
        }
        parts.sort_by_key(|(order, range)| (order.key(), range.start, range.end));
        let mut locked: Vec<MutexGuard<'_, OrderState>> = Vec::with_capacity(parts.len());
        let mut last = None;
        for (order, range) in parts.iter() {
            if last != Some(order.key()) {
                locked.push(order.lock());
                last = Some(order.key());
            }
            if let Some(state) = locked.last_mut() {
                state.order(range.clone(), stream, Some(Use::Now))?;
            }
        }
        enqueue()
    }

    /// Blocks the host until every queued operation on this allocation is
    /// done. An [`Access::Exclusive`] wait also ends the deferred uses.
    pub(crate) fn wait(&self, access: Access) -> Result<()> {
        capture::verdict(self.key(), &WHOLE, None)?;
        let mut state = self.lock();
        let OrderState { ledger, events } = &mut *state;
        ledger.host_wait(access, |x| {
            let event = OrderState::record_on(events, x)?;
            event.synchronize().op("cuEventSynchronize")
        })
    }

    /// The streams with a queued use of this allocation, each once: the
    /// streams whose completion is the allocation's (see
    /// [`Completion`](completion::Completion)). A use claimed as a kernel
    /// argument and not launched yet is in it, but the launch to come is
    /// not.
    pub(crate) fn queued_streams(&self) -> Result<Vec<Arc<CudaStream>>> {
        capture::verdict(self.key(), &WHOLE, None)?;
        let streams = self.lock().ledger.streams(|_| true).cloned().collect();
        Ok(streams)
    }

    /// Forgets every queued use without waiting: the state after a host
    /// wait.
    ///
    /// # Safety
    /// Every use queued on the allocation has finished (a stream callback
    /// queued behind each one has run), and no kernel argument of it is
    /// alive or still to be launched.
    pub(crate) unsafe fn assume_idle(&self) {
        let mut state = self.lock();
        let waited: std::result::Result<(), ()> =
            state.ledger.host_wait(Access::Exclusive, |_| Ok(()));
        debug_assert!(waited.is_ok());
    }

    /// Makes `stream` wait for every queued operation that overlaps `range`,
    /// without entering it: for cudarc's safe calls, whose guard synchronises
    /// `stream` before they return (`DevicePtr` / `DevicePtrMut`).
    pub(crate) fn wait_on(&self, range: Range<usize>, stream: &CudaStream) -> Result<()> {
        if self.recorded(&range, stream)? {
            return Err(crate::error::Error::UnsupportedStream(
                "cudarc's calls are not recorded into cuda-mem's graphs; use cuda-mem's operations \
                 inside Graph::capture",
            ));
        }
        let mut state = self.lock();
        let OrderState { ledger, events } = &mut *state;
        let hit = |e: &Entry<Arc<CudaStream>>| {
            overlaps(&e.range, &range) && !same_stream(&e.stream, stream)
        };
        for x in ledger.streams(hit) {
            let event = OrderState::record_on(events, x)?;
            wait_for(stream, event)?;
        }
        Ok(())
    }

    /// The stream to free a stream-ordered allocation on: the latest one (if
    /// it belongs to the allocation's context and is not capturing a CUDA
    /// graph, else `own`, the context's default stream), after it has been
    /// made to wait for every pending and deferred use (the owner is
    /// dropping the memory, so every kernel argument has been launched).
    ///
    /// A free queued on a capturing stream would be a node of the graph:
    /// nothing freed now, and a free at every launch of the graph. Waiting
    /// for such a stream from `own` fails instead (see `record_on`), and the
    /// caller leaks the memory (unless cuda-mem itself records on that
    /// stream: then `RawMemory`'s drop hands the memory to the graph first).
    pub(crate) fn stream_for_free(&self, own: &Arc<CudaStream>) -> Result<Arc<CudaStream>> {
        let mut state = self.lock();
        let stream = match state.ledger.latest() {
            Some(last)
                if last.context().cu_ctx() == own.context().cu_ctx()
                    && !crate::order::streams::is_capturing(last).unwrap_or(true) =>
            {
                last.clone()
            }
            _ => own.clone(),
        };
        state.order(WHOLE, &stream, Some(Use::Now))?;
        state.ledger.end_deferred();
        Ok(stream)
    }
}

impl StreamOrder {
    /// Empties the order of an allocation that is being dropped, when that
    /// is cheap, and says whether it did: no event was ever created and the
    /// ledger's entries are inline (a buffer used on one stream, the common
    /// case). Their streams are dropped here, inline; the order then holds
    /// nothing to free, so that its owner may forget it instead of running
    /// its drop glue (out of line, a call per field). Only where the
    /// mutex holds no allocation of its own (a futex on Linux, an SRW lock
    /// on Windows); elsewhere, and otherwise, nothing changes and the owner
    /// drops the order.
    #[inline]
    pub(crate) fn empty_cheaply(&mut self) -> bool {
        if cfg!(not(any(target_os = "linux", windows))) {
            return false;
        }
        let Self { state, locks: _ } = self;
        // Every field named, none left to `..`: a field added to the order,
        // its state or its ledger must be considered here (it might hold an
        // allocation that forgetting would leak).
        let OrderState {
            ledger: Ledger { entries },
            events,
        } = state.get_mut().unwrap_or_else(|p| p.into_inner());
        if events.capacity() != 0 || entries.spilled() {
            return false;
        }
        entries.clear();
        true
    }
}

impl StreamOrder {
    /// A stream with a queued use of the memory that is recording a graph
    /// for cuda-mem right now (`Graph::capture`), if any. That use was
    /// queued before the recording began, and nothing can be ordered after
    /// it until the recording ends (an event recorded there would be a node
    /// of the graph).
    pub(crate) fn recording_stream(&self) -> Option<Arc<CudaStream>> {
        if !crate::order::capture::any() {
            return None;
        }
        let state = self.lock();
        let recording = state
            .ledger
            .streams(|_| true)
            .find(|s| crate::order::capture::is_recording(s))
            .cloned();
        recording
    }
}

impl StreamOrder {
    /// For memory given back to a cache rather than freed: `None` when no
    /// queued use is entered, else [`StreamOrder::stream_for_free`]: a
    /// stream of `own`'s context ordered after every use, on which an event
    /// recorded now fires once the memory is unused.
    pub(crate) fn stream_to_guard(&self, own: &Arc<CudaStream>) -> Result<Option<Arc<CudaStream>>> {
        if self.lock().ledger.is_empty() {
            return Ok(None);
        }
        self.stream_for_free(own).map(Some)
    }
}

#[cfg(test)]
mod tests {
    //! The ledger against a model of the driver: vector clocks per stream
    //! (what each stream's next operation is ordered after) and for the host.

    use super::*;

    impl StreamId for usize {
        fn same(&self, other: &Self) -> bool {
            self == other
        }
    }

    use crate::test_rng::{Property, Rng};
    use proptest::prelude::*;
    use std::ops::RangeInclusive;

    /// A fresh seed, or `ORDER_SEED` to replay a failure (with `ORDER_TRACE`
    /// set, every step and the ledger after it are printed).
    fn seed() -> u64 {
        crate::test_rng::seed("ORDER_SEED")
    }

    /// Runs `test` on `cases` histories from `strategy`, from a fresh seed
    /// (`ORDER_SEED` replays a run). A failing history is shrunk (steps
    /// dropped, ranges and streams made smaller) and the smallest one that
    /// still fails is printed.
    fn check<S: Strategy>(cases: usize, strategy: S, test: impl Fn(S::Value)) {
        Property::new("ORDER_SEED").check_cases(cases, &strategy, test);
    }

    /// One queued operation of the history.
    struct Queued {
        range: Range<usize>,
        stream: usize,
        use_: Use,
        /// Its position on its stream (the `pos`-th operation, from 0).
        pos: u64,
        /// Ended by an exclusive host wait (deferred uses only).
        ended: bool,
    }

    /// The driver as the model sees it.
    struct Model {
        /// Operations queued per stream so far.
        count: Vec<u64>,
        /// `know[s][x]`: work queued on `s` from now on comes after the first
        /// `know[s][x]` operations of `x`.
        know: Vec<Vec<u64>>,
        /// The host has seen the first `host[x]` operations of `x` complete.
        host: Vec<u64>,
        history: Vec<Queued>,
    }

    impl Model {
        fn new(streams: usize) -> Self {
            Self {
                count: vec![0; streams],
                know: vec![vec![0; streams]; streams],
                host: vec![0; streams],
                history: Vec::new(),
            }
        }

        /// Record an event on `x` and make `s` wait for it.
        fn hand_over(&mut self, x: usize, s: usize) {
            for y in 0..self.count.len() {
                let k = if y == x {
                    self.count[x]
                } else {
                    self.know[x][y]
                };
                self.know[s][y] = self.know[s][y].max(k);
            }
        }

        /// Record an event on `x` and synchronise it on the host.
        fn host_sync(&mut self, x: usize) {
            for y in 0..self.count.len() {
                let k = if y == x {
                    self.count[x]
                } else {
                    self.know[x][y]
                };
                self.host[y] = self.host[y].max(k);
            }
        }

        /// What `s` knows of `x` right now (a stream knows all of itself).
        fn knows(&self, s: usize, x: usize) -> u64 {
            if s == x {
                self.count[x]
            } else {
                self.know[s][x]
            }
        }

        /// Checks that an operation on `range` queued now on `s` comes after
        /// every earlier overlapping operation on another stream, and after
        /// the whole current prefix of every overlapping deferred use's
        /// stream (its launch may come as late as now).
        fn check_ordered(&self, range: &Range<usize>, s: usize, step: usize) {
            for q in &self.history {
                if q.stream == s || !overlaps(&q.range, range) {
                    continue;
                }
                let need = match q.use_ {
                    Use::Now => q.pos + 1,
                    Use::Deferred if q.ended => continue,
                    Use::Deferred => self.count[q.stream],
                };
                // Work the host has seen complete precedes anything queued later.
                assert!(
                    self.knows(s, q.stream).max(self.host[q.stream]) >= need,
                    "step {step}: an operation on {range:?} on stream {s} is not ordered after \
                     {:?} ({:?}) on stream {}",
                    q.range,
                    q.use_,
                    q.stream
                );
            }
        }

        fn queue(&mut self, range: Range<usize>, s: usize, use_: Use) {
            let pos = self.count[s];
            self.count[s] += 1;
            self.history.push(Queued {
                range,
                stream: s,
                use_,
                pos,
                ended: false,
            });
        }

        /// Checks that the host has seen every operation complete (and the
        /// current prefix of every deferred use's stream).
        fn check_host(&self, step: usize) {
            for q in &self.history {
                let need = match q.use_ {
                    Use::Now => q.pos + 1,
                    Use::Deferred if q.ended => continue,
                    Use::Deferred => self.count[q.stream],
                };
                assert!(
                    self.host[q.stream] >= need,
                    "step {step}: a host wait missed {:?} ({:?}) on stream {}",
                    q.range,
                    q.use_,
                    q.stream
                );
            }
        }
    }

    const SIZE: usize = 97;

    /// A random byte range of the allocation from `(kind, a, b)` drawn from
    /// `(0..8, 0..=SIZE, 0..=SIZE)`: empty one time in 8, all of it one time
    /// in 8. Shrinks towards the empty range. (Plain integers: strategies
    /// built of unions cost ten times as much per step, unoptimised.)
    fn range((kind, a, b): (u8, usize, usize)) -> Range<usize> {
        match kind {
            0 => 0..0,
            1 => WHOLE,
            _ => a.min(b)..a.max(b),
        }
    }

    fn range_parts() -> (Range<u8>, RangeInclusive<usize>, RangeInclusive<usize>) {
        (0..8, 0..=SIZE, 0..=SIZE)
    }

    /// What a step of a history does.
    #[derive(Clone, Debug)]
    enum Action {
        /// `Ledger::order` with this use: `None` waits without entering.
        Order(Option<Use>),
        /// `Ledger::host_wait`.
        HostWait(Access),
    }

    /// The action for `k` in `0..20`: operations 6 times in 10, deferred
    /// claims 2, waits without entering and host waits 1 each. Shrinks
    /// towards an operation.
    fn action(k: u8) -> Action {
        match k {
            0..12 => Action::Order(Some(Use::Now)),
            12..16 => Action::Order(Some(Use::Deferred)),
            16..18 => Action::Order(None),
            18 => Action::HostWait(Access::Shared),
            _ => Action::HostWait(Access::Exclusive),
        }
    }

    #[derive(Clone, Debug)]
    struct Step {
        stream: usize,
        range: Range<usize>,
        action: Action,
    }

    /// A random history: how many streams, the operation a ledger may be
    /// created `after` (one time in 4), and the steps.
    #[derive(Clone, Debug)]
    struct History {
        streams: usize,
        first: Option<(usize, Range<usize>)>,
        steps: Vec<Step>,
    }

    /// Histories on `streams` streams of up to `ops` steps (shrinking drops
    /// steps).
    fn history(streams: RangeInclusive<usize>, ops: usize) -> impl Strategy<Value = History> {
        let most = *streams.end();
        let step = (0..most, range_parts(), 0..20u8);
        (
            streams,
            prop::option::weighted(0.25, (0..most, range_parts())),
            prop::collection::vec(step, 0..=ops),
        )
            .prop_map(|(streams, first, steps)| History {
                streams,
                first: first.map(|(s, parts)| (s % streams, range(parts))),
                steps: steps
                    .into_iter()
                    .map(|(s, parts, k)| Step {
                        stream: s % streams,
                        range: range(parts),
                        action: action(k),
                    })
                    .collect(),
            })
    }

    /// Runs a history (operations, deferred claims, waits without entering,
    /// host waits), checking every step against the model; with
    /// `check_minimal`, also that every wait is for a stream with an earlier
    /// overlapping operation (until the ledger is full: joined entries wait
    /// for more).
    fn run_history(history: &History, mut check_minimal: bool) {
        let streams = history.streams;
        let mut model = Model::new(streams);
        let mut ledger = if let Some((s, range)) = history.first.clone() {
            if !range.is_empty() {
                model.queue(range.clone(), s, Use::Now);
            }
            Ledger::after(s, range)
        } else {
            Ledger::default()
        };
        for (
            step,
            Step {
                stream,
                range,
                action,
            },
        ) in history.steps.iter().enumerate()
        {
            let (s, range) = (*stream, range.clone());
            match *action {
                Action::HostWait(access) => {
                    let mut synced = Vec::new();
                    ledger
                        .host_wait(access, |&x| {
                            assert!(!synced.contains(&x), "step {step}: stream {x} waited twice");
                            synced.push(x);
                            Ok::<(), ()>(())
                        })
                        .unwrap();
                    for x in synced {
                        model.host_sync(x);
                    }
                    if std::env::var_os("ORDER_TRACE").is_some() {
                        eprintln!("host {access:?} -> {:?}", ledger.entries);
                    }
                    model.check_host(step);
                    if access == Access::Exclusive {
                        model.history.iter_mut().for_each(|q| q.ended = true);
                    }
                }
                Action::Order(use_) => {
                    let before = ledger.len();
                    let mut waited = Vec::new();
                    ledger
                        .order(range.clone(), &s, use_, |&x| {
                            assert!(x != s, "step {step}: stream {s} waited for itself");
                            assert!(!waited.contains(&x), "step {step}: stream {x} waited twice");
                            waited.push(x);
                            Ok::<(), ()>(())
                        })
                        .unwrap();
                    if use_.is_some() && before >= MAX_ENTRIES {
                        check_minimal = false;
                    }
                    for &x in &waited {
                        model.hand_over(x, s);
                        if check_minimal {
                            let reason = model
                                .history
                                .iter()
                                .any(|q| q.stream == x && overlaps(&q.range, &range));
                            assert!(
                                reason,
                                "step {step}: stream {s} waited for stream {x}, which has no \
                                 overlapping operation on {range:?}"
                            );
                        }
                    }
                    if std::env::var_os("ORDER_TRACE").is_some() {
                        eprintln!(
                            "{s} {range:?} {use_:?} waited {waited:?} -> {:?}",
                            ledger.entries
                        );
                    }
                    model.check_ordered(&range, s, step);
                    if let Some(use_) = use_ {
                        if !range.is_empty() {
                            model.queue(range, s, use_);
                        }
                    }
                }
            }
            let deferred_streams = (0..streams)
                .filter(|&x| {
                    ledger
                        .entries
                        .iter()
                        .any(|e| e.stream == x && e.use_ == Use::Deferred)
                })
                .count();
            assert!(
                ledger.len() <= MAX_ENTRIES + 2 + deferred_streams,
                "step {step}: {} entries",
                ledger.len()
            );
        }
    }

    // The histories' lengths are uniform up to the most steps (so that
    // shrinking can drop steps), half the fixed length of the hand-rolled
    // loops these replace on average: twice the cases keep the steps run.

    #[test]
    fn random_sequences_keep_every_overlap_ordered() {
        check(800, history(1..=4, 300), |h| run_history(&h, false));
    }

    #[test]
    fn waits_only_for_overlapping_work_before_the_ledger_fills() {
        // Fewer operations than entries: the ledger never joins.
        check(800, history(2..=4, MAX_ENTRIES / 2), |h| {
            run_history(&h, true)
        });
    }

    #[test]
    fn many_streams_and_ranges_stay_bounded_and_ordered() {
        check(100, history(40..=40, 2000), |h| run_history(&h, false));
    }

    #[test]
    fn disjoint_halves_on_two_streams_never_wait() {
        let mut ledger = Ledger::<usize>::default();
        let mut waits = 0;
        for i in 0..1000 {
            let (range, s) = if i % 2 == 0 { (0..50, 0) } else { (50..100, 1) };
            let use_ = if i % 3 == 0 { Use::Deferred } else { Use::Now };
            ledger
                .order(range, &s, Some(use_), |_| {
                    waits += 1;
                    Ok::<(), ()>(())
                })
                .unwrap();
        }
        assert_eq!(waits, 0);
        assert!(ledger.len() <= 4, "{} entries", ledger.len());
        // The whole allocation waits for both.
        let mut streams = Vec::new();
        ledger
            .order(WHOLE, &2, Some(Use::Now), |&x| {
                streams.push(x);
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(streams, [0, 1]);
    }

    #[test]
    fn whole_buffer_operations_on_changing_streams_wait_for_the_previous_one_only() {
        let mut rng = Rng::new(seed());
        let bytes = 1 + rng.below(1 << 20);
        let mut ledger = Ledger::after(0usize, 0..bytes);
        let mut prev = 0;
        for _ in 0..1000 {
            let s = rng.below(4);
            let mut waited = Vec::new();
            ledger
                .order(0..bytes, &s, Some(Use::Now), |&x| {
                    waited.push(x);
                    Ok::<(), ()>(())
                })
                .unwrap();
            let want: &[usize] = if s == prev { &[] } else { &[prev] };
            assert_eq!(waited, want, "stream {s} after stream {prev}");
            assert_eq!(ledger.len(), 1);
            prev = s;
        }
    }

    #[test]
    fn a_failed_wait_enters_nothing() {
        let mut ledger = Ledger::<usize>::default();
        ledger
            .order(0..10, &0, Some(Use::Now), |_| Ok::<(), ()>(()))
            .unwrap();
        let failed = ledger.order(0..10, &1, Some(Use::Now), |_| Err(()));
        assert!(failed.is_err());
        assert_eq!(ledger.entries.len(), 1);
        assert_eq!(ledger.entries[0].stream, 0);
    }
}
