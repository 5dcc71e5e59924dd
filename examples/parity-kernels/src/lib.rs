//! The kernels of the parity benchmark (`bench --parity-only`), written in
//! safe Rust with `cuda_mem::device` only: no `unsafe` in any kernel body or
//! launch. Each has a CUDA C++ twin in `cuda/parity.cu`, the same algorithm
//! with the same launch shape, which the benchmark builds with nvcc and
//! runs on the same data.
//!
//! | kernel | what | launch |
//! | --- | --- | --- |
//! | [`saxpy`] | `y = a x + y`, `f32`, one element per thread | `n / 256` blocks of 256 |
//! | [`sum_u32`] | sum of `u32` (wrapping), grid-stride scalar loads, block sum, one atomic per block | whole waves of 256 |
//! | [`sum_u32_v4`] | the same with 16-byte loads | whole waves of 256 |
//! | [`histogram`] | 256 bins of bytes, shared-memory bins | whole waves of 256 |
//! | [`stencil5`] | 5-point stencil of a pitched `f32` image | `32 x 8` blocks, one cell each |
//! | [`transpose_tile32`] | transpose through a `32 x 33` shared tile, each thread writing its own cell | `32 x 32` blocks, one cell each |
//! | [`transpose_classic`] | the same with `32 x 8` blocks, four cells each of the block's own tile ([`PitchedTilesMut`]) | `32 x 8` blocks |
//! | [`particles_step`] | update of an array of 32-byte structs | `n / 256` blocks of 256 |
//! | [`scan_reduce_tiles`], [`scan_tile_sums`], [`scan_tiles`] | exclusive scan of `u32` in three passes over tiles of 2048 | `n / 2048` blocks of 256, then 1, then `n / 2048` |
#![no_std]

use cuda_mem::device::{
    block, block_idx, block_thread_rank, math, sync_threads, thread_idx_for, DeviceAtomicSlice,
    DeviceSlice, DeviceSliceMut, DeviceTilesMut, PitchedSlice, PitchedSliceMut, PitchedTilesMut,
    Scope, SharedSlice,
};
use cuda_mem::{kernel, DeviceCopy};

/// Threads per block of the 1D kernels.
pub const BLOCK: usize = 256;

/// Elements per thread of a scan tile.
pub const ITEMS: usize = 8;

/// Elements of a scan tile: `BLOCK * ITEMS`.
pub const TILE: usize = BLOCK * ITEMS;

/// `y[i] = a * x[i] + y[i]` (one `fma.rn`, as nvcc contracts it) for every
/// `i` both have, one element per thread.
#[kernel(block = [256])]
pub fn saxpy(mut y: DeviceSliceMut<f32>, x: DeviceSlice<f32>, a: f32) {
    if let Some((y, &x)) = y.this_thread_zip(x) {
        *y = math::fma(a, x, *y);
    }
}

/// Adds the wrapping sum of `input` to `total[0]`: each thread sums its
/// grid-stride share, the block sums the threads', one atomic per block.
#[kernel(block = [256])]
pub fn sum_u32(input: DeviceSlice<u32>, total: DeviceAtomicSlice<u32>) {
    let scratch = cuda_mem::shared_array![u32; BLOCK / 32];
    let mut acc = 0u32;
    for (_, &v) in input.grid_stride() {
        acc = acc.wrapping_add(v);
    }
    add_block_total(acc, scratch.as_slice(), total);
}

/// [`sum_u32`] with 16-byte loads: the aligned middle of `input` as
/// `[u32; 4]` chunks, its unaligned ends one element at a time.
#[kernel(block = [256])]
pub fn sum_u32_v4(input: DeviceSlice<u32>, total: DeviceAtomicSlice<u32>) {
    let scratch = cuda_mem::shared_array![u32; BLOCK / 32];
    let (head, chunks, tail) = input.aligned_chunks::<4>();
    let mut acc = 0u32;
    for (_, chunk) in chunks.grid_stride() {
        let [a, b, c, d] = chunk.0;
        acc = acc.wrapping_add(a.wrapping_add(b).wrapping_add(c.wrapping_add(d)));
    }
    for (_, &v) in head.grid_stride().chain(tail.grid_stride()) {
        acc = acc.wrapping_add(v);
    }
    add_block_total(acc, scratch.as_slice(), total);
}

