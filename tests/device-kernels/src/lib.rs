//! Test kernels for every item of `cuda_mem::device`, built to PTX by
//! `tests/build.rs` (for sm_70 and for sm_80) and run by the GPU tests of
//! `tests/tests/device_std.rs`, which check every output against a host
//! model. Each kernel says what it writes; the parameters are the device
//! std's own kernel-parameter types, pushed by the tests as `#[repr(C)]`
//! mirrors.
//!
//! No kernel races: elements of writable parameters are reached through the
//! disjoint-write API, or by exactly one thread (stated at each `unsafe`);
//! shared memory phases are separated by barriers.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

/// Which atomic operation a test kernel applies (`op` parameter).
pub mod op {
    /// `fetch_add`
    pub const ADD: u32 = 0;
    /// `fetch_sub`
    pub const SUB: u32 = 1;
    /// `fetch_min`
    pub const MIN: u32 = 2;
    /// `fetch_max`
    pub const MAX: u32 = 3;
    /// `fetch_and`
    pub const AND: u32 = 4;
    /// `fetch_or`
    pub const OR: u32 = 5;
    /// `fetch_xor`
    pub const XOR: u32 = 6;
    /// `swap`
    pub const EXCHANGE: u32 = 7;
    /// an addition by a `compare_exchange` loop
    pub const CAS_ADD: u32 = 8;
}

#[cfg(target_arch = "nvptx64")]
mod kernels {
    use cuda_mem::device::math;
    use cuda_mem::device::warp;
    use cuda_mem::device::*;

    use super::op;

    /// The scope a test asks for: 0 block, 1 device, 2 system.
    fn scope(code: u32) -> Scope {
        match code {
            0 => Scope::Block,
            1 => Scope::Device,
            _ => Scope::System,
        }
    }

    // -- indices -------------------------------------------------------------

    /// Each thread writes, at its global linear index: thread, block, block
    /// size and grid size (x, y, z each), its global index (x, y, z), its
    /// global linear index, the total thread count, its block rank of thread,
    /// the block size, its block's rank, the number of blocks, its lane, its
    /// warp, the lanes of its warp, its global row and the number of rows.
    #[no_mangle]
    pub extern "ptx-kernel" fn indices(mut out: DeviceSliceMut<'_, [u64; 26]>) {
        let (t, b, bd, gd) = (thread_idx(), block_idx(), block_dim(), grid_dim());
        let g = global_idx();
        let (row, rows) = global_row();
        let record = [
            t.x as u64,
            t.y as u64,
            t.z as u64,
            b.x as u64,
            b.y as u64,
            b.z as u64,
            bd.x as u64,
            bd.y as u64,
            bd.z as u64,
            gd.x as u64,
            gd.y as u64,
            gd.z as u64,
            g.x as u64,
            g.y as u64,
            g.z as u64,
            global_linear_idx() as u64,
            total_threads() as u64,
            block_thread_rank() as u64,
            block_size() as u64,
            block_rank() as u64,
            grid_blocks() as u64,
            warp::lane_id() as u64,
            warp::warp_id() as u64,
            warp::lanes_in_warp() as u64,
            row as u64,
            rows as u64,
        ];
        if let Some(slot) = out.this_thread_mut() {
            *slot = record;
        }
    }

    // -- grid-stride coverage ---------------------------------------------------

