//! Scans: [`inclusive_scan`] and [`exclusive_scan`] with any
//! [`BuiltinOp`], out of place or in place, in one pass over the data
//! (decoupled look-back: each tile of 4096 elements of 4 bytes, 1536 of 8,
//! is read once and written once).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::algo::element::{BuiltinOp, Numeric};
use crate::algo::kernels::{kernel, launch_blocks, with_lookback_state};
use crate::algo::reduce::contiguous;
use crate::buffers::ops::{Memory, MemoryMut};
use crate::context::ContextState;
use crate::error::{Error, Result};
use crate::order::streams::AsStream;

/// Threads per block of the scan kernels (`algo-kernels/`'s `SCAN_BLOCK`).
const SCAN_BLOCK: u32 = 128;

/// Elements per thread of a scan tile of elements of `size` bytes
/// (`algo-kernels/`'s `scan_items`).
const fn scan_items(size: usize) -> usize {
    if size == 4 {
        32
    } else {
        12
    }
}

/// Queues the scan of `len` elements from `input` into `output` (the same
/// address for in place).
///
/// # Safety
/// `input` and `output` hold `len` elements each of `state`'s context,
/// ordered on `stream` (by the caller's `run` / `run_with`, or a
/// temporary of the caller's), and do not partially overlap.
pub(super) unsafe fn enqueue_scan<T: Numeric, O: BuiltinOp<T>>(
    state: &ContextState,
    len: usize,
    input: u64,
    output: u64,
    inclusive: bool,
    op: O,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let (kernel, _) = kernel(state, &["scan", O::NAME], T::NAME)?;
    let tiles = len.div_ceil(SCAN_BLOCK as usize * scan_items(size_of::<T>()));
    // CUDA's grid limit along x: 2^31 - 1 blocks.
    let grid = u32::try_from(tiles)
        .ok()
        .filter(|&g| g <= i32::MAX as u32)
        .ok_or(Error::InvalidArgument(
            "a scan of 2^31 tiles or more (2^43 elements of 4 bytes), past CUDA's grid limit; \
             scan it in parts",
        ))?;
    let mut init = if inclusive {
        op.identity()
    } else {
        op.exclusive_start()
    };
    let run = |at: u64| {
        let (mut input, mut output, mut len, mut inclusive, mut at) =
            (input, output, len as u64, u32::from(inclusive), at);
        let params: &mut [*mut c_void] = &mut [
            (&mut input as *mut u64).cast(),
            (&mut output as *mut u64).cast(),
            (&mut len as *mut u64).cast(),
            (&mut inclusive as *mut u32).cast(),
            (&mut init as *mut T).cast(),
            (&mut at as *mut u64).cast(),
        ];
        // SAFETY: `(input, output, len, inclusive, init, state)`; one block
        // per tile; the state zeroed on this stream just before,
        // 16-aligned, this launch's alone while it runs.
        unsafe { launch_blocks(stream, &kernel, (grid, SCAN_BLOCK), params) }
    };
    // SAFETY: one scan kernel on `stream`, which the caller checked.
    unsafe { with_lookback_state::<T, ()>(state, stream, tiles, run) }
}

/// Checks that `output` can take the scan of `input`.
fn same_len(input: usize, output: usize) -> Result<()> {
    if input == output {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            expected: output,
            actual: input,
        })
    }
}

fn scan_into<T: Numeric, O: BuiltinOp<T>>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    inclusive: bool,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let (elems, out) = (contiguous(input.elems())?, contiguous(output.elems())?);
    same_len(elems.len(), out.len())?;
    let (from, to) = (elems.addr(), out.addr());
    // SAFETY: both ordered on `stream` by `run_with`; a `&` and a `&mut`
    // cannot overlap.
    elems.run_with(&out, stream, || unsafe {
        enqueue_scan(
            &elems.mem.state,
            elems.len(),
            from,
            to,
            inclusive,
            op,
            stream,
        )
    })
}

fn scan_in_place<T: Numeric, O: BuiltinOp<T>>(
    data: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    inclusive: bool,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let elems = contiguous(data.elems())?;
    let at = elems.addr();
    // SAFETY: ordered on `stream` by `run`; each tile reads its elements
    // before it writes them, and no other tile touches them.
    elems.run(stream, || unsafe {
        enqueue_scan(&elems.mem.state, elems.len(), at, at, inclusive, op, stream)
    })
}

/// Queues the inclusive scan of `input` into `output` on `stream`:
/// `output[i] = input[0] op ... op input[i]`, after earlier work on both
/// (lengths must match). Single pass (decoupled look-back); float sums
/// combine in a tree, so the last bits may differ from a loop's. Inside
/// [`Graph::capture`](crate::Graph::capture), with the recorder as
/// `stream`, it is recorded, its state a memory node of the graph.
///
/// ```no_run
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4])?;
/// let mut y = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4)?;
/// cuda_mem::algo::inclusive_scan(&x, &mut y, Sum, &stream)?;
/// assert_eq!(y.to_vec()?, [1, 3, 6, 10]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn inclusive_scan<T: Numeric, O: BuiltinOp<T>>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    scan_into(input, output, op, true, stream)
}

/// Queues the exclusive scan of `input` into `output` on `stream`:
/// `output[0]` is the start (0 for sums, `+0.0` for float sums; the
/// identity for [`Min`](crate::device::ops::Min) and
/// [`Max`](crate::device::ops::Max)) and `output[i] = start op input[0] op
/// ... op input[i - 1]`. Otherwise as [`inclusive_scan`].
///
/// ```no_run
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1u32, 2, 3, 4])?;
/// let mut y = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4)?;
/// cuda_mem::algo::exclusive_scan(&x, &mut y, Sum, &stream)?;
/// assert_eq!(y.to_vec()?, [0, 1, 3, 6]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn exclusive_scan<T: Numeric, O: BuiltinOp<T>>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    scan_into(input, output, op, false, stream)
}

/// [`inclusive_scan`] of `data` into itself.
///
/// ```no_run
/// use cuda_mem::device::ops::Max;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3i64, 1, 4, 1, 5])?;
/// cuda_mem::algo::inclusive_scan_in_place(&mut x, Max, &stream)?;
/// assert_eq!(x.to_vec()?, [3, 3, 4, 4, 5]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn inclusive_scan_in_place<T: Numeric, O: BuiltinOp<T>>(
    data: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    scan_in_place(data, op, true, stream)
}

/// [`exclusive_scan`] of `data` into itself.
///
/// ```no_run
/// use cuda_mem::device::ops::Sum;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2.0f32, 0.5, 1.0])?;
/// cuda_mem::algo::exclusive_scan_in_place(&mut x, Sum, &stream)?;
/// assert_eq!(x.to_vec()?, [0.0, 2.0, 2.5]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn exclusive_scan_in_place<T: Numeric, O: BuiltinOp<T>>(
    data: &mut (impl MemoryMut<T> + ?Sized),
    op: O,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    scan_in_place(data, op, false, stream)
}
