//! Sorting: [`sort`] (keys in place) and [`sort_pairs`] (keys with values
//! of any `DeviceCopy` type, stable), ascending or descending, by a stable
//! LSD radix sort, 8 bits per pass, in the onesweep shape
//! (`device::wide::{radix_histogram, radix_onesweep}`: every pass's digit
//! totals in one read, then one read and one write of the keys per pass). Keys: `u8`-`u64`, `i8`-`i64`, `f32`, `f64`; floats in
//! the total order of `f32::total_cmp` (`-NaN < -inf < ... < -0.0 < +0.0
//! < ... < +inf < +NaN`), reversed when descending.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream};

use crate::algo::element::sealed::Sealed;
use crate::algo::kernels::{grid, kernel, kernel_shared, launch, launch_shared};
use crate::algo::reduce::contiguous;
use crate::algo::scan::enqueue_scan;
use crate::algo::scratch::Temporary;
use crate::buffers::ops::{Memory, MemoryMut};
use crate::context::{ContextState, SharedMemory};
use crate::copy::device_copy::DeviceCopy;
use crate::device::ops::Sum;
use crate::device::wide::{radix_status_bytes, RadixKey, HISTOGRAM_BATCH, RADIX_BINS};
use crate::error::{DriverResultExt, Error, Result};
use crate::order::streams::AsStream;

/// The shape of a radix pass: its kernel (`cuda_mem_<kernel>_<K>`), its
/// block and its tile, as `algo-kernels/` compiles them (`RADIX_BLOCK`,
/// `RADIX_PAIRS_BLOCK4`, `RADIX_NARROW_BLOCK` and the `RADIX_ITEMS*`
/// lengths; the test `the_radix_passes_tiles_are_the_kernels` holds the
/// two together: a kernel given another tile returns without writing).
///
/// The passes of keys up to 4 bytes compute each key's digit again where
/// they rank it rather than keep it in registers, and put each key in
/// shared memory as soon as it is ranked, which is what lets these tiles
/// fit in 80 registers. On an H200, in a probe of this shape (two rounds)
/// against CUB's onesweep (384 threads of 20 keys alone, of 23 pairs):
/// `u32` keys alone at 256 x 32, 77 / 409-411 / 5417 µs against 79-88 /
/// 468-470 / 6365-6374 at 2^20 / 2^24 / 2^28 (at 256 x 22, keys stored
/// after the whole ranking: 1.08 / 1.02 / 0.993 of CUB); `(u32, u32)`
/// pairs at 384 x 23, 572-575 / 7864-7891 µs against 558-562 / 7459-7492
/// at 2^24 / 2^28 (at 384 x 22 so: 0.93-0.94 / 0.89).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    /// Keys alone, the values' code compiled out: 256 threads of 32 keys
    /// of up to 4 bytes, or of 8 keys of 8 bytes.
    Keys,
    /// With values: 384 threads of 22 keys of up to 4 bytes (two blocks
    /// fit the 164 KB of an A100's SM), or 256 threads of 8 keys of 8 bytes.
    Pairs,
    /// With values, 4-byte keys: 384 threads of 23, where two blocks fit
    /// an SM (the 228 KB of an H100's or H200's).
    Wide,
    /// With values, keys of up to 4 bytes: 256 threads of 16, where more
    /// of its threads than of [`Pass::Pairs`]' fit an SM, or a block of
    /// that does not fit at all (4-byte keys on Turing, 64 KB a block; an
    /// RTX 30xx or 40xx, a V100; any key where the driver does not say).
    Narrow,
}

/// The warps of the largest radix pass block (`Pass::Pairs`' 384 threads),
/// and one more: every pass's counters are sized for it.
const RADIX_WARP_ROWS: usize = Pass::Pairs.block(4) / 32 + 1;
/// The warps' digit counters of a radix pass (`algo-kernels/`'s
/// `RADIX_COUNTS`): a row per warp and one more.
const RADIX_COUNTERS_BYTES: usize = RADIX_WARP_ROWS * RADIX_BINS * 4;
/// The rest of a radix pass's static shared memory: the block scan's sums
/// (a `u64` per warp and one more) and the tile ticket (a `u32`), each,
/// like every shared array, 16-aligned.
const RADIX_OTHER_SHARED_BYTES: usize = align16(RADIX_WARP_ROWS * 8) + align16(4);

const fn align16(bytes: usize) -> usize {
    bytes.next_multiple_of(16)
}

/// The registers of a thread of a radix pass over keys of up to 4 bytes
/// (`algo::kernels`' register limit), and of an SM (every device the PTX
/// targets, `sm_70` and up).
const PASS_REGISTERS: usize = 80;
const SM_REGISTERS: usize = 65_536;

