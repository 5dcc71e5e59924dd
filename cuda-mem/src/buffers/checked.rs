//! [`Checked<C, M>`]: memory of [`CheckedDeviceCopy`] values (`bool`,
//! fieldless enums, structs of them) held as their bits in any buffer or
//! view `M` of `C::Bits`, with the aliases [`CheckedDeviceBuffer`],
//! [`CheckedPinnedBuffer`], [`CheckedUnifiedBuffer`], [`CheckedPoolBuffer`]
//! and the views [`CheckedView`], [`CheckedViewMut`]. Every read that hands
//! out values checks the bits ([`Error::InvalidBitPattern`] names the first
//! element that is not a value); every write takes values, or bytes that are
//! values ([`memset`](Checked::memset)). Raw bits stay reachable
//! ([`bits`](Checked::bits), [`bits_mut`](Checked::bits_mut)): writing any
//! bits there is sound, because nothing turns bits into values unchecked.

use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::CudaContext;

use crate::buffers::buffer::{Buffer, Device, Pinned, Pool, Unified};
use crate::buffers::ops::{Memory, MemoryMut};
use crate::copy::checked::{convert_into, first_invalid, invalid_at, CheckedDeviceCopy};
use crate::copy::device_copy::DeviceCopy;
use crate::engine::workers::run_lanes;
use crate::engine::{AsView, View, ViewMut};
use crate::error::{Error, Result};
use crate::order::streams::AsStream;

/// Values of a [`CheckedDeviceCopy`] type `C` (`bool`, a
/// `#[derive(CheckedDeviceCopy)]` enum or struct) in the memory `M`, a
/// buffer or view of `C::Bits`: device, pinned, unified or pool memory
/// ([`CheckedDeviceBuffer`], ...), a view ([`CheckedView`],
/// [`CheckedViewMut`]), a `DeviceVec` or a `PitchedBuffer`.
///
/// A kernel or a `memset` can leave any bits in device memory, and bits that
/// are not a value (the byte 2 in a `bool`) must never become one. So every
/// method that hands out values checks them: [`to_vec`](Self::to_vec) and
/// [`copy_to_host`](Self::copy_to_host) return
/// `Err(Error::InvalidBitPattern(InvalidBitPattern { index, .. }))` for the
/// first element that is not a value; every method that writes takes values
/// ([`fill`](Self::fill), [`copy_from_host`](Self::copy_from_host)) or bytes
/// that make values ([`memset`](Self::memset) refuses the others). Kernels
/// take `&` one as a [`CheckedSlice<C>`](crate::device::CheckedSlice) and
/// `&mut` one as a [`CheckedSliceMut<C>`](crate::device::CheckedSliceMut),
/// whose reads check on the device. The raw bits are
/// [`bits`](Self::bits) / [`bits_mut`](Self::bits_mut): a buffer of
/// `C::Bits` with every operation of one (host slices of pinned and unified
/// memory included), for code that wants the bits themselves.
///
/// ```no_run
/// use cuda_mem::{checked::InvalidBitPattern, CheckedDeviceBuffer, CheckedDeviceCopy, Error};
/// use cuda_mem::prelude::*;
///
/// #[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
/// #[repr(u8)]
/// enum Phase { Solid = 1, Liquid = 2, Gas = 4 }
///
/// let ctx = cuda_mem::context(0)?;
/// let mut phases = CheckedDeviceBuffer::from_slice(&ctx, &[Phase::Gas, Phase::Solid])?;
/// assert_eq!(phases.to_vec()?, [Phase::Gas, Phase::Solid]);
/// phases.fill(Phase::Liquid)?;
/// assert!(phases.memset(3).is_err()); // 3 is no `Phase`
///
/// let mut flags = CheckedDeviceBuffer::<bool>::filled(&ctx, 5, false)?;
/// flags.bits_mut().slice_mut(3..4)?.memset(2)?; // raw bits: allowed, and caught on read
/// assert!(matches!(
///     flags.to_vec(),
///     Err(Error::InvalidBitPattern(InvalidBitPattern { index: 3, .. }))
/// ));
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct Checked<C: CheckedDeviceCopy, M> {
    bits: M,
    _values: PhantomData<fn() -> C>,
}

