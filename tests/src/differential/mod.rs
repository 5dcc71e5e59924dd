//! The engine of the differential tester (`tests/tests/differential.rs`).
//!
//! Its parts, one module each:
//! - `ops`: the vocabulary ([`Op`], [`Kind`], [`Elem`], [`Strm`], [`Target`],
//!   [`ReadWay`], [`Shape`]) and the random contents operations name by seed.
//! - `generate`: [`generate`], a seeded generator of random operation
//!   sequences over every buffer kind (device, pinned, unified, pool, pool
//!   from a `MemPool`, pitched, and the growable `DeviceVec` with its growth
//!   and shrinking), element sizes 1, 4, 12, 100 and 300, whole
//!   buffers and views at random (unaligned) offsets, the synchronous calls
//!   and two streams; and [`generate_views`], which exercises per-range
//!   ordering: many operations over overlapping and disjoint views of few
//!   buffers on the synchronous calls and three streams.
//! - `model`: [`Model`], a plain host model, the bytes of every buffer (and
//!   which of them are defined: fresh device and pool memory is not).
//! - `run`: [`run`] executes a sequence on a [`Backend`], applies it to the
//!   model, and compares every byte read back at every check and sync point.
//! - `shrink`: [`shrink`] replays prefixes on fresh backends to find the
//!   shortest one after which the contents diverge, then drops the operations
//!   the failure does not need.
//! - `fake`: [`FakeBackend`], the model as a backend, optionally with an
//!   injected fault or reordering operations of different streams.
//!
//! All of this is host code. The GPU backend is in the test file;
//! [`FakeBackend`] (the model itself, optionally with an injected fault) lets
//! CPU tests check the generator, the runner and the shrinker.
//!
//! Operations are plain data and name buffers by slot. An operation that is
//! not valid in the current state (a slot not allocated, a range past the
//! end, two buffers of different element types) is skipped by the runner, so
//! any subsequence of a generated sequence can be replayed: that is what lets
//! the shrinker delete operations.
//!
//! Why its own generator and shrinker rather than `proptest` (which the
//! crate's CPU property tests use): the generator draws from the shared
//! [`Rng`](crate::Rng) (`rand`), and
//! - each operation is drawn against the model of the state the earlier ones
//!   leave (a copy between two live buffers of one element type, a view
//!   inside the current length of a `DeviceVec`), so a sequence is valid
//!   where it stands; independent strategies per operation would mostly draw
//!   operations the runner skips;
//! - a failing run is 10,000 operations of real GPU work, and every shrink
//!   step is a replay on fresh buffers: the binary search over prefixes and
//!   the removal of halving chunks fit a budget of replays and a deadline
//!   (400 and five minutes in the GPU test), where `proptest`'s value trees
//!   would simplify operation by operation, a replay each;
//! - GPU failures can be timing-dependent: the shrinker first replays the
//!   failing prefix and reports a failure that does not come back as flaky
//!   instead of shrinking it, and cuts a prefix at the first operation after
//!   which the contents differ (a final check alone may see a corruption that
//!   later operations wrote over); `proptest` assumes a deterministic test;
//! - the seed alone names a run (`CUDA_MEM_SEED`), printed by the GPU test
//!   and replayable on another machine.

mod fake;
mod generate;
mod model;
mod ops;
mod run;
mod shrink;

pub use fake::{FakeBackend, Fault, Overtake};
pub use generate::{generate, generate_pinned_reuse, generate_views};
pub use model::{Model, ModelBuf, Read};
pub use ops::{
    data_bytes, fill_value, Elem, Init, Kind, Op, ReadWay, Shape, Strm, Target, MAX_BYTES, SLOTS,
};
pub use run::{run, run_with, Backend, Checks, Divergence, Stats};
pub use shrink::{describe, shrink, Shrunk};