impl Pass {
    /// The pass that sorts keys of `size` bytes, alone or with values, on
    /// a device with `shared` memory. With values, keys of up to 4 bytes:
    /// the pass that keeps the most threads on an SM at once (more blocks
    /// hide more of the look-back's waits: on an H200, two blocks of 384 x
    /// 22 an SM at 80 registers measured faster than one at the compiler's
    /// 95), the wider tile on a tie (tiles of 384 threads measured faster
    /// than of 256 at the same 768 threads an SM). So the wide pass on an
    /// H100 or H200, the plain one on an A100, the narrow one where a block
    /// of 384 x 22 takes an SM alone or does not fit (4-byte keys on
    /// Turing; an RTX 30xx or 40xx, a V100).
    fn choose(size: usize, keys_only: bool, shared: &SharedMemory) -> Pass {
        if keys_only {
            return Pass::Keys;
        }
        if size > 4 {
            return Pass::Pairs;
        }
        // Widest first; a later one only when it holds more threads.
        let mut best = (Pass::Narrow, 0);
        for &pass in Pass::with_values(size) {
            let threads = pass.resident_threads(size, shared);
            if threads > best.1 {
                best = (pass, threads);
            }
        }
        best.0
    }

    /// The threads of this pass over keys of `size` bytes (up to 4) that
    /// one SM holds at once: its blocks, as many as its shared memory and
    /// its registers allow.
    fn resident_threads(self, size: usize, shared: &SharedMemory) -> usize {
        let block = self.block(size);
        let by_registers = SM_REGISTERS / (PASS_REGISTERS * block);
        shared.blocks(self.shared(size)).min(by_registers) * block
    }

    /// The passes with values shipped for keys of `size` bytes (`algo-kernels/`
    /// compiles these alone), the widest tile first.
    const fn with_values(size: usize) -> &'static [Pass] {
        match size {
            4 => &[Pass::Wide, Pass::Pairs, Pass::Narrow],
            1 | 2 => &[Pass::Pairs, Pass::Narrow],
            _ => &[Pass::Pairs],
        }
    }

    /// The kernel's name between `cuda_mem_` and the key type.
    const fn kernel(self) -> &'static str {
        match self {
            Pass::Keys => "radix_onesweep_keys",
            Pass::Pairs => "radix_onesweep",
            Pass::Wide => "radix_onesweep_wide",
            Pass::Narrow => "radix_onesweep_narrow",
        }
    }

    /// Threads per block over keys of `size` bytes.
    const fn block(self, size: usize) -> usize {
        match self {
            Pass::Pairs | Pass::Wide if size <= 4 => 384,
            _ => 256,
        }
    }

    /// Keys per thread over keys of `size` bytes.
    const fn items(self, size: usize) -> usize {
        if size > 4 {
            return 8;
        }
        match self {
            Pass::Keys => 32,
            Pass::Pairs => 22,
            Pass::Wide => 23,
            Pass::Narrow => 16,
        }
    }

    /// Keys per tile (one block's).
    const fn tile(self, size: usize) -> usize {
        self.block(size) * self.items(size)
    }

    /// The dynamic shared memory of a pass: the values' tile (a `u32` per
    /// key) when it carries values.
    const fn dynamic_shared(self, size: usize) -> usize {
        match self {
            Pass::Keys => 0,
            _ => self.tile(size) * 4,
        }
    }

    /// The shared memory of one block, static and dynamic: the keys' tile,
    /// the counters and the rest, then the values' tile.
    const fn shared(self, size: usize) -> usize {
        align16(self.tile(size) * size)
            + RADIX_COUNTERS_BYTES
            + RADIX_OTHER_SHARED_BYTES
            + self.dynamic_shared(size)
    }
}

/// Test hook (feature `test-hooks`): the passes with values of keys up to
/// 4 bytes that the sorts of the calling thread take, in place of the
/// device's choice: `"plain"` (384 x 22), `"wide"` (384 x 23, 4-byte keys
/// only: other keys keep the device's choice), `"narrow"` (256 x 16), or
/// `"auto"` (the device's choice). A pass that does not fit the device
/// fails at its launch. Panics on any other name.
///
/// ```
/// cuda_mem::algo::__force_pairs_pass("narrow");
/// cuda_mem::algo::__force_pairs_pass("auto");
/// ```
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub fn __force_pairs_pass(name: &str) {
    let pass = match name {
        "auto" => None,
        "plain" => Some(Pass::Pairs),
        "wide" => Some(Pass::Wide),
        "narrow" => Some(Pass::Narrow),
        other => panic!("no pass named {other:?}: plain, wide, narrow or auto"),
    };
    forced::FORCED.with(|f| f.set(pass));
}

/// The pass [`__force_pairs_pass`] set on this thread.
#[cfg(feature = "test-hooks")]
mod forced {
    use super::Pass;

    thread_local! {
        pub(super) static FORCED: std::cell::Cell<Option<Pass>> = const { std::cell::Cell::new(None) };
    }

    /// The forced pass of a sort of `size`-byte keys with values, where
    /// it exists for them.
    pub(super) fn pass(size: usize, keys_only: bool) -> Option<Pass> {
        let forced = FORCED.with(|f| f.get())?;
        (!keys_only && Pass::with_values(size).contains(&forced)).then_some(forced)
    }
}