/// [`Checked`] device memory (`cuMemAlloc`).
pub type CheckedDeviceBuffer<C> = Checked<C, Buffer<<C as CheckedDeviceCopy>::Bits, Device>>;
/// [`Checked`] pinned host memory; its raw bits are a host slice
/// (`bits().as_slice()`).
pub type CheckedPinnedBuffer<C> = Checked<C, Buffer<<C as CheckedDeviceCopy>::Bits, Pinned>>;
/// [`Checked`] managed memory; its raw bits are a host slice
/// (`bits().as_slice()`).
pub type CheckedUnifiedBuffer<C> = Checked<C, Buffer<<C as CheckedDeviceCopy>::Bits, Unified>>;
/// [`Checked`] stream-ordered pool memory.
pub type CheckedPoolBuffer<C> = Checked<C, Buffer<<C as CheckedDeviceCopy>::Bits, Pool>>;
/// A shared view of [`Checked`] memory: [`Checked::slice`].
pub type CheckedView<'a, C> = Checked<C, View<'a, <C as CheckedDeviceCopy>::Bits>>;
/// An exclusive view of [`Checked`] memory: [`Checked::slice_mut`].
pub type CheckedViewMut<'a, C> = Checked<C, ViewMut<'a, <C as CheckedDeviceCopy>::Bits>>;

/// `C::Bits` with every byte `byte` (a `DeviceCopy` type: any bytes are one).
fn repeated<B: DeviceCopy>(byte: u8) -> B {
    let mut bits = std::mem::MaybeUninit::<B>::uninit();
    // SAFETY: `write_bytes` initialises all `size_of::<B>()` bytes, and every
    // bit pattern is a value of a `DeviceCopy` type (its contract, rule 2).
    unsafe {
        bits.as_mut_ptr().write_bytes(byte, 1);
        bits.assume_init()
    }
}

/// Bytes of bits a lane of a conversion takes at least: below it, one
/// thread converts alone (a lane's wake-up costs more than it saves).
const LANE_BYTES: usize = 256 << 10;

/// The most lanes a conversion uses.
const MAX_LANES: usize = 16;

/// From this many bytes on, reads and writes go through a block of pinned
/// memory (the context's `PinnedCache`, reused from call to call): one DMA
/// copy and a conversion in lanes over memory that is resident, instead of
/// a pageable copy into a `Vec` of bits and a second pass over it.
const STAGED_BYTES: usize = 64 << 10;

/// Runs `convert(bits chunk, dst chunk)` over matching chunks of `bits` and
/// `dst` (of equal length) on up to [`MAX_LANES`] threads (the staged
/// copies' workers); whether every call returned `true`.
fn in_lanes<B: Sync, D: Send>(
    bits: &[B],
    dst: &mut [D],
    convert: impl Fn(&[B], &mut [D]) -> bool + Sync,
) -> bool {
    let lanes = (std::mem::size_of_val(bits) / LANE_BYTES).clamp(1, MAX_LANES);
    if lanes == 1 {
        return convert(bits, dst);
    }
    let per = bits.len().div_ceil(lanes);
    let chunks: Vec<Mutex<&mut [D]>> = dst.chunks_mut(per).map(Mutex::new).collect();
    let all = AtomicBool::new(true);
    run_lanes(chunks.len(), &|i| {
        let mut dst = chunks[i].lock().unwrap_or_else(|p| p.into_inner());
        let src = &bits[i * per..][..dst.len()];
        if !convert(src, &mut dst) {
            all.store(false, Ordering::Relaxed);
        }
    });
    all.into_inner()
}

/// The values of `bits`, each through `try_from_bits` (in lanes for large
/// slices), or the error naming the first index whose bits are none.
fn values<C: CheckedDeviceCopy + Send>(bits: &[C::Bits]) -> Result<Vec<C>>
where
    C::Bits: Sync,
{
    let mut out = Vec::<C>::with_capacity(bits.len());
    let spare = &mut out.spare_capacity_mut()[..bits.len()];
    let all = in_lanes(bits, spare, |src, dst| {
        convert_into::<C, _>(src, dst, |d, v| {
            d.write(v);
        })
    });
    if !all {
        return Err(invalid_at::<C>(bits).into());
    }
    // SAFETY: every lane returned `true`, so `convert_into` wrote every
    // element of its chunk, and the chunks cover the first `bits.len()`
    // elements of the capacity; `C: Copy`, so nothing needs dropping.
    unsafe { out.set_len(bits.len()) };
    Ok(out)
}

/// Writes the bits of `values` to `dst` (of equal length), in lanes for
/// large slices.
fn bits_into<C: CheckedDeviceCopy + Sync>(values: &[C], dst: &mut [C::Bits])
where
    C::Bits: Send,
{
    in_lanes(values, dst, |src, dst| {
        for (d, &v) in dst.iter_mut().zip(src) {
            *d = v.into_bits();
        }
        true
    });
}

