//! The device std: what a kernel written in Rust uses, for the stock
//! `nvptx64-nvidia-cuda` target (nightly, `-Zbuild-std=core`, no NVVM, no
//! linker; build kernel crates with `cuda_mem::build::KernelCrate`).
//!
//! | what | where |
//! | --- | --- |
//! | thread, block and grid indices and sizes | [`thread_idx`], [`block_idx`], [`block_dim`], [`grid_dim`], [`global_idx`], [`global_linear_idx`], [`total_threads`], [`Dim3`] ([`thread`]) |
//! | grid-stride loops, 1D, 2D, rows | [`grid_stride()`], [`grid_stride_2d`], [`grid_stride_rows`], [`GridStride`] ([`grid_stride`](mod@grid_stride)) |
//! | kernel parameters for buffers and views | [`DeviceSlice`] (read), [`DeviceSliceMut`] (each thread writes its own elements), [`DeviceAtomicSlice`] (atomic updates of any element) |
//! | pitched 2D parameters (`PitchedBuffer`) | [`PitchedSlice`], [`PitchedSliceMut`] (per element), [`PitchedRowsMut`] (per row) |
//! | shared memory | [`shared_array!`](crate::shared_array), [`dynamic_shared!`](crate::dynamic_shared) ([`shared`]) |
//! | barriers and fences | [`sync_threads`], [`sync_threads_count`], [`fence`] ([`sync`]) |
//! | atomics with a scope | [`DeviceAtomic`], [`Scope`] ([`atomic`]) |
//! | warp votes, shuffles, reductions | [`warp`] |
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
//! [`PitchedRowsMut`]) give each thread, through their safe methods, only
//! the elements a fixed rule of the launch assigns to it (and a `&mut` that
//! lives no longer than the borrow of the parameter), while any other access
//! is `unsafe` with a stated contract; [`DeviceAtomicSlice`] and
//! [`DeviceAtomic`] allow anything, atomically. Shared memory is reached by
//! every thread of a block, so its plain accesses are `unsafe` and its
//! atomics safe. Barriers, votes and shuffles are safe: misusing them
//! (a barrier some threads never reach) can hang a kernel but not corrupt
//! memory.
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
/// `mov.u32`, so an unused read costs nothing.
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
}
#[cfg(target_arch = "nvptx64")]
pub(crate) use special_register;

pub mod atomic;
pub mod atomic_slice;
pub mod dim;
pub mod grid_stride;
pub mod math;
pub mod memory;
pub mod panic;
pub mod pitched;
pub mod print;
pub mod shared;
pub mod slice;
pub mod sync;
pub mod thread;
pub mod warp;

pub use atomic::{AtomicInteger, AtomicValue, DeviceAtomic, Scope};
pub use atomic_slice::DeviceAtomicSlice;
pub use dim::{Dim3, Index3};
pub use grid_stride::{
    grid_stride, grid_stride_2d, grid_stride_rows, grid_stride_x, GridStride, GridStride2d,
};
pub use memory::{load_global_v4, store_global_u8, store_global_v4};
pub use panic::trap;
pub use pitched::{
    PitchedGridStrideMut, PitchedRowsIterMut, PitchedRowsMut, PitchedSlice, PitchedSliceMut,
};
pub use print::PrintfArg;
pub use shared::{SharedArray, SharedSlice};
pub use slice::{DeviceSlice, DeviceSliceMut, GridStrideMut};
pub use sync::{fence, sync_threads, sync_threads_and, sync_threads_count, sync_threads_or};
pub use thread::{
    block_dim, block_idx, block_rank, block_size, block_thread_rank, global_idx, global_linear_idx,
    global_row, grid_blocks, grid_dim, grid_threads, thread_idx, total_threads,
};