/// A key type the sort kernels are shipped for: `u8`, `i8`, `u16`, `i16`,
/// `u32`, `i32`, `u64`, `i64`, `f32`, `f64` (their order: the integers'
/// own, the floats' `total_cmp`'s).
///
/// ```
/// fn sort_any<K: cuda_mem::algo::SortKey>(
///     keys: &mut cuda_mem::DeviceBuffer<K>,
///     s: &std::sync::Arc<cuda_mem::CudaStream>,
/// ) -> cuda_mem::Result<()> {
///     cuda_mem::algo::sort(keys, cuda_mem::algo::SortOrder::Ascending, s)
/// }
/// ```
pub trait SortKey: RadixKey + Sealed {
    /// The kernels' name for the type (`"i16"`).
    #[doc(hidden)]
    const NAME: &'static str;
}

macro_rules! sort_keys {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            const NAME: &'static str = stringify!($t);
        }
    )*};
}
sort_keys!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

impl Sealed for u8 {}
impl Sealed for i8 {}
impl Sealed for u16 {}
impl Sealed for i16 {}

/// Which way a sort goes.
///
/// ```
/// assert_ne!(cuda_mem::algo::SortOrder::Ascending, cuda_mem::algo::SortOrder::Descending);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// Smallest first.
    Ascending,
    /// Largest first (equal keys still in their input order).
    Descending,
}

/// `cuMemcpyDtoDAsync` of `bytes` bytes.
///
/// # Safety
/// Both ranges are live device-accessible memory ordered on `stream`, not
/// overlapping.
unsafe fn copy(dst: u64, src: u64, bytes: usize, stream: &CudaStream) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the caller's contract.
    unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream.cu_stream()).result() }
        .op("cuMemcpyDtoDAsync")
}

/// What a radix sort moves with its keys, 4 bytes each.
#[derive(Clone, Copy)]
enum Values {
    /// Nothing: keys alone.
    None,
    /// Each sorted key's input index, written to the `len` `u32`s here.
    Indices(u64),
    /// The `len` 4-byte values here, moved with their keys in place.
    Carried(u64),
}

/// Queues the radix sort of `len` keys at `keys` (in place), with
/// `values` moved along: every pass's digit totals in one read of the
/// keys, then one onesweep kernel per pass (one block per tile, a
/// per-digit look-back), the keys (and values) going back and forth
/// between the caller's memory and a temporary.
///
/// # Safety
/// `keys` holds `len` keys and the values' memory (if any) `len` `u32`s,
/// ordered on `stream` and overlapping nothing else; `len < 2^32`.
unsafe fn radix_sort<K: SortKey>(
    state: &ContextState,
    stream: &CudaStream,
    keys: u64,
    len: usize,
    order: SortOrder,
    values: Values,
) -> Result<()> {
    let (histogram, resident) = kernel(state, &["radix_histogram"], K::NAME)?;
    let size = size_of::<K>();
    let keys_only = matches!(values, Values::None);
    let pass_shape = Pass::choose(size, keys_only, &state.shared_memory);
    #[cfg(feature = "test-hooks")]
    let pass_shape = forced::pass(size, keys_only).unwrap_or(pass_shape);
    let shared = pass_shape.dynamic_shared(size);
    let (onesweep, _) = kernel_shared(state, (&[pass_shape.kernel()], K::NAME), shared as u32)?;
    let passes = K::BYTES;
    let block = pass_shape.block(size);
    let tiles = len.div_ceil(pass_shape.tile(size)).max(1);
    let other = Temporary::new(state, stream, len * size)?;
    // The digit totals of every pass, the pass counters, then the
    // look-back state (zeroed once: its words carry their pass).
    let totals_bytes = passes as usize * RADIX_BINS * 4;
    let counters_bytes = 64;
    let status_bytes = radix_status_bytes(tiles);
    let scratch = Temporary::new(state, stream, totals_bytes + counters_bytes + status_bytes)?;
    scratch.zero(totals_bytes + counters_bytes + status_bytes)?;
    let totals = scratch.addr();
    let counters = totals + totals_bytes as u64;
    let status = counters + counters_bytes as u64;
    let out = match values {
        Values::None => None,
        Values::Indices(at) | Values::Carried(at) => Some(at),
    };
    let spare = match out {
        Some(_) => Some(Temporary::new(state, stream, len * 4)?),
        None => None,
    };
    // The kernels' `descending`: the bits each key is xor-ed with.
    let descending = match order {
        SortOrder::Ascending => 0,
        SortOrder::Descending => u32::MAX,
    };
    {
        let (mut input, mut n, mut desc, mut p, mut at) =
            (keys, len as u64, descending, passes, totals);
        let params: &mut [*mut c_void] = &mut [
            (&mut input as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut desc as *mut u32).cast(),
            (&mut p as *mut u32).cast(),
            (&mut at as *mut u64).cast(),
        ];
        // One block per tile of `radix_histogram`, at most as many as run
        // at once.
        let grid = grid(len, HISTOGRAM_BATCH, resident);
        // SAFETY: `(input, len, descending, passes, totals)`: `len` keys;
        // the zeroed totals of every pass.
        unsafe { launch(stream, &histogram, grid, params) }?;
    }
    // The values' two buffers, so that the last pass writes `out`: pass
    // `p` writes `out` when `passes - 1 - p` is even, else the spare, and
    // reads what pass `p - 1` wrote.
    let values_of = |p: u32| match (out, &spare) {
        (Some(out), Some(spare)) => {
            if (passes - 1 - p).is_multiple_of(2) {
                out
            } else {
                spare.addr()
            }
        }
        _ => 0,
    };
    // What the first pass reads: nothing for indices (it makes them), the
    // carried values where they are, or a copy of them when the first
    // pass writes there (an odd number of passes).
    let first_values = match (values, &spare) {
        (Values::Carried(at), Some(spare)) if values_of(0) == at => {
            // SAFETY: both hold `len` `u32`s, ordered on `stream`.
            unsafe { copy(spare.addr(), at, len * 4, stream) }?;
            spare.addr()
        }
        (Values::Carried(at), _) => at,
        _ => 0,
    };
    let (mut from, mut to) = (keys, other.addr());
    for pass in 0..passes {
        let values_in = if pass == 0 {
            first_values
        } else {
            values_of(pass - 1)
        };
        let (mut keys_in, mut keys_out, mut values_in, mut values_out) =
            (from, to, values_in, values_of(pass));
        let (mut n, mut p, mut desc) = (len as u64, pass, descending);
        let mut pass_totals = totals + u64::from(pass) * (RADIX_BINS * 4) as u64;
        let (mut at, mut counter) = (status, counters + u64::from(pass) * 4);
        let mut params: [*mut c_void; 10] = [
            (&mut keys_in as *mut u64).cast(),
            (&mut keys_out as *mut u64).cast(),
            (&mut values_in as *mut u64).cast(),
            (&mut values_out as *mut u64).cast(),
            (&mut n as *mut u64).cast(),
            (&mut p as *mut u32).cast(),
            (&mut desc as *mut u32).cast(),
            (&mut pass_totals as *mut u64).cast(),
            (&mut at as *mut u64).cast(),
            (&mut counter as *mut u64).cast(),
        ];
        let params: &mut [*mut c_void] = if keys_only {
            // `radix_onesweep_keys` has no values' parameters.
            params.copy_within(4.., 2);
            &mut params[..8]
        } else {
            &mut params
        };
        // SAFETY: `(keys_in, keys_out, [values_in, values_out,] len, pass,
        // descending, totals, status, counter)`: distinct buffers of `len`
        // keys (and `u32` values; 0 is null: the indices on the first pass);
        // this pass's totals; the state zeroed before the first pass; this
        // pass's zeroed counter; one block per tile.
        unsafe {
            launch_shared(
                stream,
                &onesweep,
                (tiles as u32, block as u32, shared as u32),
                params,
            )
        }?;
        (from, to) = (to, from);
    }
    if from != keys {
        // An odd number of passes: the sorted keys are in the temporary.
        // SAFETY: both hold `len` keys, ordered on `stream`.
        unsafe { copy(keys, from, len * size, stream) }?;
    }
    Ok(())
}

