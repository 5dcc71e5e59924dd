//! What a graph holds: the buffers given to [`Graph::capture`](crate::Graph::capture)
//! ([`Recorded`]: `&mut` and `&` buffers, views, tuples of them), how the
//! recording closure and [`Graph::buffers`](crate::Graph::buffers) see them
//! ([`HeldBuffers`], [`Held`]), and the allocation and byte range each one
//! stands for (`sealed::Part`).

use std::ops::Range;

use crate::buffers::buffer::{Buffer, HostAccessible, MemoryKind};
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::ops::{sealed::Engine, Memory, MemoryMut};
use crate::buffers::pitched::PitchedBuffer;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::{Elems, View, ViewMut};
use crate::error::Result;
use crate::memory::raw::RawMemory;

/// The buffers a [`Graph`](crate::Graph) records work on: `&mut` a buffer (the graph may
/// write it), `&` a buffer (it only reads it), an exclusive or shared view
/// by value, or a tuple of those (up to 12). Buffers are any
/// [`Buffer`] kind (device, pinned, unified, pool), a [`PitchedBuffer`], a
/// [`DeviceVec`], or views of them.
///
/// [`HeldBuffers`] is how the recording closure and [`Graph::buffers`](crate::Graph::buffers) see
/// them: a [`Held`] for `&mut` buffers and exclusive views, `&` for shared
/// ones, the view itself for shared views.
pub trait Recorded: sealed::Listed + for<'r> HeldAt<'r> {
    /// The buffers as [`HeldBuffers`].
    #[doc(hidden)]
    fn __held(&mut self) -> HeldBuffers<'_, Self>;
}

/// The buffers `A` (a [`Recorded`]) as the recording closure of
/// [`Graph::capture`](crate::Graph::capture) and
/// [`Graph::buffers`](crate::Graph::buffers) get them, borrowed for `'r`.
pub type HeldBuffers<'r, A> = <A as HeldAt<'r>>::Held;

/// The type of [`HeldBuffers`] (the second parameter, always the default,
/// makes `Self: 'r` implied wherever the trait is used for every `'r`).
#[doc(hidden)]
pub trait HeldAt<'r, Implied = &'r Self> {
    /// The held form.
    type Held;
}

pub(crate) mod sealed {
    /// The memory a recorded value stands for. Not nameable outside the crate.
    pub trait Listed {
        /// Calls `f` with every allocation and byte range of `self`.
        fn visit<'s, F: FnMut(Part<'s>)>(&'s self, f: &mut F);

        /// Appends every allocation and byte range of `self`.
        fn list<'s>(&'s self, out: &mut Parts<'s>) {
            self.visit(&mut |part| out.push(part));
        }
    }

    /// One buffer or view that a graph may hold.
    pub trait Target {
        /// Its allocation and byte range.
        fn memory(&self) -> Part<'_>;
    }

    /// An allocation and a byte range of it.
    pub struct Part<'s> {
        pub(crate) mem: &'s super::RawMemory,
        pub(crate) range: super::Range<usize>,
    }

    /// The parts of a graph's buffers: inline up to 16 (a launch lists them
    /// every time, without a heap allocation for the usual few; with 8, a
    /// graph of ten buffers paid a `malloc` and a `free` per launch, a
    /// quarter of its host instructions).
    pub type Parts<'s> = smallvec::SmallVec<[Part<'s>; 16]>;
}

use sealed::Part;

pub(super) fn part<T: DeviceCopy>(elems: Elems<'_, T>) -> Part<'_> {
    Part {
        mem: elems.mem,
        range: elems.span(),
    }
}

impl<T: DeviceCopy, K: MemoryKind> sealed::Target for Buffer<T, K> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for PitchedBuffer<T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for DeviceVec<T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems())
    }
}
impl<T: DeviceCopy> sealed::Target for View<'_, T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems)
    }
}
impl<T: DeviceCopy> sealed::Target for ViewMut<'_, T> {
    fn memory(&self) -> Part<'_> {
        part(self.elems)
    }
}

impl<M: sealed::Target + ?Sized> sealed::Listed for &mut M {
    fn visit<'s, F: FnMut(Part<'s>)>(&'s self, f: &mut F) {
        f((**self).memory());
    }
}
impl<M: sealed::Target + ?Sized> sealed::Listed for &M {
    fn visit<'s, F: FnMut(Part<'s>)>(&'s self, f: &mut F) {
        f((**self).memory());
    }
}
impl<T: DeviceCopy> sealed::Listed for ViewMut<'_, T> {
    fn visit<'s, F: FnMut(Part<'s>)>(&'s self, f: &mut F) {
        f(sealed::Target::memory(self));
    }
}
impl<T: DeviceCopy> sealed::Listed for View<'_, T> {
    fn visit<'s, F: FnMut(Part<'s>)>(&'s self, f: &mut F) {
        f(sealed::Target::memory(self));
    }
}

impl<'r, M: sealed::Target + ?Sized> HeldAt<'r> for &mut M {
    type Held = Held<'r, M>;
}
impl<M: sealed::Target + ?Sized> Recorded for &mut M {
    fn __held(&mut self) -> Held<'_, M> {
        Held(&mut **self)
    }
}
impl<'r, M: sealed::Target + ?Sized> HeldAt<'r> for &M {
    type Held = &'r M;
}
impl<M: sealed::Target + ?Sized> Recorded for &M {
    fn __held(&mut self) -> &M {
        self
    }
}
impl<'r, 'v, T: DeviceCopy> HeldAt<'r> for ViewMut<'v, T> {
    type Held = Held<'r, ViewMut<'v, T>>;
}
impl<T: DeviceCopy> Recorded for ViewMut<'_, T> {
    fn __held(&mut self) -> HeldBuffers<'_, Self> {
        Held(self)
    }
}
impl<'v, T: DeviceCopy> HeldAt<'_> for View<'v, T> {
    type Held = View<'v, T>;
}
impl<T: DeviceCopy> Recorded for View<'_, T> {
    fn __held(&mut self) -> HeldBuffers<'_, Self> {
        *self
    }
}

