//! Test kernels of `#[kernel]`: every parameter kind (slices, atomic slices,
//! pitched 2D, derived structs, a device pointer), a slow kernel for the
//! ordering tests, and an `unsafe fn` kernel. `tests/build.rs` builds the
//! PTX; `tests/tests/kernels.rs` launches it and checks every element
//! against the functions here, which the host calls too.
#![no_std]

use cuda_mem::device::{
    global_linear_idx, grid_stride, DeviceAtomicSlice, DeviceSlice, DeviceSliceMut, PitchedSlice,
    PitchedSliceMut, Scope,
};
use cuda_mem::{kernel, DeviceCopy, DevicePtr};

/// A derived struct with fields of three sizes: 16 bytes, aligned to 8.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Item {
    /// A key.
    pub key: u32,
    /// A weight.
    pub weight: f32,
    /// An identifier.
    pub id: u64,
}

/// The parameters of [`transform`], passed by value.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Params {
    /// Added to the key (wrapping).
    pub add: u32,
    /// Multiplies the weight.
    pub scale: f32,
}

/// What [`transform_items`] does to one item (the host's check calls it too).
#[inline]
pub fn transform(item: Item, params: Params) -> Item {
    Item {
        key: item.key.wrapping_mul(3).wrapping_add(params.add),
        weight: item.weight * params.scale,
        id: !item.id,
    }
}

/// `out[i] = transform(input[i], params)` for every `i` both have.
#[kernel]
pub fn transform_items(mut out: DeviceSliceMut<Item>, input: DeviceSlice<Item>, params: Params) {
    for (i, slot) in out.grid_stride_mut() {
        if let Some(&item) = input.get(i) {
            *slot = transform(item, params);
        }
    }
}

/// A range of two fields of one type: a version of it with the two
/// swapped (`launch-kernels-skewed`) has the same size, alignment and
/// offsets, and only the fields' names tell them apart.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Span {
    /// The first value.
    pub start: u32,
    /// One past the last value.
    pub end: u32,
}

/// `out[i] = span.end - span.start + i` (wrapping): reads both fields, so
/// a kernel built with them swapped would write other values.
#[kernel]
pub fn span_lengths(mut out: DeviceSliceMut<u32>, span: Span) {
    for (i, slot) in out.grid_stride_mut() {
        *slot = span.end.wrapping_sub(span.start).wrapping_add(i as u32);
    }
}

/// `out[i] = offset + i`.
#[kernel]
pub fn write_indices(mut out: DeviceSliceMut<u64>, offset: u64) {
    for (i, x) in out.grid_stride_mut() {
        *x = offset + i as u64;
    }
}

/// Counts `input[i] % bins.len()` into `bins`, atomically.
#[kernel]
pub fn histogram(input: DeviceSlice<u32>, bins: DeviceAtomicSlice<u32>) {
    let n = bins.len();
    if n == 0 {
        return;
    }
    for i in grid_stride(input.len()) {
        if let Some(bin) = bins.get(input[i] as usize % n) {
            bin.fetch_add(1, Scope::Device);
        }
    }
}