impl<C: CheckedDeviceCopy, M> Checked<C, M> {
    /// The values whose bits `bits` holds. Safe whatever the bits are: every
    /// read checks them.
    ///
    /// ```no_run
    /// # use cuda_mem::{Checked, DeviceBuffer};
    /// let bytes = DeviceBuffer::<u8>::zeroed(&cuda_mem::context(0)?, 8)?;
    /// let flags = Checked::<bool, _>::from_bits(bytes); // eight `false`s
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_bits(bits: M) -> Self {
        Self {
            bits,
            _values: PhantomData,
        }
    }

    /// The raw bits: a buffer or view of `C::Bits`, unchecked.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(flags: &cuda_mem::CheckedPinnedBuffer<bool>) -> cuda_mem::Result<()> {
    /// let bytes: &[u8] = flags.bits().as_slice()?; // pinned memory: a host slice of the bits
    /// # Ok(()) }
    /// ```
    pub fn bits(&self) -> &M {
        &self.bits
    }

    /// The raw bits, to write: any bits are sound (reads check), though
    /// bits that are not values make later reads fail.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// flags.bits_mut().memset(1)?; // every flag `true`
    /// # Ok(()) }
    /// ```
    pub fn bits_mut(&mut self) -> &mut M {
        &mut self.bits
    }

    /// The memory of the bits, unwrapped.
    ///
    /// ```no_run
    /// # fn f(flags: cuda_mem::CheckedDeviceBuffer<bool>) {
    /// let bytes: cuda_mem::DeviceBuffer<u8> = flags.into_bits();
    /// # }
    /// ```
    pub fn into_bits(self) -> M {
        self.bits
    }
}

impl<C: CheckedDeviceCopy, M: Memory<C::Bits>> Checked<C, M> {
    /// The number of elements.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) {
    /// let n = flags.len();
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether there are no elements.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) {
    /// if flags.is_empty() { return }
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// The size of the elements in bytes.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) {
    /// assert_eq!(flags.byte_size(), flags.len());
    /// # }
    /// ```
    pub fn byte_size(&self) -> usize {
        self.bits.byte_size()
    }

    /// The values, checked: `Err(Error::InvalidBitPattern(..))` naming the
    /// first element whose bits are not a value.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// let set = flags.to_vec()?.into_iter().filter(|&f| f).count();
    /// # Ok(()) }
    /// ```
    pub fn to_vec(&self) -> Result<Vec<C>>
    where
        C: Send,
        C::Bits: Sync,
    {
        if self.byte_size() < STAGED_BYTES {
            return values(&self.bits.to_vec()?);
        }
        let mut staged = Buffer::<C::Bits, Pinned>::new_unspecified(self.context(), self.len())?;
        staged.copy_from(&self.bits)?;
        values(staged.as_slice()?)
    }

    fn context(&self) -> &Arc<CudaContext> {
        self.bits.context()
    }

    /// Copies the values into `dst` (lengths must match), checked: on
    /// `Err(Error::InvalidBitPattern(..))` `dst` is left as it was.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// let mut host = vec![false; flags.len()];
    /// flags.copy_to_host(&mut host)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_to_host(&self, dst: &mut [C]) -> Result<()>
    where
        C: Send,
        C::Bits: Sync,
    {
        if dst.len() != self.len() {
            return Err(Error::LengthMismatch {
                expected: dst.len(),
                actual: self.len(),
            });
        }
        let mut staged = Buffer::<C::Bits, Pinned>::new_unspecified(self.context(), self.len())?;
        staged.copy_from(&self.bits)?;
        let bits = staged.as_slice()?;
        // Checked first, so that `dst` is left as it was on `Err`.
        let valid = in_lanes(bits, &mut vec![(); bits.len()], |src, _| {
            src.iter().all(|&b| C::is_valid_bit_pattern(b))
        });
        // (A second `false` needs a `try_from_bits` that answers otherwise
        // for the same bits; `dst` then holds values, some of them new.)
        if valid
            && in_lanes(bits, dst, |src, dst| {
                convert_into::<C, _>(src, dst, |d, v| *d = v)
            })
        {
            Ok(())
        } else {
            Err(invalid_at::<C>(bits).into())
        }
    }

    /// The index of the first element whose bits are not a value, or
    /// `None` when all are (a read of the bits to the host).
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// assert_eq!(flags.first_invalid()?, None);
    /// # Ok(()) }
    /// ```
    pub fn first_invalid(&self) -> Result<Option<usize>> {
        Ok(first_invalid::<C>(&self.bits.to_vec()?))
    }

    /// The elements `range`, as a [`CheckedView`]: for kernels
    /// ([`CheckedSlice`](crate::device::CheckedSlice)) and copies.
    /// `Err(OutOfRange)` outside the memory.
    ///
    /// ```no_run
    /// # fn f(flags: &cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// let head = flags.slice(..4)?.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<CheckedView<'_, C>> {
        Ok(Checked::from_bits(self.bits.slice(range)?))
    }
}

