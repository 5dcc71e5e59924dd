//! `fill(value)`: the dispatch between the driver's memsets and the Rust fill
//! kernels, the kernels' loading into each context (once, cached in the
//! context's state), and their launch.
//!
//! * A value whose bytes repeat with period 1, 2 or 4 (e.g. `0u64`, `-1i32`,
//!   `1.0f32`, `[7u8; 12]`) goes to `cuMemsetD8/D16/D32Async` (or the 2D
//!   forms for pitched memory) when the address and pitch allow: no kernel.
//! * Any other value of at most 256 bytes goes to `cuda_mem_fill_small`, which
//!   gets the value as a kernel parameter and writes 16-byte coalesced stores
//!   of the repeating pattern.
//! * Larger values are first copied into the first element of the destination
//!   and `cuda_mem_fill_large` repeats them from there.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

use cudarc::driver::{result, sys, CudaFunction, CudaStream};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Result};
use crate::pinned_pages::{PinnedFlags, PinnedPages};

/// The PTX of the fill kernels (`kernels/`), shipped inside this package so
/// that building cuda-mem needs no nightly toolchain. The `ptx` test of the
/// repository's `tests/` rebuilds it and fails when it differs.
pub(crate) const KERNELS_PTX: &str = include_str!("../ptx/fill-kernels.ptx");

/// The PTX that cuda-mem loads for its fill kernels (for inspection and tests).
///
/// ```
/// assert!(cuda_mem::fill_kernels_ptx().contains(".entry cuda_mem_fill_small"));
/// ```
pub fn fill_kernels_ptx() -> &'static str {
    KERNELS_PTX
}

/// One fill kernel loaded into a context, with how many of its blocks the
/// whole device runs at once.
struct FillKernel {
    function: CudaFunction,
    /// Blocks of [`BLOCK`] threads resident on the device at once
    /// (multiprocessors times the occupancy the driver computes for this kernel).
    resident_blocks: u64,
}

/// The two fill kernels of this crate, loaded into one context.
struct FillKernels {
    small: FillKernel,
    large: FillKernel,
}

/// The fill kernels of `state`'s context, loading the embedded PTX on first
/// use (kept in the context's state until it goes).
/// Loads the fill kernels into `state`'s context, if they are not yet
/// (before a graph capture, which then only records launches).
pub(crate) fn preload(state: &ContextState) -> Result<()> {
    kernels(state).map(drop)
}

fn kernels(state: &ContextState) -> Result<&FillKernels> {
    state.lazy(&state.fill_kernels, || {
        let ptx = cudarc::nvrtc::Ptx::from_src(KERNELS_PTX);
        let module = state
            .ctx
            .load_module(ptx)
            .op("cuModuleLoadData (cuda-mem fill kernels)")?;
        let load = |name| -> Result<FillKernel> {
            let function = module.load_function(name).op("cuModuleGetFunction")?;
            let per_sm = function
                .occupancy_max_active_blocks_per_multiprocessor(BLOCK, 0, None)
                .op("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
            Ok(FillKernel {
                function,
                resident_blocks: state.sm_count as u64 * per_sm.max(1) as u64,
            })
        };
        Ok(FillKernels {
            small: load("cuda_mem_fill_small")?,
            large: load("cuda_mem_fill_large")?,
        })
    })
}

// The kernels' own pattern arithmetic, shared so that the host builds the exact
// parameter the kernel reads; the kernel-side functions are used by the tests.
use crate::fill_pattern::{SmallPattern, CHUNK_ALIGN, SMALL_PATTERN_MAX, SMALL_PATTERN_WORDS};

/// 16-byte chunks each thread of a fill kernel writes, for patterns whose
/// period is at most [`SHORT_PERIOD`] chunks and for longer ones (see
/// [`grid`]); 0 sizes the grid as one wave of long-lived blocks instead.
static CHUNKS_PER_THREAD: [AtomicU32; 2] = [AtomicU32::new(8), AtomicU32::new(16)];

/// Benchmark knob: how many 16-byte chunks each thread of a fill kernel writes
/// for patterns whose period is at most 16 chunks (element sizes whose odd
/// part is at most 16: 12, 48, 128, 256, ...; default 8) and for longer ones
/// (100, 200, 255, ...; default 16); 0 makes the grid one wave of long-lived
/// blocks.
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __set_fill_chunks_per_thread(short_periods: u32, long_periods: u32) {
    CHUNKS_PER_THREAD[0].store(short_periods, Ordering::Relaxed);
    CHUNKS_PER_THREAD[1].store(long_periods, Ordering::Relaxed);
}

/// Threads per block of the fill kernels.
const BLOCK: u32 = 256;
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
    /// The by-parameter kernel.
    SmallKernel,
    /// The value-in-memory kernel.
    LargeKernel,
}