/// The keys and the values of a sort of pairs, checked: as many values as
/// keys.
fn paired<'k, 'v, K: DeviceCopy, V: DeviceCopy>(
    keys: crate::engine::Elems<'k, K>,
    values: crate::engine::Elems<'v, V>,
) -> Result<(crate::engine::Elems<'k, K>, crate::engine::Elems<'v, V>)> {
    let (k, v) = (checked(keys)?, contiguous(values)?);
    if v.len() != k.len() {
        return Err(Error::LengthMismatch {
            expected: k.len(),
            actual: v.len(),
        });
    }
    Ok((k, v))
}

/// The keys' elements, checked.
fn checked<T: DeviceCopy>(
    elems: crate::engine::Elems<'_, T>,
) -> Result<crate::engine::Elems<'_, T>> {
    let elems = contiguous(elems)?;
    if elems.len() >= 1 << 32 {
        return Err(Error::InvalidArgument(
            "cuda_mem::algo sorts fewer than 2^32 elements (ranks are 32-bit on the device); \
             sort in parts and merge",
        ));
    }
    Ok(elems)
}

/// Queues the sort of `data` in place on `stream`, after earlier work on
/// it: ascending or descending (integers in their order, floats in
/// `total_cmp`'s: `-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`,
/// all reversed when descending). A stable LSD radix sort, one pass of 8
/// bits per key byte; its temporaries (a second buffer of keys, the digit
/// counts) come from the stream-ordered pool. Fewer than 2^32 keys.
///
/// ```no_run
/// use cuda_mem::algo::SortOrder;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3.5f32, -0.0, 0.0, -7.0])?;
/// cuda_mem::algo::sort(&mut x, SortOrder::Ascending, &stream)?;
/// assert_eq!(x.to_vec()?.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
///     [-7.0f32, -0.0, 0.0, 3.5].iter().map(|v| v.to_bits()).collect::<Vec<_>>());
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn sort<K: SortKey>(
    data: &mut (impl MemoryMut<K> + ?Sized),
    order: SortOrder,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let keys = checked(data.elems())?;
    let len = keys.len();
    let state = &keys.mem.state;
    let at = keys.claim(stream)?.addr();
    if len < 2 {
        return Ok(());
    }
    // SAFETY: the keys claimed on `stream`; fewer than 2^32.
    unsafe { radix_sort::<K>(state, stream, at, len, order, Values::None) }
}

