//! [`FakeBackend`]: the model itself as a backend, optionally with an
//! injected fault, reordering, or a pinned cache that reuses blocks under
//! running DMAs, so that CPU tests can check the generators, the runner and
//! the shrinker without a GPU.

use super::model::{Model, Read};
use super::ops::{Kind, Op, ReadWay, Strm, Target};
use super::run::Backend;

/// The fault of a [`FakeBackend`]: which operations it corrupts.
pub type Fault = Box<dyn Fn(&Op) -> bool>;

/// Which later operation a [`FakeBackend`] lets overtake a queued one, the
/// way work on a stream that is not ordered after another stream may run
/// first: an operation on a stream is held back, and the next operation, if
/// it is on another stream, runs before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overtake {
    /// Only one that touches other bytes (or only reads the same ones): the
    /// concurrency per-range ordering allows, which must never show.
    Disjoint,
    /// Any: what an ordering that took every two views for disjoint would
    /// allow, which the checks must catch.
    Any,
}

/// A backend that is the model itself, with an optional injected fault: when
/// `fault(op)` is true, the last byte the operation writes is flipped after
/// it (for testing the runner and the shrinker without a GPU); and optionally
/// reordering operations of different streams ([`Overtake`]).
pub struct FakeBackend {
    model: Model,
    fault: Option<Fault>,
    /// How many times the fault fired.
    pub faults: usize,
    overtake: Option<Overtake>,
    /// The operation held back (see [`Overtake`]).
    held: Option<Op>,
    /// How many times a later operation ran before an earlier one.
    pub overtaken: usize,
    /// Whether it plays a pinned cache that hands a dropped buffer's block
    /// out without waiting for its DMA ([`FakeBackend::reusing_busy_blocks`]).
    reuse_busy: bool,
    /// The asynchronous download into a pinned buffer that has not run yet.
    in_flight: Option<Op>,
    /// That download after its pinned buffer was dropped, with the buffer's
    /// byte size: it lands in the next pinned buffer of that size.
    orphan: Option<(Op, usize)>,
    /// How many downloads landed in a later buffer's block.
    pub late_dmas: usize,
}

impl FakeBackend {
    /// A backend without faults.
    pub fn correct() -> Self {
        Self {
            model: Model::new(),
            fault: None,
            faults: 0,
            overtake: None,
            held: None,
            overtaken: 0,
            reuse_busy: false,
            in_flight: None,
            orphan: None,
            late_dmas: 0,
        }
    }

    /// A backend whose pinned memory comes from a cache that does not wait
    /// for a block's event: an asynchronous download into a pinned buffer
    /// on a stream runs late (at the next operation that is not a drop of
    /// that buffer), and when the buffer is dropped first, the download
    /// lands in the next pinned buffer of the same byte size, after that
    /// buffer's initialisation. The checks must catch it.
    pub fn reusing_busy_blocks() -> Self {
        Self {
            reuse_busy: true,
            ..Self::correct()
        }
    }

    /// The byte size of the pinned buffer in `slot`, if it is one.
    fn pinned_bytes(&self, slot: usize) -> Option<usize> {
        let shape = self.model.shape(slot)?;
        (shape.kind == Kind::Pinned).then(|| shape.len() * shape.elem.size())
    }

    /// [`Backend::apply`] of [`FakeBackend::reusing_busy_blocks`].
    fn apply_reusing(&mut self, op: &Op) {
        match *op {
            Op::DownloadAsync { dst, stream, .. }
                if stream != Strm::Default && self.pinned_bytes(dst).is_some() =>
            {
                self.settle();
                self.in_flight = Some(*op);
            }
            Op::Drop { slot } if matches!(self.in_flight, Some(Op::DownloadAsync { dst, .. }) if dst == slot) =>
            {
                let bytes = self.pinned_bytes(slot).expect("a pinned buffer");
                self.orphan = self.in_flight.take().map(|o| (o, bytes));
                self.model.apply(op);
            }
            Op::Alloc {
                slot,
                kind: Kind::Pinned,
                ..
            } if self.orphan.is_some() => {
                self.model.apply(op);
                let (late, bytes) = self.orphan.take().expect("checked");
                if self.pinned_bytes(slot) == Some(bytes) {
                    if let Op::DownloadAsync {
                        src,
                        target,
                        stream,
                        ..
                    } = late
                    {
                        let late = Op::DownloadAsync {
                            src,
                            target,
                            dst: slot,
                            stream,
                        };
                        if self.model.valid(&late) {
                            self.apply_now(&late);
                            self.late_dmas += 1;
                        }
                    }
                }
            }
            _ => {
                self.settle();
                self.apply_now(op);
            }
        }
    }

