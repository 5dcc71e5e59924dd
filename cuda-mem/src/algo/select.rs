//! Compactions: [`select_flagged`] (the elements whose flag is set),
//! [`unique`] (the first of each run of equal elements) and
//! [`run_length_encode`] (each run's value and length), in order, in one
//! pass over the data (the scans' decoupled look-back, over counts). Each
//! returns how many it wrote (waiting for that count), or keeps the count
//! on the device (`_into`).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::algo::element::Numeric;
use crate::algo::kernels::{grid, kernel, launch, with_lookback_state, BLOCK};
use crate::algo::reduce::contiguous;
use crate::algo::scratch::Temporary;
use crate::buffers::ops::{Memory, MemoryMut};
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::Elems;
use crate::error::{Error, Result};
use crate::order::streams::AsStream;

/// Elements per thread of the compaction kernels' tiles.
const ITEMS: usize = 8;

/// The tiles of a compaction of `len` elements (at least one: the last
/// tile writes the count).
fn tiles(len: usize) -> Result<u32> {
    if len >= 1 << 32 {
        return Err(Error::InvalidArgument(
            "cuda_mem::algo's compactions take fewer than 2^32 elements (their counts are \
             32-bit on the device); compact the input in parts",
        ));
    }
    Ok(len.div_ceil(BLOCK as usize * ITEMS).max(1) as u32)
}

/// `out`, checked to have room for `len` elements.
fn room<T: DeviceCopy>(out: Elems<'_, T>, len: usize) -> Result<Elems<'_, T>> {
    let out = contiguous(out)?;
    if out.len() < len {
        return Err(Error::LengthMismatch {
            expected: out.len(),
            actual: len,
        });
    }
    Ok(out)
}

/// The address of `elems` for a kernel queued on `stream` next: ordered
/// after earlier work on them, and recorded as used there (the typed
/// launches' claim).
fn claim<T: DeviceCopy>(elems: Elems<'_, T>, stream: &Arc<CudaStream>) -> Result<u64> {
    Ok(elems.claim(stream)?.addr())
}

/// Where a compaction's count goes: a one-element `u64` buffer of the
/// caller's, or a temporary the call reads back.
enum Count<'a> {
    Kept(Elems<'a, u64>),
    Read,
}

impl<'a> Count<'a> {
    fn kept(out: Elems<'a, u64>) -> Result<Self> {
        if out.len() != 1 {
            return Err(Error::LengthMismatch {
                expected: 1,
                actual: out.len(),
            });
        }
        Ok(Self::Kept(out))
    }

    /// Runs `queue` with the count's address, and returns the count when
    /// it is read back.
    fn run(
        self,
        state: &ContextState,
        stream: &Arc<CudaStream>,
        queue: impl FnOnce(u64) -> Result<()>,
    ) -> Result<Option<usize>> {
        match self {
            Count::Kept(out) => queue(claim(out, stream)?).map(|()| None),
            Count::Read if crate::order::capture::is_recording(stream) => {
                Err(Error::UnsupportedStream(
                    "it is recording a graph, and this call waits for its count; use the \
                     `_into` form, which keeps the count on the device",
                ))
            }
            Count::Read => {
                let count = Temporary::new(state, stream, 8)?;
                queue(count.addr())?;
                let mut bytes = [0u8; 8];
                count.read_into(&mut bytes)?;
                Ok(Some(u64::from_ne_bytes(bytes) as usize))
            }
        }
    }
}

/// Queues the compaction kernel `kind` (`"select_flagged"`, `"unique"`,
/// `"rle_heads"`) over `len` elements with `params` before its
/// `(..., count, state)`.
///
/// # Safety
/// `params` are the kernel's leading parameters (see `algo-kernels/`),
/// naming memory claimed on `stream`; `count` has room for a `u64`.
unsafe fn compact<T: Numeric>(
    state: &ContextState,
    stream: &Arc<CudaStream>,
    kind: &str,
    len: usize,
    params: &mut Vec<*mut c_void>,
    count: u64,
) -> Result<()> {
    let grid = tiles(len)?;
    let (function, _) = kernel(state, &[kind], T::NAME)?;
    let run = |at: u64| {
        let (mut count, mut at) = (count, at);
        params.push((&mut count as *mut u64).cast());
        params.push((&mut at as *mut u64).cast());
        // SAFETY: the caller's parameters, then the count and the zeroed
        // state of `grid` tiles; one block per tile.
        unsafe { launch(stream, &function, grid, params) }
    };
    // SAFETY: one compaction kernel on `stream`, checked by the caller's
    // claims.
    unsafe { with_lookback_state::<u32, ()>(state, stream, grid as usize, run) }
}

fn select_flagged_impl<T: Numeric>(
    input: Elems<'_, T>,
    flags: Elems<'_, u8>,
    output: Elems<'_, T>,
    count: Count<'_>,
    stream: &Arc<CudaStream>,
) -> Result<Option<usize>> {
    let (input, flags) = (contiguous(input)?, contiguous(flags)?);
    if flags.len() != input.len() {
        return Err(Error::LengthMismatch {
            expected: input.len(),
            actual: flags.len(),
        });
    }
    let output = room(output, input.len())?;
    let len = input.len();
    tiles(len)?;
    let state = &input.mem.state;
    let (mut from, mut flagged, mut n, mut to) = (
        claim(input, stream)?,
        claim(flags, stream)?,
        len as u64,
        claim(output, stream)?,
    );
    count.run(state, stream, |count| {
        let mut params: Vec<*mut c_void> = vec![
            (&mut from as *mut u64).cast(),
            (&mut flagged as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut to as *mut u64).cast(),
        ];
        // SAFETY: `(input, flags, len, output)`, each claimed on `stream`.
        unsafe { compact::<T>(state, stream, "select_flagged", len, &mut params, count) }
    })
}

/// Queues the compaction of `input` by `flags` on `stream`: the elements
/// whose flag is not 0, in order, into the start of `output` (as long as
/// `input` at least; the rest is left as it was), after earlier work on
/// all three; waits for the number selected and returns it. Not inside a
/// graph capture (it waits): use [`select_flagged_into`] there.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[5u32, 6, 7, 8])?;
/// let flags = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1u8, 0, 0, 1])?;
/// let mut kept = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4)?;
/// let n = cuda_mem::algo::select_flagged(&x, &flags, &mut kept, &stream)?;
/// assert_eq!(&kept.to_vec()?[..n], [5, 8]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn select_flagged<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    flags: &(impl Memory<u8> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    stream: &impl AsStream,
) -> Result<usize> {
    let stream = crate::order::streams::cuda_stream(stream);
    let n = select_flagged_impl(
        input.elems(),
        flags.elems(),
        output.elems(),
        Count::Read,
        stream,
    )?;
    Ok(n.expect("a count read back"))
}