/// Queues the sort of `keys` in place on `stream`, and moves `values`
/// (any `DeviceCopy` type, as many) with them: `values[i]` ends where
/// `keys[i]` does. Stable: equal keys keep their input order, their values
/// too (sorting structs by a field is this, with the field as the keys).
/// Orders as [`sort`]. Fewer than 2^32 pairs.
///
/// ```no_run
/// use cuda_mem::algo::SortOrder;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut keys = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2u32, 1, 2, 0])?;
/// let mut names = cuda_mem::DeviceBuffer::from_slice(&ctx, &[*b"b1", *b"a ", *b"b2", *b"z "])?;
/// cuda_mem::algo::sort_pairs(&mut keys, &mut names, SortOrder::Ascending, &stream)?;
/// assert_eq!(keys.to_vec()?, [0, 1, 2, 2]);
/// assert_eq!(names.to_vec()?, [*b"z ", *b"a ", *b"b1", *b"b2"]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn sort_pairs<K: SortKey, V: DeviceCopy>(
    keys: &mut (impl MemoryMut<K> + ?Sized),
    values: &mut (impl MemoryMut<V> + ?Sized),
    order: SortOrder,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let (k, v) = paired(keys.elems(), values.elems())?;
    let len = k.len();
    let state = &k.mem.state;
    let (key_at, value_at) = (k.claim(stream)?.addr(), v.claim(stream)?.addr());
    if len < 2 {
        return Ok(());
    }
    let values = (size_of::<V>() > 0).then_some((value_at, size_of::<V>()));
    // SAFETY: the keys and the values claimed on `stream`, `len` each,
    // distinct buffers (both are borrowed mutably); fewer than 2^32.
    unsafe { sort_with_values::<K>(state, stream, (key_at, len), order, values) }
}

/// Queues the radix sort of the `len` keys at `keys` in place, moving the
/// values `(address, size)` (if any) with them: 4-byte values ride along
/// through the passes (as `u32`s: the sort moves their bits, never reads
/// them as their type); others follow the sort's permutation, gathered
/// once at the end.
///
/// # Safety
/// `keys` holds `len` keys and the values (if any) `len` values of `size`
/// bytes, ordered on `stream`, overlapping nothing else; `len < 2^32`.
unsafe fn sort_with_values<K: SortKey>(
    state: &ContextState,
    stream: &CudaStream,
    (keys, len): (u64, usize),
    order: SortOrder,
    values: Option<(u64, usize)>,
) -> Result<()> {
    let Some((at, size)) = values else {
        // SAFETY: the caller's keys.
        return unsafe { radix_sort::<K>(state, stream, keys, len, order, Values::None) };
    };
    if size == 4 {
        // SAFETY: the caller's keys and values, `len` each, distinct.
        return unsafe { radix_sort::<K>(state, stream, keys, len, order, Values::Carried(at)) };
    }
    // SAFETY: the caller's keys.
    let indices = unsafe { sort_with_indices::<K>(state, stream, (keys, len), order) }?;
    // SAFETY: the caller's values, `len` of them; the indices a
    // permutation of `0..len` written by the sort.
    unsafe { permute(state, stream, at, indices.addr(), len, size) }
}

/// Queues the radix sort of the `len` keys at `keys` in place, and returns
/// a temporary of `len` `u32`s: each sorted key's input index (the sort's
/// permutation).
///
/// # Safety
/// `keys` holds `len` keys, ordered on `stream`, overlapping nothing else;
/// `len < 2^32`.
unsafe fn sort_with_indices<'s, K: SortKey>(
    state: &'s ContextState,
    stream: &'s CudaStream,
    (keys, len): (u64, usize),
    order: SortOrder,
) -> Result<Temporary<'s>> {
    let indices = Temporary::new(state, stream, len * 4)?;
    // SAFETY: the caller's keys; the indices a temporary of `len` `u32`s.
    unsafe {
        radix_sort::<K>(
            state,
            stream,
            keys,
            len,
            order,
            Values::Indices(indices.addr()),
        )
    }?;
    Ok(indices)
}

/// `dst[i] = src[indices[i]]` for `len` elements of `size` bytes.
///
/// # Safety
/// `src` and `dst` hold `len` elements of `size` bytes, `indices` `len`
/// indices below `len`, all ordered on `stream`; `dst` overlaps neither.
unsafe fn gather(
    state: &ContextState,
    stream: &CudaStream,
    (src, indices, dst): (u64, u64, u64),
    len: usize,
    size: usize,
) -> Result<()> {
    let (function, resident) = kernel(state, &["gather"], "bytes")?;
    let (mut src, mut idx, mut dst, mut n, mut bytes) =
        (src, indices, dst, len as u64, size as u64);
    let params: &mut [*mut c_void] = &mut [
        (&mut src as *mut u64).cast(),
        (&mut idx as *mut u64).cast(),
        (&mut dst as *mut u64).cast(),
        (&mut n as *mut u64).cast(),
        (&mut bytes as *mut u64).cast(),
    ];
    let grid = grid(len, 1, resident);
    // SAFETY: `(src, indices, dst, len, size)`, the caller's buffers.
    unsafe { launch(stream, &function, grid, params) }
}

