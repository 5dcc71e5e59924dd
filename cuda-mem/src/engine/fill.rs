//! `fill(value)`: the dispatch between the driver's memsets and the Rust fill
//! kernels, the kernels' loading into each context (once, cached in the
//! context's state), and their launch.
//!
//! * A value whose bytes repeat with period 1, 2 or 4 (e.g. `0u64`, `-1i32`,
//!   `1.0f32`, `[7u8; 12]`) goes to `cuMemsetD8/D16/D32Async` (or the 2D
//!   forms for pitched memory) when the address and pitch allow: no kernel.
//! * Any other value of at most 256 bytes goes to `cuda_mem_fill_small`, which
//!   gets the value as a kernel parameter (288 bytes), stages it in shared
//!   memory and writes 16-byte coalesced stores of the repeating pattern.
//! * Values of 257 to 4013 bytes go to `cuda_mem_fill_medium`, the same
//!   kernel with a 4032-byte parameter (kernel parameters may take 4 KiB).
//! * Larger values are first copied into the first element of the destination
//!   and `cuda_mem_fill_large` repeats them from there.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use cudarc::driver::{sys, CudaFunction, CudaStream};

use crate::context::ContextState;
use crate::current::on_stream;
use crate::error::{DriverResultExt, Result};
use crate::memory::pinned_pages::{PinnedFlags, PinnedPages};

/// The PTX of the fill kernels (`kernels/`), shipped inside this package so
/// that building cuda-mem needs no nightly toolchain. The `ptx` test of the
/// repository's `tests/` rebuilds it and fails when it differs.
pub(crate) const KERNELS_PTX: &str = include_str!("../../ptx/fill-kernels.ptx");

/// The PTX that cuda-mem loads for its fill kernels (for inspection and tests).
///
/// Whoever launches these kernels themselves keeps each kernel's `# Safety`
/// (`kernels/src/lib.rs`): among other things, 1D blocks of exactly
/// [`FILL_BLOCK_THREADS`](crate::fill_pattern::FILL_BLOCK_THREADS) threads
/// (the kernels assume that size; any other is undefined behaviour) and a
/// value of at least one byte.
///
/// ```
/// assert!(cuda_mem::fill_kernels_ptx().contains(".entry cuda_mem_fill_small"));
/// ```
pub fn fill_kernels_ptx() -> &'static str {
    KERNELS_PTX
}

/// One fill kernel loaded into a context, with how many of its blocks the
/// device runs at once.
struct FillKernel {
    function: CudaFunction,
    capacity: Capacity,
    /// Whether its threads' phases move from chunk to chunk (the medium
    /// kernel): its grid need not keep them fixed (see [`grid`]).
    cycling: bool,
}

/// The three fill kernels of this crate, loaded into one context.
struct FillKernels {
    small: FillKernel,
    medium: FillKernel,
    large: FillKernel,
}

/// Loads the fill kernels into `state`'s context, if they are not yet
/// (before a graph capture, which then only records launches).
pub(crate) fn preload(state: &ContextState) -> Result<()> {
    kernels(state).map(drop)
}

/// The fill kernels of `state`'s context, loading the embedded PTX on first
/// use (kept in the context's state until it goes).
#[inline]
fn kernels(state: &ContextState) -> Result<&FillKernels> {
    state.lazy(&state.fill_kernels, || {
        // Module loads go to the current context.
        state.bind()?;
        let ptx = cudarc::nvrtc::Ptx::from_src(KERNELS_PTX);
        let module = state
            .ctx
            .load_module(ptx)
            .op("cuModuleLoadData (cuda-mem fill kernels)")?;
        let load = |name, cycling| -> Result<FillKernel> {
            let function = module.load_function(name).op("cuModuleGetFunction")?;
            let per_sm = function
                .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
                .op("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
            Ok(FillKernel {
                function,
                capacity: Capacity {
                    sm_count: (state.sm_count as u64).max(1),
                    per_sm: per_sm.max(1) as u64,
                },
                cycling,
            })
        };
        Ok(FillKernels {
            small: load("cuda_mem_fill_small", false)?,
            medium: load("cuda_mem_fill_medium", true)?,
            large: load("cuda_mem_fill_large", false)?,
        })
    })
}

// The kernels' own pattern arithmetic, shared so that the host builds the exact
// parameter the kernel reads; the kernel-side functions are used by the tests.
use crate::engine::fill_pattern::{
    pattern_words_read, MediumPattern, SmallPattern, CHUNK_ALIGN, FILL_BLOCK_THREADS,
    MEDIUM_PATTERN_MAX, MEDIUM_PATTERN_WORDS, SMALL_PATTERN_MAX, SMALL_PATTERN_WORDS,
};

/// The grid tuning of the fill kernels (see [`grid`]): 16-byte chunks per
/// thread for the small by-parameter kernel with short pattern periods (at
/// most [`SHORT_PERIOD`] chunks) and with longer ones, for the medium
/// by-parameter kernel and for the value-in-memory kernel, and the fewest
/// blocks per multiprocessor.
static TUNING: [AtomicU32; 5] = [
    AtomicU32::new(4),
    AtomicU32::new(4),
    AtomicU32::new(4),
    AtomicU32::new(8),
    AtomicU32::new(0),
];

/// Benchmark knob: the fill kernels' grid tuning. `short` and `long`: how
/// many 16-byte chunks each thread of the by-parameter kernel writes for
/// patterns whose period is at most 16 chunks (element sizes whose odd part
/// is at most 16: 12, 48, 128, 256, ...) and for longer ones (100, 200, 255,
/// ...); default 4 and 4; `medium`: the same for the medium by-parameter
/// kernel (elements of 257 to 4013 bytes, whose blocks each stage up to 1008
/// pattern words; default 4, raised to a chunk per 64 staged words); `large`: for the value-in-memory kernel
/// (larger elements; default 8). 0 makes the grid one wave of long-lived
/// blocks. `floor_per_sm`: the fewest blocks per multiprocessor a grid gets
/// before chunks per thread set its size (default 0; capped by occupancy).
///
/// The defaults are the best of a sweep on an H200 (bench `--sweep`, GPU
/// time on a held stream): 4 chunks per thread and no floor against 8/16
/// chunks and a full wave, 1.006-1.011 of `cuMemsetD32`'s speed for 12-,
/// 16-, 100- and 256-byte elements over 1 GiB against 0.981-0.996, and
/// 0.75-0.78 at 1 MiB against 0.70-0.75; the value-in-memory kernel, whose
/// threads read their 16 bytes from device memory, is best at 8 (0.987 and
/// 0.977 for 4096- and 8000-byte elements over 1 GiB, against 0.972 and
/// 0.959 at 16 and 0.941-0.953 at 32 and 64).
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __set_fill_tuning(short: u32, long: u32, medium: u32, large: u32, floor_per_sm: u32) {
    for (knob, v) in TUNING
        .iter()
        .zip([short, long, medium, large, floor_per_sm])
    {
        knob.store(v, Ordering::Relaxed);
    }
}

/// Benchmark hook: the grid `(x, y)` that a fill of `bytes` contiguous
/// bytes with `value` gets from the fill kernels in `ctx` (which it loads):
/// the bench's launch-floor row launches an empty kernel with the same grid.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __fill_grid(
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    value: &[u8],
    bytes: u64,
) -> Result<(u32, u32)> {
    let state = ContextState::of(ctx)?;
    let all = kernels(&state)?;
    let size = value.len();
    let kernel = if size <= SMALL_PATTERN_MAX {
        &all.small
    } else if size <= MEDIUM_PATTERN_MAX {
        &all.medium
    } else {
        &all.large
    };
    let (chunks, floor) = tuning(size as u64);
    let region = Region::linear(0, bytes);
    Ok(grid(
        &region,
        size as u64,
        kernel.capacity,
        chunks,
        floor,
        kernel.cycling,
    ))
}

