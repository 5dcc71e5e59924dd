//! Reductions: [`sum`], [`min`], [`max`] and any [`BuiltinOp`]
//! ([`reduce`]), [`count`] of a value, and the first index of the minimum
//! or maximum ([`min_index`], [`max_index`]); each one waits and returns
//! the value, or (`_into`, [`reduce_to_buffer`]) keeps it on the device.
//!
//! One launch: a grid that fills the device reduces the input tile by
//! tile, one value per block, and the last block to finish combines those
//! (`device::wide::reduce_across_blocks`). The blocks meet in state memory
//! the stream keeps from one reduction to the next (`scratch`), so a call
//! queues the kernel alone.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::algo::element::{BuiltinOp, Numeric};
use crate::algo::kernels::{grid, kept_states, kernel, launch};
use crate::algo::scratch::{Temporary, COUNTER_BYTES};
use crate::buffers::buffer::PoolBuffer;
use crate::buffers::ops::{Memory, MemoryMut};
use crate::copy::device_copy::DeviceCopy;
use crate::device::ops::{Max, Min, Sum};
use crate::engine::Elems;
use crate::error::{Error, Result};
use crate::order::streams::AsStream;

/// The message for memory that is not one contiguous block.
pub(super) const NOT_CONTIGUOUS: &str =
    "cuda_mem::algo runs on contiguous elements; padded 2D memory (a PitchedBuffer whose pitch \
     exceeds its row, or a region of one) is not: copy it into a packed buffer first \
     (DeviceBuffer::copy_from)";

/// The input's elements, checked to be contiguous.
pub(super) fn contiguous<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    if elems.is_contiguous() {
        Ok(elems)
    } else {
        Err(Error::InvalidArgument(NOT_CONTIGUOUS))
    }
}

/// The one-element output of a reduction kept on the device.
fn single<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    if elems.len() != 1 {
        return Err(Error::LengthMismatch {
            expected: 1,
            actual: elems.len(),
        });
    }
    Ok(elems)
}

/// Elements per thread of a tile of `size`-byte elements (the kernels'
/// `ITEMS4` / `ITEMS8`).
pub(super) const fn items(size: usize) -> usize {
    if size == 4 {
        16
    } else {
        8
    }
}

/// Elements per thread of the arg reductions' tiles, whatever the size.
const ARG_ITEMS: usize = 8;

/// Queues the one-launch reduction `cuda_mem_<kind>_<T>(input, len,
/// [value,] state, out, [last])` over `input`, tiles of `items` elements
/// a thread, with a grid that fills the device at most, whose state (the
/// arrivals counter and a `slot`-byte slot per block) is the stream's kept
/// block or a zeroed temporary (`scratch`).
///
/// # Safety
/// The kernel `kind` has those parameters, with `V` the type of its
/// `value`, and leaves the counter at 0; `slot` is at least the bytes it
/// writes per block (it writes `grid * slot` after the counter); `out` has
/// room for its result; `input` and `out` are ordered on `stream`, which
/// passed `check_stream`.
unsafe fn one_launch<T: Numeric, V>(
    input: Elems<'_, T>,
    stream: &Arc<CudaStream>,
    (kind, items): (&[&str], usize),
    value: Option<V>,
    slot: usize,
    (out, last): (u64, Option<u32>),
) -> Result<()> {
    let state = &input.mem.state;
    let (kernel, resident) = kernel(state, kind, T::NAME)?;
    let grid = grid(input.len(), items, resident);
    let bytes = COUNTER_BYTES + grid as usize * slot;
    let run = |at: u64| {
        let (mut input, mut len, mut at, mut out) = (input.addr(), input.len() as u64, at, out);
        let (mut value, mut last) = (value, last);
        // At most six parameters, in place (no allocation per call).
        let mut params = [std::ptr::null_mut::<c_void>(); 6];
        let mut count = 0;
        let value_at = value.as_mut().map(|v| (v as *mut V).cast());
        let last_at = last.as_mut().map(|l| (l as *mut u32).cast());
        for param in [
            Some((&mut input as *mut u64).cast()),
            Some((&mut len as *mut u64).cast()),
            value_at,
            Some((&mut at as *mut u64).cast()),
            Some((&mut out as *mut u64).cast()),
            last_at,
        ]
        .into_iter()
        .flatten()
        {
            params[count] = param;
            count += 1;
        }
        // SAFETY: the caller's contract; `at` has a slot per block and a
        // zero counter, this launch's alone while it runs.
        unsafe { launch(stream, &kernel, grid, &mut params[..count]) }
    };
    // SAFETY: one kernel on `stream`, which leaves the counter at 0.
    unsafe { kept_states(state)?.with(state, stream, bytes, run) }
}