/// Reorders the `len` elements of `size` bytes at `at` by `indices`
/// (`at[i] = old at[indices[i]]`), through a temporary.
///
/// # Safety
/// As for [`gather`], with `at` both source and destination.
unsafe fn permute(
    state: &ContextState,
    stream: &CudaStream,
    at: u64,
    indices: u64,
    len: usize,
    size: usize,
) -> Result<()> {
    let moved = Temporary::new(state, stream, len * size)?;
    // SAFETY: the caller's buffers, into a temporary of `len` elements.
    unsafe { gather(state, stream, (at, indices, moved.addr()), len, size) }?;
    // SAFETY: both hold `len` elements, ordered on `stream`.
    unsafe { copy(at, moved.addr(), len * size, stream) }
}

/// Queues a segmented sort: the keys at `keys` (and the values, if any,
/// `(address, size)`) sorted within each segment of `offsets` (`count`
/// offsets, so `count - 1` segments).
///
/// The segments become keys of their own: each element's segment (an
/// inclusive sum of marks at the segments' starts), then a stable sort by
/// key and a stable sort of the segments in that order, whose composed
/// permutation moves keys and values.
///
/// # Safety
/// `keys` holds `len` keys (and the values `len` values), `offsets`
/// `count` `u32`s, all ordered on `stream`; `len < 2^32`.
unsafe fn segmented<K: SortKey>(
    state: &ContextState,
    stream: &Arc<CudaStream>,
    (keys, len): (u64, usize),
    (offsets, count): (u64, usize),
    order: SortOrder,
    values: Option<(u64, usize)>,
) -> Result<()> {
    if len < 2 {
        return Ok(());
    }
    if count < 3 {
        // One segment (or none): a plain sort.
        // SAFETY: the caller's keys and values.
        return unsafe { sort_with_values::<K>(state, stream, (keys, len), order, values) };
    }
    // Each element's segment.
    let segments = Temporary::new(state, stream, len * 4)?;
    segments.zero(len * 4)?;
    let (marks, resident) = kernel(state, &["segment"], "marks")?;
    let (mut from, mut n, mut at, mut total) = (offsets, count as u64, segments.addr(), len as u64);
    let params: &mut [*mut c_void] = &mut [
        (&mut from as *mut u64).cast(),
        (&mut n as *mut u64).cast(),
        (&mut at as *mut u64).cast(),
        (&mut total as *mut u64).cast(),
    ];
    let grid = grid(count, 1, resident);
    // SAFETY: `(offsets, count, marks, len)`: the caller's offsets, the
    // zeroed temporary of `len` counters.
    unsafe { launch(stream, &marks, grid, params) }?;
    // SAFETY: the temporary of `len` `u32`s, in place.
    unsafe { enqueue_scan::<u32, Sum>(state, len, at, at, true, Sum, stream) }?;
    // By key, stably: `by_key[i]` is the input index of the i-th key.
    // SAFETY: the caller's keys.
    let by_key = unsafe { sort_with_indices::<K>(state, stream, (keys, len), order) }?;
    // The segments in that order, sorted stably: `by_segment[i]` is the
    // position, in key order, of the i-th element of the result.
    let in_key_order = Temporary::new(state, stream, len * 4)?;
    // SAFETY: the segments and the permutation, `len` each, into a temporary.
    unsafe {
        gather(
            state,
            stream,
            (at, by_key.addr(), in_key_order.addr()),
            len,
            4,
        )
    }?;
    // SAFETY: the temporary of `len` segments.
    let by_segment = unsafe {
        sort_with_indices::<u32>(
            state,
            stream,
            (in_key_order.addr(), len),
            SortOrder::Ascending,
        )
    }?;
    // SAFETY: the keys in key order, moved into segment order.
    unsafe { permute(state, stream, keys, by_segment.addr(), len, size_of::<K>()) }?;
    if let Some((at, size)) = values {
        // The input index of each result element: `by_key[by_segment[i]]`.
        let composed = Temporary::new(state, stream, len * 4)?;
        // SAFETY: two permutations of `0..len`, into a temporary.
        unsafe {
            gather(
                state,
                stream,
                (by_key.addr(), by_segment.addr(), composed.addr()),
                len,
                4,
            )
        }?;
        // SAFETY: the caller's values, by the composed permutation.
        unsafe { permute(state, stream, at, composed.addr(), len, size) }?;
    }
    Ok(())
}

/// The offsets of a segmented sort, checked.
fn segment_offsets(
    offsets: crate::engine::Elems<'_, u32>,
) -> Result<crate::engine::Elems<'_, u32>> {
    let offsets = contiguous(offsets)?;
    if offsets.len() == 0 {
        return Err(Error::InvalidArgument(
            "a segmented sort needs at least one offset (segments + 1 of them: the first 0, the \
             last the number of keys)",
        ));
    }
    Ok(offsets)
}

