//! The runner: executes a sequence on a [`Backend`], applies it to the
//! model, and compares every byte read back at every check and sync point.

use std::collections::BTreeMap;

use super::model::{Model, Read};
use super::ops::{Op, ReadWay, Shape, Target};

/// Something that executes operations: the library on a GPU, or a fake.
pub trait Backend {
    /// Performs an operation that is not a check or a sync (the runner has
    /// checked it is valid). An `Err` is a divergence: the model says every
    /// valid operation succeeds.
    fn apply(&mut self, op: &Op) -> Result<(), String>;
    /// Waits for all queued work (both streams and the context).
    fn sync(&mut self) -> Result<(), String>;
    /// Reads `target` of `slot` the way `way` says.
    fn read(&mut self, slot: usize, target: Target, way: ReadWay) -> Result<Read, String>;
}

/// Where and how a run diverged from the model.
#[derive(Clone, Debug)]
pub struct Divergence {
    /// Index of the operation in the sequence that was run (`ops.len()`: the
    /// final check).
    pub index: usize,
    /// The operation (`None`: the final check).
    pub op: Option<Op>,
    /// What differed.
    pub detail: String,
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.op {
            Some(op) => write!(f, "op #{} {:?}: {}", self.index, op, self.detail),
            None => write!(f, "final check after {} ops: {}", self.index, self.detail),
        }
    }
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Operations executed, by name.
    pub per_op: BTreeMap<&'static str, usize>,
    /// Operations skipped as invalid in the state they met.
    pub skipped: usize,
    /// Reads compared with the model.
    pub reads: usize,
    /// Defined bytes compared.
    pub bytes_checked: u64,
}

impl Stats {
    /// Operations executed.
    pub fn executed(&self) -> usize {
        self.per_op.values().sum()
    }
}

/// The read way a sync point uses for `slot` (rotating through every way the
/// kind has, deterministically).
fn sync_way(shape: &Shape, index: usize, slot: usize) -> ReadWay {
    let ways = shape.read_ways(true);
    ways[(index + slot) % ways.len()]
}

/// When [`run_with`] compares with the model, besides the check and sync
/// operations of the sequence.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checks {
    /// Sync and check every buffer after the last operation.
    pub at_end: bool,
    /// Read back what each operation wrote right after it (this changes the
    /// timing: it synchronises after every write).
    pub after_every_write: bool,
}

/// Runs `ops` on `backend`, checking against a fresh [`Model`] at every
/// check and sync point (and, with `final_check`, every buffer at the end).
pub fn run(ops: &[Op], backend: &mut dyn Backend, final_check: bool) -> Result<Stats, Divergence> {
    let checks = Checks {
        at_end: final_check,
        after_every_write: false,
    };
    run_with(ops, backend, checks)
}

/// [`run`] with more checks.
pub fn run_with(
    ops: &[Op],
    backend: &mut dyn Backend,
    checks: Checks,
) -> Result<Stats, Divergence> {
    let mut model = Model::new();
    let mut stats = Stats::default();
    let fail = |index: usize, op: Option<Op>, detail: String| Divergence { index, op, detail };
    let check_all = |model: &Model,
                     backend: &mut dyn Backend,
                     stats: &mut Stats,
                     index: usize|
     -> Result<(), String> {
        backend.sync().map_err(|e| format!("synchronize: {e}"))?;
        for slot in model.live() {
            let shape = model.shape(slot).expect("live");
            let way = sync_way(&shape, index, slot);
            let read = backend
                .read(slot, Target::Whole, way)
                .map_err(|e| format!("reading slot {slot} with {way:?}: {e}"))?;
            stats.bytes_checked += model
                .verify(slot, Target::Whole, &read)
                .map_err(|e| format!("read with {way:?}: {e}"))?;
            stats.reads += 1;
        }
        Ok(())
    };
    for (index, op) in ops.iter().enumerate() {
        if !model.valid(op) {
            stats.skipped += 1;
            continue;
        }
        *stats.per_op.entry(op.name()).or_default() += 1;
        match *op {
            Op::Check { slot, target, way } => {
                let read = backend
                    .read(slot, target, way)
                    .map_err(|e| fail(index, Some(*op), format!("the read failed: {e}")))?;
                stats.bytes_checked += model
                    .verify(slot, target, &read)
                    .map_err(|e| fail(index, Some(*op), e))?;
                stats.reads += 1;
            }
            Op::SyncAll => {
                check_all(&model, backend, &mut stats, index)
                    .map_err(|e| fail(index, Some(*op), e))?;
            }
            _ => {
                backend
                    .apply(op)
                    .map_err(|e| fail(index, Some(*op), format!("the operation failed: {e}")))?;
                model.apply(op);
                if let Some((slot, target)) = op.written().filter(|_| checks.after_every_write) {
                    let detail = |e| format!("read right after the op: {e}");
                    let read = backend
                        .read(slot, target, ReadWay::ToVec)
                        .map_err(|e| fail(index, Some(*op), detail(e)))?;
                    stats.bytes_checked += model
                        .verify(slot, target, &read)
                        .map_err(|e| fail(index, Some(*op), detail(e)))?;
                    stats.reads += 1;
                }
            }
        }
    }
    if checks.at_end {
        check_all(&model, backend, &mut stats, ops.len()).map_err(|e| fail(ops.len(), None, e))?;
    }
    Ok(stats)
}
