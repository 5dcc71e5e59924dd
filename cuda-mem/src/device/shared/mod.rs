//! Shared memory: fast on-chip memory that the threads of one block share.
//!
//! - [`shared_array!`](crate::shared_array)`[T; N]` declares a static
//!   array, one per block for each place the macro is written (CUDA's
//!   `__shared__ T a[N]`), and gives a [`SharedArray<T, N>`].
//! - [`dynamic_shared!`](crate::dynamic_shared)`(T)` views the block's
//!   dynamic shared memory (the size given at launch, CUDA's
//!   `extern __shared__ T a[]`) as a [`SharedSlice<T>`] whose length comes
//!   from `%dynamic_smem_size`, so it never reaches past what the launch
//!   provided.
//! - [`SharedWindow`]: an address in the shared window (what `ld.shared`
//!   takes), from [`SharedSlice::window`] or [`SharedWindow::from_ptr`], and
//!   the plain accesses through it with no bounds check, one `LDS` / `STS`
//!   each, all `unsafe`: [`ld_shared`] / [`st_shared`] of a `u8`, `u16` or
//!   `u32` ([`SharedScalar`]) and [`ld_shared_v4`] / [`st_shared_v4`] of 16
//!   bytes. For kernels that keep their own addresses in a shared tile;
//!   [`SharedWindow::addr`] gives the raw address ([`SharedAddr`], `u32`
//!   on the device) for arithmetic of one's own or inline assembly. On the
//!   host a window address is the memory's ordinary address.
//!
//! # What is safe
//! Every thread of the block reaches the same memory through its own
//! handle, so every safe access is atomic: [`load`](SharedSlice::load) and
//! [`store`](SharedSlice::store) are *relaxed, block-scope* accesses
//! (`ld.relaxed.cta.shared` / `st.relaxed.cta.shared`, which compile to the
//! very `LDS` / `STS` instructions of a plain access: there is no cost), so
//! two threads that meet on an element never race in the sense of
//! undefined behaviour; [`add`](SharedSlice::add) is a block-scope atomic
//! add in shared memory (`red.shared.add`, which the compiler turns into
//! warp-aggregated `ATOMS.POPC.INC` increments when many lanes add 1), and
//! [`atomic`](SharedSlice::atomic) gives every other atomic operation. What
//! a thread reads after another's store is its business, as in CUDA C++:
//! separate the phases with [`sync_threads`](super::sync_threads) (which
//! orders shared memory within the block) to read what the others wrote.
//! Elements wider than 16 bytes are read and written 4 bytes at a time
//! (a read that meets a store may see parts of both values; the element
//! type is [`DeviceCopy`](crate::DeviceCopy), so any bytes are a valid value). The plain
//! accesses [`read`](SharedSlice::read) and [`write`](SharedSlice::write)
//! remain, `unsafe`, with the usual contract. Taking a typed view of the
//! dynamic memory is `unsafe`: two views of different types alias the same
//! bytes with accesses of different sizes. The element type is
//! [`DeviceCopy`](crate::DeviceCopy), so whatever bytes the memory holds (it starts
//! uninitialised) are a valid value.
//!
//! # How it works on `nvptx64`
//! A static array is a module-scope `.shared` variable declared with
//! `global_asm!` in the crate that expands the macro, named after a hash of
//! the macro's place (file, line, column, module, type, length), and its
//! address is taken with `cvta.shared`. So it is one array per *place*,
//! however often the code is inlined, unrolled or called; two kernels of
//! one module that reach the same place each get their own copy per block.
//! The macros must be expanded in the kernel crate itself (the crate whose
//! PTX is built: `global_asm!` of a dependency does not reach it), with a
//! type and length that do not depend on generic parameters. The kernel
//! builder checks that every shared array the PTX uses is declared in it.
//! Dynamic shared memory is the module's `.extern .shared` array
//! `__cuda_mem_dynamic_shared` (16-byte aligned).
//!
//! On other targets the block is one thread: a static array is a zeroed
//! array owned by the handle (on the stack), and there is no dynamic shared
//! memory (its length is 0).

mod access;
mod array;
mod slice;
mod window;

pub use access::SharedAdd;
pub use array::SharedArray;
#[doc(hidden)]
pub use array::{__align, __site};
pub use slice::SharedSlice;
pub use window::{
    ld_shared, ld_shared_v4, st_shared, st_shared_v4, SharedAddr, SharedScalar, SharedWindow,
};