/// The smallest period (1, 2 or 4) with which `bytes` repeats, if any.
pub(crate) fn byte_period(bytes: &[u8]) -> Option<usize> {
    [1, 2, 4].into_iter().find(|&p| {
        bytes.len().is_multiple_of(p) && bytes.iter().enumerate().all(|(i, &b)| b == bytes[i % p])
    })
}

/// Chooses how to fill `region` with the element `value` (its bytes).
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
    } else {
        FillPlan::LargeKernel
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The grid `(x, y)` for a kernel fill of `region` with an element of `size`
/// bytes, for a kernel of which `resident_blocks` blocks run at once.
///
/// Each thread along a row writes chunks `tid, tid + T, tid + 2T, ...` where
/// `T` is the number of threads along the row. A thread's pattern phase stays
/// fixed when `T * 16` is a multiple of `size`, i.e. `T` is a multiple of the
/// period `P = size / gcd(size, 16)` in chunks; `T = x * 256` is, when `x` is
/// a multiple of `P / gcd(P, 256)`. Otherwise the grid must cover the row in
/// one pass (every thread writes at most one chunk).
///
/// Each thread writes about `chunks_per_thread[0]` chunks when `P <= 16`, and
/// `chunks_per_thread[1]` otherwise: many short-lived blocks, dozens of waves,
/// which measured faster on an H200 than one wave of long-lived blocks (0.98
/// against 0.93 of memset speed for 12-byte elements). Long periods get more
/// chunks per thread because a thread's setup reads its 16 bytes from the
/// kernel parameter at an address that differs across up to `P` lanes of a
/// warp, which the hardware serialises (100-byte elements, `P = 25`: 0.79 of
/// memset speed at 8 chunks per thread, 0.97 at 16, 0.95 at 32). A count of 0
/// asks for one wave: `resident_blocks` blocks, each thread striding over the
/// row.
pub(crate) fn grid(
    region: &Region,
    size: u64,
    resident_blocks: u64,
    chunks_per_thread: [u64; 2],
) -> (u32, u32) {
    let rows_y = region.rows.clamp(1, 65_535) as u32;
    let chunks = region.row_bytes / 16 + 1;
    let one_pass = chunks.div_ceil(BLOCK as u64).max(1);
    let period = size / gcd(size, 16);
    let step = period / gcd(period, BLOCK as u64);
    let wave = (resident_blocks / rows_y as u64).max(1);
    let chunks_per_thread = chunks_per_thread[usize::from(period > SHORT_PERIOD)];
    let x = if chunks_per_thread > 0 {
        let blocks = wave.max(chunks.div_ceil(BLOCK as u64 * chunks_per_thread));
        blocks.div_ceil(step).saturating_mul(step)
    } else if wave >= step {
        wave / step * step
    } else {
        // A period so long that one step of blocks exceeds a wave (values of
        // thousands of bytes): the smallest grid that keeps phases fixed.
        step
    };
    (x.min(one_pass).min(u32::MAX as u64) as u32, rows_y)
}

/// The kernel parameter of a small fill: `value` repeated over the pattern words.
pub(crate) fn small_pattern(value: &[u8]) -> SmallPattern {
    let mut bytes = [0u8; SMALL_PATTERN_WORDS * 4];
    for piece in bytes.chunks_mut(value.len()) {
        piece.copy_from_slice(&value[..piece.len()]);
    }
    SmallPattern {
        words: std::array::from_fn(|i| {
            u32::from_le_bytes([
                bytes[4 * i],
                bytes[4 * i + 1],
                bytes[4 * i + 2],
                bytes[4 * i + 3],
            ])
        }),
    }
}

/// Queues a fill of `region` with the element `value` on `stream`.
///
/// The caller has ordered `stream` after earlier work on the memory, checked
/// that `region` lies inside one allocation of `state`'s context, that
/// `row_bytes` is a multiple of `value.len()` and, for several rows, that
/// `pitch >= row_bytes`.
pub(crate) fn enqueue(
    state: &ContextState,
    stream: &CudaStream,
    value: &[u8],
    region: Region,
) -> Result<()> {
    let plan = plan(value, &region);
    if plan == FillPlan::Nothing {
        return Ok(());
    }
    state.bind()?;
    let s = stream.cu_stream();
    let Region {
        addr,
        pitch,
        row_bytes,
        rows,
    } = region;
    let (w, h, p) = (row_bytes as usize, rows as usize, pitch as usize);
    // SAFETY (memsets): the caller guarantees the region is writable memory of
    // this context; widths are in units of the memset's element size, which
    // divides `row_bytes` (the value repeats with that period), and the address
    // and pitch are aligned to it (checked by `plan`).
    match plan {
        FillPlan::Nothing => Ok(()),
        FillPlan::Memset8(v) if rows == 1 => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD8Async(addr, v, w, s).result() }.op("cuMemsetD8Async")
        }
        FillPlan::Memset16(v) if rows == 1 => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD16Async(addr, v, w / 2, s).result() }.op("cuMemsetD16Async")
        }
        FillPlan::Memset32(v) if rows == 1 => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD32Async(addr, v, w / 4, s).result() }.op("cuMemsetD32Async")
        }
        FillPlan::Memset8(v) => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D8Async(addr, p, v, w, h, s).result() }.op("cuMemsetD2D8Async")
        }
        FillPlan::Memset16(v) => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D16Async(addr, p, v, w / 2, h, s).result() }
                .op("cuMemsetD2D16Async")
        }
        FillPlan::Memset32(v) => {
            // SAFETY: see the comment above the match.
            unsafe { sys::cuMemsetD2D32Async(addr, p, v, w / 4, h, s).result() }
                .op("cuMemsetD2D32Async")
        }
        FillPlan::SmallKernel | FillPlan::LargeKernel if rows > 1 && pitch % CHUNK_ALIGN != 0 => {
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
        FillPlan::SmallKernel => {
            let kernels = kernels(state)?;
            let mut pattern = small_pattern(value);
            let mut size = value.len() as u32;
            let (mut addr, mut pitch, mut row_bytes, mut rows) = (addr, pitch, row_bytes, rows);
            let params: &mut [*mut c_void] = &mut [
                (&mut addr as *mut u64).cast(),
                (&mut pitch as *mut u64).cast(),
                (&mut row_bytes as *mut u64).cast(),
                (&mut rows as *mut u64).cast(),
                (&mut size as *mut u32).cast(),
                (&mut pattern as *mut SmallPattern).cast(),
            ];
            launch(stream, &kernels.small, &region, value.len() as u64, params)
        }
        FillPlan::LargeKernel => enqueue_large(state, stream, value, region),
    }
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
    let source = if crate::capture::is_recording(stream) {
        let kept = KeptValue::new(state, value)?;
        let addr = kept.pages.as_ref().map_or(0, |p| p.dma() as u64);
        crate::capture::keep(stream, Box::new(kept));
        addr
    } else {
        value.as_ptr() as u64
    };
    // SAFETY: `source` is `value`, a live host slice (the copy from pageable
    // memory is staged before the call returns), or pinned memory holding
    // its bytes that the recording graph keeps while it lives; the
    // destination is the region's first element, inside the region the
    // caller vouched for.
    unsafe { sys::cuMemcpyAsync(region.addr, source, value.len(), stream.cu_stream()).result() }
        .op("cuMemcpyAsync (fill value)")?;
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

