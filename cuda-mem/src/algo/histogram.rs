//! Histograms: [`histogram_even`] (equal bins over a range) and
//! [`histogram_range`] (bins between given levels), into `u32` or `u64`
//! counters; samples of every integer type and `f32` / `f64`. Each block
//! counts in shared memory when the bins fit (up to 4096), then adds its
//! counts to the output with one atomic add per bin.

use std::ffi::c_void;

use cudarc::driver::{sys, CudaStream};

use crate::algo::element::sealed::Sealed;
use crate::algo::kernels::{grid, kernel, launch};
use crate::algo::reduce::contiguous;
use crate::algo::sort::SortKey;
use crate::buffers::ops::{Memory, MemoryMut};
use crate::copy::device_copy::DeviceCopy;
use crate::device::wide::HistogramSample;
use crate::error::{DriverResultExt, Error, Result};
use crate::order::streams::AsStream;

/// A counter type of the histograms: `u32` or `u64`.
///
/// ```
/// fn bins_of<C: cuda_mem::algo::HistogramCount>() {}
/// bins_of::<u64>();
/// ```
pub trait HistogramCount: DeviceCopy + Sealed {
    /// The kernels' name for the type.
    #[doc(hidden)]
    const NAME: &'static str;
}

impl HistogramCount for u32 {
    const NAME: &'static str = "u32";
}

impl HistogramCount for u64 {
    const NAME: &'static str = "u64";
}

/// The range of [`histogram_even`]'s bins: `lower..upper` (half open) or
/// `lower..=upper` (closed: `0..=255u8` is every byte).
///
/// ```
/// fn bytes(r: impl cuda_mem::algo::BinRange<u8>) {}
/// bytes(0..=255);
/// bytes(16..240);
/// ```
pub trait BinRange<T>: Sealed {
    /// `(lower, upper, closed)`.
    #[doc(hidden)]
    fn bounds(&self) -> (T, T, bool);
}

impl<T> Sealed for std::ops::Range<T> {}
impl<T> Sealed for std::ops::RangeInclusive<T> {}

impl<T: Copy> BinRange<T> for std::ops::Range<T> {
    fn bounds(&self) -> (T, T, bool) {
        (self.start, self.end, false)
    }
}

impl<T: Copy> BinRange<T> for std::ops::RangeInclusive<T> {
    fn bounds(&self) -> (T, T, bool) {
        (*self.start(), *self.end(), true)
    }
}

/// The counters, checked: contiguous, 1 to 2^31 of them.
fn counters<C: HistogramCount>(
    counts: crate::engine::Elems<'_, C>,
) -> Result<crate::engine::Elems<'_, C>> {
    let counts = contiguous(counts)?;
    if !(1..=1 << 31).contains(&counts.len()) {
        return Err(Error::InvalidArgument(
            "a histogram has 1 to 2^31 bins: give a counts buffer of that length (one counter \
             per bin)",
        ));
    }
    Ok(counts)
}

/// The blocks of a histogram over `len` samples of `size` bytes, of which
/// the device holds `resident` at once. Byte samples: about `sqrt(len) /
/// 16`, at most the resident blocks. Each block has fixed work (zeroing
/// its shared counters, then adding them to the global ones: as many
/// atomics on the same addresses as every other block), and its threads
/// count `len / blocks` samples: the sum of the two is least near the
/// square root. H200, 256 bins of `u8`, against a block per 1024 samples up
/// to every resident block: 2^20 7.03 -> 6.39 µs (64 blocks), 2^24 18.8 ->
/// 14.0 (256); at 2^28, every resident block (792: six blocks of 33 KB of
/// shared memory per SM), each counting in a copy of the counters per lane
/// (see `device::wide::histogram_tiles`), 92 µs, against 129 with 528
/// blocks of one copy each, the best before. The byte kernels' larger
/// shared memory (33 KB, for the copies) costs 0.6 µs at 2^24, where each
/// block keeps one copy (15.65 against 15.04 µs in an A/B run). A 16 KB
/// twin launched below the copies' threshold did not take it back: 18.2
/// against 15.7 µs at 2^24, and 7.8 against 7.1 at 2^20 (same run, two
/// rounds each). Wider samples, whose bins cost more each, keep a block
/// per 1024 samples up to every resident block (not measured otherwise).
fn blocks(len: usize, size: usize, resident: u32) -> u32 {
    if size == 1 {
        let root = (len as f64).sqrt() as u64 / 16;
        root.clamp(1, u64::from(resident.max(1))) as u32
    } else {
        grid(len, 4, resident)
    }
}