    /// Runs the download in flight; forgets one whose buffer is gone.
    fn settle(&mut self) {
        if let Some(op) = self.in_flight.take() {
            self.apply_now(&op);
        }
        self.orphan = None;
    }

    /// A backend without faults that lets later operations on other streams
    /// overtake earlier ones as `overtake` says.
    pub fn reordering(overtake: Overtake) -> Self {
        Self {
            overtake: Some(overtake),
            ..Self::correct()
        }
    }

    /// Whether `a` and `b` can run in either order with the same result
    /// (neither writes bytes the other touches).
    fn commute(&self, a: &Op, b: &Op) -> bool {
        let span = |(slot, t): (usize, Target)| {
            let shape = self.model.shape(slot).expect("valid op");
            (slot, shape.span(t).expect("valid op"))
        };
        let meet = |w: Option<(usize, Target)>, other: &Op| {
            let Some((ws, (wx, wy))) = w.map(span) else {
                return false;
            };
            [other.written(), other.read()]
                .into_iter()
                .flatten()
                .map(span)
                .any(|(s, (x, y))| s == ws && x < wy && wx < y)
        };
        !meet(a.written(), b) && !meet(b.written(), a)
    }

    /// Applies `op` to the contents, with the fault.
    fn apply_now(&mut self, op: &Op) {
        self.model.apply(op);
        if self.fault.as_ref().is_some_and(|f| f(op)) {
            if let Some((slot, t)) = op.written() {
                let b = self.model.slots[slot].as_mut().expect("valid op");
                let (x, y) = b.shape.span(t).expect("valid op");
                if y > x {
                    b.bytes[y - 1] ^= 0x5a;
                    b.known[y - 1] = true;
                    self.faults += 1;
                }
            }
        }
    }

    /// Runs the operation held back, if any.
    fn flush(&mut self) {
        if let Some(held) = self.held.take() {
            self.apply_now(&held);
        }
    }

    /// A backend that corrupts the result of every operation `fault` selects.
    pub fn with_fault(fault: impl Fn(&Op) -> bool + 'static) -> Self {
        Self {
            fault: Some(Box::new(fault)),
            ..Self::correct()
        }
    }
}

/// A data operation queued on a stream (one that may be held back or
/// overtake one: no allocation, free, host access or read).
fn on_stream(op: &Op) -> bool {
    matches!(
        op,
        Op::Fill { .. }
            | Op::Memset { .. }
            | Op::Copy { .. }
            | Op::UploadAsync { .. }
            | Op::DownloadAsync { .. }
    )
}

impl Backend for FakeBackend {
    fn apply(&mut self, op: &Op) -> Result<(), String> {
        if self.reuse_busy {
            self.apply_reusing(op);
            return Ok(());
        }
        let Some(overtake) = self.overtake else {
            self.apply_now(op);
            return Ok(());
        };
        if let Some(held) = self.held {
            let overtakes = on_stream(op)
                && op.stream() != held.stream()
                && (overtake == Overtake::Any || self.commute(&held, op));
            if overtakes {
                self.held = None;
                self.apply_now(op);
                self.apply_now(&held);
                self.overtaken += 1;
                return Ok(());
            }
            self.flush();
        }
        // Held back: an operation on a stream of its own (the synchronous
        // calls are done when they return).
        if on_stream(op) && op.stream() != Some(Strm::Default) {
            self.held = Some(*op);
        } else {
            self.apply_now(op);
        }
        Ok(())
    }

    fn sync(&mut self) -> Result<(), String> {
        self.flush();
        self.settle();
        Ok(())
    }

    fn read(&mut self, slot: usize, target: Target, way: ReadWay) -> Result<Read, String> {
        self.flush();
        self.settle();
        let b = self.model.get(slot).ok_or("empty slot")?;
        let (x, y) = b.shape.span(target).ok_or("invalid target")?;
        let logical = (x..y)
            .map(|i| if b.known[i] { b.bytes[i] } else { 0xa5 })
            .collect();
        let padding = (way == ReadWay::RawPadded).then(|| vec![b.pad; 3 * b.shape.height]);
        Ok(Read { logical, padding })
    }
}
