//! `engine/`: the one engine behind every buffer kind and view. It owns
//! [`Elems`] (a typed rectangle of one allocation) and the one implementation
//! of every operation on it: shapes and range checks, ordering, memset,
//! `fill` and its kernels (`fill`; the pattern arithmetic the kernels share,
//! `fill_pattern`, builds without the host API; so does `soa_table`, the
//! parameter of the structure-of-arrays transpositions), copies between any two
//! kinds, shapes and contexts (`peer` for what is cross-context), host copies
//! staged through pinned memory (`staging`, on the threads of `workers`; its
//! timeline for diagnosis, `staging::timeline`), and
//! the views ([`View`], [`ViewMut`]) and kernel arguments ([`KernelArg`]) that
//! carry it.
//!
//! May use: `memory/`, `context`, `order/`, `copy/`, `error`.

#[cfg(feature = "host")]
mod copy;
#[cfg(feature = "host")]
mod elems;
#[cfg(feature = "host")]
pub(crate) mod fill;
#[doc(hidden)]
pub mod fill_pattern;
#[cfg(feature = "host")]
pub(crate) mod peer;
#[cfg(feature = "host")]
mod shape;
#[doc(hidden)]
pub mod soa_table;
#[cfg(feature = "host")]
pub(crate) mod staging;
#[cfg(feature = "host")]
mod streaming_copy;
#[cfg(feature = "host")]
mod views;
#[cfg(feature = "host")]
pub(crate) mod workers;

#[cfg(all(feature = "host", feature = "nccl"))]
pub(crate) use elems::take_cudarc_refusal;
#[cfg(feature = "host")]
pub use elems::Elems;
#[cfg(feature = "host")]
pub use views::{AsView, KernelArg, View, ViewMut};