/// [`select_flagged`], with the number selected kept on the device in the
/// one element of `count`; nothing waits (works inside
/// [`Graph::capture`](crate::Graph::capture)).
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1.5f32, 2.5])?;
/// let flags = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0u8, 1])?;
/// let mut kept = cuda_mem::DeviceBuffer::<f32>::zeroed(&ctx, 2)?;
/// let mut n = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::select_flagged_into(&x, &flags, &mut kept, &mut n, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn select_flagged_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    flags: &(impl Memory<u8> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    count: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let count = Count::kept(count.elems())?;
    select_flagged_impl(input.elems(), flags.elems(), output.elems(), count, stream).map(drop)
}

fn unique_impl<T: Numeric>(
    input: Elems<'_, T>,
    output: Elems<'_, T>,
    count: Count<'_>,
    stream: &Arc<CudaStream>,
) -> Result<Option<usize>> {
    let input = contiguous(input)?;
    let output = room(output, input.len())?;
    let len = input.len();
    tiles(len)?;
    let state = &input.mem.state;
    let (mut from, mut n, mut to) = (claim(input, stream)?, len as u64, claim(output, stream)?);
    count.run(state, stream, |count| {
        let mut params: Vec<*mut c_void> = vec![
            (&mut from as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut to as *mut u64).cast(),
        ];
        // SAFETY: `(input, len, output)`, each claimed on `stream`.
        unsafe { compact::<T>(state, stream, "unique", len, &mut params, count) }
    })
}

/// Queues the first element of each run of equal elements of `input`
/// (`==`: a NaN equals nothing, so each NaN is a run of its own, and
/// `-0.0` equals `0.0`), in order, into the start of `output` (as long as
/// `input` at least) on `stream`; waits for their number and returns it.
/// Not inside a graph capture: use [`unique_into`] there.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3i64, 3, 1, 1, 1, 3])?;
/// let mut runs = cuda_mem::DeviceBuffer::<i64>::zeroed(&ctx, 6)?;
/// let n = cuda_mem::algo::unique(&x, &mut runs, &stream)?;
/// assert_eq!(&runs.to_vec()?[..n], [3, 1, 3]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn unique<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    stream: &impl AsStream,
) -> Result<usize> {
    let stream = crate::order::streams::cuda_stream(stream);
    let n = unique_impl(input.elems(), output.elems(), Count::Read, stream)?;
    Ok(n.expect("a count read back"))
}

