//! `graph/`: CUDA graphs of cuda-mem work: [`Graph::capture`] records buffer
//! operations and typed kernel launches once, and [`Graph::launch`] replays
//! them, ordered against every other use of the buffers. It owns the capture
//! (`capture`), the recording closure's [`Recorder`] (`recording`), the
//! executable graph and its launch (`executable`), the memory the graph
//! allocates itself (`memory_nodes`), what a graph holds (`held`), and the
//! driver's graph calls (`raw`).
//!
//! May use: `buffers/`, `engine/`, `memory/`, `context`, `order/`, `copy/`,
//! `error`.
//!
//! # Why a replay is safe
//!
//! - **The graph holds its buffers.** The buffers are given to
//!   [`Graph::capture`] up front, as `&mut` (the graph may write them) or `&`
//!   (it only reads them), and the [`Graph`] keeps those borrows for as long
//!   as it lives: no buffer it records can be dropped, moved or touched from
//!   the host meanwhile (compile errors). The recording closure and
//!   [`Graph::buffers`] get them back as [`Held`] handles, which have the
//!   buffer operations but never give out the `&mut` itself (a
//!   `mem::swap` would free the recorded memory under the graph).
//! - **Only those buffers are recorded.** While the capture runs, the
//!   capturing stream is registered as cuda-mem's (module `capture`): an
//!   operation on it that touches memory not in the list is refused, and so
//!   is any use of a listed buffer on another stream or from the host. A
//!   stream that cudarc's `begin_capture` (or anything but this API) made
//!   capture is refused as before.
//! - **Nothing runs while recording, so nothing is entered then.** The
//!   recorded operations enter no allocation's order. Each
//!   [`launch`](Graph::launch) instead orders the launch's stream after
//!   earlier work on every listed byte range (on other streams) and then
//!   enters the launch as an operation on those ranges, exactly as one
//!   operation on all of them would: later work, host access and the frees
//!   wait for it.
//! - **Memory the graph allocates is the graph's.** Pool allocations on the
//!   capturing stream are memory nodes, which exist only while a launch
//!   runs (or, for an output, until the next launch), so
//!   `PoolBuffer::new` there is refused. [`Recorder::temporary`] allocates
//!   and frees one inside the graph, and its buffer cannot leave the
//!   closure it is lent to; [`Recorder::output`] leaves one allocated (the
//!   graph is instantiated to free it before each relaunch), reachable
//!   through [`Graph::output`] only after a launch, ordered like the
//!   graph's buffers and freed stream-ordered when the graph is dropped
//!   (or not at all if no launch ever allocated it).
//! - **Replays read nothing that is gone.** Fill values that a fill kernel
//!   reads from memory are copied into pinned memory the graph keeps; every
//!   other operation's values are parameters of its node.
//! - **Dropping the graph is safe at any time.** It waits for its last
//!   launch (launches of one executable run in order), then frees what the
//!   launches read (kept fill values), frees its outputs stream-ordered,
//!   destroys the executable and trims the device's cached graph memory;
//!   the buffers' orders still hold the launches, so whatever uses the
//!   buffers next waits for them too.

mod capture;
mod executable;
mod held;
mod memory_nodes;
mod raw;
mod recording;

pub use executable::Graph;
pub use held::{Held, HeldAt, HeldBuffers, Recorded};
pub use memory_nodes::Output;
pub use recording::{FillParam, Recorder};