/// The block's sum of `acc`, added to `total[0]` by its first thread.
#[inline(always)]
fn add_block_total(acc: u32, scratch: SharedSlice<'_, u32>, total: DeviceAtomicSlice<u32>) {
    let block_total = block::sum::<u32, BLOCK>(acc, scratch);
    if block_thread_rank() == 0 {
        if let Some(total) = total.get(0) {
            total.fetch_add(block_total, Scope::Device);
        }
    }
}

/// Counts the bytes of `input` into 256 `bins`: per-block bins in shared
/// memory (atomic adds of 1, which the compiler aggregates per warp), then
/// one global atomic per bin and block.
#[kernel(block = [256])]
pub fn histogram(input: DeviceSlice<u8>, bins: DeviceAtomicSlice<u32>) {
    let local = cuda_mem::shared_array![u32; 256];
    let rank = block_thread_rank() as usize;
    let mut k = rank;
    while k < 256 {
        local.store(k, 0);
        k += BLOCK;
    }
    sync_threads();
    for (_, &byte) in input.grid_stride() {
        local.add(byte as usize, 1);
    }
    sync_threads();
    let mut k = rank;
    while k < 256 {
        let count = local.load(k);
        if count != 0 {
            if let Some(bin) = bins.get(k) {
                bin.fetch_add(count, Scope::Device);
            }
        }
        k += BLOCK;
    }
}

/// `out(x, y) = c0 * in(x, y) + c1 * (left + right + up + down)` inside,
/// `in(x, y)` on the border; one cell per thread.
#[kernel(block = [32, 8])]
pub fn stencil5(mut out: PitchedSliceMut<f32>, input: PitchedSlice<f32>, c0: f32, c1: f32) {
    if let Some((x, y, cell)) = out.this_thread_cell() {
        // Inside, the cell and its four neighbours; on the border, the cell.
        if let Some(c) = input.cross(x, y) {
            *cell = math::fma(c1, c.left + c.right + c.up + c.down, c0 * c.center);
        } else if let Some(&here) = input.get(x, y) {
            *cell = here;
        }
    }
}

/// Row length of a transpose tile in shared memory: 32 and one column of
/// padding, so that the column reads hit 32 different banks.
const PADDED: usize = 33;

/// `out(x, y) = in(y, x)` for a square tile per block: the block reads the
/// input tile that lands in its output tile into shared memory, row by row
/// (coalesced), and writes its output tile row by row. `32 x 32` threads,
/// one cell each, on a 2D grid of a block per tile.
///
/// The read comes first, from the block's place (each input cell checked),
/// so that every thread reaches the barrier; the coordinates are 32-bit, as
/// in C++. After the barrier each thread writes its own cell of the output
/// ([`PitchedSliceMut::this_thread_mut`]: the cell at its global index,
/// which on a 2D grid of `32 x 32` blocks is its place in the block's
/// output tile).
#[kernel(block = [32, 32])]
pub fn transpose_tile32(mut out: PitchedSliceMut<f32>, input: PitchedSlice<f32>) {
    let tile = cuda_mem::shared_array![f32; 32 * PADDED];
    let t = thread_idx_for::<32, 32, 1>();
    let b = block_idx();
    // The output tile at (ox, oy) is the input tile at (oy, ox). (Wrapping
    // only past 2^32 columns, where no array reaches, and checked below.)
    let (ox, oy) = (b.x.wrapping_mul(32), b.y.wrapping_mul(32));
    let at = |a: u32, b: u32| a.wrapping_add(b) as usize;
    if let Some(&v) = input.get(at(oy, t.x), at(ox, t.y)) {
        tile.store((t.y * PADDED as u32 + t.x) as usize, v);
    }
    sync_threads();
    if let Some(cell) = out.this_thread_mut() {
        *cell = tile.load((t.x * PADDED as u32 + t.y) as usize);
    }
}