/// Queues the zeroing of the counters at `at` and the histogram kernel
/// `kind` with `params`, over `len` samples of `size` bytes.
///
/// # Safety
/// `params` are the kernel's (see `algo-kernels/`), naming memory claimed
/// on `stream`; `at` holds the counters' `bytes`, claimed too.
unsafe fn count(
    stream: &CudaStream,
    function: &cudarc::driver::CudaFunction,
    resident: u32,
    (len, size): (usize, usize),
    (at, bytes): (u64, usize),
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the counters, claimed on `stream` by the caller.
    unsafe { sys::cuMemsetD8Async(at, 0, bytes, stream.cu_stream()).result() }
        .op("cuMemsetD8Async")?;
    let grid = blocks(len, size, resident);
    // SAFETY: the caller's parameters; any grid.
    unsafe { launch(stream, function, grid, params) }
}

/// Queues the histogram of `input` with `counts.len()` equal bins over
/// `range` on `stream`: `counts[b]` becomes the number of samples `x` in
/// the range whose bin is `b`: for integers `⌊(x − lower) · bins / w⌋`
/// exactly, `w` the range's width (`upper − lower`, plus one for a closed
/// range); for floats `(x − lower) / (upper − lower) · bins`, rounded in
/// the float's type and kept below `bins` (NaNs are outside). The counters
/// are overwritten. After earlier work on both buffers; nothing waits.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let pixels = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0u8, 10, 200, 255, 128])?;
/// let mut bins = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4)?;
/// cuda_mem::algo::histogram_even(&pixels, 0..=255, &mut bins, &stream)?;
/// assert_eq!(bins.to_vec()?, [2, 0, 1, 2]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn histogram_even<T, C>(
    input: &(impl Memory<T> + ?Sized),
    range: impl BinRange<T>,
    counts: &mut (impl MemoryMut<C> + ?Sized),
    stream: &impl AsStream,
) -> Result<()>
where
    T: SortKey + HistogramSample,
    C: HistogramCount,
{
    let stream = crate::order::streams::cuda_stream(stream);
    let (lower, upper, closed) = range.bounds();
    let order = lower.partial_cmp(&upper);
    let ordered = order == Some(std::cmp::Ordering::Less)
        || closed && order == Some(std::cmp::Ordering::Equal);
    if !ordered {
        return Err(Error::InvalidArgument(
            "histogram_even needs lower < upper (or lower <= upper for a closed range; neither \
             NaN): the bins split the range",
        ));
    }
    let (input, out) = (contiguous(input.elems())?, counters(counts.elems())?);
    let (len, bins) = (input.len(), out.len());
    let state = &input.mem.state;
    let (function, resident) = kernel(state, &["histogram_even", C::NAME], T::NAME)?;
    let (mut from, mut n, mut b, mut lo, mut hi, mut shut) = (
        input.claim(stream)?.addr(),
        len as u64,
        bins as u32,
        lower,
        upper,
        u32::from(closed),
    );
    let mut to = out.claim(stream)?.addr();
    let params: &mut [*mut c_void] = &mut [
        (&mut from as *mut u64).cast(),
        (&mut n as *mut u64).cast(),
        (&mut b as *mut u32).cast(),
        (&mut lo as *mut T).cast(),
        (&mut hi as *mut T).cast(),
        (&mut shut as *mut u32).cast(),
        (&mut to as *mut u64).cast(),
    ];
    // SAFETY: `(input, len, bins, lower, upper, closed, counts)`, both
    // buffers claimed on `stream`; `bins` counters of `C`.
    unsafe {
        count(
            stream,
            &function,
            resident,
            (len, size_of::<T>()),
            (to, bins * size_of::<C>()),
            params,
        )
    }
}