/// [`unique`], with the number of runs kept on the device in the one
/// element of `count`; nothing waits.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2u32, 2, 9])?;
/// let mut runs = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 3)?;
/// let mut n = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::unique_into(&x, &mut runs, &mut n, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn unique_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    output: &mut (impl MemoryMut<T> + ?Sized),
    count: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let count = Count::kept(count.elems())?;
    unique_impl(input.elems(), output.elems(), count, stream).map(drop)
}

fn run_length_encode_impl<T: Numeric>(
    input: Elems<'_, T>,
    values: Elems<'_, T>,
    lengths: Elems<'_, u32>,
    count: Count<'_>,
    stream: &Arc<CudaStream>,
) -> Result<Option<usize>> {
    let input = contiguous(input)?;
    let len = input.len();
    let (values, lengths) = (room(values, len)?, room(lengths, len)?);
    tiles(len)?;
    let state = &input.mem.state;
    let (from, to_values, to_lengths) = (
        claim(input, stream)?,
        claim(values, stream)?,
        claim(lengths, stream)?,
    );
    count.run(state, stream, |runs| {
        // First the runs' starts (a compaction of indices), then their
        // values and lengths.
        let starts = Temporary::new(state, stream, len.max(1) * 4)?;
        let (mut from, mut n, mut at) = (from, len as u64, starts.addr());
        let mut params: Vec<*mut c_void> = vec![
            (&mut from as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut at as *mut u64).cast(),
        ];
        // SAFETY: `(input, len, starts)`: the input claimed on `stream`,
        // the temporary of `len` `u32`s this call's.
        unsafe { compact::<T>(state, stream, "rle_heads", len, &mut params, runs) }?;
        let (gather, resident) = kernel(state, &["rle_gather"], T::NAME)?;
        let (mut runs, mut values, mut lengths) = (runs, to_values, to_lengths);
        let params: &mut [*mut c_void] = &mut [
            (&mut from as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut at as *mut u64).cast(),
            (&mut runs as *mut u64).cast(),
            (&mut values as *mut u64).cast(),
            (&mut lengths as *mut u64).cast(),
        ];
        let grid = grid(len, 1, resident);
        // SAFETY: `(input, len, starts, runs, values, counts)`: the starts
        // and their number written by the first pass on this stream, the
        // outputs claimed on it with room for `len` runs.
        unsafe { launch(stream, &gather, grid, params) }
    })
}

/// Queues the run-length encoding of `input` on `stream`: for each run of
/// equal elements (as [`unique`] compares them), in order, its value into
/// `values` and its length into `lengths` (both as long as `input` at
/// least); waits for the number of runs and returns it. Not inside a
/// graph capture: use [`run_length_encode_into`] there.
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[7u32, 7, 7, 4, 7])?;
/// let mut values = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 5)?;
/// let mut lengths = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 5)?;
/// let n = cuda_mem::algo::run_length_encode(&x, &mut values, &mut lengths, &stream)?;
/// assert_eq!((&values.to_vec()?[..n], &lengths.to_vec()?[..n]), (&[7, 4, 7][..], &[3, 1, 1][..]));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn run_length_encode<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    values: &mut (impl MemoryMut<T> + ?Sized),
    lengths: &mut (impl MemoryMut<u32> + ?Sized),
    stream: &impl AsStream,
) -> Result<usize> {
    let stream = crate::order::streams::cuda_stream(stream);
    let n = run_length_encode_impl(
        input.elems(),
        values.elems(),
        lengths.elems(),
        Count::Read,
        stream,
    )?;
    Ok(n.expect("a count read back"))
}

/// [`run_length_encode`], with the number of runs kept on the device in
/// the one element of `runs`; nothing waits.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1i32, 1, 2])?;
/// let mut values = cuda_mem::DeviceBuffer::<i32>::zeroed(&ctx, 3)?;
/// let mut lengths = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 3)?;
/// let mut runs = cuda_mem::DeviceBuffer::<u64>::zeroed(&ctx, 1)?;
/// cuda_mem::algo::run_length_encode_into(&x, &mut values, &mut lengths, &mut runs, &stream)?;
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn run_length_encode_into<T: Numeric>(
    input: &(impl Memory<T> + ?Sized),
    values: &mut (impl MemoryMut<T> + ?Sized),
    lengths: &mut (impl MemoryMut<u32> + ?Sized),
    runs: &mut (impl MemoryMut<u64> + ?Sized),
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let count = Count::kept(runs.elems())?;
    run_length_encode_impl(
        input.elems(),
        values.elems(),
        lengths.elems(),
        count,
        stream,
    )
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compactions_have_a_tile_even_when_empty_and_refuse_2_to_the_32() {
        assert_eq!(tiles(0).unwrap(), 1);
        assert_eq!(tiles(2048).unwrap(), 1);
        assert_eq!(tiles(2049).unwrap(), 2);
        assert!(tiles(1 << 32).is_err());
    }
}
