//! The device std: what a kernel written in Rust uses, for the stock
//! `nvptx64-nvidia-cuda` target (nightly, `-Zbuild-std=core`, no NVVM, no
//! linker; build kernel crates with `cuda_mem::build::KernelCrate`).
//!
//! | what | where |
//! | --- | --- |
//! | thread, block and grid indices and sizes | [`thread_idx`], [`thread_idx_for`] (a fixed block shape, whose bounds the compiler then knows), [`block_idx`], [`block_dim`], [`grid_dim`], [`global_idx`], [`global_linear_idx`], [`total_threads`], [`Dim3`] ([`thread`]) |
//! | grid-stride loops, 1D, 2D, rows | [`grid_stride()`], [`grid_stride_2d`], [`grid_stride_rows`], [`GridStride`] ([`grid_stride`](mod@grid_stride)) |
//! | kernel parameters for buffers and views | [`DeviceSlice`] (read: [`grid_stride`](DeviceSlice::grid_stride), [`slice`](DeviceSlice::slice), `s[a..b]`, 16-byte [`aligned_chunks`](DeviceSlice::aligned_chunks)), [`DeviceSliceMut`] (each thread writes its own elements: [`grid_stride_zip`](DeviceSliceMut::grid_stride_zip) and [`this_thread_zip`](DeviceSliceMut::this_thread_zip) walk inputs beside them with no bounds check), [`DeviceAtomicSlice`] (atomic updates of any element) |
//! | checked and structure-of-arrays parameters | [`CheckedSlice`], [`CheckedSliceMut`] (`bool`s and enums, every read checked), [`SoaSlice`], [`SoaSliceMut`] (a `SoaBuffer`: whole structs field by field, or each field's array) ([`soa`]) |
//! | other write partitions | [`DeviceTilesMut`] (a block's own tiles, striped over its threads), [`DeviceChunksMut`] (contiguous chunks per thread), [`PitchedTilesMut`] (2D tiles per block, sub-tiles per thread) ([`tiles`]) |
//! | pitched 2D parameters (`PitchedBuffer`) | [`PitchedSlice`], [`PitchedSliceMut`] (per element), [`PitchedRowsMut`] (per row) |
//! | shared memory | [`shared_array!`](crate::shared_array), [`dynamic_shared!`](crate::dynamic_shared), safe [`load`](SharedSlice::load) / [`store`](SharedSlice::store) / [`add`](SharedSlice::add); unchecked accesses by [`SharedWindow`] address ([`ld_shared`](shared::ld_shared), [`st_shared_v4`](shared::st_shared_v4), ...) ([`shared`]) |
//! | barriers and fences | [`sync_threads`], [`sync_threads_count`], [`fence`] ([`sync`]) |
//! | atomics with a scope | [`DeviceAtomic`], [`Scope`] ([`atomic`]) |
//! | warp votes, shuffles, reductions, scans | [`warp`] |
//! | block reductions and scans | [`block`] |
//! | device-wide reductions and single-pass scans, per block ([`reduce_tiles`](wide::reduce_tiles), [`scan_tile`](wide::scan_tile), the look-back's [`TileStatus`](wide::TileStatus)), and their operators ([`Sum`](ops::Sum), [`Min`](ops::Min), [`Max`](ops::Max), your own [`Operator`](ops::Operator)) | [`wide`], [`ops`] |
//! | 16-byte and byte stores | [`store_global_v4`], [`load_global_v4`], [`store_global_u8`] |
//! | printing | [`device_printf!`](crate::device_printf) ([`print`](mod@print)) |
//! | panics | [`trap`], [`printing_panic_handler!`](crate::printing_panic_handler) ([`panic`](mod@panic)) |
//! | `f32`/`f64` math | [`math`] |
//!
//! # Safety model
//!
//! A kernel runs its body once per thread, and every thread receives the same
//! parameters. Safe code must not be able to make two threads race, so:
//! read-only parameters ([`DeviceSlice`], [`PitchedSlice`]) are plain shared
//! data; writable ones ([`DeviceSliceMut`], [`PitchedSliceMut`],
//! [`PitchedRowsMut`], and the partitions of [`tiles`]) give each thread,
//! through their safe methods, only the elements a fixed rule of the launch
//! (and of the parameter's *type*: a tile or chunk size is a constant of it)
//! assigns to it (and a `&mut` that lives no longer than the borrow of the
//! parameter), while any other access is `unsafe` with a stated contract;
//! [`DeviceAtomicSlice`] and [`DeviceAtomic`] allow anything, atomically.
//! Shared memory is reached by every thread of a block, so its safe
//! accesses are atomic: relaxed block-scope loads and stores, which compile
//! to the plain `LDS`/`STS` instructions (no cost) and never race; its plain
//! `read`/`write` remain `unsafe`. Barriers, votes, shuffles and the
//! collectives are safe: misusing them (a barrier some threads never reach)
//! can hang a kernel but not corrupt memory.
//!
//! # Kernels at CUDA C++ speed
//!
//! The entry point that [`#[kernel]`](macro@crate::kernel) writes takes each
//! slice's address as a pointer parameter of its own, so loads and stores
//! are global ones (`ld.global`/`st.global`), and it tells the compiler the
//! address is not null. What else matters, measured against the same
//! kernels in CUDA C++ (the `parity` rows of the benchmark):
//!
//! - **Fused multiply-add.** Rust never contracts `a * b + c` into one
//!   instruction (nvcc does, by default); write [`math::fma`]`(a, b, c)`
//!   (one `fma.rn`, one rounding) where the C++ would contract.
//! - **Loops without bounds checks.** Walk a read-only slice with
//!   [`DeviceSlice::grid_stride`], and several slices together with
//!   [`DeviceSliceMut::grid_stride_zip`] / [`this_thread_zip`](DeviceSliceMut::this_thread_zip):
//!   they yield only indices every slice has (one compare per element),
//!   where `input[i]` in a loop over another slice's indices checks each
//!   one. Prefer `get(i)` (an `Option`, no panic path) to `input[i]` where an
//!   index can be out of range: a possible trap between loads keeps them from
//!   being in flight together.
//! - **Wide loads.** [`DeviceSlice::aligned_chunks`] gives the 16-byte
//!   aligned middle of a slice as `[T; N]` chunks: one vector load each.
//! - **Known block shapes.** [`thread_idx_for::<X, Y, Z>()`](thread_idx_for)
//!   checks the block shape once and then lets the compiler drop the bounds
//!   checks of shared-memory indices computed from the thread's index.
//! - **Grids of whole waves.** The `occupancy` method of every kernel gives
//!   [`Occupancy`](crate::Occupancy)`::waves(1)`, a grid that fills every
//!   multiprocessor, for grid-stride loops.
//! - **1D launches** take a short path: [`global_linear_idx`] reads two
//!   special registers and multiplies once.
//!
//! # One module, every target
//!
//! On `nvptx64` each function is a few PTX instructions of inline assembly
//! (not `core::arch::nvptx`, whose signatures change between toolchains).
//! Everywhere else the module builds too, and runs a kernel as a grid of one
//! thread: block and grid of size 1, a warp of one lane (barriers return at
//! once, shuffles return the caller's value, ballots have one bit), atomics
//! from `core::sync::atomic`, shared memory owned by the thread. So a crate
//! shared by the host and its kernels type-checks and documents on the host,
//! and a kernel's logic can be unit-tested on the CPU by calling it like a
//! function (as the examples here do).
#![deny(unsafe_op_in_unsafe_fn)]