/// `rounds` steps of a linear congruential generator from `x`: a slow,
/// exactly reproducible function.
#[inline]
pub fn churned(mut x: u32, rounds: u32) -> u32 {
    for _ in 0..rounds {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    x
}

/// `data[i] = churned(data[i], rounds)`: slow on purpose (ordering tests).
#[kernel]
pub fn churn(mut data: DeviceSliceMut<u32>, rounds: u32) {
    for (_, x) in data.grid_stride_mut() {
        *x = churned(*x, rounds);
    }
}

/// `out[x, y] = input[x, y] + add` over pitched 2D arrays.
#[kernel]
pub fn pitched_add(mut out: PitchedSliceMut<f32>, input: PitchedSlice<f32>, add: f32) {
    for (x, y, slot) in out.grid_stride_mut() {
        if let Some(&v) = input.get(x, y) {
            *slot = v + add;
        }
    }
}

/// Thread 0 writes `value` at `target`.
///
/// # Safety
///
/// `target` points to a `u32` in device-accessible memory that nothing else
/// uses while the kernel runs.
#[kernel]
pub unsafe fn poke(target: DevicePtr<u32>, value: u32) {
    if global_linear_idx() == 0 {
        // SAFETY: the launch's caller promised a `u32` no one else uses.
        unsafe { *target.as_raw() = value };
    }
}

/// A `crate = "..."` path that forges the fingerprint (the attack of a
/// review): a module that re-exports cuda-mem but supplies its own
/// `launch::__kernel_signature`, returning the source hash alone, and a
/// parameter type that is a `DeviceSliceMut<u8>` in the PTX but a `[u64; 2]`
/// on the host, so that the host could push any `{ptr, len}` for the kernel
/// to write through. No `unsafe` is written. cuda-mem's macros compute the
/// PTX's fingerprint and the launch's from the real parameter types, so the
/// host's `SIGNATURE` is forged but nothing that decides a launch is: the
/// launch is refused (`tests/tests/kernels.rs`).
#[forbid(unsafe_code)]
pub mod forged {
    /// cuda-mem, but for one function of its `launch` module.
    pub mod fake_cuda_mem {
        pub use cuda_mem::*;

        /// cuda-mem's `launch`, with a forged fingerprint function.
        pub mod launch {
            pub use cuda_mem::launch::*;

            /// Forged: the source hash alone, whatever the parameters.
            pub const fn __kernel_signature(_unsafe: bool, source: u64, _params: &[u64]) -> u64 {
                source
            }
        }
    }

    /// The parameter as the PTX sees it.
    #[cfg(target_arch = "nvptx64")]
    pub type Scribble<'a> = cuda_mem::device::DeviceSliceMut<'a, u8>;
    /// The parameter as the host sees it.
    #[cfg(not(target_arch = "nvptx64"))]
    pub type Scribble<'a> = [u64; 2];

    /// Writes 0xAB into every byte of `out` (in the PTX).
    #[cuda_mem::kernel(crate = "crate::forged::fake_cuda_mem")]
    pub fn forged_scribble(out: Scribble<'_>) {
        #[cfg(target_arch = "nvptx64")]
        {
            let mut out = out;
            for (_, byte) in out.grid_stride_mut() {
                *byte = 0xAB;
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        let _ = out;
    }
}

/// Kernels of the device std's parallel building blocks: the in-bounds
/// iterations (`grid_stride_zip`, `this_thread_zip`, `DeviceSlice::grid_stride`,
/// `slice`, `aligned_chunks`), shared memory's safe accesses, the warp and
/// block collectives, and the write partitions. `tests/tests/device_parallel.rs`
/// runs them on random data and launch shapes against host models.
pub mod parallel {
    use cuda_mem::device::{
        block, block_dim, block_rank, block_size, block_thread_rank, global_linear_idx,
        sync_threads, thread_idx, thread_idx_for, warp, Cross, DeviceAtomicSlice, DeviceChunksMut,
        DeviceSlice, DeviceSliceMut, DeviceTilesMut, PitchedSlice, PitchedSliceMut,
        PitchedTilesMut, Scope,
    };
    use cuda_mem::kernel;

    /// `y[i] = a * x[i] + y[i]` (one `fma`) for the indices both have, in a
    /// grid-stride loop.
    #[kernel]
    pub fn zip_axpy(mut y: DeviceSliceMut<f32>, x: DeviceSlice<f32>, a: f32) {
        for (_, y, &x) in y.grid_stride_zip(x) {
            *y = cuda_mem::device::math::fma(a, x, *y);
        }
    }

    /// `out[i] = 3 a[i] + b[i] + i` (wrapping) for the indices all three
    /// have; one element per thread.
    #[kernel]
    pub fn zip_pair(mut out: DeviceSliceMut<u32>, a: DeviceSlice<u32>, b: DeviceSlice<u32>) {
        let i = global_linear_idx() as u32;
        if let Some((o, (&a, &b))) = out.this_thread_zip((a, b)) {
            *o = a.wrapping_mul(3).wrapping_add(b).wrapping_add(i);
        }
    }

    /// Adds to `sums[0]` the sum of `input[start..end]` (as `u64`), read
    /// with `slice` and `grid_stride`, and to `sums[1]` the same through
    /// `aligned_chunks::<4>` (its unaligned head and tail element by
    /// element, the middle 16 bytes at a time). An out-of-range `start..end`
    /// adds `u64::MAX` to `sums[2]` instead.
    #[kernel]
    pub fn range_sums(input: DeviceSlice<u32>, start: u64, end: u64, sums: DeviceAtomicSlice<u64>) {
        let Some(part) = input.slice(start as usize..end as usize) else {
            if global_linear_idx() == 0 {
                if let Some(flag) = sums.get(2) {
                    flag.fetch_add(u64::MAX, Scope::Device);
                }
            }
            return;
        };
        let mut plain = 0u64;
        for (_, &v) in part.grid_stride() {
            plain += v as u64;
        }
        let (head, chunks, tail) = part.aligned_chunks::<4>();
        let mut chunked = 0u64;
        for (_, c) in chunks.grid_stride() {
            chunked += c.0.iter().map(|&v| v as u64).sum::<u64>();
        }
        for (_, &v) in head.grid_stride().chain(tail.grid_stride()) {
            chunked += v as u64;
        }
        if let (Some(a), Some(b)) = (sums.get(0), sums.get(1)) {
            a.fetch_add(plain, Scope::Device);
            b.fetch_add(chunked, Scope::Device);
        }
    }

    /// Shared memory through the safe accesses, for one element type: each
    /// thread stores `value(rank)` at its rank, the block syncs, and each
    /// thread writes what its right neighbour (rank + 1, wrapping) stored
    /// into `out` at its global index. 1024 elements of shared memory.
    macro_rules! shared_round_trip {
        ($($name:ident: $t:ty;)*) => {$(
            /// A shared-memory round trip (see the macro `shared_round_trip`): `out[g] = input[neighbour's g]`.
            #[kernel]
            pub fn $name(mut out: DeviceSliceMut<$t>, input: DeviceSlice<$t>) {
                let tile = cuda_mem::shared_array![$t; 1024];
                let rank = block_thread_rank() as usize;
                let g = global_linear_idx();
                if let Some(&v) = input.get(g) {
                    tile.store(rank, v);
                }
                sync_threads();
                let neighbour = (rank + 1) % block_size() as usize;
                let v = tile.load(neighbour);
                if let Some(o) = out.this_thread_mut() {
                    *o = v;
                }
            }
        )*};
    }

    shared_round_trip! {
        shared_u8: u8;
        shared_u16: u16;
        shared_u64: u64;
        shared_bytes3: [u8; 3];
        shared_words3: [u32; 3];
        shared_wide: [u64; 3];
    }

    /// A 64-bin histogram of `input % 64` in shared memory with
    /// [`SharedSlice::add`](cuda_mem::device::SharedSlice::add), then one
    /// global atomic per bin and block.
    #[kernel]
    pub fn shared_bins(input: DeviceSlice<u32>, bins: DeviceAtomicSlice<u32>) {
        let local = cuda_mem::shared_array![u32; 64];
        let rank = block_thread_rank() as usize;
        let threads = block_size() as usize;
        let mut k = rank;
        while k < 64 {
            local.store(k, 0);
            k += threads;
        }
        sync_threads();
        for (_, &v) in input.grid_stride() {
            local.add((v % 64) as usize, 1);
        }
        sync_threads();
        let mut k = rank;
        while k < 64 {
            if let Some(bin) = bins.get(k) {
                bin.fetch_add(local.load(k), Scope::Device);
            }
            k += threads;
        }
    }

    /// Per thread (at its global index): the warp's sum, its maximum, the
    /// inclusive and the exclusive scan (wrapping sums) of `input`, the
    /// warp's lane count. A thread past the input contributes 0.
    #[kernel]
    pub fn warp_collectives(mut out: DeviceSliceMut<[u32; 5]>, input: DeviceSlice<u32>) {
        let v = input.get(global_linear_idx()).copied().unwrap_or(0);
        let add = |a: u32, b: u32| a.wrapping_add(b);
        let record = [
            warp::sum(v),
            warp::reduce_with(v, |a: u32, b: u32| a.max(b)),
            warp::inclusive_scan(v, add),
            warp::exclusive_scan(v, 0, add),
            warp::lanes_in_warp(),
        ];
        if let Some(o) = out.this_thread_mut() {
            *o = record;
        }
    }

    /// The block collectives over a block of `$block` threads: per thread,
    /// the block's sum and maximum, its exclusive prefix sum and the total
    /// (as [`block::exclusive_sum`] gives them), all of `input` (0 past it),
    /// twice in a row (the scratch array reused).
    macro_rules! block_collectives {
        ($($name:ident: $block:literal;)*) => {$(
            /// The block collectives (see the macro `block_collectives`).
            #[kernel]
            pub fn $name(mut out: DeviceSliceMut<[u32; 4]>, input: DeviceSlice<u32>) {
                let scratch = cuda_mem::shared_array![u32; 32];
                let v = input.get(global_linear_idx()).copied().unwrap_or(0);
                let sum = block::sum::<u32, $block>(v, scratch.as_slice());
                let max = block::reduce::<u32, $block>(v, |a, b| a.max(b), scratch.as_slice());
                let (before, total) = block::exclusive_sum::<u32, $block>(v, scratch.as_slice());
                if let Some(o) = out.this_thread_mut() {
                    *o = [sum, max, before, total];
                }
            }
        )*};
    }

    block_collectives! {
        block_collectives_96: 96;
        block_collectives_100: 100;
        block_collectives_256: 256;
    }

    /// The block collectives in a kernel declared for blocks of `32 x 4`
    /// threads (`#[kernel(block = [32, 4])]`, so `thread_idx_for` and the
    /// collectives check nothing on the device): thread `(x, y)` of block
    /// `b` takes element `128 b + x + 32 y` of `input` (0 past it) and
    /// writes the same four values as `block_collectives` to that element
    /// of `out` (its block's tile, rank `x + 32 y`).
    #[kernel(block = [32, 4])]
    pub fn block_collectives_declared(
        mut out: DeviceTilesMut<[u32; 4], 128>,
        input: DeviceSlice<u32>,
    ) {
        let scratch = cuda_mem::shared_array![u32; 32];
        let t = thread_idx_for::<32, 4, 1>();
        let rank = (t.x + 32 * t.y) as usize;
        let v = input.get(block_rank() * 128 + rank).copied().unwrap_or(0);
        let sum = block::sum::<u32, 128>(v, scratch.as_slice());
        let max = block::reduce::<u32, 128>(v, |a, b| a.max(b), scratch.as_slice());
        let (before, total) = block::exclusive_sum::<u32, 128>(v, scratch.as_slice());
        if let Some(mut own) = out.this_block_tile_mut() {
            if let Some(o) = own.thread_element_mut(0) {
                *o = [sum, max, before, total];
            }
        }
    }

    /// What [`cross_mix`] writes for an interior cell and its neighbours.
    ///
    /// ```
    /// use cuda_mem::device::Cross;
    /// let c = Cross { center: 1, left: 0, right: 0, up: 0, down: 0 };
    /// assert_eq!(cuda_mem_launch_kernels::parallel::cross_value(c), 1);
    /// ```
    pub fn cross_value(c: Cross<u32>) -> u32 {
        c.center
            ^ c.left.rotate_left(3)
            ^ c.right.rotate_left(7)
            ^ c.up.rotate_left(13)
            ^ c.down.rotate_left(19)
    }

    /// `out[x, y]` is [`cross_value`] of `input`'s cell `(x, y)` and its
    /// neighbours where `PitchedSlice::cross` has them (an interior cell),
    /// `u32::MAX` elsewhere; in a 2D grid-stride loop (any launch shape).
    #[kernel]
    pub fn cross_mix(mut out: PitchedSliceMut<u32>, input: PitchedSlice<u32>) {
        for (x, y, slot) in out.grid_stride_mut() {
            *slot = input.cross(x, y).map_or(u32::MAX, cross_value);
        }
    }

    /// Every element of `out` that the calling thread owns under
    /// `DeviceTilesMut<_, 7>`'s rule gets `(block rank << 16) | thread
    /// rank`, so the host can check the owner of each; its tiles come from
    /// `tiles_mut` (a grid-stride loop over tiles).
    #[kernel]
    pub fn tile_owners(mut out: DeviceTilesMut<u32, 7>) {
        let me = ((block_rank() as u32) << 16) | block_thread_rank();
        for mut tile in out.tiles_mut() {
            for (_, x) in tile.thread_elements_mut() {
                *x = me;
            }
        }
    }

    /// The same for `DeviceChunksMut<_, 5>`: `global_linear_idx() + 1`.
    #[kernel]
    pub fn chunk_owners(mut out: DeviceChunksMut<u32, 5>) {
        let me = global_linear_idx() as u32 + 1;
        for (_, chunk) in out.grid_stride_chunks_mut() {
            chunk.fill(me);
        }
    }

    /// The calling block's own `8 x 4` tile, cell by cell: the thread's
    /// cells `(i, j)` for `i, j < 3`, written with `set_thread_element`
    /// where `i + j` is even and through `thread_element_mut` where it is
    /// odd, each `(Y << 16) | X` (the cell's array coordinates).
    #[kernel]
    pub fn pitched_block_tile_cells(mut out: PitchedTilesMut<u32, 8, 4>) {
        if let Some(mut own) = out.this_block_tile_mut() {
            let (ox, oy) = own.origin();
            let (t, n) = (thread_idx(), block_dim());
            let (tx, ty, bx, by) = (t.x, t.y + n.y * t.z, n.x, n.y * n.z);
            for j in 0..3u32 {
                for i in 0..3u32 {
                    let (x, y) = (ox as u32 + tx + i * bx, oy as u32 + ty + j * by);
                    let code = (y << 16) | x;
                    if (i + j) % 2 == 0 {
                        own.set_thread_element(i as usize, j as usize, code);
                    } else if let Some(c) = own.thread_element_mut(i as usize, j as usize) {
                        *c = code;
                    }
                }
            }
        }
    }

    /// The same for `PitchedTilesMut<_, 8, 4>`: `(block rank << 16) |
    /// thread rank`, cell by cell through `tiles_mut` and
    /// `thread_elements_mut`.
    #[kernel]
    pub fn pitched_tile_owners(mut out: PitchedTilesMut<u32, 8, 4>) {
        let me = ((block_rank() as u32) << 16) | block_thread_rank();
        for mut tile in out.tiles_mut() {
            for (_, _, x) in tile.thread_elements_mut() {
                *x = me;
            }
        }
    }
}

/// Kernels over `CheckedDeviceCopy` elements: `bool`s, an enum whose
/// discriminants leave gaps (most bytes are no `Phase`) and a struct of
/// both. Every read is checked on the device; an element whose bits are
/// not a value is counted and answered with bits that are no value either,
/// so the host sees it twice.
pub mod checked {
    use cuda_mem::device::{CheckedSlice, CheckedSliceMut, DeviceAtomicSlice, Scope};
    use cuda_mem::{kernel, CheckedDeviceCopy};

    /// A phase of matter: the bytes 1, 2 and 4, no other.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, CheckedDeviceCopy)]
    #[repr(u8)]
    pub enum Phase {
        /// 1.
        Solid = 1,
        /// 2.
        Liquid = 2,
        /// 4.
        Gas = 4,
    }

    /// A cell: a `Phase`, a `bool` and a plain field (its bits, `CellBits`,
    /// are 4 bytes without padding).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, CheckedDeviceCopy)]
    #[repr(C)]
    pub struct Cell {
        /// The cell's phase.
        pub phase: Phase,
        /// Whether it is alive.
        pub alive: bool,
        /// Its heat.
        pub heat: u16,
    }

    /// The phase after heating (`hot`) or cooling.
    #[inline]
    pub fn next_phase(phase: Phase, hot: bool) -> Phase {
        match (phase, hot) {
            (Phase::Solid, true) => Phase::Liquid,
            (Phase::Liquid | Phase::Gas, true) => Phase::Gas,
            (Phase::Gas, false) => Phase::Liquid,
            (Phase::Solid | Phase::Liquid, false) => Phase::Solid,
        }
    }

    /// A cell one step on: heat spreads, a hot cell melts or boils.
    #[inline]
    pub fn step(cell: Cell) -> Cell {
        let hot = cell.heat > 300;
        Cell {
            phase: next_phase(cell.phase, hot),
            alive: cell.alive && !hot,
            heat: cell.heat.wrapping_mul(3) / 2,
        }
    }

    /// `out[i] = next_phase(phases[i], hot[i])` for every `i` all three
    /// have; where `phases[i]` or `hot[i]` holds no value, `out[i]` gets the
    /// byte 0 (no `Phase`) and `invalid[0]` counts it.
    #[kernel]
    pub fn next_phases(
        mut out: CheckedSliceMut<Phase>,
        phases: CheckedSlice<Phase>,
        hot: CheckedSlice<bool>,
        invalid: DeviceAtomicSlice<u32>,
    ) {
        for (_, mut slot, (phase, hot)) in out.grid_stride_zip((phases, hot)) {
            match (phase, hot) {
                (Ok(phase), Ok(hot)) => slot.set(next_phase(phase, hot)),
                _ => {
                    *slot.bits_mut() = 0;
                    if let Some(count) = invalid.get(0) {
                        count.fetch_add(1, Scope::Device);
                    }
                }
            }
        }
    }

    /// `cells[i] = step(cells[i])` in place, one cell a thread
    /// (`this_thread_mut`); a cell whose bits are no `Cell` is left as it
    /// is and counted in `invalid[0]`.
    #[kernel]
    pub fn step_cells(mut cells: CheckedSliceMut<Cell>, invalid: DeviceAtomicSlice<u32>) {
        if let Some(mut cell) = cells.this_thread_mut() {
            match cell.get() {
                Ok(c) => cell.set(step(c)),
                Err(_) => {
                    if let Some(count) = invalid.get(0) {
                        count.fetch_add(1, Scope::Device);
                    }
                }
            }
        }
    }
}

/// Kernels over a structure of arrays (`#[derive(DeviceSoA)]`): whole
/// structs read with `get`, updated in place by the owning thread, and one
/// field's array read as a slice. The struct mixes byte and word fields.
pub mod soa {
    use cuda_mem::device::{DeviceSlice, DeviceSliceMut, SoaSlice, SoaSliceMut};
    use cuda_mem::{kernel, DeviceCopy, DeviceSoA};

    /// Fields of 1, 3, 2, 2, 4 and 4 bytes (16 bytes, no padding).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy, DeviceSoA)]
    #[repr(C)]
    pub struct Mixed {
        /// A byte.
        pub tag: u8,
        /// Three bytes.
        pub rgb: [u8; 3],
        /// A short.
        pub depth: u16,
        /// Another.
        pub mask: u16,
        /// A word.
        pub label: u32,
        /// Another.
        pub count: u32,
    }

    /// What [`bump`] does to one struct.
    #[inline]
    pub fn bumped(m: Mixed, add: u32) -> Mixed {
        Mixed {
            tag: m.tag.wrapping_add(add as u8),
            rgb: [m.rgb[2], m.rgb[0], m.rgb[1]],
            depth: m.depth ^ m.mask,
            mask: m.mask,
            label: m.label.wrapping_mul(3).wrapping_add(add),
            count: m.count.wrapping_add(m.tag as u32),
        }
    }

    /// `out[i] = items.get(i)`: whole structs read field by field.
    #[kernel]
    pub fn soa_gather(items: SoaSlice<Mixed>, mut out: DeviceSliceMut<Mixed>) {
        for (i, slot) in out.grid_stride_mut() {
            if let Some(m) = items.get(i) {
                *slot = m;
            }
        }
    }

    /// `items[i] = bumped(items[i], add)`, in place, each struct by the
    /// thread that owns it.
    #[kernel]
    pub fn bump(mut items: SoaSliceMut<Mixed>, add: u32) {
        for (_, mut item) in items.grid_stride_mut() {
            let m = item.get();
            item.set(bumped(m, add));
        }
    }

    /// `out[i] = labels[i] + tags[i]`, from two fields' arrays (`fields()`),
    /// and a plain slice beside them.
    #[kernel]
    pub fn label_plus_tag(
        items: SoaSlice<Mixed>,
        extra: DeviceSlice<u32>,
        mut out: DeviceSliceMut<u32>,
    ) {
        let f = items.fields();
        for (_, o, ((&label, &tag), &x)) in out.grid_stride_zip(((f.label, f.tag), extra)) {
            *o = label.wrapping_add(tag as u32).wrapping_add(x);
        }
    }
}
