//! The device std (`cuda_mem::device`) on the GPU: every item runs in a test
//! kernel of `tests/device-kernels` (or `tests/panic-kernels`), built to PTX
//! by `tests/build.rs` with `cuda_mem::build::KernelCrate`, and every output
//! element is checked against a host model, on fresh random data
//! (`CUDA_MEM_SEED` replays a run) of odd sizes, with outputs poisoned first.
//!
//! The CPU tests check the PTX (ptxas for sm_80 and sm_90, no call out but
//! `vprintf`, no local memory in the simple kernels) and the parameter ABI.
//! Printing and panics run in a child process (see `run_test_in_child`),
//! whose standard output is checked.

use cuda_mem::prelude::*;
use std::sync::Arc;
use std::time::Duration;

use cuda_mem::cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
};
use cuda_mem::cudarc::nvrtc::Ptx;
use cuda_mem::device::{
    DeviceAtomicSlice, DeviceSlice, DeviceSliceMut, PitchedRowsMut, PitchedSlice, PitchedSliceMut,
};
use cuda_mem::{DeviceBuffer, DeviceCopy, KernelArg, PitchedBuffer};
use cuda_mem_tests::{
    assemble_ptx, gpu, run_test_in_child, skip_driver_errors_under_sanitizer, Rng,
};

/// The test kernels for sm_70 (the default target CPU).
const KERNELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/device-kernels.ptx"));
/// The same kernels for sm_80 (`tanh_fast` is `tanh.approx.f32` there).
const KERNELS_SM80_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/device-kernels-sm80.ptx"));
/// Kernels that panic, built with printing panics.
const PANIC_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/panic-kernels.ptx"));

/// The operation codes of the atomic test kernels (`device-kernels`' `op`).
mod op {
    pub const ADD: u32 = 0;
    pub const SUB: u32 = 1;
    pub const MIN: u32 = 2;
    pub const MAX: u32 = 3;
    pub const AND: u32 = 4;
    pub const OR: u32 = 5;
    pub const XOR: u32 = 6;
    pub const EXCHANGE: u32 = 7;
    pub const CAS_ADD: u32 = 8;
    pub const ALL: [u32; 9] = [ADD, SUB, MIN, MAX, AND, OR, XOR, EXCHANGE, CAS_ADD];
}

// ---------------------------------------------------------------------------
// Kernel parameters as the host pushes them.

/// `DeviceSlice`, `DeviceSliceMut` and `DeviceAtomicSlice`:
/// `#[repr(C)] { ptr, len }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct SliceArg {
    ptr: u64,
    len: u64,
}

// SAFETY: plain `#[repr(C)]` data, the exact layout of the device parameter.
unsafe impl DeviceRepr for SliceArg {}

/// The pitched parameters: `#[repr(C)] { ptr, pitch, width, height }`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct PitchedArg {
    ptr: u64,
    pitch: u64,
    width: u64,
    height: u64,
}

// SAFETY: plain `#[repr(C)]` data, the exact layout of the device parameter.
unsafe impl DeviceRepr for PitchedArg {}

/// The slice parameter for `len` elements at `arg`.
fn slice<T>(arg: &KernelArg<'_, T>, len: usize) -> SliceArg {
    SliceArg {
        ptr: arg.device_ptr().addr(),
        len: len as u64,
    }
}

/// The pitched parameter at `arg`.
fn pitched<T>(arg: &KernelArg<'_, T>, pitch: usize, width: usize, height: usize) -> PitchedArg {
    PitchedArg {
        ptr: arg.device_ptr().addr(),
        pitch: pitch as u64,
        width: width as u64,
        height: height as u64,
    }
}

/// The test kernels of one PTX module, on a stream of their own.
struct Kernels {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
}

impl Kernels {
    fn load(ptx: &str) -> Self {
        let ctx = gpu();
        let stream = ctx.new_stream().expect("a stream");
        let module = ctx
            .load_module(Ptx::from_src(ptx))
            .expect("load the test kernels");
        Self {
            ctx,
            stream,
            module,
        }
    }

    fn func(&self, name: &str) -> CudaFunction {
        self.module
            .load_function(name)
            .unwrap_or_else(|e| panic!("kernel {name}: {e}"))
    }
}

fn config(grid: (u32, u32, u32), block: (u32, u32, u32), shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: grid,
        block_dim: block,
        shared_mem_bytes: shared,
    }
}

/// A random launch shape in 1D (`dims == 1`) or 3D, of at most about
/// `max_threads` threads.
fn random_shape(
    rng: &mut Rng,
    dims: usize,
    max_threads: usize,
) -> ((u32, u32, u32), (u32, u32, u32)) {
    if dims == 1 {
        let block = [1, 32, 33, 64, 96, 100, 128, 256, 1024][rng.below(9)] as u32;
        let grid = 1 + rng.below((max_threads / block as usize).max(1)) as u32;
        return ((grid, 1, 1), (block, 1, 1));
    }
    let b = [
        (8, 4, 2),
        (5, 3, 7),
        (32, 2, 1),
        (1, 1, 64),
        (3, 3, 3),
        (16, 1, 4),
    ][rng.below(6)];
    let g = (
        1 + rng.below(5) as u32,
        1 + rng.below(4) as u32,
        1 + rng.below(3) as u32,
    );
    (g, b)
}

fn threads(grid: (u32, u32, u32), block: (u32, u32, u32)) -> usize {
    (grid.0 * grid.1 * grid.2) as usize * (block.0 * block.1 * block.2) as usize
}

/// Poison values for an output buffer.
fn poison<T: DeviceCopy>(rng: &mut Rng, n: usize) -> Vec<T> {
    rng.values(n)
}

// ---------------------------------------------------------------------------
// CPU tests: the PTX and the ABI.

/// The kernels that must not use local memory (a stack): all but printing
/// (its argument buffer) and math (argument reduction of `sin`/`cos`).
const SIMPLE_KERNELS: &[&str] = &[
    "indices",
    "cover_1d",
    "cover_unrolled",
    "cover_this_thread",
    "cover_2d",
    "cover_2d_indices",
    "cover_2d_this_thread",
    "cover_rows",
    "pitched_read",
    "slice_read",
    "vector_stores",
    "atomic_u32",
    "atomic_i32",
    "atomic_u64",
    "atomic_i64",
    "atomic_f32",
    "atomic_f64",
    "shared_histogram",
    "fence_message",
    "block_sum_static",
    "block_sum_dynamic",
    "dynamic_lengths",
    "barrier_votes",
    "warp_full",
    "warp_masked",
    "warp_reduce",
    "warp_match",
    "trap_on_index",
];

/// The body of `.entry name` in `ptx`.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name}"));
    let body = &ptx[start..];
    let end = body[1..]
        .find("\n.visible .entry ")
        .or_else(|| body[1..].find("\n.func "))
        .or_else(|| body[1..].find("\n.visible .func "))
        .map_or(body.len(), |e| e + 1);
    &body[..end]
}

#[test]
fn the_test_kernels_assemble_and_call_nothing_but_vprintf() {
    for (ptx, name) in [
        (KERNELS_PTX, "device-kernels"),
        (KERNELS_SM80_PTX, "device-kernels-sm80"),
        (PANIC_PTX, "panic-kernels"),
    ] {
        for line in ptx.lines().filter(|l| l.starts_with(".extern")) {
            assert!(
                line.starts_with(".extern .shared") || line.contains("vprintf"),
                "{name}: {line}"
            );
        }
        assemble_ptx(ptx, name);
    }
    for kernel in SIMPLE_KERNELS
        .iter()
        .chain(&["math_f32", "math_f64", "print_lines"])
    {
        entry(KERNELS_PTX, kernel);
    }
    for kernel in SIMPLE_KERNELS {
        let body = entry(KERNELS_PTX, kernel);
        assert!(!body.contains(".local"), "{kernel} uses local memory");
        assert!(!body.contains("call"), "{kernel} calls a function");
    }
    // The hardware paths the tests rely on.
    assert!(entry(KERNELS_PTX, "vector_stores").contains("st.global.v4.b32"));
    assert!(entry(KERNELS_PTX, "vector_stores").contains("ld.global.v4.b32"));
    assert!(entry(KERNELS_PTX, "atomic_u64").contains("atom.relaxed.sys.cas.b64"));
    assert!(entry(KERNELS_PTX, "atomic_f32").contains("atom.relaxed.cta.add.f32"));
    assert!(entry(KERNELS_PTX, "warp_full").contains("shfl.sync.bfly.b32"));
    assert!(entry(KERNELS_PTX, "block_sum_static").contains("barrier.sync 0"));
    assert!(entry(KERNELS_PTX, "shared_histogram").contains("__cuda_mem_shared_"));
    assert!(!entry(KERNELS_PTX, "math_f32").contains("tanh.approx"));
    assert!(entry(KERNELS_SM80_PTX, "math_f32").contains("tanh.approx.f32"));
    assert!(
        PANIC_PTX.contains("rust_begin_unwind")
            && PANIC_PTX.contains("call.uni (retval0), vprintf"),
        "the panic handler is not in the PTX"
    );
}

