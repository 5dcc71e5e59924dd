//! `algo/`: device-wide algorithms on typed buffers, one call each:
//! reductions ([`sum`], [`min`], [`max`], [`reduce`], [`count`],
//! [`min_index`], [`max_index`]), single-pass scans ([`inclusive_scan`],
//! [`exclusive_scan`], in place or not), compactions ([`select_flagged`],
//! [`unique`], [`run_length_encode`]), histograms ([`histogram_even`],
//! [`histogram_range`]) and radix sorts ([`sort`], [`sort_pairs`]:
//! stable, values of any `DeviceCopy` type; keys of every integer type and
//! `f32` / `f64`; and per segment, [`segmented_sort`],
//! [`segmented_sort_pairs`]), on every
//! buffer kind and view (`impl Memory<T>`), for `i32`, `u32`, `i64`, `u64`,
//! `f32` and `f64`. It owns the algorithms' host side (`reduce`, `scan`,
//! `select`, `histogram`, `sort`), the types and operators they are shipped for (`element`),
//! the loading and launching of their kernels (`kernels`), and the memory
//! they work in: pool temporaries and the state memory each stream keeps
//! for them (`scratch`).
//!
//! May use: `buffers/`, `engine/`, `memory/`, `context`, `order/`,
//! `copy/`, `device/`, `error`.
//!
//! - **Ordered like every operation.** A call is queued on a stream (the
//!   memory's default stream for the calls that return a value, which
//!   wait for it; the stream you give for the others) after earlier work
//!   on its buffers, and later work on them waits for it.
//! - **No temporary-storage dance.** There is no two-phase size query as
//!   in CUB. A reduction is one launch whose blocks meet in a few KB of
//!   state memory that the stream keeps for the next call (the kernel
//!   leaves it ready), and the single-pass scans and compactions zero
//!   their tile states there, so these calls queue no allocation or free.
//!   Up to 16 streams per context keep such a block, each holding a
//!   reference to its stream (a stream you drop is destroyed once 16 other
//!   streams have run reductions, or with the context). Larger
//!   temporaries (a sort's) come from the device's stream-ordered pool on
//!   the call's stream and go back to it behind the kernels.
//! - **Graphs.** Inside [`Graph::capture`](crate::Graph::capture), give
//!   the recorder as the stream: the kernels are recorded, and the
//!   temporaries become memory nodes of the graph.
//! - **Results.** A reduction returns its value ([`sum`]: waits), or
//!   writes it into a one-element buffer you give ([`reduce_into`],
//!   [`count_into`], [`min_index_into`]) or a new one
//!   ([`reduce_to_buffer`]), where kernels and later calls use it without
//!   a trip to the host. Scans write into a buffer you give, or in place.
//!   Compactions write into buffers you give and return their count
//!   (waiting for it), or keep it on the device (`_into`).
//! - **Exact semantics.** Integer sums wrap; float [`Min`] / [`Max`] are
//!   IEEE `minimum` / `maximum` (a NaN wins, `-0.0 < +0.0`), so a result
//!   does not depend on how the work was split; float sums are combined
//!   in a tree (the last bits may differ from a loop's). [`min_index`] /
//!   [`max_index`] give the *first* index of the extreme.
//! - **Contiguous memory.** Padded 2D memory is refused (an `Err` that
//!   says to copy it into a packed buffer).
//!
//! The kernels are written in Rust (`algo-kernels/`, over the device std's
//! [`wide`](crate::device::wide) blocks, which a user kernel can run on its
//! own types and operators) and ship as PTX inside the package
//! ([`kernels_ptx`]), loaded into a context at its first algorithm call.
//!
//! ```no_run
//! use cuda_mem::device::ops::Sum;
//! use cuda_mem::prelude::*;
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3.0f32, 1.0, 2.0])?;
//! assert_eq!(cuda_mem::algo::sum(&x)?, 6.0);
//! assert_eq!(cuda_mem::algo::min_index(&x)?, Some((1, 1.0)));
//! let mut running = cuda_mem::DeviceBuffer::<f32>::zeroed(&ctx, 3)?;
//! cuda_mem::algo::inclusive_scan(&x, &mut running, Sum, &stream)?;
//! assert_eq!(running.to_vec()?, [3.0, 4.0, 6.0]);
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! [`Min`]: crate::device::ops::Min
//! [`Max`]: crate::device::ops::Max

mod element;
mod histogram;
pub(crate) mod kernels;
mod reduce;
mod scan;
mod scratch;
mod select;
mod sort;

pub use element::{BuiltinOp, Numeric};
pub use histogram::{histogram_even, histogram_range, BinRange, HistogramCount};
pub use kernels::{kernel_names, kernel_ptx, kernels_ptx};
pub use reduce::{
    count, count_into, max, max_index, max_index_into, min, min_index, min_index_into, reduce,
    reduce_into, reduce_to_buffer, sum,
};
pub use scan::{exclusive_scan, exclusive_scan_in_place, inclusive_scan, inclusive_scan_in_place};
pub use select::{
    run_length_encode, run_length_encode_into, select_flagged, select_flagged_into, unique,
    unique_into,
};
#[cfg(feature = "test-hooks")]
pub use sort::__force_pairs_pass;
pub use sort::{segmented_sort, segmented_sort_pairs, sort, sort_pairs, SortKey, SortOrder};