/// Queues the sort of each segment of `keys` on its own, on `stream`:
/// segment `s` is `keys[offsets[s]..offsets[s + 1]]` (`offsets` a device
/// buffer of `segments + 1` ascending offsets, from 0 to `keys.len()`).
/// Orders as [`sort`]. Offsets that do not start at 0, end at the length
/// or ascend give an unspecified order of the keys (never a write outside
/// them).
///
/// ```no_run
/// use cuda_mem::algo::SortOrder;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut keys = cuda_mem::DeviceBuffer::from_slice(&ctx, &[3u32, 1, 2, 9, 8])?;
/// let offsets = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0u32, 3, 5])?;
/// cuda_mem::algo::segmented_sort(&mut keys, &offsets, SortOrder::Ascending, &stream)?;
/// assert_eq!(keys.to_vec()?, [1, 2, 3, 8, 9]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn segmented_sort<K: SortKey>(
    keys: &mut (impl MemoryMut<K> + ?Sized),
    offsets: &(impl Memory<u32> + ?Sized),
    order: SortOrder,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let (k, o) = (checked(keys.elems())?, segment_offsets(offsets.elems())?);
    let (len, count, state) = (k.len(), o.len(), &k.mem.state);
    let (key_at, offsets_at) = (k.claim(stream)?.addr(), o.claim(stream)?.addr());
    // SAFETY: both claimed on `stream`; fewer than 2^32 keys.
    unsafe {
        segmented::<K>(
            state,
            stream,
            (key_at, len),
            (offsets_at, count),
            order,
            None,
        )
    }
}