#[test]
fn kernel_parameters_have_the_documented_abi() {
    use std::mem::{align_of, offset_of, size_of};
    assert_eq!(size_of::<DeviceSlice<'_, u8>>(), 16);
    assert_eq!(size_of::<DeviceSliceMut<'_, [u64; 4]>>(), 16);
    assert_eq!(size_of::<DeviceAtomicSlice<'_, u32>>(), 16);
    assert_eq!(align_of::<DeviceSlice<'_, u8>>(), 8);
    for size in [
        size_of::<PitchedSlice<'_, f32>>(),
        size_of::<PitchedSliceMut<'_, f32>>(),
        size_of::<PitchedRowsMut<'_, u8>>(),
    ] {
        assert_eq!(size, 32);
    }
    assert_eq!(size_of::<SliceArg>(), 16);
    assert_eq!(size_of::<PitchedArg>(), 32);
    assert_eq!(
        (offset_of!(SliceArg, ptr), offset_of!(SliceArg, len)),
        (0, 8)
    );
    // The device types' fields are private: check them through their values.
    let data = [1u32, 2, 3];
    // SAFETY: `data` is live and unchanged while the slice is.
    let s = unsafe { DeviceSlice::from_raw_parts(data.as_ptr(), 3) };
    // SAFETY: `DeviceSlice` is `#[repr(C)] { ptr, len }`, as `SliceArg`.
    let raw: SliceArg = unsafe { std::mem::transmute_copy(&s) };
    assert_eq!((raw.ptr, raw.len), (data.as_ptr() as u64, 3));
    // SAFETY: a layout of 2 rows of 1 element, 8 bytes apart, inside `data`.
    let p = unsafe { PitchedSlice::from_raw_parts(data.as_ptr(), 8, 1, 2) };
    // SAFETY: `PitchedSlice` is `#[repr(C)] { ptr, pitch, width, height }`.
    let raw: PitchedArg = unsafe { std::mem::transmute_copy(&p) };
    assert_eq!(
        (raw.ptr, raw.pitch, raw.width, raw.height),
        (data.as_ptr() as u64, 8, 1, 2)
    );
}

/// The one-thread model: a kernel body runs on the CPU as the only thread of
/// a one-block grid, so its logic can be tested without a GPU.
#[test]
fn a_kernel_body_runs_on_the_cpu_as_one_thread() {
    use cuda_mem::device::{self, warp, Scope};
    let mut data = [3u32, 1, 4, 1, 5, 9, 2, 6];
    let mut bins = [0u32; 4];
    // SAFETY: the arrays are live and only used through the views.
    let (mut out, hist) = unsafe {
        (
            DeviceSliceMut::from_raw_parts(data.as_mut_ptr(), data.len()),
            DeviceAtomicSlice::from_raw_parts(bins.as_mut_ptr(), bins.len()),
        )
    };
    let tile = cuda_mem::shared_array![u32; 32];
    let mut acc = 0;
    for (i, x) in out.grid_stride_mut() {
        *x *= 2;
        acc += *x;
        hist[i % 4].fetch_add(1, Scope::Device);
    }
    let total = warp::sum(acc);
    // SAFETY: one thread.
    unsafe { tile.write(warp::warp_id() as usize, total) };
    device::sync_threads();
    assert_eq!(unsafe { tile.read(0) }, 62);
    assert_eq!(warp::ballot(true), 1);
    assert_eq!(warp::shfl_down(7u64, 3), 7);
    assert_eq!(data, [6, 2, 8, 2, 10, 18, 4, 12]);
    assert_eq!(bins, [2, 2, 2, 2]);
}

// ---------------------------------------------------------------------------
// Indices and grid-stride loops.

/// What `indices` writes for one thread.
fn index_record(
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    b: [u32; 3],
    t: [u32; 3],
) -> [u64; 26] {
    let (g, bd) = ([grid.0, grid.1, grid.2], [block.0, block.1, block.2]);
    let gi: Vec<u64> = (0..3)
        .map(|a| b[a] as u64 * bd[a] as u64 + t[a] as u64)
        .collect();
    let tn: Vec<u64> = (0..3).map(|a| g[a] as u64 * bd[a] as u64).collect();
    let linear = gi[0] + tn[0] * (gi[1] + tn[1] * gi[2]);
    let rank = t[0] + bd[0] * (t[1] + bd[1] * t[2]);
    let size = bd[0] * bd[1] * bd[2];
    let block_rank = b[0] as u64 + g[0] as u64 * (b[1] as u64 + g[1] as u64 * b[2] as u64);
    let warp = rank / 32;
    [
        t[0] as u64,
        t[1] as u64,
        t[2] as u64,
        b[0] as u64,
        b[1] as u64,
        b[2] as u64,
        bd[0] as u64,
        bd[1] as u64,
        bd[2] as u64,
        g[0] as u64,
        g[1] as u64,
        g[2] as u64,
        gi[0],
        gi[1],
        gi[2],
        linear,
        tn[0] * tn[1] * tn[2],
        rank as u64,
        size as u64,
        block_rank,
        (g[0] * g[1] * g[2]) as u64,
        (rank % 32) as u64,
        warp as u64,
        (size - 32 * warp).min(32) as u64,
        gi[1] + tn[1] * gi[2],
        tn[1] * tn[2],
    ]
}

#[test]
#[ignore = "needs a CUDA device"]
fn indices_match_the_launch_shape() {
    let mut rng = Rng::from_env("indices_match_the_launch_shape");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("indices");
    let mut shapes = vec![
        ((1, 1, 1), (1, 1, 1)),
        ((3, 1, 1), (100, 1, 1)),
        ((2, 3, 2), (7, 5, 3)),
    ];
    for _ in 0..6 {
        let dims = if rng.below(2) == 0 { 1 } else { 3 };
        shapes.push(random_shape(&mut rng, dims, 20_000));
    }
    for (grid, block) in shapes {
        let n = threads(grid, block);
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[u64; 26]>(&mut rng, n)).unwrap();
        {
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, n);
            // SAFETY: `indices(out: DeviceSliceMut<[u64; 26]>)` with `n` elements.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&o)
                    .launch(config(grid, block, 0))
            }
            .unwrap();
        }
        let got = out.to_vec().unwrap();
        let mut seen = 0;
        for bz in 0..grid.2 {
            for by in 0..grid.1 {
                for bx in 0..grid.0 {
                    for tz in 0..block.2 {
                        for ty in 0..block.1 {
                            for tx in 0..block.0 {
                                let want = index_record(grid, block, [bx, by, bz], [tx, ty, tz]);
                                let at = want[15] as usize;
                                assert_eq!(
                                    got[at], want,
                                    "grid {grid:?} block {block:?} thread at {at}"
                                );
                                seen += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(seen, n);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn grid_stride_loops_visit_every_index_exactly_once() {
    let mut rng = Rng::from_env("grid_stride_loops_visit_every_index_exactly_once");
    let k = Kernels::load(KERNELS_PTX);
    let (cover, unrolled, this_thread) = (
        k.func("cover_1d"),
        k.func("cover_unrolled"),
        k.func("cover_this_thread"),
    );
    for round in 0..12 {
        let dims = if round % 3 == 2 { 3 } else { 1 };
        let (grid, block) = random_shape(&mut rng, dims, 40_000);
        let total = threads(grid, block);
        // Grids smaller and larger than the data.
        let n = match round % 4 {
            0 => rng.length(257),
            1 => total / 3 + 1,
            2 => total * 5 + rng.below(97),
            _ => 1 + 2 * rng.below(100_000),
        };
        let start: Vec<u32> = poison(&mut rng, n);
        let mut out = DeviceBuffer::from_slice(&k.ctx, &start).unwrap();
        let mut visits = DeviceBuffer::<u32>::zeroed(&k.ctx, n).unwrap();
        let mut visits_unrolled = DeviceBuffer::<u32>::zeroed(&k.ctx, n).unwrap();
        let mut mine = DeviceBuffer::from_slice(&k.ctx, &poison::<u64>(&mut rng, n)).unwrap();
        let mine_before = mine.to_vec().unwrap();
        {
            let (o, v) = (
                out.kernel_arg_mut(&k.stream).unwrap(),
                visits.kernel_arg_mut(&k.stream).unwrap(),
            );
            let (o, v) = (slice(&o, n), slice(&v, n));
            let u = visits_unrolled.kernel_arg_mut(&k.stream).unwrap();
            let u = slice(&u, n);
            let m = mine.kernel_arg_mut(&k.stream).unwrap();
            let m = slice(&m, n);
            let cfg = config(grid, block, 0);
            // SAFETY: the kernels' parameters: slices of `n` elements each.
            unsafe {
                k.stream
                    .launch_builder(&cover)
                    .arg(&o)
                    .arg(&v)
                    .launch(cfg)
                    .unwrap();
                k.stream
                    .launch_builder(&unrolled)
                    .arg(&u)
                    .launch(cfg)
                    .unwrap();
                k.stream
                    .launch_builder(&this_thread)
                    .arg(&m)
                    .launch(cfg)
                    .unwrap();
            }
        }
        let (out, visits, visits_unrolled, mine) = (
            out.to_vec().unwrap(),
            visits.to_vec().unwrap(),
            visits_unrolled.to_vec().unwrap(),
            mine.to_vec().unwrap(),
        );
        for i in 0..n {
            let what = format!("n {n}, grid {grid:?}, block {block:?}, index {i}");
            assert_eq!(visits[i], 1, "grid_stride_mut visits, {what}");
            assert_eq!(visits_unrolled[i], 1, "for_each_unrolled visits, {what}");
            assert_eq!(
                out[i],
                start[i].wrapping_mul(3).wrapping_add(i as u32),
                "{what}"
            );
            let want = if i < total {
                !(i as u64)
            } else {
                mine_before[i]
            };
            assert_eq!(mine[i], want, "this_thread_mut, {what}");
        }
    }
}

/// Row-major `u32` cells of a `width x height` array `pitch` bytes apart,
/// in a plain buffer whose padding the test can read back.
struct Padded {
    pitch_elems: usize,
    width: usize,
    height: usize,
    start: Vec<u32>,
    buf: DeviceBuffer<u32>,
}

impl Padded {
    fn new(k: &Kernels, rng: &mut Rng, width: usize, height: usize) -> Self {
        let pitch_elems = width + rng.below(9);
        let start: Vec<u32> = poison(rng, pitch_elems * height.max(1));
        let buf = DeviceBuffer::from_slice(&k.ctx, &start).unwrap();
        Self {
            pitch_elems,
            width,
            height,
            start,
            buf,
        }
    }

    /// Checks every cell with `want(x, y, old)` and that the padding is untouched.
    fn check(&self, what: &str, want: impl Fn(usize, usize, u32) -> u32) {
        let got = self.buf.to_vec().unwrap();
        for y in 0..self.height {
            for x in 0..self.pitch_elems {
                let at = y * self.pitch_elems + x;
                let expected = if x < self.width {
                    want(x, y, self.start[at])
                } else {
                    self.start[at]
                };
                assert_eq!(
                    got[at], expected,
                    "{what}: cell ({x}, {y}) of {}x{} (pitch {} elements)",
                    self.width, self.height, self.pitch_elems
                );
            }
        }
    }
}

/// A thread's cell is tested in 64 bits and its coordinates then taken in
/// 32 (`this_thread_mut`, `this_thread_cell`): threads past `2^32` columns
/// (a 1D grid of more than `2^32` threads) or past `2^32` folded rows (a 3D
/// grid whose `y` and `z` extents multiply past it) must own no cell of a
/// small image, though their low 32 bits name one.
#[test]
#[ignore = "needs a CUDA device"]
fn threads_past_u32_max_columns_or_rows_own_no_cell() {
    if cuda_mem_tests::under_sanitizer() {
        // 4.4e9 threads: minutes under the sanitizer, for a test of
        // arithmetic that the plain run checks.
        eprintln!("skipped under the sanitizer: 4.4e9 threads");
        return;
    }
    let mut rng = Rng::from_env("threads_past_u32_max_columns_or_rows_own_no_cell");
    let k = Kernels::load(KERNELS_PTX);
    let cover_this = k.func("cover_2d_this_thread");
    // Columns: 4,194,305 blocks of 1024 threads, 2^32 + 1024 columns.
    // Rows: 65,535 x 1024 rows of threads in each of 65 layers, 2^32 +
    // 67,042,304 rows.
    for (grid, block) in [
        ((4_194_305, 1, 1), (1024, 1, 1)),
        ((1, 65_535, 65), (1, 1024, 1)),
    ] {
        let (width, height) = (1 + rng.below(40), 1 + rng.below(40));
        let mut img = Padded::new(&k, &mut rng, width, height);
        {
            let i = img.buf.kernel_arg_mut(&k.stream).unwrap();
            let i = pitched(&i, img.pitch_elems * 4, width, height);
            // SAFETY: `cover_2d_this_thread(PitchedSliceMut<u32>)`.
            unsafe {
                k.stream
                    .launch_builder(&cover_this)
                    .arg(&i)
                    .launch(config(grid, block, 0))
            }
            .unwrap();
        }
        let columns = grid.0 as usize * block.0 as usize;
        let rows = grid.1 as usize * block.1 as usize * grid.2 as usize * block.2 as usize;
        img.check(
            &format!("{width}x{height}, grid {grid:?}, block {block:?}"),
            |x, y, old| {
                if x < columns && y < rows {
                    ((y as u32) << 16) | x as u32
                } else {
                    old
                }
            },
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pitched_views_and_2d_loops_cover_every_element_once() {
    let mut rng = Rng::from_env("pitched_views_and_2d_loops_cover_every_element_once");
    let k = Kernels::load(KERNELS_PTX);
    let (cover_2d, cover_indices, cover_this, cover_rows) = (
        k.func("cover_2d"),
        k.func("cover_2d_indices"),
        k.func("cover_2d_this_thread"),
        k.func("cover_rows"),
    );
    for round in 0..10 {
        let dims = if round % 2 == 0 { 1 } else { 3 };
        let (grid, block) = random_shape(&mut rng, dims, 8_000);
        let (width, height) = (1 + rng.below(300), 1 + rng.below(90));
        let cfg = config(grid, block, 0);
        let cells = width * height;
        let what = format!("{width}x{height}, grid {grid:?}, block {block:?}");

        // grid_stride_mut of PitchedSliceMut, on a buffer with visible padding.
        let mut img = Padded::new(&k, &mut rng, width, height);
        let mut visits = DeviceBuffer::<u32>::zeroed(&k.ctx, cells).unwrap();
        let mut visits_indices = DeviceBuffer::<u32>::zeroed(&k.ctx, cells).unwrap();
        let mut visits_rows = DeviceBuffer::<u32>::zeroed(&k.ctx, height).unwrap();
        {
            let i = img.buf.kernel_arg_mut(&k.stream).unwrap();
            let i = pitched(&i, img.pitch_elems * 4, width, height);
            let v = visits.kernel_arg_mut(&k.stream).unwrap();
            let v = slice(&v, cells);
            let vi = visits_indices.kernel_arg_mut(&k.stream).unwrap();
            let vi = slice(&vi, cells);
            let (w, h) = (width, height);
            // SAFETY: `cover_2d(PitchedSliceMut<u32>, DeviceAtomicSlice<u32>)` and
            // `cover_2d_indices(usize, usize, DeviceAtomicSlice<u32>)`, sizes as given.
            unsafe {
                k.stream
                    .launch_builder(&cover_2d)
                    .arg(&i)
                    .arg(&v)
                    .launch(cfg)
                    .unwrap();
                k.stream
                    .launch_builder(&cover_indices)
                    .arg(&w)
                    .arg(&h)
                    .arg(&vi)
                    .launch(cfg)
                    .unwrap();
            }
        }
        img.check(&format!("cover_2d {what}"), |x, y, old| {
            old.wrapping_mul(5) ^ (y * width + x) as u32
        });
        assert!(
            visits.to_vec().unwrap().iter().all(|&v| v == 1),
            "cover_2d visits, {what}"
        );
        assert!(
            visits_indices.to_vec().unwrap().iter().all(|&v| v == 1),
            "grid_stride_2d visits, {what}"
        );

        // this_thread_mut of PitchedSliceMut.
        let mut img = Padded::new(&k, &mut rng, width, height);
        {
            let i = img.buf.kernel_arg_mut(&k.stream).unwrap();
            let i = pitched(&i, img.pitch_elems * 4, width, height);
            // SAFETY: `cover_2d_this_thread(PitchedSliceMut<u32>)`.
            unsafe { k.stream.launch_builder(&cover_this).arg(&i).launch(cfg) }.unwrap();
        }
        let (tx, ty) = (
            (grid.0 * block.0) as usize,
            (grid.1 * block.1 * grid.2 * block.2) as usize,
        );
        img.check(&format!("cover_2d_this_thread {what}"), |x, y, old| {
            if x < tx && y < ty {
                ((y as u32) << 16) | x as u32
            } else {
                old
            }
        });

        // rows_mut of PitchedRowsMut.
        let mut img = Padded::new(&k, &mut rng, width, height);
        {
            let i = img.buf.kernel_arg_mut(&k.stream).unwrap();
            let i = pitched(&i, img.pitch_elems * 4, width, height);
            let v = visits_rows.kernel_arg_mut(&k.stream).unwrap();
            let v = slice(&v, height);
            // SAFETY: `cover_rows(PitchedRowsMut<u32>, DeviceAtomicSlice<u32>)`.
            unsafe {
                k.stream
                    .launch_builder(&cover_rows)
                    .arg(&i)
                    .arg(&v)
                    .launch(cfg)
            }
            .unwrap();
        }
        img.check(&format!("cover_rows {what}"), |x, y, old| {
            old.wrapping_add(1) ^ (((y as u32) << 16) | x as u32)
        });
        assert!(
            visits_rows.to_vec().unwrap().iter().all(|&v| v == 1),
            "row visits, {what}"
        );

        // A real PitchedBuffer: the device view takes its pitch.
        let start: Vec<u32> = poison(&mut rng, cells);
        let mut real = PitchedBuffer::from_slice(&k.ctx, &start, width, height).unwrap();
        let mut visits = DeviceBuffer::<u32>::zeroed(&k.ctx, cells).unwrap();
        {
            let pitch = real.pitch();
            let i = real.kernel_arg_mut(&k.stream).unwrap();
            let i = pitched(&i, pitch, width, height);
            let v = visits.kernel_arg_mut(&k.stream).unwrap();
            let v = slice(&v, cells);
            // SAFETY: as above, with the buffer's own pitch.
            unsafe {
                k.stream
                    .launch_builder(&cover_2d)
                    .arg(&i)
                    .arg(&v)
                    .launch(cfg)
            }
            .unwrap();
        }
        let got = real.to_vec().unwrap();
        for (at, (&g, &s)) in got.iter().zip(&start).enumerate() {
            assert_eq!(
                g,
                s.wrapping_mul(5) ^ at as u32,
                "PitchedBuffer cell {at}, {what}"
            );
        }
        assert!(
            visits.to_vec().unwrap().iter().all(|&v| v == 1),
            "PitchedBuffer visits, {what}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn pitched_reads_match_the_host() {
    let mut rng = Rng::from_env("pitched_reads_match_the_host");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("pitched_read");
    for _ in 0..6 {
        let (width, height) = (1 + rng.below(200), 1 + rng.below(50));
        let src: Vec<f32> = (0..width * height)
            .map(|_| rng.below(1 << 20) as f32 / 64.0)
            .collect();
        let src_buf = PitchedBuffer::from_slice(&k.ctx, &src, width, height).unwrap();
        let mut dst = PitchedBuffer::from_slice(
            &k.ctx,
            &poison::<f32>(&mut rng, width * height),
            width,
            height,
        )
        .unwrap();
        let (grid, block) = random_shape(&mut rng, 3, 4_000);
        {
            let (sp, dp) = (src_buf.pitch(), dst.pitch());
            let s = src_buf.kernel_arg(&k.stream).unwrap();
            let s = pitched(&s, sp, width, height);
            let d = dst.kernel_arg_mut(&k.stream).unwrap();
            let d = pitched(&d, dp, width, height);
            // SAFETY: `pitched_read(PitchedSlice<f32>, PitchedSliceMut<f32>)`, equal sizes.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&s)
                    .arg(&d)
                    .launch(config(grid, block, 0))
            }
            .unwrap();
        }
        let got = dst.to_vec().unwrap();
        for y in 0..height {
            for x in 0..width {
                let want = 2.0 * src[y * width + x] + src[y * width + width - 1 - x] + 0.5;
                assert_eq!(got[y * width + x], want, "({x}, {y}) of {width}x{height}");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_slices_and_vector_stores_match_the_host() {
    let mut rng = Rng::from_env("device_slices_and_vector_stores_match_the_host");
    let k = Kernels::load(KERNELS_PTX);
    let (read, vector) = (k.func("slice_read"), k.func("vector_stores"));
    for _ in 0..8 {
        let n = 3 + rng.length(5000);
        let m = n + rng.below(300); // the output is longer: `get` returns None past the end
        let src: Vec<u64> = rng.values(n);
        let src_buf = DeviceBuffer::from_slice(&k.ctx, &src).unwrap();
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<u64>(&mut rng, m)).unwrap();
        let v4: Vec<[u32; 4]> = rng.values(n);
        let v4_buf = DeviceBuffer::from_slice(&k.ctx, &v4).unwrap();
        let mut v4_out =
            DeviceBuffer::from_slice(&k.ctx, &poison::<[u32; 4]>(&mut rng, m)).unwrap();
        let v4_before = v4_out.to_vec().unwrap();
        let mut bytes = DeviceBuffer::from_slice(&k.ctx, &poison::<u8>(&mut rng, m)).unwrap();
        let (grid, block) = random_shape(&mut rng, 1, 6_000);
        {
            let s = src_buf.kernel_arg(&k.stream).unwrap();
            let s = slice(&s, n);
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, m);
            let a = v4_buf.kernel_arg(&k.stream).unwrap();
            let a = slice(&a, n);
            let b = v4_out.kernel_arg_mut(&k.stream).unwrap();
            let b = slice(&b, m);
            let c = bytes.kernel_arg_mut(&k.stream).unwrap();
            let c = slice(&c, m);
            let cfg = config(grid, block, 0);
            // SAFETY: `slice_read(DeviceSlice<u64>, DeviceSliceMut<u64>)` and
            // `vector_stores(DeviceSlice<[u32; 4]>, DeviceSliceMut<[u32; 4]>,
            // DeviceSliceMut<u8>)`, sizes as given.
            unsafe {
                k.stream
                    .launch_builder(&read)
                    .arg(&s)
                    .arg(&o)
                    .launch(cfg)
                    .unwrap();
                k.stream
                    .launch_builder(&vector)
                    .arg(&a)
                    .arg(&b)
                    .arg(&c)
                    .launch(cfg)
                    .unwrap();
            }
        }
        let head = src.iter().take(3).fold(0u64, |a, &b| a.wrapping_add(b));
        let (out, v4_out, bytes) = (
            out.to_vec().unwrap(),
            v4_out.to_vec().unwrap(),
            bytes.to_vec().unwrap(),
        );
        for i in 0..m {
            let v = if i < n {
                src[i].rotate_left(7) ^ src[n - 1 - i]
            } else {
                u64::MAX - i as u64
            };
            assert_eq!(
                out[i],
                v.wrapping_add(head),
                "slice_read {i} of {m} (src {n})"
            );
            assert_eq!(
                v4_out[i],
                if i < n { v4[i] } else { v4_before[i] },
                "v4 copy {i}"
            );
            assert_eq!(bytes[i], (i as u8).wrapping_mul(7), "byte store {i}");
        }
    }
}

// ---------------------------------------------------------------------------
// Atomics.

/// An atomic test case for one type: the host model of every operation.
trait AtomicCase: DeviceCopy + PartialEq + std::fmt::Debug + Ord + Copy {
    const KERNEL: &'static str;
    fn random(rng: &mut Rng) -> Self;
    /// A small positive value (1..=100), for additions whose old values can
    /// be chained.
    fn small(rng: &mut Rng) -> Self;
    fn apply(op: u32, a: Self, b: Self) -> Self;
    /// `a - b` as a distance for ordering the old values of additions.
    fn distance(a: Self, b: Self) -> u64;
}

macro_rules! atomic_case {
    ($t:ty, $kernel:literal) => {
        impl AtomicCase for $t {
            const KERNEL: &'static str = $kernel;
            fn random(rng: &mut Rng) -> Self {
                rng.value()
            }
            fn small(rng: &mut Rng) -> Self {
                1 + rng.below(100) as $t
            }
            fn apply(op: u32, a: Self, b: Self) -> Self {
                match op {
                    op::ADD | op::CAS_ADD => a.wrapping_add(b),
                    op::SUB => a.wrapping_sub(b),
                    op::MIN => a.min(b),
                    op::MAX => a.max(b),
                    op::AND => a & b,
                    op::OR => a | b,
                    op::XOR => a ^ b,
                    _ => b,
                }
            }
            fn distance(a: Self, b: Self) -> u64 {
                a.wrapping_sub(b) as u64 & (<$t>::MAX as u64 | <$t>::MIN as u64)
            }
        }
    };
}
atomic_case!(u32, "atomic_u32");
atomic_case!(i32, "atomic_i32");
atomic_case!(u64, "atomic_u64");
atomic_case!(i64, "atomic_i64");

/// Runs `op` at `scope` over `values` with the given launch and returns the
/// slots' initial and final values and the old values.
#[allow(clippy::too_many_arguments)]
fn run_atomic<T: DeviceCopy>(
    k: &Kernels,
    kernel: &str,
    values: &[T],
    initial: &[T],
    old_poison: &[T],
    operation: u32,
    scope: u32,
    grid: u32,
    block: u32,
) -> (Vec<T>, Vec<T>) {
    let f = k.func(kernel);
    let n = values.len();
    let values_buf = DeviceBuffer::from_slice(&k.ctx, values).unwrap();
    let mut slots = DeviceBuffer::from_slice(&k.ctx, initial).unwrap();
    let mut olds = DeviceBuffer::from_slice(&k.ctx, old_poison).unwrap();
    {
        let v = values_buf.kernel_arg(&k.stream).unwrap();
        let v = slice(&v, n);
        let s = slots.kernel_arg_mut(&k.stream).unwrap();
        let s = slice(&s, initial.len());
        let o = olds.kernel_arg_mut(&k.stream).unwrap();
        let o = slice(&o, n);
        // SAFETY: `atomic_*(DeviceSlice<T>, DeviceAtomicSlice<T>,
        // DeviceSliceMut<T>, u32, u32)` with `n` values and olds; the slots
        // cover every block (block scope) or are indexed modulo their count.
        unsafe {
            k.stream
                .launch_builder(&f)
                .arg(&v)
                .arg(&s)
                .arg(&o)
                .arg(&operation)
                .arg(&scope)
                .launch(config((grid, 1, 1), (block, 1, 1), 0))
        }
        .unwrap();
    }
    (slots.to_vec().unwrap(), olds.to_vec().unwrap())
}

/// Which slot element `i` goes to (see the kernels).
fn slot_of(i: usize, scope: u32, block: usize, total: usize, slots: usize) -> usize {
    if scope == 0 {
        (i % total) / block
    } else {
        i % slots
    }
}

/// Checks one integer type: every operation, every scope, heavy contention.
fn check_atomic_ints<T: AtomicCase>(k: &Kernels, rng: &mut Rng) {
    for scope in 0..3u32 {
        for operation in op::ALL {
            let (grid, block) = (
                1 + rng.below(60) as u32,
                [32, 96, 128, 256, 1024][rng.below(5)] as u32,
            );
            let total = (grid * block) as usize;
            let n = total * (1 + rng.below(3)) + rng.below(77);
            let nslots = if scope == 0 {
                grid as usize
            } else {
                1 + rng.below(3)
            };
            let chained = matches!(operation, op::ADD | op::SUB | op::CAS_ADD);
            let values: Vec<T> = (0..n)
                .map(|_| {
                    if chained {
                        T::small(rng)
                    } else {
                        T::random(rng)
                    }
                })
                .collect();
            let initial: Vec<T> = (0..nslots).map(|_| T::random(rng)).collect();
            let (slots, olds) = run_atomic(
                k,
                T::KERNEL,
                &values,
                &initial,
                &poison::<T>(rng, n),
                operation,
                scope,
                grid,
                block,
            );
            let what = format!(
                "{} op {operation} scope {scope} grid {grid} block {block} n {n}",
                T::KERNEL
            );
            let mut by_slot = vec![Vec::new(); nslots];
            for i in 0..n {
                by_slot[slot_of(i, scope, block as usize, total, nslots)].push(i);
            }
            for s in 0..nslots {
                let members = &by_slot[s];
                let want = members
                    .iter()
                    .fold(initial[s], |a, &i| T::apply(operation, a, values[i]));
                if operation == op::EXCHANGE {
                    // Every value went in once and came out once (as an old
                    // value or the final one).
                    let mut ins: Vec<T> = members.iter().map(|&i| values[i]).collect();
                    ins.push(initial[s]);
                    let mut outs: Vec<T> = members.iter().map(|&i| olds[i]).collect();
                    outs.push(slots[s]);
                    ins.sort();
                    outs.sort();
                    assert_eq!(
                        ins, outs,
                        "{what}: slot {s} exchanges lost or duplicated a value"
                    );
                    continue;
                }
                assert_eq!(slots[s], want, "{what}: slot {s}");
                if chained {
                    // The old values are the running totals, each seen once:
                    // sorted by distance from the start, each is the previous
                    // plus (or minus) the previous element's value.
                    let sub = operation == op::SUB;
                    let mut steps: Vec<(u64, usize)> = members
                        .iter()
                        .map(|&i| {
                            let d = if sub {
                                T::distance(initial[s], olds[i])
                            } else {
                                T::distance(olds[i], initial[s])
                            };
                            (d, i)
                        })
                        .collect();
                    steps.sort();
                    let mut running = initial[s];
                    for &(_, i) in &steps {
                        assert_eq!(
                            olds[i], running,
                            "{what}: slot {s}: element {i} saw a torn total"
                        );
                        running = T::apply(operation, running, values[i]);
                    }
                } else {
                    for &i in members {
                        let old = olds[i];
                        let fine = match operation {
                            op::MIN => old >= slots[s] && old <= initial[s],
                            op::MAX => old <= slots[s] && old >= initial[s],
                            op::AND => T::apply(op::AND, old, slots[s]) == slots[s],
                            op::OR => T::apply(op::OR, old, slots[s]) == slots[s],
                            _ => true,
                        };
                        assert!(fine, "{what}: slot {s}: element {i} returned {old:?}");
                    }
                }
            }
        }
    }
}

/// Checks one float type: add, exchange, compare-exchange loops, with
/// values whose sums are exact (multiples of 1/8).
fn check_atomic_floats<T>(
    k: &Kernels,
    rng: &mut Rng,
    kernel: &str,
    from: impl Fn(f64) -> T,
    to: impl Fn(T) -> f64,
) where
    T: DeviceCopy + std::fmt::Debug,
{
    for scope in 0..3u32 {
        for operation in [op::ADD, op::EXCHANGE, op::CAS_ADD] {
            let (grid, block) = (
                1 + rng.below(40) as u32,
                [32, 64, 256, 1024][rng.below(4)] as u32,
            );
            let total = (grid * block) as usize;
            let n = total + rng.below(total + 1);
            let nslots = if scope == 0 {
                grid as usize
            } else {
                1 + rng.below(3)
            };
            let values: Vec<f64> = (0..n).map(|_| (1 + rng.below(64)) as f64 / 8.0).collect();
            let initial: Vec<f64> = (0..nslots).map(|_| rng.below(1000) as f64 / 8.0).collect();
            let (slots, olds) = run_atomic(
                k,
                kernel,
                &values.iter().map(|&v| from(v)).collect::<Vec<_>>(),
                &initial.iter().map(|&v| from(v)).collect::<Vec<_>>(),
                &poison::<T>(rng, n),
                operation,
                scope,
                grid,
                block,
            );
            let what =
                format!("{kernel} op {operation} scope {scope} grid {grid} block {block} n {n}");
            let mut by_slot = vec![Vec::new(); nslots];
            for i in 0..n {
                by_slot[slot_of(i, scope, block as usize, total, nslots)].push(i);
            }
            for s in 0..nslots {
                let members = &by_slot[s];
                if operation == op::EXCHANGE {
                    let mut ins: Vec<u64> = members.iter().map(|&i| values[i].to_bits()).collect();
                    ins.push(initial[s].to_bits());
                    let mut outs: Vec<u64> =
                        members.iter().map(|&i| to(olds[i]).to_bits()).collect();
                    outs.push(to(slots[s]).to_bits());
                    ins.sort();
                    outs.sort();
                    assert_eq!(ins, outs, "{what}: slot {s}");
                    continue;
                }
                let want = members.iter().fold(initial[s], |a, &i| a + values[i]);
                assert_eq!(to(slots[s]), want, "{what}: slot {s}");
                let mut steps: Vec<(u64, usize)> = members
                    .iter()
                    .map(|&i| ((to(olds[i]) * 8.0) as u64, i))
                    .collect();
                steps.sort();
                let mut running = initial[s];
                for &(_, i) in &steps {
                    assert_eq!(to(olds[i]), running, "{what}: slot {s}: element {i}");
                    running += values[i];
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn atomics_are_exact_under_contention_for_every_type_op_and_scope() {
    let mut rng = Rng::from_env("atomics_are_exact_under_contention_for_every_type_op_and_scope");
    let k = Kernels::load(KERNELS_PTX);
    check_atomic_ints::<u32>(&k, &mut rng);
    check_atomic_ints::<i32>(&k, &mut rng);
    check_atomic_ints::<u64>(&k, &mut rng);
    check_atomic_ints::<i64>(&k, &mut rng);
    check_atomic_floats(&k, &mut rng, "atomic_f32", |v| v as f32, |v: f32| v as f64);
    check_atomic_floats(&k, &mut rng, "atomic_f64", |v| v, |v: f64| v);
}

#[test]
#[ignore = "needs a CUDA device"]
fn shared_memory_atomics_build_a_histogram() {
    let mut rng = Rng::from_env("shared_memory_atomics_build_a_histogram");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("shared_histogram");
    for _ in 0..5 {
        let n = rng.length(300_000);
        let values: Vec<u32> = rng.values(n);
        let start: Vec<u32> = (0..64).map(|_| rng.below(1 << 20) as u32).collect();
        let values_buf = DeviceBuffer::from_slice(&k.ctx, &values).unwrap();
        let mut bins = DeviceBuffer::from_slice(&k.ctx, &start).unwrap();
        let (grid, block) = (
            (1 + rng.below(50)) as u32,
            [1, 32, 50, 64, 200, 1024][rng.below(6)] as u32,
        );
        {
            let v = values_buf.kernel_arg(&k.stream).unwrap();
            let v = slice(&v, n);
            let b = bins.kernel_arg_mut(&k.stream).unwrap();
            let b = slice(&b, 64);
            // SAFETY: `shared_histogram(DeviceSlice<u32>, DeviceAtomicSlice<u32>)`, 64 bins.
            unsafe {
                k.stream.launch_builder(&f).arg(&v).arg(&b).launch(config(
                    (grid, 1, 1),
                    (block, 1, 1),
                    0,
                ))
            }
            .unwrap();
        }
        let mut want = start.clone();
        for v in &values {
            want[(v % 64) as usize] += 1;
        }
        assert_eq!(
            bins.to_vec().unwrap(),
            want,
            "n {n}, grid {grid}, block {block}"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn fences_publish_data_from_one_block_to_another() {
    if cuda_mem_tests::under_sanitizer() {
        // One block spins until another sets a flag; a sanitizer that runs
        // blocks one after the other would never let it finish.
        eprintln!("fences_publish_data_from_one_block_to_another: skipped under compute-sanitizer");
        gpu();
        return;
    }
    let mut rng = Rng::from_env("fences_publish_data_from_one_block_to_another");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("fence_message");
    for scope in [1u32, 2] {
        let n = 1 + rng.below(200);
        let mut data = DeviceBuffer::from_slice(&k.ctx, &poison::<u32>(&mut rng, n)).unwrap();
        let mut flag = DeviceBuffer::<u32>::zeroed(&k.ctx, 1).unwrap();
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<u32>(&mut rng, n)).unwrap();
        {
            let d = data.kernel_arg_mut(&k.stream).unwrap();
            let d = slice(&d, n);
            let g = flag.kernel_arg_mut(&k.stream).unwrap();
            let g = slice(&g, 1);
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, n);
            // SAFETY: `fence_message(DeviceSliceMut<u32>, DeviceAtomicSlice<u32>,
            // DeviceSliceMut<u32>, u32)`, two blocks of one thread.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&d)
                    .arg(&g)
                    .arg(&o)
                    .arg(&scope)
                    .launch(config((2, 1, 1), (1, 1, 1), 0))
            }
            .unwrap();
        }
        let want: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        assert_eq!(out.to_vec().unwrap(), want, "scope {scope}");
        assert_eq!(flag.to_vec().unwrap(), [1]);
    }
}

// ---------------------------------------------------------------------------
// Shared memory, barriers and warps.

#[test]
#[ignore = "needs a CUDA device"]
fn block_reductions_through_static_and_dynamic_shared_memory() {
    let mut rng = Rng::from_env("block_reductions_through_static_and_dynamic_shared_memory");
    let k = Kernels::load(KERNELS_PTX);
    let (fs, fd, fl) = (
        k.func("block_sum_static"),
        k.func("block_sum_dynamic"),
        k.func("dynamic_lengths"),
    );
    for _ in 0..8 {
        let n = rng.length(200_000);
        let input: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32 >> 4).collect();
        let (grid, block) = (
            (1 + rng.below(70)) as u32,
            [1, 31, 32, 33, 96, 100, 256, 1000, 1024][rng.below(9)] as u32,
        );
        let total = (grid * block) as usize;
        let mut want = vec![0u64; grid as usize];
        for (i, &v) in input.iter().enumerate() {
            want[(i % total) / block as usize] += v as u64;
        }
        let input_buf = DeviceBuffer::from_slice(&k.ctx, &input).unwrap();
        let mut out_static =
            DeviceBuffer::from_slice(&k.ctx, &poison::<u64>(&mut rng, grid as usize)).unwrap();
        let mut out_dynamic =
            DeviceBuffer::from_slice(&k.ctx, &poison::<u64>(&mut rng, grid as usize)).unwrap();
        let extra = 8 * rng.below(100) as u32;
        {
            let i = input_buf.kernel_arg(&k.stream).unwrap();
            let i = slice(&i, n);
            let s = out_static.kernel_arg_mut(&k.stream).unwrap();
            let s = slice(&s, grid as usize);
            let d = out_dynamic.kernel_arg_mut(&k.stream).unwrap();
            let d = slice(&d, grid as usize);
            // SAFETY: `block_sum_*(DeviceSlice<u32>, DeviceSliceMut<u64>)` with one
            // output per block; the dynamic one gets 8 bytes per thread and more.
            unsafe {
                k.stream
                    .launch_builder(&fs)
                    .arg(&i)
                    .arg(&s)
                    .launch(config((grid, 1, 1), (block, 1, 1), 0))
                    .unwrap();
                k.stream
                    .launch_builder(&fd)
                    .arg(&i)
                    .arg(&d)
                    .launch(config((grid, 1, 1), (block, 1, 1), 8 * block + extra))
                    .unwrap();
            }
        }
        let what = format!("n {n}, grid {grid}, block {block}");
        assert_eq!(
            out_static.to_vec().unwrap(),
            want,
            "static shared memory, {what}"
        );
        assert_eq!(
            out_dynamic.to_vec().unwrap(),
            want,
            "dynamic shared memory, {what}"
        );

        let bytes = rng.below(48 * 1024) as u32;
        let mut lengths =
            DeviceBuffer::from_slice(&k.ctx, &poison::<u64>(&mut rng, 3 * grid as usize)).unwrap();
        {
            let l = lengths.kernel_arg_mut(&k.stream).unwrap();
            let l = slice(&l, 3 * grid as usize);
            // SAFETY: `dynamic_lengths(DeviceSliceMut<u64>)`, three per block.
            unsafe {
                k.stream.launch_builder(&fl).arg(&l).launch(config(
                    (grid, 1, 1),
                    (block, 1, 1),
                    bytes,
                ))
            }
            .unwrap();
        }
        let b = bytes as u64;
        let want: Vec<u64> = (0..grid).flat_map(|_| [b, b / 4, b / 8]).collect();
        assert_eq!(
            lengths.to_vec().unwrap(),
            want,
            "dynamic lengths of {bytes} bytes"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn counting_barriers_count_and_vote_per_block() {
    let mut rng = Rng::from_env("counting_barriers_count_and_vote_per_block");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("barrier_votes");
    for _ in 0..6 {
        let (grid, block) = random_shape(&mut rng, 3, 10_000);
        let n = threads(grid, block);
        let size = (block.0 * block.1 * block.2) as usize;
        let blocks = n / size;
        // Some blocks vote all 0, some all 1, the rest at random.
        let kinds: Vec<usize> = (0..blocks).map(|_| rng.below(4)).collect();
        let mut predicates = vec![0u8; n];
        let mut want = vec![[0u32; 3]; n];
        let (tx, ty) = ((grid.0 * block.0) as usize, (grid.1 * block.1) as usize);
        let mut per_block = vec![Vec::new(); blocks];
        for (linear, p) in predicates.iter_mut().enumerate() {
            let (gx, gy, gz) = (linear % tx, (linear / tx) % ty, linear / tx / ty);
            let (bx, by, bz) = (
                gx / block.0 as usize,
                gy / block.1 as usize,
                gz / block.2 as usize,
            );
            let b = bx + grid.0 as usize * (by + grid.1 as usize * bz);
            *p = match kinds[b] {
                0 => 0,
                1 => 1,
                _ => rng.below(2) as u8,
            };
            per_block[b].push(linear);
        }
        for members in &per_block {
            let count = members.iter().filter(|&&t| predicates[t] != 0).count() as u32;
            for &t in members {
                want[t] = [
                    count,
                    (count as usize == members.len()) as u32,
                    (count > 0) as u32,
                ];
            }
        }
        let p_buf = DeviceBuffer::from_slice(&k.ctx, &predicates).unwrap();
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[u32; 3]>(&mut rng, n)).unwrap();
        {
            let p = p_buf.kernel_arg(&k.stream).unwrap();
            let p = slice(&p, n);
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, n);
            // SAFETY: `barrier_votes(DeviceSlice<u8>, DeviceSliceMut<[u32; 3]>)`, one per thread.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&p)
                    .arg(&o)
                    .launch(config(grid, block, 0))
            }
            .unwrap();
        }
        assert_eq!(out.to_vec().unwrap(), want, "grid {grid:?} block {block:?}");
    }
}

/// The parameter word of the warp kernels.
fn warp_param(src: u32, delta: u32, xor: u32, predicate: bool) -> u32 {
    src | delta << 5 | xor << 10 | (predicate as u32) << 15
}

#[allow(clippy::needless_range_loop)]
#[test]
#[ignore = "needs a CUDA device"]
fn warp_shuffles_votes_and_masks_match_the_host() {
    let mut rng = Rng::from_env("warp_shuffles_votes_and_masks_match_the_host");
    let k = Kernels::load(KERNELS_PTX);
    let (full, masked) = (k.func("warp_full"), k.func("warp_masked"));
    for _ in 0..6 {
        let (grid, block) = ((1 + rng.below(20)) as u32, 32 * (1 + rng.below(32)) as u32);
        let n = (grid * block) as usize;
        let values: Vec<u64> = rng.values(n);
        let params: Vec<u32> = (0..n)
            .map(|_| {
                warp_param(
                    rng.below(32) as u32,
                    rng.below(32) as u32,
                    rng.below(32) as u32,
                    rng.below(2) == 1,
                )
            })
            .collect();
        let warps = n / 32;
        // Masked: a random non-empty mask per warp, each lane's `src` in it.
        let masks: Vec<u32> = (0..warps)
            .map(|_| (rng.next_u64() as u32) | 1 << rng.below(32))
            .collect();
        let masked_params: Vec<u32> = (0..n)
            .map(|t| {
                let lanes: Vec<u32> = (0..32).filter(|l| masks[t / 32] & 1 << l != 0).collect();
                let src = lanes[rng.below(lanes.len())];
                warp_param(
                    src,
                    rng.below(32) as u32,
                    rng.below(32) as u32,
                    rng.below(3) != 0,
                )
            })
            .collect();
        let values32: Vec<u32> = values.iter().map(|&v| v as u32).collect();
        let v_buf = DeviceBuffer::from_slice(&k.ctx, &values).unwrap();
        let p_buf = DeviceBuffer::from_slice(&k.ctx, &params).unwrap();
        let v32_buf = DeviceBuffer::from_slice(&k.ctx, &values32).unwrap();
        let m_buf = DeviceBuffer::from_slice(&k.ctx, &masks).unwrap();
        let mp_buf = DeviceBuffer::from_slice(&k.ctx, &masked_params).unwrap();
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[u64; 20]>(&mut rng, n)).unwrap();
        let mut out_masked =
            DeviceBuffer::from_slice(&k.ctx, &poison::<[u32; 8]>(&mut rng, n)).unwrap();
        {
            let (v, p) = (
                v_buf.kernel_arg(&k.stream).unwrap(),
                p_buf.kernel_arg(&k.stream).unwrap(),
            );
            let (v, p) = (slice(&v, n), slice(&p, n));
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, n);
            let (v32, m) = (
                v32_buf.kernel_arg(&k.stream).unwrap(),
                m_buf.kernel_arg(&k.stream).unwrap(),
            );
            let (v32, m) = (slice(&v32, n), slice(&m, warps));
            let mp = mp_buf.kernel_arg(&k.stream).unwrap();
            let mp = slice(&mp, n);
            let om = out_masked.kernel_arg_mut(&k.stream).unwrap();
            let om = slice(&om, n);
            let cfg = config((grid, 1, 1), (block, 1, 1), 0);
            // SAFETY: `warp_full(DeviceSlice<u64>, DeviceSlice<u32>, DeviceSliceMut<[u64; 20]>)`
            // and `warp_masked(DeviceSlice<u32>, DeviceSlice<u32>, DeviceSlice<u32>,
            // DeviceSliceMut<[u32; 8]>)`, one element per thread, one mask per warp.
            unsafe {
                k.stream
                    .launch_builder(&full)
                    .arg(&v)
                    .arg(&p)
                    .arg(&o)
                    .launch(cfg)
                    .unwrap();
                k.stream
                    .launch_builder(&masked)
                    .arg(&v32)
                    .arg(&m)
                    .arg(&mp)
                    .arg(&om)
                    .launch(cfg)
                    .unwrap();
            }
        }
        let (out, out_masked) = (out.to_vec().unwrap(), out_masked.to_vec().unwrap());
        for t in 0..n {
            let (base, lane) = (t / 32 * 32, (t % 32) as u32);
            let q = params[t];
            let (src, delta, xor) = (q & 31, (q >> 5) & 31, (q >> 10) & 31);
            let at = |l: u32| values[base + l as usize];
            let up = if lane >= delta { lane - delta } else { lane };
            let down = if lane + delta <= 31 {
                lane + delta
            } else {
                lane
            };
            let ballot = (0..32u32)
                .filter(|&l| params[base + l as usize] >> 15 & 1 == 1)
                .fold(0u32, |b, l| b | 1 << l);
            let lt = (1u64 << lane) - 1;
            let le = (1u64 << (lane + 1)) - 1;
            let want = [
                at(src),
                at(up),
                at(down),
                at(lane ^ xor),
                at(src) as u32 as u64,
                at(up) as u32 as u64,
                at(down) as u32 as u64,
                at(lane ^ xor) as u32 as u64,
                at(src),
                at(lane ^ xor) as u32 as u64,
                ballot as u64,
                (ballot != 0) as u64,
                (ballot == u32::MAX) as u64,
                lane as u64,
                out[t][14], // checked below: the active mask is not fixed
                lt,
                le,
                1 << lane,
                !lt & 0xffff_ffff,
                !le & 0xffff_ffff,
            ];
            assert_eq!(out[t], want, "warp_full thread {t} (block {block})");
            assert!(
                out[t][14] & 1 << lane != 0 && out[t][14] <= 0xffff_ffff,
                "active mask {:#x}",
                out[t][14]
            );

            let mask = masks[t / 32];
            if mask & 1 << lane == 0 {
                assert_eq!(out_masked[t], [0; 8], "lane {lane} outside mask {mask:#x}");
                continue;
            }
            let q = masked_params[t];
            let (src, delta, xor) = (q & 31, (q >> 5) & 31, (q >> 10) & 31);
            let at = |l: u32| values32[base + l as usize];
            let in_mask = |l: u32| mask & 1 << l != 0;
            let votes = (0..32u32)
                .filter(|&l| in_mask(l) && masked_params[base + l as usize] >> 15 & 1 == 1)
                .fold(0u32, |b, l| b | 1 << l);
            let got = out_masked[t];
            let what = format!("warp_masked thread {t}, mask {mask:#x}");
            assert_eq!(got[0], votes, "ballot_in, {what}");
            assert_eq!(got[1], (votes != 0) as u32, "any_in, {what}");
            assert_eq!(got[2], (votes == mask) as u32, "all_in, {what}");
            assert_eq!(got[3], at(src), "shfl_idx_in, {what}");
            let up = if lane >= delta { lane - delta } else { lane };
            let down = if lane + delta <= 31 {
                lane + delta
            } else {
                lane
            };
            // A source lane outside the mask gives an unspecified value.
            if in_mask(up) {
                assert_eq!(got[4], at(up), "shfl_up_in, {what}");
            }
            if in_mask(down) {
                assert_eq!(got[5], at(down), "shfl_down_in, {what}");
            }
            if in_mask(lane ^ xor) {
                assert_eq!(got[6], at(lane ^ xor), "shfl_xor_in, {what}");
            }
            assert_eq!(got[7], 1);
        }
    }
}

/// `match_any` and `match_low_bits` (whole warps, partial last warps,
/// masks) against the host: values drawn from a few, so that lanes match
/// on all bits or on the low bits alone. (Blocks of up to 256 threads:
/// the kernel's registers do not fit 1024.)
#[test]
#[ignore = "needs a CUDA device"]
fn warp_matches_find_the_lanes_with_equal_bits() {
    let mut rng = Rng::from_env("warp_matches_find_the_lanes_with_equal_bits");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("warp_match");
    for _ in 0..8 {
        let (grid, block) = (
            (1 + rng.below(30)) as u32,
            [1, 7, 32, 33, 64, 95, 250, 256][rng.below(8)] as u32,
        );
        let n = (grid * block) as usize;
        let kinds = 1 + rng.below(12) as u32;
        let mut value =
            || (rng.below(kinds as usize) as u32 * 0x0101_0037) ^ ((rng.below(3) as u32) << 8);
        let values: Vec<[u32; 4]> = (0..n)
            .map(|_| [value(), value(), value(), value()])
            .collect();
        // A mask per warp (warps start at multiples of 32 in each block),
        // of lanes that exist, lane 0 among them.
        let per_block = (block as usize).div_ceil(32);
        let masks: Vec<u32> = (0..grid as usize * per_block)
            .map(|w| {
                let lanes = existing_lanes(block as usize, w % per_block);
                (rng.next_u64() as u32 | 1 << rng.below(32)) & lanes | 1
            })
            .collect();
        let v_buf = DeviceBuffer::from_slice(&k.ctx, &values).unwrap();
        let m_buf = DeviceBuffer::from_slice(&k.ctx, &masks).unwrap();
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[u32; 5]>(&mut rng, n)).unwrap();
        {
            let s = &k.stream;
            let (v, m) = (v_buf.kernel_arg(s).unwrap(), m_buf.kernel_arg(s).unwrap());
            let (v, m) = (slice(&v, n), slice(&m, masks.len()));
            let o = out.kernel_arg_mut(s).unwrap();
            let o = slice(&o, n);
            // SAFETY: `warp_match(DeviceSlice<[u32; 4]>, DeviceSlice<u32>,
            // DeviceSliceMut<[u32; 5]>)`, four values per thread, a mask
            // per warp.
            unsafe {
                s.launch_builder(&f).arg(&v).arg(&m).arg(&o).launch(config(
                    (grid, 1, 1),
                    (block, 1, 1),
                    0,
                ))
            }
            .unwrap();
        }
        let got = out.to_vec().unwrap();
        for (t, got_t) in got.iter().enumerate() {
            let (warp, lanes) = warp_of(t, block as usize);
            let (first, last) = (lanes.start, lanes.end);
            let lane = t - first;
            let peers = |k: usize, same: &dyn Fn(u32, u32) -> bool, among: u32| {
                (first..last)
                    .filter(|&i| among & 1 << (i - first) != 0 && same(values[i][k], values[t][k]))
                    .fold(0u32, |m, i| m | 1 << (i - first))
            };
            let all = u32::MAX;
            let low = |bits: u32| move |a: u32, b: u32| (a ^ b) & ((1u64 << bits) - 1) as u32 == 0;
            let mask = masks[warp];
            let want = [
                peers(0, &|a, b| a == b, all),
                peers(0, &low(8), all),
                peers(1, &low(3), all),
                peers(2, &low(32), all),
                if mask & 1 << lane != 0 {
                    peers(3, &low(8), mask)
                } else {
                    0
                },
            ];
            assert_eq!(
                *got_t, want,
                "thread {t} (block {block}, lane {lane}, mask {mask:#x})"
            );
        }
    }
}

/// Thread `t`'s warp in a grid of blocks of `block` threads (warps start
/// at multiples of 32 in each block): its index in the grid, and the
/// threads it holds.
fn warp_of(t: usize, block: usize) -> (usize, std::ops::Range<usize>) {
    let (blk, rank) = (t / block, t % block);
    let first = blk * block + rank / 32 * 32;
    (
        blk * block.div_ceil(32) + rank / 32,
        first..(first + 32).min((blk + 1) * block),
    )
}

/// The lanes that exist in warp `w` of a block of `block` threads.
fn existing_lanes(block: usize, w: usize) -> u32 {
    let lanes = (block - w * 32).min(32);
    if lanes == 32 {
        u32::MAX
    } else {
        (1u32 << lanes) - 1
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn warp_reductions_cover_exactly_the_lanes_that_exist() {
    let mut rng = Rng::from_env("warp_reductions_cover_exactly_the_lanes_that_exist");
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("warp_reduce");
    for _ in 0..8 {
        let (grid, block) = (
            (1 + rng.below(30)) as u32,
            [1, 5, 32, 33, 50, 64, 100, 250, 1024][rng.below(9)] as u32,
        );
        let n = (grid * block) as usize;
        let a: Vec<u32> = rng.values(n);
        let b: Vec<i64> = rng.values(n);
        // Integer-valued floats: every order of additions gives the same sum.
        let c: Vec<f32> = (0..n).map(|_| rng.below(2001) as f32 - 1000.0).collect();
        let d: Vec<f64> = (0..n)
            .map(|_| (rng.next_u64() >> 20) as f64 - 8e12)
            .collect();
        let e: Vec<i32> = rng.values(n);
        let g: Vec<u64> = rng.values(n);
        let bufs = (
            DeviceBuffer::from_slice(&k.ctx, &a).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &b).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &c).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &d).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &e).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &g).unwrap(),
        );
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[u64; 18]>(&mut rng, n)).unwrap();
        {
            let s = &k.stream;
            let args = (
                bufs.0.kernel_arg(s).unwrap(),
                bufs.1.kernel_arg(s).unwrap(),
                bufs.2.kernel_arg(s).unwrap(),
                bufs.3.kernel_arg(s).unwrap(),
                bufs.4.kernel_arg(s).unwrap(),
                bufs.5.kernel_arg(s).unwrap(),
            );
            let p = [
                slice(&args.0, n),
                slice(&args.1, n),
                slice(&args.2, n),
                slice(&args.3, n),
                slice(&args.4, n),
                slice(&args.5, n),
            ];
            let o = out.kernel_arg_mut(s).unwrap();
            let o = slice(&o, n);
            // SAFETY: `warp_reduce` takes six input slices and an output slice,
            // one element per thread.
            unsafe {
                s.launch_builder(&f)
                    .arg(&p[0])
                    .arg(&p[1])
                    .arg(&p[2])
                    .arg(&p[3])
                    .arg(&p[4])
                    .arg(&p[5])
                    .arg(&o)
                    .launch(config((grid, 1, 1), (block, 1, 1), 0))
            }
            .unwrap();
        }
        let got = out.to_vec().unwrap();
        for (t, got_t) in got.iter().enumerate() {
            let (_, lanes) = warp_of(t, block as usize);
            let want = [
                lanes.clone().fold(0u32, |s, i| s.wrapping_add(a[i])) as u64,
                lanes.clone().map(|i| a[i]).min().unwrap() as u64,
                lanes.clone().map(|i| a[i]).max().unwrap() as u64,
                lanes.clone().fold(0i64, |s, i| s.wrapping_add(b[i])) as u64,
                lanes.clone().map(|i| b[i]).min().unwrap() as u64,
                lanes.clone().map(|i| b[i]).max().unwrap() as u64,
                lanes.clone().map(|i| c[i]).sum::<f32>().to_bits() as u64,
                lanes
                    .clone()
                    .map(|i| c[i])
                    .fold(f32::INFINITY, f32::min)
                    .to_bits() as u64,
                lanes
                    .clone()
                    .map(|i| c[i])
                    .fold(f32::NEG_INFINITY, f32::max)
                    .to_bits() as u64,
                lanes.clone().map(|i| d[i]).sum::<f64>().to_bits(),
                lanes
                    .clone()
                    .map(|i| d[i])
                    .fold(f64::INFINITY, f64::min)
                    .to_bits(),
                lanes
                    .clone()
                    .map(|i| d[i])
                    .fold(f64::NEG_INFINITY, f64::max)
                    .to_bits(),
                lanes.clone().fold(0i32, |s, i| s.wrapping_add(e[i])) as u32 as u64,
                lanes.clone().map(|i| e[i]).min().unwrap() as u32 as u64,
                lanes.clone().map(|i| e[i]).max().unwrap() as u32 as u64,
                lanes.clone().fold(0u64, |s, i| s.wrapping_add(g[i])),
                lanes.clone().map(|i| g[i]).min().unwrap(),
                lanes.clone().map(|i| g[i]).max().unwrap(),
            ];
            assert_eq!(
                *got_t, want,
                "thread {t}, block size {block}, lanes {lanes:?}"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Printing and panics, in child processes.

/// Turns the child tests below on and says which.
const CHILD_VAR: &str = "CUDA_MEM_DEVICE_STD_CHILD";
/// A child's last line.
const CHILD_DONE: &str = "device_std child: done";

/// The child of `device_printf_output_reaches_stdout`,
/// `panics_fail_the_launch_and_print_where`: does what `CUDA_MEM_DEVICE_STD_CHILD`
/// says; nothing when it is unset.
#[test]
#[ignore = "a child of the printing and panic tests (does nothing on its own)"]
fn child_device_std() {
    let Ok(what) = std::env::var(CHILD_VAR) else {
        return;
    };
    match what.as_str() {
        "print" => {
            let k = Kernels::load(KERNELS_PTX);
            let f = k.func("print_lines");
            let (x, y, n, big) = (1.2345678f32, -12345.678f64, -42i32, u64::MAX - 5);
            // SAFETY: `print_lines(f32, f64, i32, u64)`.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&x)
                    .arg(&y)
                    .arg(&n)
                    .arg(&big)
                    .launch(config((2, 1, 1), (3, 1, 1), 0))
            }
            .unwrap();
            k.stream.synchronize().unwrap();
        }
        "panic" | "explicit" | "trap" => {
            let printing = what != "trap";
            let k = Kernels::load(if printing { PANIC_PTX } else { KERNELS_PTX });
            let data = DeviceBuffer::from_slice(&k.ctx, &[1u32, 2, 3, 4]).unwrap();
            let mut out = DeviceBuffer::<u32>::zeroed(&k.ctx, 12).unwrap();
            let result = {
                let d = data.kernel_arg(&k.stream).unwrap();
                let d = slice(&d, 4);
                let o = out.kernel_arg_mut(&k.stream).unwrap();
                let o = slice(&o, 12);
                let (block, thread, code) = (2u32, 1u32, 77u32);
                let cfg = config((3, 1, 1), (4, 1, 1), 0);
                let launched = if what == "explicit" {
                    let f = k.func("explicit_panic");
                    // SAFETY: `explicit_panic(u32, u32)`.
                    unsafe {
                        k.stream
                            .launch_builder(&f)
                            .arg(&thread)
                            .arg(&code)
                            .launch(cfg)
                    }
                } else {
                    let f = k.func(if printing {
                        "index_out_of_bounds"
                    } else {
                        "trap_on_index"
                    });
                    // SAFETY: `(DeviceSlice<u32>, DeviceSliceMut<u32>, u32, u32)`,
                    // 4 elements in, 12 (one per thread) out.
                    unsafe {
                        k.stream
                            .launch_builder(&f)
                            .arg(&d)
                            .arg(&o)
                            .arg(&block)
                            .arg(&thread)
                            .launch(cfg)
                    }
                };
                launched.and_then(|_| k.stream.synchronize())
            };
            match result {
                Ok(()) => println!("the panicking kernel succeeded (an Err was required)"),
                Err(e) => println!("the launch failed: {e}"),
            }
            // Dropping the buffers of a poisoned context must not hang or panic.
            drop((data, out));
        }
        other => panic!("unknown child {other:?}"),
    }
    println!("{CHILD_DONE}");
}

/// C's `%.4e`: Rust's `{:.4e}` with a sign and at least two exponent digits.
fn c_exp(v: f64) -> String {
    let s = format!("{v:.4e}");
    let (mantissa, exponent) = s.split_once('e').unwrap();
    let e: i32 = exponent.parse().unwrap();
    format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

#[test]
#[ignore = "needs a CUDA device"]
fn device_printf_output_reaches_stdout() {
    let run = run_test_in_child(
        "child_device_std",
        &[(CHILD_VAR, "print")],
        Duration::from_secs(180),
    );
    let out = run.output();
    assert!(
        run.status.is_some_and(|s| s.success()),
        "the child failed:\n{out}"
    );
    assert!(run.stdout.contains(CHILD_DONE), "{out}");
    let (x, y, n, big) = (1.2345678f32, -12345.678f64, -42i32, u64::MAX - 5);
    for t in 0..6u32 {
        let (b, th) = (t / 3, t % 3);
        let line = format!(
            "device_std b={b} t={th} x={:.3} y={} n={n} neg={} big={big} hex={:x} c={} s=str w=[{:>5}] l=[{:<4}] pct=%",
            x * (t + 1) as f32,
            c_exp(y),
            -(t as i64),
            t * 255,
            (b'A' + (t % 26) as u8) as char,
            t,
            th
        );
        assert!(
            // The first line follows libtest's "test child_device_std ... ".
            run.stdout.lines().any(|l| l.ends_with(line.as_str())),
            "missing the line of thread {t}:\n{line}\nin:\n{out}"
        );
    }
    assert_eq!(run.stdout.matches("device_std b=").count(), 6, "{out}");
}

#[test]
#[ignore = "needs a CUDA device"]
fn panics_fail_the_launch_and_print_where() {
    if skip_driver_errors_under_sanitizer(
        "panics_fail_the_launch_and_print_where",
        "a trapping kernel is what the test is about",
    ) {
        return;
    }
    for (child, needles) in [
        (
            "panic",
            &[
                "kernel panicked at src/lib.rs:",
                "block (2, 0, 0), thread (1, 0, 0):",
                "index out of bounds: the len is 4 but the index is 4",
            ][..],
        ),
        (
            "explicit",
            &[
                "kernel panicked at src/lib.rs:",
                "thread (1, 0, 0):",
                "explicit panic with code 77",
            ][..],
        ),
        // The default build: a bare trap, still an error, nothing printed.
        ("trap", &[][..]),
    ] {
        let run = run_test_in_child(
            "child_device_std",
            &[(CHILD_VAR, child)],
            Duration::from_secs(180),
        );
        let out = run.output();
        eprintln!("=== child {child}:\n{out}");
        assert!(run.status.is_some(), "{child}: the child hung");
        assert!(
            run.status.unwrap().success(),
            "{child}: the child did not survive the panic:\n{out}"
        );
        assert!(run.stdout.contains(CHILD_DONE), "{child}: {out}");
        assert!(
            run.stdout.contains("the launch failed: "),
            "{child}: no error from the launch:\n{out}"
        );
        for needle in needles {
            assert!(
                run.stdout.contains(needle),
                "{child}: the output lacks {needle:?}:\n{out}"
            );
        }
        if child == "explicit" {
            // Thread 1 of each of the three blocks panicked (the first to
            // trap may end the others before they print).
            assert!(
                run.stdout.matches("explicit panic with code 77").count() >= 1,
                "{out}"
            );
        }
        if child == "trap" {
            assert!(!run.stdout.contains("kernel panicked"), "{out}");
        }
    }
}

// ---------------------------------------------------------------------------
// Math.

/// The error of `got` in units of the last place of `want` rounded to `f32`.
fn ulps_f32(got: f32, want: f64) -> f64 {
    if got.is_nan() && want.is_nan() || got as f64 == want {
        return 0.0;
    }
    let w = (want.abs() as f32).max(f32::MIN_POSITIVE);
    let ulp = (f32::from_bits(w.to_bits() + 1) - w) as f64;
    ((got as f64 - want) / ulp).abs()
}

/// The distance between two doubles in representable steps.
fn ulps_f64(got: f64, want: f64) -> u64 {
    if got.is_nan() && want.is_nan() || got == want {
        return 0;
    }
    if got.is_sign_negative() != want.is_sign_negative() {
        return u64::MAX;
    }
    (got.to_bits() as i64 - want.to_bits() as i64).unsigned_abs()
}

/// Random `f32` arguments: a third in [-pi, pi], a third in [-100, 100], a
/// third anything finite.
fn f32_arguments(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| match i % 3 {
            0 => {
                (rng.next_u64() as f64 / u64::MAX as f64 * 2.0 - 1.0) as f32 * std::f32::consts::PI
            }
            1 => (rng.next_u64() as f64 / u64::MAX as f64 * 200.0 - 100.0) as f32,
            _ => loop {
                let x = f32::from_bits(rng.next_u64() as u32);
                if x.is_finite() {
                    break x;
                }
            },
        })
        .collect()
}

/// Checks what `math_f32` computed for `x`, `y` against the host.
fn check_f32_math(x: f32, y: f32, got: &[f32; 20], tanh_instruction: bool, worst: &mut [f64; 20]) {
    use cuda_mem::device::math as m;
    let (xd, yd) = (x as f64, y as f64);
    let normal = |v: f64| v.abs() >= f32::MIN_POSITIVE as f64 && v.abs() <= f32::MAX as f64;
    let mut bound = |k: usize, err: f64, limit: f64, name: &str| {
        worst[k] = worst[k].max(err);
        assert!(
            err <= limit,
            "{name}({x:e}, {y:e}) = {:e}: error {err} above {limit}",
            got[k]
        );
    };
    // The accurate functions compute on the device exactly what they compute
    // on the host (same code, IEEE operations).
    let accurate = [
        (0, m::sqrt(x)),
        (1, m::rsqrt(x)),
        (3, m::exp(x)),
        (5, m::exp2(x)),
        (7, m::log(x)),
        (9, m::log2(x)),
        (11, m::sin(x)),
        (13, m::cos(x)),
        (15, m::tanh(x)),
        (17, m::pow(x, y)),
        (19, m::fma(x, y, x)),
    ];
    for (k, host) in accurate {
        let same = got[k].to_bits() == host.to_bits() || (got[k].is_nan() && host.is_nan());
        assert!(
            same,
            "function {k} at ({x:e}, {y:e}): device {:e}, host {host:e}",
            got[k]
        );
    }
    // Against the documented bounds (an f64 reference).
    if x >= 0.0 {
        assert_eq!(got[0], xd.sqrt() as f32, "sqrt({x:e})");
    }
    if x > 0.0 && normal(1.0 / xd.sqrt()) {
        bound(1, ulps_f32(got[1], 1.0 / xd.sqrt()), 1.0, "rsqrt");
        if xd >= f32::MIN_POSITIVE as f64 {
            bound(2, ulps_f32(got[2], 1.0 / xd.sqrt()), 2.0, "rsqrt_fast");
        }
    }
    if normal(xd.exp()) {
        bound(3, ulps_f32(got[3], xd.exp()), 1.0, "exp");
        bound(
            4,
            ulps_f32(got[4], xd.exp()),
            2.0 + 1.2 * xd.abs(),
            "exp_fast",
        );
    }
    if normal(xd.exp2()) {
        bound(5, ulps_f32(got[5], xd.exp2()), 1.0, "exp2");
        // NVIDIA's figure is 2 ulp; 2.011 seen on an H200 just below a power
        // of two (`exp2_fast(-75.07816)`, one of the fixed arguments).
        bound(6, ulps_f32(got[6], xd.exp2()), 2.5, "exp2_fast");
    }
    if x > 0.0 && normal(xd) {
        bound(7, ulps_f32(got[7], xd.ln()), 1.0, "log");
        bound(9, ulps_f32(got[9], xd.log2()), 1.0, "log2");
        if (0.5..=2.0).contains(&xd) {
            bound(
                8,
                (got[8] as f64 - xd.ln()).abs() * 2f64.powi(21),
                1.0,
                "log_fast (absolute, 2^-21)",
            );
            bound(
                10,
                (got[10] as f64 - xd.log2()).abs() * 2f64.powi(22),
                1.0,
                "log2_fast (absolute, 2^-22)",
            );
        } else {
            bound(8, ulps_f32(got[8], xd.ln()), 4.0, "log_fast");
            bound(10, ulps_f32(got[10], xd.log2()), 3.0, "log2_fast");
        }
    }
    bound(11, ulps_f32(got[11], xd.sin()), 1.0, "sin");
    bound(13, ulps_f32(got[13], xd.cos()), 1.0, "cos");
    if xd.abs() <= std::f64::consts::PI {
        bound(
            12,
            (got[12] as f64 - xd.sin()).abs() * 2f64.powi(20),
            1.0,
            "sin_fast (absolute, 2^-20)",
        );
        bound(
            14,
            (got[14] as f64 - xd.cos()).abs() * 2f64.powi(20),
            1.0,
            "cos_fast (absolute, 2^-20)",
        );
    }
    bound(15, ulps_f32(got[15], xd.tanh()), 3.0, "tanh");
    if tanh_instruction {
        if xd.abs() >= 1e-30 {
            bound(
                16,
                ((got[16] as f64 - xd.tanh()) / xd.tanh()).abs() * 2f64.powf(10.9),
                1.0,
                "tanh_fast (relative, 2^-10.9)",
            );
        }
    } else {
        bound(
            16,
            (got[16] as f64 - xd.tanh()).abs() * 2f64.powi(20),
            1.0,
            "tanh_fast (absolute, 2^-20)",
        );
    }
    let p = xd.powf(yd);
    if normal(p) && (x > 0.0 || y == y.trunc()) {
        bound(17, ulps_f32(got[17], p), 1.0, "pow");
    }
    if x > 0.0 && normal(xd) && normal(p) {
        let limit = 2f64.powi(-21) * (2.0 + 2.0 * yd.abs() * xd.log2().abs().max(1.0));
        bound(
            18,
            ((got[18] as f64 - p) / p).abs() / limit,
            1.0,
            "pow_fast (relative)",
        );
    }
    let exact = xd.mul_add(yd, xd);
    if exact.abs() <= f32::MAX as f64 {
        bound(19, ulps_f32(got[19], exact), 0.5001, "fma");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn math_matches_the_host_within_the_documented_bounds() {
    let mut rng = Rng::from_env("math_matches_the_host_within_the_documented_bounds");
    let n = 30_011;
    let mut x = f32_arguments(&mut rng, n);
    // Arguments where the approximations were seen at their worst on an
    // H200 (see the bounds in `check_f32_math` and the math module docs).
    x[..3].copy_from_slice(&[-75.07816, 0.39, 0.26]);
    // `y` for pow: small exponents, and integers for negative bases.
    let y: Vec<f32> = (0..n)
        .map(|i| {
            if x[i] < 0.0 {
                (rng.below(21) as f32) - 10.0
            } else {
                (rng.below(4001) as f32 - 2000.0) / 100.0
            }
        })
        .collect();
    for (ptx, tanh_instruction) in [(KERNELS_PTX, false), (KERNELS_SM80_PTX, true)] {
        let k = Kernels::load(ptx);
        let f = k.func("math_f32");
        let (xb, yb) = (
            DeviceBuffer::from_slice(&k.ctx, &x).unwrap(),
            DeviceBuffer::from_slice(&k.ctx, &y).unwrap(),
        );
        let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[f32; 20]>(&mut rng, n)).unwrap();
        {
            let (a, b) = (
                xb.kernel_arg(&k.stream).unwrap(),
                yb.kernel_arg(&k.stream).unwrap(),
            );
            let (a, b) = (slice(&a, n), slice(&b, n));
            let o = out.kernel_arg_mut(&k.stream).unwrap();
            let o = slice(&o, n);
            // SAFETY: `math_f32(DeviceSlice<f32>, DeviceSlice<f32>, DeviceSliceMut<[f32; 20]>)`.
            unsafe {
                k.stream
                    .launch_builder(&f)
                    .arg(&a)
                    .arg(&b)
                    .arg(&o)
                    .launch(config((37, 1, 1), (128, 1, 1), 0))
            }
            .unwrap();
        }
        let got = out.to_vec().unwrap();
        let mut worst = [0.0f64; 20];
        for i in 0..n {
            check_f32_math(x[i], y[i], &got[i], tanh_instruction, &mut worst);
        }
        eprintln!("f32 worst errors (ulps, or fractions of the absolute/relative bound), tanh.approx {tanh_instruction}: {worst:?}");
    }

    // f64: against the host's std (glibc) within the bound plus 1 for the
    // reference, and bit for bit against the host's own computation.
    use cuda_mem::device::math as m;
    let k = Kernels::load(KERNELS_PTX);
    let f = k.func("math_f64");
    let x: Vec<f64> = (0..n)
        .map(|i| match i % 3 {
            0 => (rng.next_u64() as f64 / u64::MAX as f64 * 2.0 - 1.0) * 700.0,
            1 => (rng.next_u64() as f64 / u64::MAX as f64) * 1e6,
            _ => loop {
                let v = f64::from_bits(rng.next_u64());
                if v.is_finite() {
                    break v;
                }
            },
        })
        .collect();
    let y: Vec<f64> = (0..n)
        .map(|i| {
            if x[i] < 0.0 {
                (rng.below(21) as f64) - 10.0
            } else {
                (rng.next_u64() as f64 / u64::MAX as f64) * 40.0 - 20.0
            }
        })
        .collect();
    let (xb, yb) = (
        DeviceBuffer::from_slice(&k.ctx, &x).unwrap(),
        DeviceBuffer::from_slice(&k.ctx, &y).unwrap(),
    );
    let mut out = DeviceBuffer::from_slice(&k.ctx, &poison::<[f64; 12]>(&mut rng, n)).unwrap();
    {
        let (a, b) = (
            xb.kernel_arg(&k.stream).unwrap(),
            yb.kernel_arg(&k.stream).unwrap(),
        );
        let (a, b) = (slice(&a, n), slice(&b, n));
        let o = out.kernel_arg_mut(&k.stream).unwrap();
        let o = slice(&o, n);
        // SAFETY: `math_f64(DeviceSlice<f64>, DeviceSlice<f64>, DeviceSliceMut<[f64; 12]>)`.
        unsafe {
            k.stream
                .launch_builder(&f)
                .arg(&a)
                .arg(&b)
                .arg(&o)
                .launch(config((41, 1, 1), (96, 1, 1), 0))
        }
        .unwrap();
    }
    let got = out.to_vec().unwrap();
    let mut worst = [0u64; 12];
    let names = [
        "sqrt",
        "rsqrt",
        "rsqrt_fast",
        "exp",
        "exp2",
        "log",
        "log2",
        "sin",
        "cos",
        "tanh",
        "pow",
        "fma",
    ];
    for i in 0..n {
        let (x, y, g) = (x[i], y[i], got[i]);
        let host = [
            m::sqrt(x),
            m::rsqrt(x),
            f64::NAN,
            m::exp(x),
            m::exp2(x),
            m::log(x),
            m::log2(x),
            m::sin(x),
            m::cos(x),
            m::tanh(x),
            m::pow(x, y),
            m::fma(x, y, x),
        ];
        for k in (0..12).filter(|&k| k != 2) {
            let same = g[k].to_bits() == host[k].to_bits() || (g[k].is_nan() && host[k].is_nan());
            assert!(
                same,
                "{}({x:e}, {y:e}): device {:e}, host {:e}",
                names[k], g[k], host[k]
            );
        }
        let reference = [
            x.sqrt(),
            1.0 / x.sqrt(),
            1.0 / x.sqrt(),
            x.exp(),
            x.exp2(),
            x.ln(),
            x.log2(),
            x.sin(),
            x.cos(),
            x.tanh(),
            x.powf(y),
            x.mul_add(y, x),
        ];
        let limits = [0, 2, 0, 2, 3, 2, 2, 2, 2, 5, 3, 0];
        for k in 0..12 {
            let r = reference[k];
            if !r.is_finite() || r != 0.0 && r.abs() < f64::MIN_POSITIVE {
                continue;
            }
            if k == 2 {
                if x >= f64::MIN_POSITIVE {
                    let rel = ((g[2] - r) / r).abs();
                    assert!(
                        rel <= 2f64.powi(-19),
                        "rsqrt_fast({x:e}) = {:e}: relative error {rel:e}",
                        g[2]
                    );
                }
                continue;
            }
            let e = ulps_f64(g[k], r);
            worst[k] = worst[k].max(e);
            assert!(
                e <= limits[k],
                "{}({x:e}, {y:e}) = {:e}, reference {r:e}: {e} ulp",
                names[k],
                g[k]
            );
        }
    }
    eprintln!(
        "f64 worst distances from glibc (ulps): {:?}",
        names.iter().zip(worst).collect::<Vec<_>>()
    );
}