/// [`transpose_tile32`] with `32 x 8` threads per `32 x 32` tile: each
/// thread moves four cells, rows `ty`, `ty + 8`, `ty + 16`, `ty + 24` (all
/// four loads first, so they are in flight together).
#[kernel(block = [32, 8])]
#[allow(clippy::needless_range_loop)] // indexing a fixed array: no local-memory copy of it
pub fn transpose_classic(mut out: PitchedTilesMut<f32, 32, 32>, input: PitchedSlice<f32>) {
    let tile = cuda_mem::shared_array![f32; 32 * PADDED];
    let t = thread_idx_for::<32, 8, 1>();
    let (tx, ty) = (t.x as usize, t.y as usize);
    if let Some(mut own) = out.this_block_tile_mut() {
        let (ox, oy) = own.origin();
        let loaded: [Option<f32>; 4] =
            core::array::from_fn(|j| input.get(oy + tx, ox + ty + 8 * j).copied());
        for j in 0..4 {
            if let Some(v) = loaded[j] {
                tile.store((ty + 8 * j) * PADDED + tx, v);
            }
        }
        sync_threads();
        for j in 0..4 {
            if let Some(cell) = own.thread_element_mut(0, j) {
                *cell = tile.load(tx * PADDED + ty + 8 * j);
            }
        }
    }
}

/// A charged particle: 32 bytes, an array of structs on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Particle {
    /// Position.
    pub pos: [f32; 3],
    /// Mass.
    pub mass: f32,
    /// Velocity.
    pub vel: [f32; 3],
    /// Charge.
    pub charge: f32,
}

impl Particle {
    /// One step in a uniform `field`: `vel += field * (charge / mass) *
    /// dt`, then `pos += vel * dt` (each an `fma`). The kernel and the CPU
    /// check share it.
    ///
    /// ```
    /// let mut p = parity_kernels::Particle { mass: 2.0, charge: 4.0, ..Default::default() };
    /// p.step([1.0, 0.0, 0.0], 0.5);
    /// assert_eq!((p.vel[0], p.pos[0]), (1.0, 0.5));
    /// ```
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // one index over three arrays
    pub fn step(&mut self, field: [f32; 3], dt: f32) {
        let k = self.charge / self.mass;
        for a in 0..3 {
            self.vel[a] = math::fma(field[a] * k, dt, self.vel[a]);
            self.pos[a] = math::fma(self.vel[a], dt, self.pos[a]);
        }
    }
}

/// [`Particle::step`] for every particle, one per thread.
#[kernel(block = [256])]
pub fn particles_step(mut particles: DeviceSliceMut<Particle>, field: [f32; 3], dt: f32) {
    if let Some(p) = particles.this_thread_mut() {
        p.step(field, dt);
    }
}

/// Pass 1 of the scan: the wrapping sum of each tile of `TILE` elements of
/// `input`, into `sums[tile]` (the block's own element).
#[kernel(block = [256])]
pub fn scan_reduce_tiles(input: DeviceSlice<u32>, mut sums: DeviceTilesMut<u32, 1>) {
    let scratch = cuda_mem::shared_array![u32; BLOCK / 32];
    if let Some(mut own) = sums.this_block_tile_mut() {
        let rank = block_thread_rank() as usize;
        let start = own.index() * TILE;
        let mut acc = 0u32;
        if let Some(tile) = input.slice(start..(start + TILE).min(input.len())) {
            for k in 0..ITEMS {
                if let Some(&v) = tile.get(rank + k * BLOCK) {
                    acc = acc.wrapping_add(v);
                }
            }
        }
        let total = block::sum::<u32, BLOCK>(acc, scratch.as_slice());
        if let Some(sum) = own.thread_element_mut(0) {
            *sum = total;
        }
    }
}