/// How many blocks of a fill kernel the device runs at once:
/// `sm_count * per_sm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Capacity {
    pub(crate) sm_count: u64,
    /// Blocks per multiprocessor (the occupancy the driver computes).
    pub(crate) per_sm: u64,
}

/// Threads per block of the fill kernels (which assume it).
const BLOCK: u32 = FILL_BLOCK_THREADS;
/// Longest pattern period, in 16-byte chunks, of the first tuning class.
const SHORT_PERIOD: u64 = 16;

/// A rectangle of bytes to fill: `rows` rows of `row_bytes` bytes, `pitch`
/// bytes apart, starting at `addr`. One-dimensional fills have `rows == 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Region {
    pub(crate) addr: u64,
    pub(crate) pitch: u64,
    pub(crate) row_bytes: u64,
    pub(crate) rows: u64,
}

impl Region {
    pub(crate) fn linear(addr: u64, bytes: u64) -> Self {
        Self {
            addr,
            pitch: bytes,
            row_bytes: bytes,
            rows: 1,
        }
    }

    fn is_empty(&self) -> bool {
        self.rows == 0 || self.row_bytes == 0
    }

    /// Whether both the address and (for several rows) the pitch are multiples of `align`.
    fn aligned_to(&self, align: u64) -> bool {
        self.addr.is_multiple_of(align) && (self.rows <= 1 || self.pitch.is_multiple_of(align))
    }
}

/// How a fill is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FillPlan {
    /// Nothing to write.
    Nothing,
    /// `cuMemsetD8Async` / `cuMemsetD2D8Async` with this byte.
    Memset8(u8),
    /// `cuMemsetD16Async` / `cuMemsetD2D16Async` with this value.
    Memset16(u16),
    /// `cuMemsetD32Async` / `cuMemsetD2D32Async` with this value.
    Memset32(u32),
    /// The by-parameter kernel with a 288-byte pattern (values of at most
    /// 256 bytes).
    SmallKernel,
    /// The by-parameter kernel with a 4032-byte pattern (values of at most
    /// `MEDIUM_PATTERN_MAX` bytes).
    MediumKernel,
    /// The value-in-memory kernel.
    LargeKernel,
}

impl FillPlan {
    /// Whether this is one of the driver's memsets.
    #[inline(always)]
    pub(crate) fn is_memset(self) -> bool {
        matches!(
            self,
            FillPlan::Memset8(_) | FillPlan::Memset16(_) | FillPlan::Memset32(_)
        )
    }
}

/// The smallest period (1, 2 or 4) with which `bytes` repeats, if any.
/// `bytes` repeats with period `p` exactly when every byte equals the one
/// `p` bytes further on: no division per byte, and most values fail at
/// their first pair (this runs on every fill's launch path).
///
/// Each test is one comparison of the value with itself shifted by `p`
/// bytes: inlined where the value's length is a constant (each element
/// type's fill), a few word compares rather than a loop over the bytes.
#[inline(always)]
pub(crate) fn byte_period(bytes: &[u8]) -> Option<usize> {
    let n = bytes.len();
    let repeats = |p: usize| n.is_multiple_of(p) && bytes[p..] == bytes[..n - p];
    if n == 0 {
        // No byte differs from the one `p` further on: period 1, as the
        // test of every pair says (`plan` never asks: it fills nothing).
        Some(1)
    } else if repeats(1) {
        Some(1)
    } else if repeats(2) {
        Some(2)
    } else if repeats(4) {
        Some(4)
    } else {
        None
    }
}

/// Chooses how to fill `region` with the element `value` (its bytes).
/// Inlined into each element type's fill, where the value's length is a
/// constant.
#[inline(always)]
pub(crate) fn plan(value: &[u8], region: &Region) -> FillPlan {
    if region.is_empty() || value.is_empty() {
        return FillPlan::Nothing;
    }
    match byte_period(value) {
        Some(1) => return FillPlan::Memset8(value[0]),
        Some(2) if region.aligned_to(2) => {
            return FillPlan::Memset16(u16::from_le_bytes([value[0], value[1]]))
        }
        Some(4) if region.aligned_to(4) => {
            return FillPlan::Memset32(u32::from_le_bytes([value[0], value[1], value[2], value[3]]))
        }
        _ => {}
    }
    if value.len() <= SMALL_PATTERN_MAX {
        FillPlan::SmallKernel
    } else if value.len() <= MEDIUM_PATTERN_MAX {
        FillPlan::MediumKernel
    } else {
        FillPlan::LargeKernel
    }
}

/// `a` with every factor 2 that it shares with the power of two `p`
/// divided out: `a / gcd(a, p)`, by a shift (this runs on every fill's
/// launch path, and a 64-bit division costs tens of cycles).
#[inline(always)]
fn odd_part(a: u64, p: u64) -> u64 {
    debug_assert!(p.is_power_of_two());
    a >> a.trailing_zeros().min(p.trailing_zeros())
}