/// Queues `op` over `input` into the address `out` (room for one `T`).
///
/// # Safety
/// `out` is ordered on `stream` (with `input`, by the caller's `run`).
unsafe fn enqueue_reduce<T: Numeric, O: BuiltinOp<T>>(
    input: Elems<'_, T>,
    out: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    // SAFETY: `(input, len, state, output)`, slots of `T` (or its key, of
    // the same size); `out` holds a `T`.
    unsafe {
        one_launch::<T, ()>(
            input,
            stream,
            (&["reduce", O::NAME], items(size_of::<T>())),
            None,
            size_of::<T>(),
            (out, None),
        )
    }
}

/// `op` over every element of `input`, returned once computed: the
/// identity of `op` when `input` is empty (0, `-0.0` for float sums; the
/// type's largest value or `+inf` for [`Min`], its smallest or `-inf` for
/// [`Max`]). Queued on the memory's default stream, after earlier work on
/// it; the call waits for the result.
///
/// ```no_run
/// use cuda_mem::device::ops::Max;
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3i64, -9, 4])?;
/// assert_eq!(cuda_mem::algo::reduce(&x, Max)?, 4);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn reduce<T: Numeric, O: BuiltinOp<T>>(input: &(impl Memory<T> + ?Sized), op: O) -> Result<T> {
    let _ = op;
    let elems = contiguous(input.elems())?;
    let stream = elems.default_stream();
    let out = Temporary::new(&elems.mem.state, stream, size_of::<T>())?;
    // SAFETY: the temporary is this call's, allocated on `stream`.
    elems.run(stream, || unsafe {
        enqueue_reduce::<T, O>(elems, out.addr(), stream)
    })?;
    let mut value = [0u8; 8];
    out.read_into(&mut value[..size_of::<T>()])?;
    // SAFETY: the kernel wrote one `T`; any bytes are a valid `T`.
    Ok(unsafe { std::ptr::read_unaligned(value.as_ptr().cast::<T>()) })
}

/// The sum of every element (integers wrap; floats are summed in a tree,
/// so the last bits may differ from a loop's; `-0.0` when empty), returned
/// once computed.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1.5f32, 2.0, -0.5])?;
/// assert_eq!(cuda_mem::algo::sum(&x)?, 3.0);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn sum<T: Numeric>(input: &(impl Memory<T> + ?Sized)) -> Result<T>
where
    Sum: BuiltinOp<T>,
{
    reduce(input, Sum)
}

/// The smallest element, or `None` when empty (floats: a NaN anywhere
/// makes it NaN, and `-0.0` is below `+0.0`: IEEE `minimum`).
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[4u32, 1, 9])?;
/// assert_eq!(cuda_mem::algo::min(&x)?, Some(1));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn min<T: Numeric>(input: &(impl Memory<T> + ?Sized)) -> Result<Option<T>>
where
    Min: BuiltinOp<T>,
{
    if input.is_empty() {
        return contiguous(input.elems()).map(|_| None);
    }
    reduce(input, Min).map(Some)
}

/// The largest element, or `None` when empty (floats: IEEE `maximum`).
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[4.0f64, 1.0, 9.0])?;
/// assert_eq!(cuda_mem::algo::max(&x)?, Some(9.0));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn max<T: Numeric>(input: &(impl Memory<T> + ?Sized)) -> Result<Option<T>>
where
    Max: BuiltinOp<T>,
{
    if input.is_empty() {
        return contiguous(input.elems()).map(|_| None);
    }
    reduce(input, Max).map(Some)
}