impl<C: CheckedDeviceCopy, M: MemoryMut<C::Bits>> Checked<C, M> {
    /// Sets every element to `value`, at `fill`'s speed (a driver memset
    /// when the bits' bytes repeat, as for a `bool` or a `u8` enum).
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// flags.fill(true)?;
    /// # Ok(()) }
    /// ```
    pub fn fill(&mut self, value: C) -> Result<()> {
        self.bits.fill(value.into_bits())
    }

    /// Like [`fill`](Self::fill), queued on `stream`.
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// flags.fill_async(false, s)?;
    /// # Ok(()) }
    /// ```
    pub fn fill_async(&mut self, value: C, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.bits.fill_async(value.into_bits(), stream)
    }

    /// Sets every byte to `byte`, when the element that makes is a value of
    /// `C` (0 or 1 for a `bool`); any other byte is refused,
    /// `Err(InvalidArgument)`, and nothing is written.
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// flags.memset(0)?; // all `false`
    /// assert!(flags.memset(2).is_err());
    /// # Ok(()) }
    /// ```
    pub fn memset(&mut self, byte: u8) -> Result<()> {
        Self::check_byte(byte)?;
        self.bits.memset(byte)
    }

    /// Like [`memset`](Self::memset), queued on `stream`.
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// flags.memset_async(1, s)?;
    /// # Ok(()) }
    /// ```
    pub fn memset_async(&mut self, byte: u8, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        Self::check_byte(byte)?;
        self.bits.memset_async(byte, stream)
    }

    fn check_byte(byte: u8) -> Result<()> {
        if C::is_valid_bit_pattern(repeated::<C::Bits>(byte)) {
            Ok(())
        } else {
            Err(Error::InvalidArgument(
                "memset of a byte whose repeats are not a value of the element type (2 into \
                 bools, say): it would write invalid bits. Use fill(value), or write raw bits \
                 through bits_mut() (then reads report the elements that are not values)",
            ))
        }
    }

    /// Copies `src`'s values in (lengths must match).
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// flags.slice_mut(..2)?.copy_from_host(&[true, false])?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from_host(&mut self, src: &[C]) -> Result<()>
    where
        C: Sync,
        C::Bits: Send,
    {
        let mut staged =
            Buffer::<C::Bits, Pinned>::new_unspecified(self.bits.context(), src.len())?;
        bits_into(src, staged.as_mut_slice()?);
        self.bits.copy_from(&staged)
    }

    /// Copies the elements of `src`, checked memory of the same type
    /// (lengths must match): the bits as they are, on the GPU; any bits
    /// that are not values stay caught by later reads.
    ///
    /// ```no_run
    /// # fn f(a: &mut cuda_mem::CheckedDeviceBuffer<bool>, b: &cuda_mem::CheckedPinnedBuffer<bool>) -> cuda_mem::Result<()> {
    /// a.copy_from(b)?;
    /// # Ok(()) }
    /// ```
    pub fn copy_from<N: AsView<C::Bits>>(&mut self, src: &Checked<C, N>) -> Result<()> {
        self.bits.copy_from(&src.bits)
    }

    /// The elements `range`, as a [`CheckedViewMut`]: for kernels
    /// ([`CheckedSliceMut`](crate::device::CheckedSliceMut)), fills and
    /// copies. `Err(OutOfRange)` outside the memory.
    ///
    /// ```no_run
    /// # fn f(flags: &mut cuda_mem::CheckedDeviceBuffer<bool>) -> cuda_mem::Result<()> {
    /// flags.slice_mut(1..3)?.fill(true)?;
    /// # Ok(()) }
    /// ```
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<CheckedViewMut<'_, C>> {
        Ok(Checked::from_bits(self.bits.slice_mut(range)?))
    }
}

