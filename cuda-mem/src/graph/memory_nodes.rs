//! Memory a graph allocates itself, as memory nodes of the graph: the
//! [`Output`] handles of memory kept from one launch to the next, the
//! [`OwnedMemory`] behind them, and [`output_of`], which finds one. The
//! [`Recorder`](crate::Recorder) records memory nodes, temporaries and
//! outputs (`recording`); the [`Graph`](crate::Graph) frees its outputs
//! and hands them out between launches (`executable`).

use std::any::Any;
use std::marker::PhantomData;

use crate::buffers::buffer::PoolBuffer;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::graph::held::{part, sealed::Part, Held};

/// Memory that a graph allocates itself and keeps between launches.
pub(super) trait OwnedMemory: Any + Send {
    fn part(&self) -> Part<'_>;
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// Drops it without a free: no launch allocated it.
    fn never_allocated(self: Box<Self>);
}

impl<T: DeviceCopy + Send + 'static> OwnedMemory for PoolBuffer<T> {
    fn part(&self) -> Part<'_> {
        part(self.elems())
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn never_allocated(self: Box<Self>) {
        self.into_raw().never_allocated();
    }
}

/// A handle to memory a graph allocates itself and keeps from one launch to the
/// next ([`Recorder::output`](crate::Recorder::output));
/// [`Recorder::with_output`](crate::Recorder::with_output) records work on it,
/// [`Graph::output`](crate::Graph::output) reaches it between launches.
pub struct Output<T> {
    pub(super) graph: u64,
    pub(super) index: usize,
    pub(super) _t: PhantomData<fn() -> T>,
}

impl<T> Clone for Output<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Output<T> {}

impl<T> std::fmt::Debug for Output<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Output")
            .field("graph", &self.graph)
            .field("index", &self.index)
            .finish()
    }
}

/// The [`Output`] `output` among `outputs`, as a [`Held`].
pub(super) fn output_of<'o, T: DeviceCopy + Send + 'static>(
    outputs: &'o mut [Box<dyn OwnedMemory>],
    output: &Output<T>,
) -> Result<Held<'o, PoolBuffer<T>>> {
    outputs
        .get_mut(output.index)
        .and_then(|o| o.as_any_mut().downcast_mut::<PoolBuffer<T>>())
        .map(Held)
        .ok_or(Error::InvalidArgument(
            "an Output that its graph does not have (a bug in cuda-mem; please report it)",
        ))
}