fn launch(
    stream: &CudaStream,
    kernel: &FillKernel,
    region: &Region,
    size: u64,
    params: &mut [*mut c_void],
) -> Result<()> {
    let chunks_per_thread = CHUNKS_PER_THREAD
        .each_ref()
        .map(|c| c.load(Ordering::Relaxed) as u64);
    let (x, y) = grid(region, size, kernel.resident_blocks, chunks_per_thread);
    // SAFETY: `params` matches the kernel's signature (built by the callers
    // above from the kernel crate's definitions) and points to locals that
    // outlive the call (the driver copies them at launch); the grid keeps each
    // thread's pattern phase fixed (see `grid`).
    unsafe {
        result::launch_kernel(
            kernel.function.cu_function(),
            (x, y, 1),
            (BLOCK, 1, 1),
            0,
            stream.cu_stream(),
            params,
        )
    }
    .op("cuLaunchKernel (cuda-mem fill)")
}

#[cfg(test)]
mod tests {
    use crate::fill_pattern::{byte_at, chunk_at, chunk_offset, split_row};

    /// The kernel's view of the pattern parameter: word `i`.
    fn small_chunk(p: &SmallPattern, offset: u32) -> [u32; 4] {
        chunk_at(|i| p.words[i as usize], offset)
    }

    fn small_byte(p: &SmallPattern, offset: u32) -> u8 {
        byte_at(|i| p.words[i as usize], offset)
    }
    use super::*;

    use crate::test_rng::Rng;