/// The grid `(x, y)` for a kernel fill of `region` with an element of `size`
/// bytes, for a kernel whose blocks fit the device as `capacity` says.
///
/// Each thread along a row writes chunks `tid, tid + T, tid + 2T, ...` where
/// `T` is the number of threads along the row. A thread's pattern phase stays
/// fixed when `T * 16` is a multiple of `size`, i.e. `T` is a multiple of the
/// period `P = size / gcd(size, 16)` in chunks; `T = x * 256` is, when `x` is
/// a multiple of `P / gcd(P, 256)`. Otherwise the grid must cover the row in
/// one pass (every thread writes at most one chunk). A `cycling` kernel
/// (the medium one) can move each thread's phase itself: its grid is sized
/// by the work alone where keeping the phase would more than double the
/// blocks (odd elements of thousands of bytes over a few MiB), and the
/// kernel keeps the phase fixed whenever the grid allows it (measured on an
/// H200: 0.85-0.88 of memset's speed for 257- to 1500-byte elements over
/// 1 GiB when always moving, 0.99-1.00 fixed; 0.58 against 0.22 for
/// 4013-byte elements over 16 MiB the other way round).
///
/// Each thread writes about `chunks_per_thread` chunks, with at least
/// `floor_per_sm` blocks per multiprocessor (capped by occupancy): many
/// short-lived blocks, dozens of waves, measured faster on an H200 than one
/// wave of long-lived blocks (0.98 against 0.93 of memset speed for 12-byte
/// elements). A thread's setup (its 16 bytes of the pattern, from shared
/// memory or from the value in device memory) is paid once per thread, so
/// the costlier setup of the value-in-memory kernel gets more chunks per
/// thread (see [`TUNING`]). A count of 0 asks for one wave: a block per
/// resident slot, each thread striding over the row.
///
/// Inlined into each caller: where the element size is a constant (a typed
/// fill's one-row launch), the period arithmetic folds away, and a phase
/// step of 1 (every element size whose odd part divides 256) costs no
/// division at all.
#[inline(always)]
pub(crate) fn grid(
    region: &Region,
    size: u64,
    capacity: Capacity,
    chunks_per_thread: u64,
    floor_per_sm: u64,
    cycling: bool,
) -> (u32, u32) {
    let rows_y = region.rows.clamp(1, 65_535) as u32;
    // At least 1: a grid covers the head before the first aligned chunk.
    let chunks = region.row_bytes / 16 + 1;
    let one_pass = chunks.div_ceil(BLOCK as u64);
    let period = odd_part(size, 16);
    let step = odd_part(period, BLOCK as u64);
    let per_row = |blocks: u64| {
        if rows_y == 1 {
            blocks.max(1)
        } else {
            (blocks / rows_y as u64).max(1)
        }
    };
    let x = if chunks_per_thread > 0 {
        let floor = per_row(capacity.sm_count * floor_per_sm.min(capacity.per_sm));
        let blocks = floor.max(div_ceil_by(chunks, BLOCK as u64 * chunks_per_thread));
        let fixed = round_up(blocks, step);
        // A fixed phase is cheaper per chunk; a cycling kernel forgoes it
        // only when keeping it would more than double the blocks (each
        // staging the whole value).
        if cycling && fixed > 2 * blocks {
            blocks
        } else {
            fixed
        }
    } else {
        let wave = per_row(capacity.sm_count * capacity.per_sm);
        if wave >= step {
            round_down(wave, step)
        } else if cycling {
            wave
        } else {
            // A period so long that one step of blocks exceeds a wave (values
            // of thousands of bytes): the smallest grid that keeps phases
            // fixed.
            step
        }
    };
    (
        within_grid_x_limit(x.min(one_pass), step, cycling) as u32,
        rows_y,
    )
}

/// `x` capped by the device's limit on a grid's x, kept a multiple of the
/// phase step `step` (`>= 1`) where the kernel cannot move its threads'
/// phases (`!cycling`): only rows of terabytes come near it. The capped
/// limit is divided out only for an `x` within a step of it.
#[inline(always)]
fn within_grid_x_limit(x: u64, step: u64, cycling: bool) -> u64 {
    const GRID_X_MAX: u64 = i32::MAX as u64;
    if cycling || step == 1 {
        x.min(GRID_X_MAX)
    } else if x <= GRID_X_MAX.saturating_sub(step - 1) {
        // The limit, the greatest multiple of `step` up to GRID_X_MAX, is
        // more than GRID_X_MAX - step.
        x
    } else {
        x.min((GRID_X_MAX / step * step).max(1))
    }
}

/// `a.div_ceil(d)` (`d >= 1`), by a shift when `d` is a power of two (the
/// default tunings: 256 threads times 4 or 8 chunks).
#[inline(always)]
fn div_ceil_by(a: u64, d: u64) -> u64 {
    if d.is_power_of_two() {
        (a >> d.trailing_zeros()) + u64::from(a & (d - 1) != 0)
    } else {
        a.div_ceil(d)
    }
}

/// The least multiple of `step` (`>= 1`) that is at least `a`, saturating:
/// `a` itself for a step of 1.
#[inline(always)]
fn round_up(a: u64, step: u64) -> u64 {
    if step == 1 {
        a
    } else {
        a.div_ceil(step).saturating_mul(step)
    }
}

/// The greatest multiple of `step` (`>= 1`) that is at most `a`: `a`
/// itself for a step of 1.
#[inline(always)]
fn round_down(a: u64, step: u64) -> u64 {
    if step == 1 {
        a
    } else {
        a / step * step
    }
}

/// The chunks per thread and the block floor for a fill with an element of
/// `size` bytes (see [`TUNING`]).
#[inline(always)]
fn tuning(size: u64) -> (u64, u64) {
    let class = if size > MEDIUM_PATTERN_MAX as u64 {
        3
    } else if size > SMALL_PATTERN_MAX as u64 {
        2
    } else {
        usize::from(odd_part(size, 16) > SHORT_PERIOD)
    };
    let get = |i: usize| TUNING[i].load(Ordering::Relaxed) as u64;
    let chunks = match class {
        // A medium block stages up to 1008 pattern words before it writes:
        // a thread writes a chunk per 64 staged words at least.
        2 if get(2) > 0 => get(2).max(pattern_words_read(size as u32, u32::MAX) as u64 / 64),
        _ => get(class),
    };
    (chunks, get(4))
}

/// Queues a fill of `region` with the element `value` on `stream`.
///
/// The caller has ordered `stream` after earlier work on the memory, checked
/// that `region` lies inside one allocation of `state`'s context, that
/// `row_bytes` is a multiple of `value.len()` and, for several rows, that
/// `pitch >= row_bytes`.
#[inline]
pub(crate) fn enqueue(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
) -> Result<()> {
    enqueue_planned(state, stream, value, region, plan(value, &region))
}