/// Queues `op` over every element of `input` on `stream` and writes it to
/// the one element of `output` (the identity when `input` is empty), after
/// earlier work on both; nothing waits. Inside [`Graph::capture`](crate::Graph::capture),
/// with the recorder as `stream`, it is recorded like any operation, its
/// temporary a memory node of the graph.
///
/// ```no_run
/// use cuda_mem::device::ops::Sum;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1u64, 2, 3])?;
/// let mut total = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::reduce_into(&x, Sum, &mut total, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn reduce_into<T: Numeric, O: BuiltinOp<T>>(
    input: &(impl Memory<T> + ?Sized),
    op: O,
    output: &mut (impl MemoryMut<T> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let _ = op;
    let (elems, out) = (contiguous(input.elems())?, single(output.elems())?);
    // SAFETY: `out` is ordered on `stream` with the input by `run_with`.
    elems.run_with(&out, stream, || unsafe {
        enqueue_reduce::<T, O>(elems, out.addr(), stream)
    })
}

/// Like [`reduce_into`], into a new one-element [`PoolBuffer`] allocated
/// on `stream`.
///
/// ```no_run
/// use cuda_mem::device::ops::Min;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[5i32, -2])?;
/// let lowest = cuda_mem::algo::reduce_to_buffer(&x, Min, &stream)?;
/// assert_eq!(lowest.to_vec()?, [-2]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn reduce_to_buffer<T: Numeric, O: BuiltinOp<T>>(
    input: &(impl Memory<T> + ?Sized),
    op: O,
    stream: &impl AsStream,
) -> Result<PoolBuffer<T>> {
    let stream = crate::order::streams::cuda_stream(stream);
    let mut out = PoolBuffer::new(1, stream)?;
    reduce_into(input, op, &mut out, stream)?;
    Ok(out)
}

/// Queues the count of the elements equal to `value` into `out` (a `u64`).
///
/// # Safety
/// `out` is ordered on `stream` with `input`.
unsafe fn enqueue_count<T: Numeric>(
    input: Elems<'_, T>,
    value: T,
    out: u64,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    // SAFETY: `(input, len, value, state, output)`, `u64` slots and output.
    unsafe {
        one_launch(
            input,
            stream,
            (&["count"], items(size_of::<T>())),
            Some(value),
            size_of::<u64>(),
            (out, None),
        )
    }
}

/// How many elements equal `value` (`==`: a NaN equals nothing, and
/// `-0.0` equals `0.0`), returned once counted.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[7u32, 1, 7, 7])?;
/// assert_eq!(cuda_mem::algo::count(&x, 7)?, 3);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn count<T: Numeric>(input: &(impl Memory<T> + ?Sized), value: T) -> Result<usize> {
    let elems = contiguous(input.elems())?;
    let stream = elems.default_stream();
    let out = Temporary::new(&elems.mem.state, stream, 8)?;
    // SAFETY: the temporary is this call's, allocated on `stream`.
    elems.run(stream, || unsafe {
        enqueue_count(elems, value, out.addr(), stream)
    })?;
    let mut bytes = [0u8; 8];
    out.read_into(&mut bytes)?;
    Ok(u64::from_ne_bytes(bytes) as usize)
}

/// Queues [`count`] on `stream` into the one element of `output`.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0.5f32, 0.5])?;
/// let mut n = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::count_into(&x, 0.5, &mut n, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn count_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    value: T,
    output: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let (elems, out) = (contiguous(input.elems())?, single(output.elems())?);
    // SAFETY: `out` is ordered on `stream` with the input by `run_with`.
    elems.run_with(&out, stream, || unsafe {
        enqueue_count(elems, value, out.addr(), stream)
    })
}