/// Queues the histogram of `input` with the bins between `levels` (a
/// device buffer of `counts.len() + 1` ascending levels) on `stream`:
/// `counts[b]` becomes the number of samples with `levels[b] <= x <
/// levels[b + 1]` (NaNs, and samples outside `[levels[0], levels[last])`,
/// are in no bin). Levels that are not ascending give unspecified counts
/// (never a write outside `counts`). The counters are overwritten; nothing
/// waits.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0.5f32, 3.0, 42.0, -1.0])?;
/// let levels = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0.0f32, 1.0, 10.0, 100.0])?;
/// let mut bins = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 3)?;
/// cuda_mem::algo::histogram_range(&x, &levels, &mut bins, &stream)?;
/// assert_eq!(bins.to_vec()?, [1, 1, 1]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn histogram_range<T, C>(
    input: &(impl Memory<T> + ?Sized),
    levels: &(impl Memory<T> + ?Sized),
    counts: &mut (impl MemoryMut<C> + ?Sized),
    stream: &impl AsStream,
) -> Result<()>
where
    T: SortKey + HistogramSample,
    C: HistogramCount,
{
    let stream = crate::order::streams::cuda_stream(stream);
    let (input, edges) = (contiguous(input.elems())?, contiguous(levels.elems())?);
    let out = counters(counts.elems())?;
    let (len, bins) = (input.len(), out.len());
    if edges.len() != bins + 1 {
        return Err(Error::LengthMismatch {
            expected: bins + 1,
            actual: edges.len(),
        });
    }
    let state = &input.mem.state;
    let (function, resident) = kernel(state, &["histogram_range", C::NAME], T::NAME)?;
    let (mut from, mut n, mut at, mut b) = (
        input.claim(stream)?.addr(),
        len as u64,
        edges.claim(stream)?.addr(),
        bins as u32,
    );
    let mut to = out.claim(stream)?.addr();
    let params: &mut [*mut c_void] = &mut [
        (&mut from as *mut u64).cast(),
        (&mut n as *mut u64).cast(),
        (&mut at as *mut u64).cast(),
        (&mut b as *mut u32).cast(),
        (&mut to as *mut u64).cast(),
    ];
    // SAFETY: `(input, len, levels, bins, counts)`, the three buffers
    // claimed on `stream`; `bins + 1` levels; `bins` counters of `C`.
    unsafe {
        count(
            stream,
            &function,
            resident,
            (len, size_of::<T>()),
            (to, bins * size_of::<C>()),
            params,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte samples: the square-root rule between its bounds; wider ones:
    /// a block per 1024 samples up to every resident block.
    #[test]
    fn byte_histograms_take_about_the_square_root_of_their_length_in_blocks() {
        assert_eq!(blocks(0, 1, 1056), 1);
        assert_eq!(blocks(1000, 1, 1056), 1);
        assert_eq!(blocks(1 << 20, 1, 1056), 64);
        assert_eq!(blocks(1 << 24, 1, 1056), 256);
        assert_eq!(blocks(1 << 28, 1, 1056), 1024);
        assert_eq!(blocks(1 << 28, 1, 792), 792);
        assert_eq!(blocks(1 << 28, 1, 1), 1);
        assert_eq!(blocks(1 << 20, 4, 1056), 1024);
        assert_eq!(blocks(1 << 24, 4, 1056), 1056);
        assert_eq!(blocks(5, 2, 1056), 1);
    }
}
