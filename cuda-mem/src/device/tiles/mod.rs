//! Writable kernel parameters owned block by block, and chunk by chunk:
//! the write partitions besides [`DeviceSliceMut`](super::DeviceSliceMut)'s
//! one element per thread.
//!
//! | parameter | who owns what |
//! | --- | --- |
//! | [`DeviceTilesMut<T, TILE>`] | tile `j` (elements `j * TILE ..`, `TILE` of them) belongs to block `j % grid_blocks()`; inside it, element `k` to the thread of rank `k % block_size()` (striped: a warp writes consecutive elements) |
//! | [`DeviceChunksMut<T, C>`] | chunk `c` (elements `c * C ..`, `C` of them, contiguous) belongs to the thread whose [`global_linear_idx`](super::global_linear_idx) is `c % total_threads()` |
//! | [`PitchedTilesMut<T, W, H>`] | the `W x H` tile `(X, Y)` of a pitched array belongs to the block `(X % Gx, Y % Gy)` (`y` and `z` of the grid folded, as [`global_row`](super::global_row) folds them); inside it, cell `(x, y)` to the thread `(x % Bx, y % By)` of the block (`y` and `z` of the block folded) |
//!
//! # Why they are safe
//!
//! Each rule depends only on the launch (the grid and block sizes, the
//! calling thread's place in them) and on a constant of the parameter's
//! *type* (`TILE`, `C`, `W`, `H`), never on what a thread computes: so
//! every thread of the grid applies the same rule to the same parameter,
//! and the rule gives each element to exactly one thread. (A size chosen at
//! run time could differ from thread to thread, and two rules could give
//! one element to two threads; a size in the type cannot.) The safe methods
//! hand a thread only its own elements, as `&mut` borrows of the parameter
//! (so a thread holds at most one reference to each), and the tiles and
//! chunks a thread holds at once are disjoint. A read of an element that
//! belongs to another thread or block needs a [`DeviceSlice`](super::DeviceSlice)
//! of other memory (or `unsafe`): these parameters only write their own.
//!
//! The partitions need no synchronisation: unlike shared memory, no other
//! thread ever touches a thread's elements during the kernel.
//!
//! ```
//! use cuda_mem::device::DeviceTilesMut;
//! let mut out = [0u32; 6];
//! // SAFETY: `out` outlives the parameter, which is its only user.
//! let mut tiles = unsafe { DeviceTilesMut::<u32, 4>::from_raw_parts(out.as_mut_ptr(), 6) };
//! for mut tile in tiles.tiles_mut() {
//!     let first = tile.start() as u32;
//!     for (k, x) in tile.thread_elements_mut() {
//!         *x = first + k as u32; // every element of the block's tiles
//!     }
//! }
//! # drop(tiles);
//! assert_eq!(out, [0, 1, 2, 3, 4, 5]); // the host model: one block of one thread
//! ```

mod block_tiles;
mod chunks;
mod pitched;

pub use block_tiles::{DeviceTilesMut, ElementsMut, TileMut, TilesMut};
pub use chunks::{ChunksMut, DeviceChunksMut};
pub use pitched::{PitchedTileMut, PitchedTilesIterMut, PitchedTilesMut, TileCellsMut};