    /// `out[i] = out[i] * 3 + i` through `grid_stride_mut`, and counts each
    /// visit of `i` in `visits[i]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_1d(
        mut out: DeviceSliceMut<'_, u32>,
        visits: DeviceAtomicSlice<'_, u32>,
    ) {
        for (i, x) in out.grid_stride_mut() {
            *x = x.wrapping_mul(3).wrapping_add(i as u32);
            visits[i].fetch_add(1, Scope::Device);
        }
    }

    /// Counts each index of `grid_stride(n)` visited by
    /// `for_each_unrolled::<4>` in `visits[i]` (`visits.len() == n`).
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_unrolled(visits: DeviceAtomicSlice<'_, u32>) {
        grid_stride(visits.len()).for_each_unrolled::<4>(|i| {
            visits[i].fetch_add(1, Scope::Device);
        });
    }

    /// `out[i] = !i` for the thread whose global linear index is `i`
    /// (`this_thread_mut`); the rest is left as it was.
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_this_thread(mut out: DeviceSliceMut<'_, u64>) {
        let i = global_linear_idx() as u64;
        if let Some(x) = out.this_thread_mut() {
            *x = !i;
        }
    }

    /// `img(x, y) = img(x, y) * 5 ^ (y * width + x)` through the 2D
    /// `grid_stride_mut`, counting visits in `visits[y * width + x]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_2d(
        mut img: PitchedSliceMut<'_, u32>,
        visits: DeviceAtomicSlice<'_, u32>,
    ) {
        let width = img.width();
        for (x, y, v) in img.grid_stride_mut() {
            *v = v.wrapping_mul(5) ^ (y * width + x) as u32;
            visits[y * width + x].fetch_add(1, Scope::Device);
        }
    }

    /// Counts the cells of `grid_stride_2d(width, height)` in
    /// `visits[y * width + x]` (the iterator alone, without a view).
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_2d_indices(
        width: usize,
        height: usize,
        visits: DeviceAtomicSlice<'_, u32>,
    ) {
        for (x, y) in grid_stride_2d(width, height) {
            visits[y * width + x].fetch_add(1, Scope::Device);
        }
    }

    /// `img(x, y) = (y << 16) | x` for the thread's own element
    /// (`this_thread_mut` of the 2D view), XOR a mark of the bits of the
    /// thread's coordinates above 32 (none for a thread that owns a cell:
    /// a thread past `2^32` columns or rows that wrote would leave it).
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_2d_this_thread(mut img: PitchedSliceMut<'_, u32>) {
        let (x, (y, _)) = (global_idx().x, global_row());
        let high = ((x >> 32) as u32 | (y >> 32) as u32).wrapping_mul(0x9e37_79b9);
        if let Some(v) = img.this_thread_mut() {
            *v = (((y as u32) << 16) | x as u32) ^ high;
        }
    }

    /// Each of the thread's rows gets `e = (e + 1) ^ ((y << 16) | x)`; visits
    /// of row `y` are counted in `visits[y]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn cover_rows(
        mut rows: PitchedRowsMut<'_, u32>,
        visits: DeviceAtomicSlice<'_, u32>,
    ) {
        for (y, row) in rows.rows_mut() {
            for (x, e) in row.iter_mut().enumerate() {
                *e = e.wrapping_add(1) ^ (((y as u32) << 16) | x as u32);
            }
            visits[y].fetch_add(1, Scope::Device);
        }
    }

    /// `dst(x, y) = 2 src(x, y) + src(width - 1 - x, y) + (0.5 if
    /// src.get(width, y) is None)`: reads through `get`, `row` and indexing.
    #[no_mangle]
    pub extern "ptx-kernel" fn pitched_read(
        src: PitchedSlice<'_, f32>,
        mut dst: PitchedSliceMut<'_, f32>,
    ) {
        for (x, y, v) in dst.grid_stride_mut() {
            let row = src.row(y).unwrap_or(&[]);
            let mirrored = row.get(row.len().wrapping_sub(1 + x)).copied().unwrap_or(-1.0);
            let past = if src.get(src.width(), y).is_none() { 0.5 } else { 100.0 };
            *v = 2.0 * src.get(x, y).copied().unwrap_or(-7.0) + mirrored + past;
        }
    }

    // -- read-only slices ---------------------------------------------------------

    /// `out[i] = src[i].rotate_left(7) ^ src[len - 1 - i]` while `i <
    /// src.len()`, else `u64::MAX - i`; plus the wrapping sum of the first 3
    /// elements of `src` (through `iter`).
    #[no_mangle]
    pub extern "ptx-kernel" fn slice_read(src: DeviceSlice<'_, u64>, mut out: DeviceSliceMut<'_, u64>) {
        let head = src.iter().take(3).fold(0u64, |a, &b| a.wrapping_add(b));
        for (i, o) in out.grid_stride_mut() {
            let v = match src.get(i) {
                Some(v) => v.rotate_left(7) ^ src[src.len() - 1 - i],
                None => u64::MAX - i as u64,
            };
            *o = v.wrapping_add(head);
        }
    }

    /// Copies 16-byte elements with `load_global_v4` / `store_global_v4` and
    /// writes `bytes[i] = i * 7` with `store_global_u8`.
    #[no_mangle]
    pub extern "ptx-kernel" fn vector_stores(
        src: DeviceSlice<'_, [u32; 4]>,
        mut dst: DeviceSliceMut<'_, [u32; 4]>,
        mut bytes: DeviceSliceMut<'_, u8>,
    ) {
        for (i, d) in dst.grid_stride_mut() {
            if let Some(s) = src.get(i) {
                // SAFETY: both elements are 16-byte aligned (device
                // allocations are 256-aligned, elements 16 bytes) global
                // memory; `d` is this thread's own element and `src` is
                // read-only.
                unsafe { store_global_v4(d, load_global_v4(s)) };
            }
        }
        for (i, b) in bytes.grid_stride_mut() {
            // SAFETY: this thread's own byte of global memory.
            unsafe { store_global_u8(b, (i as u8).wrapping_mul(7)) };
        }
    }

    // -- atomics --------------------------------------------------------------------

    /// One atomic-operation kernel per integer type: element `i` of `values`
    /// is applied with operation `op` (see `crate::op`) to `slots[s]`, where
    /// `s` is the block's rank for scope 0 (block) and `i % slots.len()`
    /// otherwise; the returned old value goes to `olds[i]`.
    macro_rules! atomic_int_kernel {
        ($name:ident, $t:ty) => {
            #[no_mangle]
            pub extern "ptx-kernel" fn $name(
                values: DeviceSlice<'_, $t>,
                slots: DeviceAtomicSlice<'_, $t>,
                mut olds: DeviceSliceMut<'_, $t>,
                operation: u32,
                scope_code: u32,
            ) {
                let sc = scope(scope_code);
                for (i, old) in olds.grid_stride_mut() {
                    let slot = if sc == Scope::Block { block_rank() } else { i % slots.len() };
                    let (a, v) = (&slots[slot], values[i]);
                    *old = match operation {
                        op::ADD => a.fetch_add(v, sc),
                        op::SUB => a.fetch_sub(v, sc),
                        op::MIN => a.fetch_min(v, sc),
                        op::MAX => a.fetch_max(v, sc),
                        op::AND => a.fetch_and(v, sc),
                        op::OR => a.fetch_or(v, sc),
                        op::XOR => a.fetch_xor(v, sc),
                        op::EXCHANGE => a.swap(v, sc),
                        _ => {
                            let mut current = a.load(sc);
                            loop {
                                match a.compare_exchange(current, current.wrapping_add(v), sc) {
                                    Ok(previous) => break previous,
                                    Err(actual) => current = actual,
                                }
                            }
                        }
                    };
                }
            }
        };
    }
    atomic_int_kernel!(atomic_u32, u32);
    atomic_int_kernel!(atomic_i32, i32);
    atomic_int_kernel!(atomic_u64, u64);
    atomic_int_kernel!(atomic_i64, i64);

    /// As the integer kernels, for floats: `op` 0 adds, 7 exchanges, 8 adds
    /// by a `compare_exchange` loop.
    macro_rules! atomic_float_kernel {
        ($name:ident, $t:ty) => {
            #[no_mangle]
            pub extern "ptx-kernel" fn $name(
                values: DeviceSlice<'_, $t>,
                slots: DeviceAtomicSlice<'_, $t>,
                mut olds: DeviceSliceMut<'_, $t>,
                operation: u32,
                scope_code: u32,
            ) {
                let sc = scope(scope_code);
                for (i, old) in olds.grid_stride_mut() {
                    let slot = if sc == Scope::Block { block_rank() } else { i % slots.len() };
                    let (a, v) = (&slots[slot], values[i]);
                    *old = match operation {
                        op::ADD => a.fetch_add(v, sc),
                        op::EXCHANGE => a.swap(v, sc),
                        _ => {
                            let mut current = a.load(sc);
                            loop {
                                match a.compare_exchange(current, current + v, sc) {
                                    Ok(previous) => break previous,
                                    Err(actual) => current = actual,
                                }
                            }
                        }
                    };
                }
            }
        };
    }
    atomic_float_kernel!(atomic_f32, f32);
    atomic_float_kernel!(atomic_f64, f64);

    /// A histogram of `values % 64` per block in a static shared array
    /// (block-scope atomics), added into `bins` (device-scope atomics).
    #[no_mangle]
    pub extern "ptx-kernel" fn shared_histogram(
        values: DeviceSlice<'_, u32>,
        bins: DeviceAtomicSlice<'_, u32>,
    ) {
        let local = cuda_mem::shared_array![u32; 64];
        let (me, size) = (block_thread_rank() as usize, block_size() as usize);
        let mut i = me;
        while i < 64 {
            // SAFETY: bin `i` is cleared by thread `i % size` alone, before
            // the barrier that precedes every other access.
            unsafe { local.write(i, 0) };
            i += size;
        }
        sync_threads();
        for i in grid_stride(values.len()) {
            local.atomic((values[i] % 64) as usize).unwrap().fetch_add(1, Scope::Block);
        }
        sync_threads();
        let mut i = me;
        while i < 64 {
            // SAFETY: after the barrier nobody writes the bins any more.
            let n = unsafe { local.read(i) };
            bins[i].fetch_add(n, Scope::Device);
            i += size;
        }
    }

    /// Message passing between the first thread of block 0 and of block 1:
    /// block 0 writes `data[0..data.len()]`, a fence of `scope_code`, then
    /// sets `flag[0]`; block 1 waits for the flag, fences, and copies the
    /// data into `out`. Launch with 2 blocks of 1 thread.
    #[no_mangle]
    pub extern "ptx-kernel" fn fence_message(
        data: DeviceSliceMut<'_, u32>,
        flag: DeviceAtomicSlice<'_, u32>,
        out: DeviceSliceMut<'_, u32>,
        scope_code: u32,
    ) {
        let sc = scope(scope_code);
        if block_idx().x == 0 {
            for i in 0..data.len() {
                // SAFETY: block 1 reads `data` only after it sees the flag,
                // which is set after this write and the fence.
                unsafe { data.write(i, (i as u32).wrapping_mul(2_654_435_761)) };
            }
            fence(sc);
            flag[0].store(1, sc);
        } else {
            while flag[0].load(sc) == 0 {}
            fence(sc);
            for i in 0..data.len().min(out.len()) {
                // SAFETY: block 0 finished writing before setting the flag
                // (fence, then flag), and this thread alone writes `out`.
                unsafe { out.write(i, data.read(i)) };
            }
        }
    }

    // -- shared memory and barriers ---------------------------------------------------

    /// The sum of `input` per block: each thread sums its grid-stride
    /// elements, warps reduce with `warp::sum`, warp sums meet in a static
    /// shared array, warp 0 adds them, and thread 0 writes `out[block_rank]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn block_sum_static(input: DeviceSlice<'_, u32>, out: DeviceSliceMut<'_, u64>) {
        let partial = cuda_mem::shared_array![u64; 32];
        let mut acc = 0u64;
        for i in grid_stride(input.len()) {
            acc += input[i] as u64;
        }
        let warp_total = warp::sum(acc);
        let (lane, w) = (warp::lane_id() as usize, warp::warp_id() as usize);
        if lane == 0 {
            // SAFETY: lane 0 of warp `w` alone writes slot `w`, before the barrier.
            unsafe { partial.write(w, warp_total) };
        }
        sync_threads();
        if w == 0 {
            let warps = (block_size() as usize).div_ceil(32);
            // SAFETY: after the barrier the slots are only read.
            let v = if lane < warps { unsafe { partial.read(lane) } } else { 0 };
            let total = warp::sum(v);
            if lane == 0 {
                // SAFETY: thread 0 of each block alone writes element
                // `block_rank()`.
                unsafe { out.write(block_rank(), total) };
            }
        }
    }

    /// The same sum through a tree in dynamic shared memory (launch with at
    /// least `block_size() * 8` dynamic bytes), halving the active threads
    /// with a barrier between steps.
    #[no_mangle]
    pub extern "ptx-kernel" fn block_sum_dynamic(input: DeviceSlice<'_, u32>, out: DeviceSliceMut<'_, u64>) {
        // SAFETY: the kernel's only view of its dynamic shared memory.
        let s = unsafe { cuda_mem::dynamic_shared!(u64) };
        let me = block_thread_rank() as usize;
        let mut acc = 0u64;
        for i in grid_stride(input.len()) {
            acc += input[i] as u64;
        }
        assert!(s.len() >= block_size() as usize, "not enough dynamic shared memory");
        // SAFETY: slot `me` is this thread's, written before the barrier.
        unsafe { s.write(me, acc) };
        let mut n = block_size() as usize;
        while n > 1 {
            let half = n.div_ceil(2);
            sync_threads();
            if me < n - half {
                // SAFETY: this step reads slots `half..n` and writes slots
                // `0..n - half`, disjoint (`n - half <= half`), each by one
                // thread; barriers separate the steps.
                unsafe { s.write(me, s.read(me) + s.read(me + half)) };
            }
            n = half;
        }
        sync_threads();
        if me == 0 {
            // SAFETY: thread 0 of each block alone writes `block_rank()`; the
            // barrier orders the last step's write of slot 0 before this read.
            unsafe { out.write(block_rank(), s.read(0)) };
        }
    }

    /// Thread 0 of each block writes the length of the dynamic shared memory
    /// viewed as `u8`, `u32` and `u64` to `out[3 * block_rank ..]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn dynamic_lengths(out: DeviceSliceMut<'_, u64>) {
        // SAFETY: only the lengths of the views are used.
        let (a, b, c) = unsafe {
            (
                cuda_mem::dynamic_shared!(u8).len(),
                cuda_mem::dynamic_shared!(u32).len(),
                cuda_mem::dynamic_shared!(u64).len(),
            )
        };
        if block_thread_rank() == 0 {
            let at = 3 * block_rank();
            // SAFETY: thread 0 of block `b` alone writes `3b..3b + 3`.
            unsafe {
                out.write(at, a as u64);
                out.write(at + 1, b as u64);
                out.write(at + 2, c as u64);
            }
        }
    }

    /// Each thread passes `predicates[global_linear_idx] != 0` to the three
    /// counting barriers and writes `[count, and, or]` to its element.
    #[no_mangle]
    pub extern "ptx-kernel" fn barrier_votes(predicates: DeviceSlice<'_, u8>, mut out: DeviceSliceMut<'_, [u32; 3]>) {
        let p = predicates.get(global_linear_idx()).is_some_and(|&v| v != 0);
        let count = sync_threads_count(p);
        let all = sync_threads_and(p);
        let any = sync_threads_or(p);
        if let Some(o) = out.this_thread_mut() {
            *o = [count, all as u32, any as u32];
        }
    }

    // -- warps ------------------------------------------------------------------------

    /// Full-warp operations (launch with block sizes that are multiples of
    /// 32 and one thread per element). Thread `t` reads `values[t]` and
    /// `params[t] = src | delta << 5 | xor << 10 | predicate << 15` and writes:
    /// `[shfl_idx(v, src), shfl_up(v, delta), shfl_down(v, delta),
    /// shfl_xor(v, xor)]` for `v: u64`, the same four for `v as u32` (as
    /// `u64`), `shfl_idx` of `f64::from_bits(v)` and `shfl_xor` of
    /// `f32::from_bits(v as u32)` (bits), `ballot(p)`, `any(p)`, `all(p)`,
    /// `lane_id()`, `active_mask()`, `lanemask_lt()`, `lanemask_le()`,
    /// `lanemask_eq()`, `lanemask_ge()`, `lanemask_gt()`.
    #[no_mangle]
    pub extern "ptx-kernel" fn warp_full(
        values: DeviceSlice<'_, u64>,
        params: DeviceSlice<'_, u32>,
        mut out: DeviceSliceMut<'_, [u64; 20]>,
    ) {
        let t = global_linear_idx();
        let (v, q) = (values[t], params[t]);
        let (src, delta, xor, p) = (q & 31, (q >> 5) & 31, (q >> 10) & 31, (q >> 15) & 1 != 0);
        let w = v as u32;
        let record = [
            warp::shfl_idx(v, src),
            warp::shfl_up(v, delta),
            warp::shfl_down(v, delta),
            warp::shfl_xor(v, xor),
            warp::shfl_idx(w, src) as u64,
            warp::shfl_up(w, delta) as u64,
            warp::shfl_down(w, delta) as u64,
            warp::shfl_xor(w, xor) as u64,
            warp::shfl_idx(f64::from_bits(v), src).to_bits(),
            warp::shfl_xor(f32::from_bits(w), xor).to_bits() as u64,
            warp::ballot(p) as u64,
            warp::any(p) as u64,
            warp::all(p) as u64,
            warp::lane_id() as u64,
            warp::active_mask() as u64,
            warp::lanemask_lt() as u64,
            warp::lanemask_le() as u64,
            warp::lanemask_eq() as u64,
            warp::lanemask_ge() as u64,
            warp::lanemask_gt() as u64,
        ];
        warp::sync_warp();
        if let Some(o) = out.this_thread_mut() {
            *o = record;
        }
    }

    /// Masked warp operations: warp `w` (global) takes part with the lanes of
    /// `masks[w]`; thread `t` reads `values[t]` and `params[t]` as in
    /// `warp_full` and, if its lane is in the mask, writes
    /// `[ballot_in, any_in, all_in, shfl_idx_in(v, src), shfl_up_in(v, delta),
    /// shfl_down_in(v, delta), shfl_xor_in(v, xor), 1]`, else `[0; 8]`.
    #[no_mangle]
    pub extern "ptx-kernel" fn warp_masked(
        values: DeviceSlice<'_, u32>,
        masks: DeviceSlice<'_, u32>,
        params: DeviceSlice<'_, u32>,
        mut out: DeviceSliceMut<'_, [u32; 8]>,
    ) {
        let t = global_linear_idx();
        let mask = masks[t / 32];
        let (v, q) = (values[t], params[t]);
        let (src, delta, xor, p) = (q & 31, (q >> 5) & 31, (q >> 10) & 31, (q >> 15) & 1 != 0);
        let mut record = [0u32; 8];
        if mask & (1 << warp::lane_id()) != 0 {
            warp::sync_warp_in(mask);
            record = [
                warp::ballot_in(mask, p),
                warp::any_in(mask, p) as u32,
                warp::all_in(mask, p) as u32,
                warp::shfl_idx_in(mask, v, src),
                warp::shfl_up_in(mask, v, delta),
                warp::shfl_down_in(mask, v, delta),
                warp::shfl_xor_in(mask, v, xor),
                1,
            ];
        }
        if let Some(o) = out.this_thread_mut() {
            *o = record;
        }
    }

    /// Warp reductions of every type, one thread per element (block sizes
    /// need not be multiples of 32): thread `t` writes `sum`, `min`, `max` of
    /// `a[t]` (u32), `b[t]` (i64), `c[t]` (f32, bits) and `d[t]` (f64,
    /// bits), then of `e[t]` (i32) and `f[t]` (u64).
    #[no_mangle]
    pub extern "ptx-kernel" fn warp_reduce(
        a: DeviceSlice<'_, u32>,
        b: DeviceSlice<'_, i64>,
        c: DeviceSlice<'_, f32>,
        d: DeviceSlice<'_, f64>,
        e: DeviceSlice<'_, i32>,
        f: DeviceSlice<'_, u64>,
        mut out: DeviceSliceMut<'_, [u64; 18]>,
    ) {
        let t = global_linear_idx();
        let (a, b, c, d, e, f) = (a[t], b[t], c[t], d[t], e[t], f[t]);
        let record = [
            warp::sum(a) as u64,
            warp::min(a) as u64,
            warp::max(a) as u64,
            warp::sum(b) as u64,
            warp::min(b) as u64,
            warp::max(b) as u64,
            warp::sum(c).to_bits() as u64,
            warp::min(c).to_bits() as u64,
            warp::max(c).to_bits() as u64,
            warp::sum(d).to_bits(),
            warp::min(d).to_bits(),
            warp::max(d).to_bits(),
            warp::sum(e) as u32 as u64,
            warp::min(e) as u32 as u64,
            warp::max(e) as u32 as u64,
            warp::sum(f),
            warp::min(f),
            warp::max(f),
        ];
        if let Some(o) = out.this_thread_mut() {
            *o = record;
        }
    }

    /// Matches among a warp's lanes, one thread per element (block sizes
    /// need not be multiples of 32): thread `t` reads `values[t] = [a, b,
    /// c, d]` and its warp's mask (`masks[block * warps_per_block +
    /// warp]`, of lanes that exist) and writes `[match_any(a),
    /// match_low_bits::<8>(a), match_low_bits::<3>(b),
    /// match_low_bits::<32>(c), match_low_bits_in::<8>(mask, d)]`, the last
    /// 0 outside the mask.
    #[no_mangle]
    pub extern "ptx-kernel" fn warp_match(
        values: DeviceSlice<'_, [u32; 4]>,
        masks: DeviceSlice<'_, u32>,
        mut out: DeviceSliceMut<'_, [u32; 5]>,
    ) {
        let t = global_linear_idx();
        let w = block_idx().x as usize * (block_size() as usize).div_ceil(32) + warp::warp_id() as usize;
        let ([a, b, c, d], mask) = (values[t], masks[w]);
        let mut record = [
            warp::match_any(a),
            warp::match_low_bits::<8>(a),
            warp::match_low_bits::<3>(b),
            warp::match_low_bits::<32>(c),
            0,
        ];
        if mask & (1 << warp::lane_id()) != 0 {
            record[4] = warp::match_low_bits_in::<8>(mask, d);
        }
        if let Some(o) = out.this_thread_mut() {
            *o = record;
        }
    }

    // -- printing ---------------------------------------------------------------------

    /// Prints one line per thread with every kind of conversion.
    #[no_mangle]
    pub extern "ptx-kernel" fn print_lines(x: f32, y: f64, n: i32, big: u64) {
        let t = global_linear_idx();
        let (b, th) = (block_idx().x, thread_idx().x);
        cuda_mem::device_printf!(
            "device_std b=%u t=%u x=%.3f y=%.4e n=%d neg=%lld big=%llu hex=%x c=%c s=%s w=[%5d] l=[%-4u] pct=%%\n",
            b,
            th,
            x * (t + 1) as f32,
            y,
            n,
            -(t as i64),
            big,
            t as u32 * 255,
            b'A' + (t % 26) as u8,
            c"str",
            t as i32,
            th
        );
    }

    // -- panics -----------------------------------------------------------------------

    /// Thread `thread` of block `block` indexes past the end of `data`: with
    /// the default build a bare `trap`.
    #[no_mangle]
    pub extern "ptx-kernel" fn trap_on_index(
        data: DeviceSlice<'_, u32>,
        mut out: DeviceSliceMut<'_, u32>,
        block: u32,
        thread: u32,
    ) {
        let i = if block_idx().x == block && thread_idx().x == thread { data.len() } else { 0 };
        if let Some(o) = out.this_thread_mut() {
            *o = data[i];
        }
    }

    // -- math -------------------------------------------------------------------------

    /// Every `f32` function of `math` at `x[i]` (and `y[i]` for `pow`,
    /// `pow_fast`, `fma`).
    #[no_mangle]
    pub extern "ptx-kernel" fn math_f32(
        x: DeviceSlice<'_, f32>,
        y: DeviceSlice<'_, f32>,
        mut out: DeviceSliceMut<'_, [f32; 20]>,
    ) {
        for (i, o) in out.grid_stride_mut() {
            let (x, y) = (x[i], y[i]);
            *o = [
                math::sqrt(x),
                math::rsqrt(x),
                math::rsqrt_fast(x),
                math::exp(x),
                math::exp_fast(x),
                math::exp2(x),
                math::exp2_fast(x),
                math::log(x),
                math::log_fast(x),
                math::log2(x),
                math::log2_fast(x),
                math::sin(x),
                math::sin_fast(x),
                math::cos(x),
                math::cos_fast(x),
                math::tanh(x),
                math::tanh_fast(x),
                math::pow(x, y),
                math::pow_fast(x, y),
                math::fma(x, y, x),
            ];
        }
    }

    /// Every `f64` function of `math` at `x[i]` (and `y[i]` for `pow`, `fma`).
    #[no_mangle]
    pub extern "ptx-kernel" fn math_f64(
        x: DeviceSlice<'_, f64>,
        y: DeviceSlice<'_, f64>,
        mut out: DeviceSliceMut<'_, [f64; 12]>,
    ) {
        for (i, o) in out.grid_stride_mut() {
            let (x, y) = (x[i], y[i]);
            *o = [
                math::sqrt(x),
                math::rsqrt(x),
                math::rsqrt_fast(x),
                math::exp(x),
                math::exp2(x),
                math::log(x),
                math::log2(x),
                math::sin(x),
                math::cos(x),
                math::tanh(x),
                math::pow(x, y),
                math::fma(x, y, x),
            ];
        }
    }
}