/// The index of tile element `i` in the padded shared tile: one word of
/// padding after every 32, so that both the striped and the blocked
/// accesses of a warp hit 32 different banks.
#[inline(always)]
fn padded(i: usize) -> usize {
    i + i / 32
}

/// The exclusive scan of a tile held striped (thread `r` holds elements
/// `r + k * BLOCK`), through shared memory in the blocked order (thread
/// `r` scans elements `r * ITEMS ..` serially, the block scans the
/// threads' totals), back striped. Returns the scanned values, striped,
/// with `offset` added, and the tile's total.
#[inline(always)]
fn scan_tile(
    values: [u32; ITEMS],
    offset: u32,
    tile: SharedSlice<'_, u32>,
    scratch: SharedSlice<'_, u32>,
) -> ([u32; ITEMS], u32) {
    let rank = block_thread_rank() as usize;
    for (k, &v) in values.iter().enumerate() {
        tile.store(padded(rank + k * BLOCK), v);
    }
    sync_threads();
    let mut mine = [0u32; ITEMS];
    let mut run = 0u32;
    for (j, m) in mine.iter_mut().enumerate() {
        let v = tile.load(padded(rank * ITEMS + j));
        *m = run;
        run = run.wrapping_add(v);
    }
    let (before, total) = block::exclusive_sum::<u32, BLOCK>(run, scratch);
    let base = before.wrapping_add(offset);
    for (j, &m) in mine.iter().enumerate() {
        tile.store(padded(rank * ITEMS + j), base.wrapping_add(m));
    }
    sync_threads();
    let mut out = [0u32; ITEMS];
    for (k, o) in out.iter_mut().enumerate() {
        *o = tile.load(padded(rank + k * BLOCK));
    }
    sync_threads();
    (out, total)
}

/// Pass 2 of the scan: the exclusive scan of the tile sums, in place, by
/// one block that walks the tiles in order with a running carry.
#[kernel(block = [256])]
pub fn scan_tile_sums(mut sums: DeviceTilesMut<u32, TILE>) {
    let tile = cuda_mem::shared_array![u32; TILE + TILE / 32];
    let scratch = cuda_mem::shared_array![u32; BLOCK / 32];
    let mut carry = 0u32;
    for mut own in sums.tiles_mut() {
        let mut values = [0u32; ITEMS];
        for (k, v) in values.iter_mut().enumerate() {
            if let Some(&mut x) = own.thread_element_mut(k) {
                *v = x;
            }
        }
        let (scanned, total) = scan_tile(values, carry, tile.as_slice(), scratch.as_slice());
        for (k, &v) in scanned.iter().enumerate() {
            if let Some(x) = own.thread_element_mut(k) {
                *x = v;
            }
        }
        carry = carry.wrapping_add(total);
    }
}

/// Pass 3 of the scan: each block scans its tile of `input` into `out`,
/// starting from the tile's scanned sum.
#[kernel(block = [256])]
pub fn scan_tiles(
    mut out: DeviceTilesMut<u32, TILE>,
    input: DeviceSlice<u32>,
    sums: DeviceSlice<u32>,
) {
    let tile = cuda_mem::shared_array![u32; TILE + TILE / 32];
    let scratch = cuda_mem::shared_array![u32; BLOCK / 32];
    if let Some(mut own) = out.this_block_tile_mut() {
        let rank = block_thread_rank() as usize;
        let start = own.start();
        let mut values = [0u32; ITEMS];
        if let Some(part) = input.slice(start..(start + TILE).min(input.len())) {
            for (k, v) in values.iter_mut().enumerate() {
                if let Some(&x) = part.get(rank + k * BLOCK) {
                    *v = x;
                }
            }
        }
        let offset = sums.get(own.index()).copied().unwrap_or(0);
        let (scanned, _) = scan_tile(values, offset, tile.as_slice(), scratch.as_slice());
        for (k, &v) in scanned.iter().enumerate() {
            if let Some(x) = own.thread_element_mut(k) {
                *x = v;
            }
        }
    }
}