macro_rules! tuples {
    ($(($($name:ident),*);)*) => { $(
        impl<$($name: sealed::Listed),*> sealed::Listed for ($($name,)*) {
            #[allow(non_snake_case, unused_variables)]
            fn visit<'s, Fn_: FnMut(Part<'s>)>(&'s self, f: &mut Fn_) {
                let ($($name,)*) = self;
                $($name.visit(f);)*
            }
        }
        impl<'r, $($name: HeldAt<'r>),*> HeldAt<'r> for ($($name,)*) {
            type Held = ($($name::Held,)*);
        }
        impl<$($name: Recorded),*> Recorded for ($($name,)*) {
            #[allow(non_snake_case, clippy::unused_unit)]
            fn __held(&mut self) -> HeldBuffers<'_, Self> {
                let ($($name,)*) = self;
                ($($name.__held(),)*)
            }
        }
    )* };
}

tuples! {
    ();
    (A);
    (A, B);
    (A, B, C);
    (A, B, C, D);
    (A, B, C, D, E);
    (A, B, C, D, E, F);
    (A, B, C, D, E, F, G);
    (A, B, C, D, E, F, G, H);
    (A, B, C, D, E, F, G, H, I);
    (A, B, C, D, E, F, G, H, I, J);
    (A, B, C, D, E, F, G, H, I, J, K);
    (A, B, C, D, E, F, G, H, I, J, K, L);
}

/// A buffer (or exclusive view) that a [`Graph`](crate::Graph) holds exclusively, as the
/// recording closure and [`Graph::buffers`](crate::Graph::buffers) get it: every operation of the
/// buffer ([`Memory`], [`MemoryMut`], kernel arguments, and for pinned and
/// unified memory [`as_slice`](Held::as_slice) /
/// [`as_mut_slice`](Held::as_mut_slice)), but never the `&mut` to the buffer
/// itself, which could swap the recorded memory away.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
///
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut input = PinnedBuffer::<f32>::new(&ctx, 1024)?;
/// let mut device = DeviceBuffer::<f32>::new(&ctx, 1024)?;
/// let mut graph = Graph::capture(&stream, (&mut input, &mut device), |s, (input, mut device)| {
///     device.copy_from_host_async(&*input, s)
/// })?;
/// for step in 0..10 {
///     let (mut input, _) = graph.buffers();
///     input.as_mut_slice()?.fill(step as f32); // waits for the previous launch
///     graph.launch(&stream)?;
/// }
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct Held<'r, M: ?Sized>(pub(super) &'r mut M);

impl<T: DeviceCopy, M: Memory<T> + ?Sized> Engine<T> for Held<'_, M> {
    fn elems(&self) -> Elems<'_, T> {
        self.0.elems()
    }
}
impl<T: DeviceCopy, M: Memory<T> + ?Sized> Memory<T> for Held<'_, M> {}
impl<T: DeviceCopy, M: MemoryMut<T> + ?Sized> MemoryMut<T> for Held<'_, M> {}

impl<T: DeviceCopy, H: HostAccessible> Held<'_, Buffer<T, H>> {
    /// The buffer's [`as_slice`](Buffer::as_slice): waits for queued work
    /// on it (the graph's launches included).
    ///
    /// ```no_run
    /// # use cuda_mem::{Graph, PinnedBuffer};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut out = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut out,), |s, (mut out,)| {
    ///     cuda_mem::MemoryMut::fill_async(&mut out, 7, s)
    /// })?;
    /// graph.launch(&stream)?;
    /// let (out,) = graph.buffers();
    /// assert_eq!(out.as_slice()?, [7; 4]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.0.as_slice()
    }

    /// The buffer's [`as_mut_slice`](Buffer::as_mut_slice): waits for
    /// queued work on it (the graph's launches included). Between launches,
    /// the way to change a graph's input from the host.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut input = PinnedBuffer::<u32>::new(&ctx, 4)?;
    /// # let mut device = DeviceBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut input, &mut device), |s, (input, mut device)| {
    ///     device.copy_from_host_async(&*input, s)
    /// })?;
    /// graph.buffers().0.as_mut_slice()?.copy_from_slice(&[1, 2, 3, 4]);
    /// graph.launch(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.0.as_mut_slice()
    }
}

impl<T: DeviceCopy, H: HostAccessible> std::ops::Deref for Held<'_, Buffer<T, H>> {
    type Target = Buffer<T, H>;

    /// Shared access to a host-accessible buffer, so that it can be the
    /// source of an asynchronous host copy (`copy_from_host_async(&*input, s)`).
    fn deref(&self) -> &Buffer<T, H> {
        self.0
    }
}

impl<M: ?Sized> Held<'_, M> {
    /// The held buffer, shared.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # use cuda_mem::{DeviceBuffer, Graph};
    /// # let ctx = cuda_mem::context(0)?;
    /// # let stream = ctx.new_stream()?;
    /// # let mut a = DeviceBuffer::<u32>::new(&ctx, 4)?;
    /// let mut graph = Graph::capture(&stream, (&mut a,), |s, (mut a,)| a.fill_async(1, s))?;
    /// let (a,) = graph.buffers();
    /// assert_eq!(a.get().len(), 4);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn get(&self) -> &M {
        self.0
    }
}

impl<M: ?Sized> std::fmt::Debug for Held<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Held(..)")
    }
}