    /// A fresh seed, or `FILL_SEED` to replay a failure.
    fn seed() -> u64 {
        crate::test_rng::seed("FILL_SEED")
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
        assert_eq!(plan(&big, &r(0)), FillPlan::LargeKernel);
        assert_eq!(plan(&big[..256], &r(0)), FillPlan::SmallKernel);
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
    fn simulate(
        value: &[u8],
        region: Region,
        resident_blocks: u64,
        chunks_per_thread: [u64; 2],
    ) -> Vec<u8> {
        let size = value.len() as u64;
        let pattern = small_pattern(value);
        let (gx, _) = grid(&region, size, resident_blocks, chunks_per_thread);
        let threads = gx as u64 * BLOCK as u64;
        let split = split_row(region.addr, region.row_bytes);
        let mut row = vec![0u8; region.row_bytes as usize];
        for tid in 0..threads.min(split.chunks.max(CHUNK_ALIGN)) {
            let chunk = small_chunk(&pattern, chunk_offset(split.head, tid, size) as u32);
            let mut c = tid;
            while c < split.chunks {
                for (k, w) in chunk.iter().enumerate() {
                    let at = (split.head + c * 16) as usize + 4 * k;
                    row[at..at + 4].copy_from_slice(&w.to_le_bytes());
                }
                c += threads;
            }
            if tid < split.head {
                row[tid as usize] = small_byte(&pattern, (tid % size) as u32);
            }
            if tid < split.tail {
                let at = region.row_bytes - split.tail + tid;
                row[at as usize] = small_byte(&pattern, (at % size) as u32);
            }
        }
        row
    }

    #[test]
    fn kernel_arithmetic_writes_the_value_for_every_size_and_alignment() {
        let mut rng = Rng(seed());
        for size in 1..=SMALL_PATTERN_MAX as u64 {
            let value: Vec<u8> = (0..size).map(|_| rng.next() as u8).collect();
            let addr = rng.below_u64(512);
            // A few sizes are checked on multi-pass grids with a tiny device.
            let count = 1 + rng.below_u64(if size % 37 == 0 { 3000 } else { 40 });
            let region = Region::linear(addr, count * size);
            let resident = if size % 5 == 0 {
                1 + rng.below_u64(8)
            } else {
                132 * 6
            };
            let chunks_per_thread = [[0, 8], [8, 0], [1, 8], [8, 8]][rng.below_u64(4) as usize];
            let got = simulate(&value, region, resident, chunks_per_thread);
            for (i, &b) in got.iter().enumerate() {
                assert_eq!(
                    b,
                    value[i % size as usize],
                    "size {size}, addr {addr}, count {count}, byte {i}, grid for {resident} blocks, {chunks_per_thread:?} chunks"
                );
            }
        }
    }

    #[test]
    fn grid_keeps_the_phase_or_covers_the_row() {
        let mut rng = Rng(seed());
        for _ in 0..20_000 {
            let size = 1 + rng.below_u64(5000);
            let region = Region::linear(rng.below_u64(16), size * (1 + rng.below_u64(1 << 20)));
            let resident = 1 + rng.below_u64(2000);
            let chunks_per_thread = [rng.below_u64(20), rng.below_u64(20)];
            let (x, y) = grid(&region, size, resident, chunks_per_thread);
            assert_eq!(y, 1);
            let threads = x as u64 * BLOCK as u64;
            let chunks = region.row_bytes / 16;
            assert!(
                threads >= chunks || (threads * 16).is_multiple_of(size),
                "size {size}, x {x}"
            );
            // Long periods run as one wave whenever a phase-keeping one fits.
            let period = size / gcd(size, 16);
            let step = period / gcd(period, BLOCK as u64);
            if chunks_per_thread[usize::from(period > SHORT_PERIOD)] == 0 && resident >= step {
                assert!(
                    x as u64 <= resident,
                    "size {size}: {x} blocks, {resident} resident"
                );
            }
        }
    }

    #[test]
    fn small_pattern_repeats_the_value() {
        let p = small_pattern(&[1, 2, 3]);
        assert_eq!(p.words[0], u32::from_le_bytes([1, 2, 3, 1]));
        assert_eq!(p.words[1], u32::from_le_bytes([2, 3, 1, 2]));
        for o in 0..3 {
            let chunk = small_chunk(&p, o);
            let bytes: Vec<u8> = chunk.iter().flat_map(|w| w.to_le_bytes()).collect();
            let want: Vec<u8> = (0..16).map(|j| [1, 2, 3][(o as usize + j) % 3]).collect();
            assert_eq!(bytes, want);
        }
    }
}