/// [`enqueue`] with `plan`, which [`plan`] chose for `value` and `region`.
///
/// Inlined into each element type's fill, where the value's length is a
/// constant: the one-row small kernel's parameter is built there in a few
/// stores (the value's copies and the zeroed rest), in the frame it is
/// launched from.
#[inline(always)]
pub(crate) fn enqueue_planned(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
    plan: FillPlan,
) -> Result<()> {
    match plan {
        FillPlan::Nothing => Ok(()),
        FillPlan::Memset8(_) | FillPlan::Memset16(_) | FillPlan::Memset32(_)
            if region.rows == 1 =>
        {
            memset_row(stream, region.addr, region.row_bytes as usize, plan)
        }
        FillPlan::Memset8(_) | FillPlan::Memset16(_) | FillPlan::Memset32(_) => {
            memset_rows(stream, region, plan)
        }
        FillPlan::SmallKernel if region.rows == 1 => small_kernel_row(state, stream, value, region),
        plan => enqueue_kernel(state, stream, value, region, plan),
    }
}

/// The memset of one row of `bytes` bytes at `addr` that `plan` says (the
/// common fill: a value whose bytes repeat), with [`enqueue`]'s guarantees.
/// Queued as the stream's context's work ([`on_stream`]).
#[inline(always)]
pub(crate) fn memset_row(
    stream: &CudaStream,
    addr: u64,
    bytes: usize,
    plan: FillPlan,
) -> Result<()> {
    // SAFETY (each arm): `enqueue`'s caller guarantees that the bytes are
    // writable memory of the stream's context; the count is in units of the
    // memset's element size, which divides `bytes` (the value repeats with
    // that period), and `plan` checked the address's alignment to it.
    match plan {
        FillPlan::Memset8(v) => on_stream(stream, "cuMemsetD8Async", |s| {
            // SAFETY: see above.
            unsafe { sys::cuMemsetD8Async(addr, v, bytes, s) }
        }),
        FillPlan::Memset16(v) => on_stream(stream, "cuMemsetD16Async", |s| {
            // SAFETY: see above.
            unsafe { sys::cuMemsetD16Async(addr, v, bytes / 2, s) }
        }),
        FillPlan::Memset32(v) => on_stream(stream, "cuMemsetD32Async", |s| {
            // SAFETY: see above.
            unsafe { sys::cuMemsetD32Async(addr, v, bytes / 4, s) }
        }),
        _ => Ok(()),
    }
}

/// The 2D memset of several rows that `plan` says, with [`enqueue`]'s
/// guarantees.
fn memset_rows(stream: &CudaStream, region: Region, plan: FillPlan) -> Result<()> {
    let Region {
        addr,
        pitch,
        row_bytes,
        rows,
    } = region;
    let (w, h, p) = (row_bytes as usize, rows as usize, pitch as usize);
    // SAFETY (memsets): the caller guarantees the region is writable memory of
    // the stream's context; widths are in units of the memset's element size,
    // which divides `row_bytes` (the value repeats with that period), and the
    // address and pitch are aligned to it (checked by `plan`).
    match plan {
        FillPlan::Memset8(v) => on_stream(stream, "cuMemsetD2D8Async", |s| {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D8Async(addr, p, v, w, h, s) }
        }),
        FillPlan::Memset16(v) => on_stream(stream, "cuMemsetD2D16Async", |s| {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D16Async(addr, p, v, w / 2, h, s) }
        }),
        FillPlan::Memset32(v) => on_stream(stream, "cuMemsetD2D32Async", |s| {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D32Async(addr, p, v, w / 4, h, s) }
        }),
        _ => Ok(()),
    }
}

/// [`enqueue`] by a fill kernel, as `plan` says.
#[inline(never)]
fn enqueue_kernel(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
    plan: FillPlan,
) -> Result<()> {
    let Region {
        addr,
        pitch,
        row_bytes,
        rows,
    } = region;
    match plan {
        FillPlan::SmallKernel | FillPlan::MediumKernel | FillPlan::LargeKernel
            if rows > 1 && pitch % CHUNK_ALIGN != 0 =>
        {
            // Rows would split differently: fill them one by one.
            (0..rows).try_for_each(|r| {
                enqueue(
                    state,
                    stream,
                    value,
                    Region::linear(addr + r * pitch, row_bytes),
                )
            })
        }
        FillPlan::SmallKernel | FillPlan::MediumKernel | FillPlan::LargeKernel => {
            match plan {
                // The patterns built in place (`Pattern::repeat_into`): for the
                // medium kernel, 4 KiB not moved on every fill.
                FillPlan::SmallKernel => {
                    let mut pattern = SmallPattern {
                        words: [0; SMALL_PATTERN_WORDS],
                    };
                    pattern.repeat_into(value);
                    let kernel = &kernels(state)?.small;
                    launch_by_parameter(stream, kernel, &region, value.len(), &mut pattern)
                }
                FillPlan::MediumKernel => {
                    let mut pattern = MediumPattern {
                        words: [0; MEDIUM_PATTERN_WORDS],
                    };
                    pattern.repeat_into(value);
                    let kernel = &kernels(state)?.medium;
                    launch_by_parameter(stream, kernel, &region, value.len(), &mut pattern)
                }
                _ => enqueue_large(state, stream, value, region),
            }
        }
        _ => Ok(()),
    }
}

/// [`enqueue`] by the small kernel over one row, `region` (the plan
/// [`FillPlan::SmallKernel`], `region.rows == 1`). Inlined into each
/// element type's fill, where the value's length is a constant: the kernel's
/// parameter is built there in a few stores (the value's copies and the
/// zeroed rest), in the frame it is launched from, and the grid folds.
#[inline(always)]
pub(crate) fn small_kernel_row(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
) -> Result<()> {
    debug_assert!(region.rows == 1 && value.len() <= SMALL_PATTERN_MAX);
    let mut pattern = SmallPattern {
        words: [0; SMALL_PATTERN_WORDS],
    };
    pattern.repeat_into(value);
    let kernel = &kernels(state)?.small;
    launch_by_parameter(stream, kernel, &region, value.len(), &mut pattern)
}

/// Launches a by-parameter fill kernel (`cuda_mem_fill_small` or
/// `cuda_mem_fill_medium`, whose last parameter is a `P`) over `region`
/// with an element of `size` bytes repeated in `pattern`.
#[inline(always)]
fn launch_by_parameter<P>(
    stream: &CudaStream,
    kernel: &FillKernel,
    region: &Region,
    size: usize,
    pattern: &mut P,
) -> Result<()> {
    let (mut addr, mut pitch, mut row_bytes, mut rows) =
        (region.addr, region.pitch, region.row_bytes, region.rows);
    let mut size32 = size as u32;
    let params: &mut [*mut c_void] = &mut [
        (&mut addr as *mut u64).cast(),
        (&mut pitch as *mut u64).cast(),
        (&mut row_bytes as *mut u64).cast(),
        (&mut rows as *mut u64).cast(),
        (&mut size32 as *mut u32).cast(),
        (pattern as *mut P).cast(),
    ];
    launch(stream, kernel, region, size as u64, params)
}