/// The constructors of the kinds made from a context.
macro_rules! context_constructors {
    ($($kind:ident),*) => { $(
        impl<C: CheckedDeviceCopy> Checked<C, Buffer<C::Bits, $kind>> {
            /// Allocates `len` elements, each `value`.
            ///
            /// ```no_run
            #[doc = concat!("let flags = cuda_mem::Checked", stringify!($kind), "Buffer::filled(&cuda_mem::context(0)?, 100, false)?;")]
            /// # Ok::<(), cuda_mem::Error>(())
            /// ```
            pub fn filled(ctx: &Arc<CudaContext>, len: usize, value: C) -> Result<Self> {
                let mut bits = Buffer::<C::Bits, $kind>::new(ctx, len)?;
                bits.fill(value.into_bits())?;
                Ok(Self::from_bits(bits))
            }

            /// Allocates a copy of `values`.
            ///
            /// ```no_run
            #[doc = concat!("let flags = cuda_mem::Checked", stringify!($kind), "Buffer::from_slice(&cuda_mem::context(0)?, &[true, false])?;")]
            /// # Ok::<(), cuda_mem::Error>(())
            /// ```
            pub fn from_slice(ctx: &Arc<CudaContext>, values: &[C]) -> Result<Self>
            where
                C: Sync,
                C::Bits: Send,
            {
                let mut checked = Self::from_bits(Buffer::<C::Bits, $kind>::new(ctx, values.len())?);
                checked.copy_from_host(values)?;
                Ok(checked)
            }
        }
    )* };
}

context_constructors!(Device, Pinned, Unified);

impl<C: CheckedDeviceCopy> Checked<C, Buffer<C::Bits, Pool>> {
    /// Allocates `len` elements from the device's current pool, each
    /// `value`, ordered on `stream`.
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = ctx.new_stream()?;
    /// let flags = cuda_mem::CheckedPoolBuffer::filled(64, true, &stream)?;
    /// flags.free_on_stream(&stream)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn filled(len: usize, value: C, stream: &impl AsStream) -> Result<Self> {
        let stream = crate::order::streams::cuda_stream(stream);
        let mut bits = Buffer::<C::Bits, Pool>::new(len, stream)?;
        bits.fill_async(value.into_bits(), stream)?;
        Ok(Self::from_bits(bits))
    }

    /// Frees the memory on `stream`, after every queued use (see
    /// [`PoolBuffer::free_on_stream`](crate::PoolBuffer::free_on_stream)).
    ///
    /// ```no_run
    /// # fn f(b: cuda_mem::CheckedPoolBuffer<bool>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.free_on_stream(s)?;
    /// # Ok(()) }
    /// ```
    pub fn free_on_stream(self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.bits.free_on_stream(stream)
    }
}

impl<C: CheckedDeviceCopy, M: std::fmt::Debug> std::fmt::Debug for Checked<C, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checked")
            .field("values", &std::any::type_name::<C>())
            .field("bits", &self.bits)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_bytes_make_the_bits_of_every_width() {
        assert_eq!(repeated::<u8>(2), 2);
        assert_eq!(repeated::<u32>(0xab), 0xabab_abab);
        assert_eq!(repeated::<[u16; 2]>(1), [0x0101; 2]);
    }

    /// The lanes of a large conversion cover every element: values and
    /// bits round-trip, and the first bad element is named wherever it
    /// lies (first lane, a lane boundary, the last element).
    #[test]
    fn conversions_in_lanes_cover_every_element() {
        let mut rng = crate::test_rng::Rng::new(crate::test_rng::seed("CHECKED_SEED"));
        for n in [
            0,
            1,
            LANE_BYTES - 1,
            3 * LANE_BYTES + 5,
            17 * LANE_BYTES + 3,
        ] {
            let flags: Vec<bool> = (0..n).map(|_| rng.next() & 1 == 1).collect();
            let mut bits = vec![0u8; n];
            bits_into(&flags, &mut bits);
            assert!(bits.iter().zip(&flags).all(|(&b, &f)| b == u8::from(f)));
            assert_eq!(values::<bool>(&bits).unwrap(), flags);
            if n == 0 {
                continue;
            }
            let lanes = (n / LANE_BYTES).clamp(1, MAX_LANES);
            let per = n.div_ceil(lanes);
            for bad in [n - 1, per.min(n - 1), rng.next() as usize % n, 0] {
                let good = bits[bad];
                bits[bad] = 2 + (rng.next() % 254) as u8;
                match values::<bool>(&bits) {
                    Err(Error::InvalidBitPattern(e)) => assert_eq!(e.index, bad, "n {n}"),
                    other => panic!("n {n}, bad {bad}: {:?}", other.map(|v| v.len())),
                }
                bits[bad] = good;
            }
        }
    }

    #[test]
    fn memset_takes_only_bytes_that_make_values() {
        type Flags = CheckedDeviceBuffer<bool>;
        for byte in 0..=u8::MAX {
            assert_eq!(Flags::check_byte(byte).is_ok(), byte <= 1, "byte {byte}");
        }
        // Every byte makes a value of a `DeviceCopy` type.
        assert!((0..=u8::MAX).all(|b| CheckedDeviceBuffer::<f32>::check_byte(b).is_ok()));
    }
}