/// Queues the first index of the extreme (`kind`: `"argmin"` or
/// `"argmax"`) into `out`: a `u64` when `index_only`, else a pair
/// `[index, key]` (see [`Numeric::from_arg_key`]). An empty input gives index `u64::MAX`.
///
/// # Safety
/// `out` is ordered on `stream` with `input`.
unsafe fn enqueue_arg<T: Numeric>(
    input: Elems<'_, T>,
    kind: &str,
    out: u64,
    index_only: bool,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    // SAFETY: `(input, len, state, output, index_only)`, pair slots; `out`
    // holds a pair or an index, as `index_only` says.
    unsafe {
        one_launch::<T, ()>(
            input,
            stream,
            (&[kind], ARG_ITEMS),
            None,
            16,
            (out, Some(u32::from(index_only))),
        )
    }
}

/// The first index of an extreme and its value, waiting.
fn arg<T: Numeric>(input: &(impl Memory<T> + ?Sized), kind: &str) -> Result<Option<(usize, T)>> {
    let elems = contiguous(input.elems())?;
    if elems.len() == 0 {
        return Ok(None);
    }
    let stream = elems.default_stream();
    let out = Temporary::new(&elems.mem.state, stream, 16)?;
    // SAFETY: the temporary is this call's, allocated on `stream`.
    elems.run(stream, || unsafe {
        enqueue_arg(elems, kind, out.addr(), false, stream)
    })?;
    let mut pair = [0u8; 16];
    out.read_into(&mut pair)?;
    let index = u64::from_ne_bytes(pair[..8].try_into().expect("8 bytes"));
    let key = i64::from_ne_bytes(pair[8..].try_into().expect("8 bytes"));
    Ok(Some((index as usize, T::from_arg_key(key))))
}

/// The first index of the smallest element and the element, or `None`
/// when empty (floats: the first NaN if there is one, and `-0.0` below
/// `+0.0`, as [`min`]).
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[4i32, 1, 9, 1])?;
/// assert_eq!(cuda_mem::algo::min_index(&x)?, Some((1, 1)));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn min_index<T: Numeric>(input: &(impl Memory<T> + ?Sized)) -> Result<Option<(usize, T)>> {
    arg(input, "argmin")
}

/// The first index of the largest element and the element, or `None` when
/// empty (floats: the first NaN if there is one, as [`max`]).
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[4u64, 9, 9])?;
/// assert_eq!(cuda_mem::algo::max_index(&x)?, Some((1, 9)));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn max_index<T: Numeric>(input: &(impl Memory<T> + ?Sized)) -> Result<Option<(usize, T)>> {
    arg(input, "argmax")
}

/// Queues the first index of an extreme into `output`.
fn arg_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    kind: &str,
    output: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let (elems, out) = (contiguous(input.elems())?, single(output.elems())?);
    // SAFETY: `out` is ordered on `stream` with the input by `run_with`.
    elems.run_with(&out, stream, || unsafe {
        enqueue_arg(elems, kind, out.addr(), true, stream)
    })
}

/// Queues [`min_index`]'s index on `stream` into the one element of
/// `output` (`u64::MAX` when `input` is empty); nothing waits.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2.0f32, -1.0])?;
/// let mut at = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::min_index_into(&x, &mut at, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn min_index_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    arg_into(input, "argmin", output, stream)
}

/// Queues [`max_index`]'s index on `stream` into the one element of
/// `output` (`u64::MAX` when `input` is empty); nothing waits.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2i64, 8])?;
/// let mut at = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::max_index_into(&x, &mut at, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn max_index_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    arg_into(input, "argmax", output, stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_fill_the_device_at_most() {
        assert_eq!(grid(0, items(4), 1056), 1);
        assert_eq!(grid(4096, items(4), 1056), 1);
        assert_eq!(grid(4097, items(4), 1056), 2);
        assert_eq!(grid(2048 * 3, items(8), 1056), 3);
        assert_eq!(grid(2048 * 3, ARG_ITEMS, 1056), 3);
        assert_eq!(grid(1 << 28, items(4), 1056), 1056);
    }
}