/// Copies one element into the start of row 0 and repeats it from there.
fn enqueue_large(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
) -> Result<()> {
    let size = value.len() as u64;
    // Recorded into a graph, the copy runs at every launch: from pinned
    // memory that the graph keeps, not from `value`, which is gone by then.
    let source = if crate::order::capture::is_recording(stream) {
        let kept = KeptValue::new(state, value)?;
        let addr = kept.pages.as_ref().map_or(0, |p| p.dma() as u64);
        crate::order::capture::keep(stream, Box::new(kept));
        addr
    } else {
        value.as_ptr() as u64
    };
    let bytes = value.len();
    // SAFETY (the copy below): `source` is `value`, a live host slice (the
    // copy from pageable memory is staged before the call returns), or pinned
    // memory holding its bytes that the recording graph keeps while it lives;
    // the destination is the region's first element, inside the region the
    // caller vouched for.
    on_stream(stream, "cuMemcpyAsync (fill value)", |s| {
        // SAFETY: see above.
        unsafe { sys::cuMemcpyAsync(region.addr, source, bytes, s) }
    })?;
    let kernels = kernels(state)?;
    let src = region.addr;
    let rest_of_row0 = Region::linear(region.addr + size, region.row_bytes - size);
    let other_rows = Region {
        addr: region.addr + region.pitch,
        rows: region.rows - 1,
        ..region
    };
    for part in [rest_of_row0, other_rows] {
        if part.is_empty() {
            continue;
        }
        let (mut addr, mut pitch, mut row_bytes, mut rows, mut size, mut src) =
            (part.addr, part.pitch, part.row_bytes, part.rows, size, src);
        let params: &mut [*mut c_void] = &mut [
            (&mut addr as *mut u64).cast(),
            (&mut pitch as *mut u64).cast(),
            (&mut row_bytes as *mut u64).cast(),
            (&mut rows as *mut u64).cast(),
            (&mut size as *mut u64).cast(),
            (&mut src as *mut u64).cast(),
        ];
        launch(stream, &kernels.large, &part, value.len() as u64, params)?;
    }
    Ok(())
}

/// A fill value in pinned memory, for a fill recorded into a graph: the
/// graph keeps it (and waits for its launches before dropping it).
struct KeptValue {
    ctx: std::sync::Arc<cudarc::driver::CudaContext>,
    pages: Option<PinnedPages>,
}

impl KeptValue {
    fn new(state: &ContextState, value: &[u8]) -> Result<Self> {
        // Write-combined: one `cuMemHostAlloc` block, which the host only writes.
        let flags = PinnedFlags {
            write_combined: true,
            ..PinnedFlags::default()
        };
        let pages = PinnedPages::new(state, value.len(), flags)?;
        // SAFETY: a fresh block of `value.len()` bytes that nothing else uses.
        unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), pages.host(), value.len()) };
        Ok(Self {
            ctx: state.ctx.clone(),
            pages: Some(pages),
        })
    }
}

impl Drop for KeptValue {
    fn drop(&mut self) {
        if let Some(pages) = self.pages.take() {
            // The graph that kept it has waited for its launches.
            let freed = self
                .ctx
                .bind_to_thread()
                .op("cuCtxSetCurrent")
                .and_then(|()| pages.free());
            crate::error::record_in(&self.ctx, freed);
        }
    }
}