/// [`segmented_sort`] moving `values` (any `DeviceCopy` type, as many as
/// the keys) with their keys; stable within each segment.
///
/// ```no_run
/// use cuda_mem::algo::SortOrder;
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let mut keys = cuda_mem::DeviceBuffer::from_slice(&ctx, &[2i32, 1, 5, 4])?;
/// let mut tags = cuda_mem::DeviceBuffer::from_slice(&ctx, &[*b"a", *b"b", *b"c", *b"d"])?;
/// let offsets = cuda_mem::DeviceBuffer::from_slice(&ctx, &[0u32, 2, 4])?;
/// cuda_mem::algo::segmented_sort_pairs(&mut keys, &mut tags, &offsets, SortOrder::Descending, &stream)?;
/// assert_eq!(tags.to_vec()?, [*b"a", *b"b", *b"c", *b"d"]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn segmented_sort_pairs<K: SortKey, V: DeviceCopy>(
    keys: &mut (impl MemoryMut<K> + ?Sized),
    values: &mut (impl MemoryMut<V> + ?Sized),
    offsets: &(impl Memory<u32> + ?Sized),
    order: SortOrder,
    stream: &impl AsStream,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    let (k, v) = paired(keys.elems(), values.elems())?;
    let o = segment_offsets(offsets.elems())?;
    let (len, count, state) = (k.len(), o.len(), &k.mem.state);
    let (key_at, value_at) = (k.claim(stream)?.addr(), v.claim(stream)?.addr());
    let offsets_at = o.claim(stream)?.addr();
    let values = (size_of::<V>() > 0).then_some((value_at, size_of::<V>()));
    // SAFETY: the three claimed on `stream`; fewer than 2^32 keys.
    unsafe {
        segmented::<K>(
            state,
            stream,
            (key_at, len),
            (offsets_at, count),
            order,
            values,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::kernels::kernel_ptx;

    /// The bytes of each `.shared` array the kernel `name` uses (the
    /// module's declarations that its body names), and whether it uses the
    /// dynamic shared memory.
    fn shared_arrays(name: &str) -> (Vec<usize>, bool) {
        let ptx = kernel_ptx(name).unwrap();
        let body = &ptx[ptx.find(".visible .entry").unwrap()..];
        let sizes = ptx
            .lines()
            .filter_map(|l| l.strip_prefix(".shared .align 16 .b8 "))
            .filter_map(|decl| {
                let (symbol, bytes) = decl.trim_end_matches("];").split_once('[')?;
                body.contains(symbol).then(|| bytes.parse().unwrap())
            })
            .collect();
        (sizes, body.contains("__cuda_mem_dynamic_shared"))
    }

    /// The host's tiles are the kernels': each pass's keys tile (a shared
    /// array of `block * items` keys) is the one the host divides the keys
    /// by, a pass with values takes its values' tile (a `u32` per key)
    /// from the dynamic shared memory the host launches with, and the
    /// static shared memory is what [`Pass::shared`] counts. A kernel given
    /// less returns without writing, so the two must agree.
    #[test]
    fn the_radix_passes_tiles_are_the_kernels() {
        check_tiles::<u8>();
        check_tiles::<i8>();
        check_tiles::<u16>();
        check_tiles::<i16>();
        check_tiles::<u32>();
        check_tiles::<i32>();
        check_tiles::<f32>();
        check_tiles::<u64>();
        check_tiles::<i64>();
        check_tiles::<f64>();
    }

    /// The passes shipped for keys of `size` bytes.
    fn passes(size: usize) -> Vec<Pass> {
        [Pass::Keys]
            .iter()
            .chain(Pass::with_values(size))
            .copied()
            .collect()
    }

    /// [`the_radix_passes_tiles_are_the_kernels`] for keys of type `K`, by
    /// the kernels' names and sizes `radix_sort` uses.
    fn check_tiles<K: SortKey>() {
        let size = size_of::<K>();
        for pass in passes(size) {
            let name = format!("cuda_mem_{}_{}", pass.kernel(), K::NAME);
            let (arrays, dynamic) = shared_arrays(&name);
            let tile = pass.tile(size);
            assert!(
                arrays.contains(&(tile * size)),
                "{name}: no keys tile of {tile} keys among {arrays:?}"
            );
            assert!(arrays.contains(&RADIX_COUNTERS_BYTES), "{name}: {arrays:?}");
            let shared = pass.dynamic_shared(size);
            assert_eq!(dynamic, shared > 0, "{name}");
            if shared > 0 {
                assert_eq!(shared, tile * 4, "{name}");
            }
            let static_bytes: usize = arrays.iter().map(|&b| align16(b)).sum();
            assert_eq!(
                static_bytes + shared,
                pass.shared(size),
                "{name}: the host counts other shared memory than the kernel's {arrays:?}"
            );
        }
        // No other pass kernels are shipped for `K`.
        for pass in [Pass::Keys, Pass::Pairs, Pass::Wide, Pass::Narrow] {
            let name = format!("cuda_mem_{}_{}", pass.kernel(), K::NAME);
            assert_eq!(
                kernel_ptx(&name).is_some(),
                passes(size).contains(&pass),
                "{name}"
            );
        }
    }

    /// A device's shared memory from its attributes: per block (with the
    /// opt-in), per SM, reserved per block.
    const fn device(per_block: usize, per_sm: usize, reserved_per_block: usize) -> SharedMemory {
        SharedMemory {
            per_block,
            per_sm,
            reserved_per_block,
        }
    }
    const H200: SharedMemory = device(232_448, 233_472, 1024);
    const A100: SharedMemory = device(166_912, 167_936, 1024);
    const RTX_3090: SharedMemory = device(101_376, 102_400, 1024);
    const V100: SharedMemory = device(98_304, 98_304, 0);
    const TURING: SharedMemory = device(65_536, 65_536, 0);
    /// What `ContextState` assumes where the driver does not say.
    const UNKNOWN: SharedMemory = device(48 << 10, 48 << 10, 1 << 10);

    /// Each device gets the pass that keeps the most threads on an SM, the
    /// wider tile on a tie: two wide blocks an SM on an H200 (4-byte keys),
    /// two plain ones on an A100; two narrow blocks (512 threads) where a
    /// plain one takes an SM alone (an RTX 3090, a V100); on Turing the
    /// plain pass of 1- and 2-byte keys (one block either way) and the
    /// narrow one of 4-byte keys; where the driver does not say (48 KB
    /// assumed), the narrow pass. Keys alone and 8-byte keys have one pass
    /// each, which fits every device.
    #[test]
    fn each_device_gets_the_pass_that_keeps_the_most_threads() {
        use Pass::{Narrow, Pairs, Wide};
        for (device, shared, by_size, threads) in [
            ("H200", H200, [Pairs, Pairs, Wide], 768),
            ("A100", A100, [Pairs, Pairs, Pairs], 768),
            ("RTX 3090", RTX_3090, [Narrow, Narrow, Narrow], 512),
            ("V100", V100, [Narrow, Narrow, Narrow], 512),
            ("Turing", TURING, [Pairs, Pairs, Narrow], 0),
            ("unknown", UNKNOWN, [Narrow, Narrow, Narrow], 256),
        ] {
            for (size, want) in [1, 2, 4].into_iter().zip(by_size) {
                let chosen = Pass::choose(size, false, &shared);
                assert_eq!(chosen, want, "{device}, {size}-byte keys");
                assert!(
                    shared.blocks(chosen.shared(size)) >= 1,
                    "{device}: {chosen:?}"
                );
                if threads > 0 {
                    assert_eq!(chosen.resident_threads(size, &shared), threads, "{device}");
                }
            }
            assert_eq!(Pass::choose(8, false, &shared), Pairs, "{device}");
            for size in [1, 2, 4, 8] {
                assert_eq!(Pass::choose(size, true, &shared), Pass::Keys, "{device}");
                assert!(
                    shared.blocks(Pass::Keys.shared(size)) >= 1,
                    "{device}: keys alone"
                );
                assert!(
                    shared.blocks(Pairs.shared(8)) >= 1,
                    "{device}: 8-byte pairs"
                );
            }
        }
        // Turing: one block of either pass an SM, so the wider one for 1-
        // and 2-byte keys; a plain block of 4-byte keys does not fit.
        assert_eq!(Pairs.resident_threads(1, &TURING), 384);
        assert_eq!(Narrow.resident_threads(1, &TURING), 256);
        assert_eq!(Pairs.resident_threads(4, &TURING), 0);
        assert_eq!(Narrow.resident_threads(4, &TURING), 256);
        // Two plain blocks fit an A100's SM; two wide ones do not.
        assert_eq!(A100.blocks(Pass::Pairs.shared(4)), 2);
        assert_eq!(A100.blocks(Pass::Wide.shared(4)), 1);
        // Static shared memory stays within the 48 KB ptxas allows.
        for size in [1, 2, 4, 8] {
            for pass in passes(size) {
                let static_bytes = pass.shared(size) - pass.dynamic_shared(size);
                assert!(static_bytes <= 48 << 10, "{pass:?}, {size}-byte keys");
            }
        }
    }
}