/// Reads a 32-bit special register (`%tid.x`, `%laneid`, ...): a pure
/// `mov.u32`, so an unused read costs nothing. With `in LO..=HI`, the value
/// is declared to lie in that range (CUDA's limits on the register), which
/// lets the compiler prove index arithmetic does not overflow and drop
/// the bounds checks that follow from it.
#[cfg(target_arch = "nvptx64")]
macro_rules! special_register {
    ($reg:literal) => {{
        let value: u32;
        // SAFETY: reading a special register has no precondition and no
        // side effect.
        unsafe {
            core::arch::asm!(
                concat!("mov.u32 {v}, ", $reg, ";"),
                v = out(reg32) value,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        value
    }};
    ($reg:literal in $lo:literal..=$hi:literal) => {{
        let value: u32 = $crate::device::special_register!($reg);
        // SAFETY: the hardware keeps the register in this range (CUDA's
        // limits: at most 1024 threads per block, 64 along `z`; at most
        // 2^31 - 1 blocks along `x` and 65535 along `y` and `z`).
        unsafe { core::hint::assert_unchecked(value.wrapping_sub($lo) <= $hi - $lo) };
        value
    }};
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use special_register;

pub mod atomic;
pub mod atomic_slice;
pub mod block;
pub mod dim;
pub mod grid_stride;
pub mod math;
pub mod memory;
pub mod ops;
pub mod panic;
pub mod pitched;
pub mod print;
pub mod shared;
pub mod slice;
pub mod soa;
pub mod sync;
pub mod thread;
pub mod tiles;
mod unroll;
pub mod warp;
pub mod wide;

pub use atomic::{AtomicInteger, AtomicValue, DeviceAtomic, Scope};
pub use atomic_slice::DeviceAtomicSlice;
pub use dim::{Dim3, Index3};
pub use grid_stride::{
    grid_stride, grid_stride_2d, grid_stride_rows, grid_stride_x, GridStride, GridStride2d,
};
pub use memory::{load_global_v4, store_global_u8, store_global_v4};
pub use panic::trap;
pub use pitched::{
    Cross, PitchedGridStrideMut, PitchedRowsIterMut, PitchedRowsMut, PitchedSlice, PitchedSliceMut,
};
pub use print::PrintfArg;
pub use shared::{SharedAdd, SharedArray, SharedScalar, SharedSlice, SharedWindow};
pub use slice::{
    Align16, CheckedMut, CheckedSlice, CheckedSliceMut, DeviceSlice, DeviceSliceMut, GridStrideMut,
    GridStrideRef, GridStrideZip, ZipInputs,
};
pub use soa::{Slices, SlicesMut, SoaItemMut, SoaSlice, SoaSliceMut};
pub use sync::{
    fence, nanosleep, sync_threads, sync_threads_and, sync_threads_count, sync_threads_or,
};
pub use thread::{
    block_dim, block_idx, block_rank, block_size, block_thread_rank, global_idx, global_linear_idx,
    global_row, grid_blocks, grid_dim, grid_threads, thread_idx, thread_idx_for, total_threads,
};
pub use tiles::{
    ChunksMut, DeviceChunksMut, DeviceTilesMut, ElementsMut, PitchedTileMut, PitchedTilesIterMut,
    PitchedTilesMut, TileCellsMut, TileMut, TilesMut,
};