/// Launches `kernel` with `params` over `region` (an element of `size`
/// bytes) with the grid that [`grid`] and [`TUNING`] give. Inlined into
/// each caller: a typed fill's small-kernel launch has a constant `size`.
#[inline(always)]
fn launch(
    stream: &CudaStream,
    kernel: &FillKernel,
    region: &Region,
    size: u64,
    params: &mut [*mut c_void],
) -> Result<()> {
    let (chunks_per_thread, floor_per_sm) = tuning(size);
    let (x, y) = grid(
        region,
        size,
        kernel.capacity,
        chunks_per_thread,
        floor_per_sm,
        kernel.cycling,
    );
    let (function, params) = (kernel.function.cu_function(), params.as_mut_ptr());
    // SAFETY (the launch below): `params` matches the kernel's signature
    // (built by the callers above from the kernel crate's definitions) and
    // points to locals that outlive the call (the driver copies them at
    // launch); the function is the fill kernel of the stream's context; the
    // grid keeps each thread's pattern phase fixed (see `grid`).
    on_stream(stream, "cuLaunchKernel (cuda-mem fill)", |s| {
        // SAFETY: see above.
        unsafe {
            sys::cuLaunchKernel(
                function,
                x,
                y,
                1,
                BLOCK,
                1,
                1,
                0,
                s,
                params,
                std::ptr::null_mut(),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use crate::engine::fill_pattern::{
        byte_at, chunk_at, chunk_offset, pattern_words_read, split_row, ChunkCycle, Pattern,
        MEDIUM_PATTERN_WORDS, SMALL_PATTERN_WORDS,
    };

    /// The kernel's view of the pattern parameter: the 16 bytes at `offset`,
    /// read only from the words the kernel stages (`pattern_words_read`).
    fn chunk_of<const W: usize>(p: &Pattern<W>, size: u64, offset: u32) -> [u32; 4] {
        chunk_at(|i| staged_word(p, size, i), offset)
    }

    fn byte_of<const W: usize>(p: &Pattern<W>, size: u64, offset: u32) -> u8 {
        byte_at(|i| staged_word(p, size, i), offset)
    }

    fn staged_word<const W: usize>(p: &Pattern<W>, size: u64, i: u32) -> u32 {
        assert!(
            i < pattern_words_read(size as u32, W as u32),
            "word {i} of a {size}-byte value is not staged"
        );
        p.words[i as usize]
    }
    use super::*;

    use crate::test_rng::Property;
    use proptest::prelude::*;

    /// Property tests from a fresh seed, or `FILL_SEED` to replay a failure
    /// (a failing case is shrunk to the smallest one that still fails).
    fn property() -> Property {
        Property::new("FILL_SEED")
    }

    /// `grid` as it was before its fast paths (divisions by the phase step
    /// and by the chunks per block always, the grid-x limit always
    /// computed): the reference the new one must equal.
    fn grid_reference(
        region: &Region,
        size: u64,
        capacity: Capacity,
        chunks_per_thread: u64,
        floor_per_sm: u64,
        cycling: bool,
    ) -> (u32, u32) {
        let rows_y = region.rows.clamp(1, 65_535) as u32;
        let chunks = region.row_bytes / 16 + 1;
        let one_pass = chunks.div_ceil(BLOCK as u64).max(1);
        let period = odd_part(size, 16);
        let step = odd_part(period, BLOCK as u64);
        let per_row = |blocks: u64| {
            if rows_y == 1 {
                blocks.max(1)
            } else {
                (blocks / rows_y as u64).max(1)
            }
        };
        let wave = per_row(capacity.sm_count * capacity.per_sm);
        let floor = per_row(capacity.sm_count * floor_per_sm.min(capacity.per_sm));
        let x = if chunks_per_thread > 0 {
            let blocks = floor.max(chunks.div_ceil(BLOCK as u64 * chunks_per_thread));
            let fixed = blocks.div_ceil(step).saturating_mul(step);
            if cycling && fixed > 2 * blocks {
                blocks
            } else {
                fixed
            }
        } else if wave >= step {
            wave / step * step
        } else if cycling {
            wave
        } else {
            step
        };
        const GRID_X_MAX: u64 = i32::MAX as u64;
        let limit = if cycling {
            GRID_X_MAX
        } else {
            (GRID_X_MAX / step * step).max(1)
        };
        (x.min(one_pass).min(limit) as u32, rows_y)
    }

    /// The grid with its fast paths equals the reference, on rows of every
    /// length up to terabytes, several rows, element sizes of every kind
    /// (steps of 1 and odd periods up to millions of bytes), devices, and
    /// tunings (chunks per thread powers of two and not).
    #[test]
    fn grid_equals_its_reference() {
        let size = prop_oneof![
            1..=300u64,
            1..=5000u64,
            (1..=1u64 << 24, 0..24u32).prop_map(|(a, s)| (a >> s).max(1)),
            (0..20u32, 1..=9u64).prop_map(|(k, m)| m << k),
        ];
        let region = (
            0..1u64 << 12,
            prop_oneof![0..1u64 << 16, 0..1u64 << 45],
            prop_oneof![Just(1u64), 0..4u64, 0..100_000u64],
            0..1u64 << 20,
        )
            .prop_map(|(addr, row_bytes, rows, extra)| Region {
                addr,
                pitch: row_bytes + extra,
                row_bytes,
                rows,
            });
        let capacity =
            (1..=200u64, 1..=32u64).prop_map(|(sm_count, per_sm)| Capacity { sm_count, per_sm });
        let tuning = (
            prop_oneof![Just(0u64), Just(4), Just(8), 1..=64u64, 0..=u32::MAX as u64],
            0..40u64,
            any::<bool>(),
        );
        property().check_cases(
            50_000,
            &(size, region, capacity, tuning),
            |(size, region, capacity, (chunks, floor, cycling))| {
                assert_eq!(
                    grid(&region, size, capacity, chunks, floor, cycling),
                    grid_reference(&region, size, capacity, chunks, floor, cycling),
                    "size {size}, {region:?}, {capacity:?}, {chunks} chunks, floor {floor}, cycling {cycling}"
                );
            },
        );
        // Every small size over rows near the grid-x limit, and the huge row
        // of the limit test.
        let capacity = Capacity {
            sm_count: 132,
            per_sm: 8,
        };
        for size in (1..=300u64).chain([447_242, 4013, 4096, 8000]) {
            for row_bytes in [0, 1, 4096, size * 68_915_000, 1 << 44, 1 << 50] {
                let region = Region::linear(0, row_bytes);
                for (chunks, floor, cycling) in [
                    (0, 0, false),
                    (1, 0, false),
                    (1, 0, true),
                    (4, 2, false),
                    (8, 0, true),
                    (3, 9, false),
                ] {
                    assert_eq!(
                        grid(&region, size, capacity, chunks, floor, cycling),
                        grid_reference(&region, size, capacity, chunks, floor, cycling),
                        "size {size}, row {row_bytes}"
                    );
                }
            }
        }
    }

    #[test]
    fn division_helpers_match_their_definitions() {
        let pairs = (
            prop_oneof![0..1000u64, any::<u64>().prop_map(|a| a >> 3)],
            prop_oneof![(0..40u32).prop_map(|k| 1u64 << k), 1..=5000u64],
        );
        property().check_cases(20_000, &pairs, |(a, d)| {
            assert_eq!(div_ceil_by(a, d), a.div_ceil(d), "{a} / {d}");
            assert_eq!(round_up(a, d), a.div_ceil(d).saturating_mul(d), "{a}, {d}");
            assert_eq!(round_down(a, d), a / d * d, "{a}, {d}");
        });
        assert_eq!(round_up(u64::MAX, 3), u64::MAX);
        assert_eq!(div_ceil_by(u64::MAX, 1 << 40), u64::MAX.div_ceil(1 << 40));
    }

    /// The greatest common divisor, by Euclid (the reference of `odd_part`).
    fn euclid(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }

    #[test]
    fn odd_part_divides_by_the_gcd_with_a_power_of_two() {
        // Values of every magnitude up to 2^40, powers of two up to 2^11.
        let a = (1..=1u64 << 40, 0..40u32).prop_map(|(a, shift)| (a >> shift).max(1));
        let p = (0..12u32).prop_map(|k| 1u64 << k);
        property().check_cases(10_000, &(a, p), |(a, p)| {
            assert_eq!(odd_part(a, p), a / euclid(a, p), "a {a}, p {p}");
        });
        assert_eq!(odd_part(12, 16), 3);
        assert_eq!(odd_part(4096, 256), 16);
        assert_eq!(odd_part(100, 16), 25);
    }

    #[test]
    fn byte_period_finds_the_smallest_repeat() {
        assert_eq!(byte_period(&[7]), Some(1));
        assert_eq!(byte_period(&[7, 7, 7]), Some(1));
        assert_eq!(byte_period(&[1, 2, 1, 2, 1, 2]), Some(2));
        assert_eq!(byte_period(&1.0f32.to_le_bytes()), Some(4));
        assert_eq!(byte_period(&[1, 2, 3, 4, 1, 2, 3, 4]), Some(4));
        assert_eq!(byte_period(&[1, 2, 3]), None);
        assert_eq!(byte_period(&[1, 2, 1]), None);
        assert_eq!(byte_period(&1.0f64.to_le_bytes()), None);
    }

    /// `byte_period` against its definition (`bytes[i] == bytes[i % p]`
    /// for every `i`) on values built to repeat with a random period, some
    /// with one byte changed, of every length up to 64.
    #[test]
    fn byte_period_matches_its_definition() {
        let defined = |bytes: &[u8]| {
            [1, 2, 4].into_iter().find(|&p| {
                bytes.len().is_multiple_of(p) && (0..bytes.len()).all(|i| bytes[i] == bytes[i % p])
            })
        };
        // A length, one period of the value (1-8 bytes of 0-2), and, half
        // the time, one byte changed.
        let values = (
            0..=64usize,
            prop::collection::vec(0..3u8, 1..=8),
            prop::option::of((any::<prop::sample::Index>(), 1..=255u8)),
        )
            .prop_map(|(len, base, change)| {
                let mut bytes: Vec<u8> = (0..len).map(|i| base[i % base.len()]).collect();
                if let (Some((i, by)), false) = (change, bytes.is_empty()) {
                    let i = i.index(len);
                    bytes[i] = bytes[i].wrapping_add(by);
                }
                bytes
            });
        property().check_cases(20_000, &values, |bytes| {
            assert_eq!(byte_period(&bytes), defined(&bytes), "{bytes:?}");
        });
    }

    #[test]
    fn plan_uses_memset_only_when_alignment_allows() {
        let r = |addr| Region::linear(addr, 96);
        assert_eq!(plan(&[5; 12], &r(1)), FillPlan::Memset8(5));
        assert_eq!(plan(&[1, 2, 1, 2], &r(2)), FillPlan::Memset16(0x0201));
        assert_eq!(plan(&[1, 2, 1, 2], &r(1)), FillPlan::SmallKernel);
        assert_eq!(
            plan(&1.5f32.to_le_bytes(), &r(4)),
            FillPlan::Memset32(1.5f32.to_bits())
        );
        assert_eq!(plan(&1.5f32.to_le_bytes(), &r(2)), FillPlan::SmallKernel);
        assert_eq!(plan(&[1, 2, 3], &r(0)), FillPlan::SmallKernel);
        assert_eq!(plan(&[9; 0], &r(0)), FillPlan::Nothing);
        assert_eq!(plan(&[1, 2, 3], &Region::linear(0, 0)), FillPlan::Nothing);
        let big: Vec<u8> = (0..=255u8).chain([1]).collect();
        assert_eq!(plan(&big, &r(0)), FillPlan::MediumKernel);
        assert_eq!(plan(&big[..256], &r(0)), FillPlan::SmallKernel);
        let huge: Vec<u8> = (0..=MEDIUM_PATTERN_MAX).map(|i| i as u8).collect();
        assert_eq!(plan(&huge, &r(0)), FillPlan::LargeKernel);
        assert_eq!(
            plan(&huge[..MEDIUM_PATTERN_MAX], &r(0)),
            FillPlan::MediumKernel
        );
        // Pitched: the pitch must be aligned too.
        let pitched = Region {
            addr: 0,
            pitch: 6,
            row_bytes: 4,
            rows: 3,
        };
        assert_eq!(plan(&7u32.to_le_bytes(), &pitched), FillPlan::SmallKernel);
        assert_eq!(plan(&[3, 4, 3, 4], &pitched), FillPlan::Memset16(0x0403));
    }

    /// The bytes the kernel writes, simulated thread by thread from the same
    /// functions the kernel uses, for a grid from `grid`.
    fn simulate<const W: usize>(
        value: &[u8],
        region: Region,
        capacity: Capacity,
        chunks_per_thread: u64,
        floor_per_sm: u64,
    ) -> Vec<u8> {
        let size = value.len() as u64;
        let pattern = Pattern::<W>::repeating(value);
        let cycling = W == MEDIUM_PATTERN_WORDS;
        let (gx, _) = grid(
            &region,
            size,
            capacity,
            chunks_per_thread,
            floor_per_sm,
            cycling,
        );
        let threads = gx as u64 * BLOCK as u64;
        let split = split_row(region.addr, region.row_bytes);
        let mut row = vec![0u8; region.row_bytes as usize];
        for tid in 0..threads.min(split.chunks.max(CHUNK_ALIGN)) {
            let fixed = chunk_of(&pattern, size, chunk_offset(split.head, tid, size) as u32);
            let mut cycle = ChunkCycle::new(split.head, tid, threads, size);
            let mut c = tid;
            while c < split.chunks {
                let chunk = if cycling && cycle.moves() {
                    chunk_of(&pattern, size, cycle.next_offset())
                } else {
                    fixed
                };
                for (k, w) in chunk.iter().enumerate() {
                    let at = (split.head + c * 16) as usize + 4 * k;
                    row[at..at + 4].copy_from_slice(&w.to_le_bytes());
                }
                c += threads;
            }
            if tid < split.head {
                row[tid as usize] = byte_of(&pattern, size, (tid % size) as u32);
            }
            if tid < split.tail {
                let at = region.row_bytes - split.tail + tid;
                row[at as usize] = byte_of(&pattern, size, (at % size) as u32);
            }
        }
        row
    }

    /// One simulated fill: the value (its length is the element size), the
    /// fill's start address and element count, the device, and the grid's
    /// tuning.
    #[derive(Clone, Debug)]
    struct FillCase {
        value: Vec<u8>,
        addr: u64,
        count: u64,
        capacity: Capacity,
        chunks_per_thread: u64,
        floor_per_sm: u64,
    }

    /// Fills of a value of `size` bytes. A few sizes are checked on
    /// multi-pass grids with a tiny device.
    fn fill_case(size: u64) -> impl Strategy<Value = FillCase> {
        let count = 1..=if size.is_multiple_of(37) { 3000u64 } else { 40 };
        let capacity = if size.is_multiple_of(5) {
            (1..=4u64, 1..=2u64)
                .prop_map(|(sm_count, per_sm)| Capacity { sm_count, per_sm })
                .boxed()
        } else {
            Just(Capacity {
                sm_count: 132,
                per_sm: 8,
            })
            .boxed()
        };
        (
            prop::collection::vec(any::<u8>(), size as usize),
            0..512u64,
            count,
            capacity,
            prop::sample::select(&[0u64, 1, 8, 16, 64][..]),
            0..10u64,
        )
            .prop_map(
                |(value, addr, count, capacity, chunks_per_thread, floor_per_sm)| FillCase {
                    value,
                    addr,
                    count,
                    capacity,
                    chunks_per_thread,
                    floor_per_sm,
                },
            )
    }

    /// The simulated kernel writes `case.value` into every element.
    fn writes_the_value(case: FillCase) {
        let FillCase {
            value,
            addr,
            count,
            capacity,
            chunks_per_thread,
            floor_per_sm,
        } = case;
        let size = value.len() as u64;
        let region = Region::linear(addr, count * size);
        let got = if size <= SMALL_PATTERN_MAX as u64 {
            simulate::<SMALL_PATTERN_WORDS>(
                &value,
                region,
                capacity,
                chunks_per_thread,
                floor_per_sm,
            )
        } else {
            simulate::<MEDIUM_PATTERN_WORDS>(
                &value,
                region,
                capacity,
                chunks_per_thread,
                floor_per_sm,
            )
        };
        for (i, &b) in got.iter().enumerate() {
            assert_eq!(
                b,
                value[i % size as usize],
                "size {size}, addr {addr}, count {count}, byte {i}, grid for {capacity:?}, {chunks_per_thread} chunks, floor {floor_per_sm}"
            );
        }
    }

    #[test]
    fn kernel_arithmetic_writes_the_value_for_every_size_and_alignment() {
        let mut property = property();
        // Every small size and the medium kernel's edges, one case each; 60
        // random medium sizes.
        for size in (1..=SMALL_PATTERN_MAX as u64).chain([257, MEDIUM_PATTERN_MAX as u64]) {
            property.check(&fill_case(size), writes_the_value);
        }
        let medium = (257..MEDIUM_PATTERN_MAX as u64).prop_flat_map(fill_case);
        property.check_cases(60, &medium, writes_the_value);
    }

    #[test]
    fn grids_of_huge_rows_stay_within_the_device_limit_and_keep_the_phase() {
        // A row of 28 TiB of 447,242-byte elements, one chunk per thread: the
        // phase-keeping grid exceeds what a device takes (2^31 - 1 blocks),
        // and the capped grid must still keep every thread's phase.
        let size = 447_242u64;
        let region = Region::linear(0, size * 68_915_000);
        let capacity = Capacity {
            sm_count: 132,
            per_sm: 8,
        };
        for cycling in [false, true] {
            let (x, _) = grid(&region, size, capacity, 1, 0, cycling);
            assert!(u64::from(x) <= i32::MAX as u64, "{x} blocks");
            let threads = u64::from(x) * BLOCK as u64;
            assert!(
                cycling || (threads * 16).is_multiple_of(size),
                "{x} blocks move the phase of a {size}-byte value"
            );
        }
    }

    #[test]
    fn grid_keeps_the_phase_or_covers_the_row() {
        let cases = (
            (1..=5000u64, 0..16u64, 1..=1u64 << 20),
            (1..=200u64, 1..=16u64),
            (0..80u64, 0..20u64, any::<bool>()),
        );
        property().check_cases(20_000, &cases, |case| {
            let (
                (size, addr, count),
                (sm_count, per_sm),
                (chunks_per_thread, floor_per_sm, cycling),
            ) = case;
            let region = Region::linear(addr, size * count);
            let capacity = Capacity { sm_count, per_sm };
            let resident = capacity.sm_count * capacity.per_sm;
            let (x, y) = grid(
                &region,
                size,
                capacity,
                chunks_per_thread,
                floor_per_sm,
                cycling,
            );
            assert_eq!(y, 1);
            let threads = x as u64 * BLOCK as u64;
            let chunks = region.row_bytes / 16;
            // The head before the first aligned chunk is one byte per thread.
            assert!(threads >= CHUNK_ALIGN, "size {size}, x {x}");
            assert!(
                cycling || threads >= chunks || (threads * 16).is_multiple_of(size),
                "size {size}, x {x}"
            );
            // Never more than one pass; a cycling grid is sized by the work
            // alone.
            let one_pass = (chunks + 1).div_ceil(BLOCK as u64).max(1);
            assert!(x as u64 <= one_pass, "size {size}, x {x}");
            let phase_kept = (threads * 16).is_multiple_of(size);
            if cycling && chunks_per_thread > 0 && !phase_kept && threads < chunks {
                // Sized by the work alone, because keeping the phase would
                // have more than doubled it.
                let wanted = (chunks + 1).div_ceil(BLOCK as u64 * chunks_per_thread);
                let floor = (capacity.sm_count * floor_per_sm.min(capacity.per_sm)).max(1);
                assert_eq!(x as u64, wanted.max(floor).min(one_pass), "size {size}");
            }
            // Long periods run as one wave whenever a phase-keeping one fits.
            let period = size / euclid(size, 16);
            let step = period / euclid(period, BLOCK as u64);
            if chunks_per_thread == 0 && (cycling || resident >= step) {
                assert!(
                    x as u64 <= resident,
                    "size {size}: {x} blocks, {resident} resident"
                );
            }
        });
    }

    /// A pattern built in place (`Pattern::repeat_into`, which `repeating`
    /// uses too) holds the value repeated from its first byte over the
    /// words a fill reads, little-endian, and zeros after them, for every
    /// element size and random values (and for the medium pattern's sizes).
    #[test]
    fn patterns_built_in_place_hold_the_value_repeated() {
        fn check<const W: usize>(value: &[u8]) {
            let mut in_place = Pattern::<W> { words: [0; W] };
            in_place.repeat_into(value);
            let n = value.len();
            let read = pattern_words_read(n as u32, W as u32) as usize;
            let expected: Vec<u32> = (0..W)
                .map(|i| match i < read {
                    true => u32::from_le_bytes(std::array::from_fn(|k| value[(4 * i + k) % n])),
                    false => 0,
                })
                .collect();
            assert_eq!(in_place.words[..], expected[..], "{n} bytes");
            assert_eq!(
                Pattern::<W>::repeating(value).words[..],
                expected[..],
                "{n} bytes"
            );
        }
        let small =
            (1..=SMALL_PATTERN_MAX).prop_flat_map(|n| prop::collection::vec(any::<u8>(), n));
        property().check_cases(5_000, &small, |value| check::<SMALL_PATTERN_WORDS>(&value));
        for n in 1..=SMALL_PATTERN_MAX {
            let value: Vec<u8> = (0..n).map(|i| (i * 37 + n) as u8).collect();
            check::<SMALL_PATTERN_WORDS>(&value);
        }
        for n in [1, 16, 257, 1000, 4012, MEDIUM_PATTERN_MAX] {
            let value: Vec<u8> = (0..n).map(|i| (i * 13 + 5) as u8).collect();
            check::<MEDIUM_PATTERN_WORDS>(&value);
        }
    }

    #[test]
    fn patterns_repeat_the_value() {
        let p = SmallPattern::repeating(&[1, 2, 3]);
        assert_eq!(p.words[0], u32::from_le_bytes([1, 2, 3, 1]));
        assert_eq!(p.words[1], u32::from_le_bytes([2, 3, 1, 2]));
        // Only the words a 3-byte fill reads are built.
        assert_eq!(p.words[5..], [0; SMALL_PATTERN_WORDS - 5]);
        let long: Vec<u8> = (0..MEDIUM_PATTERN_MAX)
            .map(|i| (i * 7 + i / 256) as u8)
            .collect();
        let m = MediumPattern::repeating(&long);
        let bytes: Vec<u8> = m.words.iter().flat_map(|w| w.to_le_bytes()).collect();
        for (i, b) in bytes.iter().enumerate() {
            assert_eq!(*b, long[i % long.len()], "byte {i}");
        }
        for o in 0..3 {
            let chunk = chunk_of(&p, 3, o);
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
            let want: Vec<u8> = (0..16).map(|j| [1, 2, 3][(o as usize + j) % 3]).collect();
            assert_eq!(bytes, want);
        }
    }
}
