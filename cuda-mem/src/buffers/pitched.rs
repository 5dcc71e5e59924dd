//! [`PitchedBuffer<T>`]: a 2D array of `T` in pitched device memory
//! (`cuMemAllocPitch`): allocation, shape and row views. Its operations
//! (memset, a fill that skips the row padding, 2D copies to and from every
//! kind of memory, regions) are the engine's, through the traits of `ops`.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::{Elems, View, ViewMut};
use crate::error::{Error, Result};
use crate::memory::raw::RawMemory;

/// `height` rows of `width` elements of `T` in pitched device memory.
///
/// Each row starts `pitch()` bytes after the previous one; the driver chooses
/// the pitch (`cuMemAllocPitch`) so that rows are aligned for coalesced
/// access. The bytes between the end of a row's `width` elements and the
/// start of the next row are padding: no operation of this type ever exposes
/// them as `T`, and [`fill`](crate::MemoryMut::fill),
/// [`memset`](crate::MemoryMut::memset) and the copies leave them untouched.
/// The pitch is in bytes and need not be a multiple of `size_of::<T>()` (a
/// 12-byte `T` works).
///
/// Its operations are those of every buffer ([`Memory`](crate::Memory),
/// [`MemoryMut`](crate::MemoryMut)): copies to and from any buffer kind
/// (packed rows on the linear side), other pitched buffers and
/// [regions](crate::Memory::region) of the same shape, in this context or
/// another; host data packed (`copy_from_host`) or with its own pitch
/// (`copy_from_host_2d`); [`AsView`](crate::AsView); and cudarc's
/// `DevicePtr` (address 0, so the call fails, while rows are padded: copy
/// into a packed buffer for NCCL).
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// use cuda_mem::PitchedBuffer;
///
/// #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
/// #[repr(C)]
/// struct P3 { x: f32, y: f32, z: f32 }
///
/// let ctx = cuda_mem::context(0)?;
/// let mut image = PitchedBuffer::<P3>::new(&ctx, 1000, 300)?;
/// assert!(image.pitch() >= 1000 * 12);
/// image.fill(P3 { x: 1.0, y: 2.0, z: 3.0 })?;
/// image.row_mut(7)?.fill(P3 { x: 0.0, y: 0.0, z: 7.0 })?;
/// let host = image.to_vec()?; // 1000 * 300 elements, no padding
/// assert_eq!(host[7 * 1000].z, 7.0);
/// let mut linear = cuda_mem::DeviceBuffer::<P3>::new(&ctx, 10 * 2)?;
/// linear.copy_from(&image.region(5..15, 6..8)?)?; // 2 rows of 10, packed
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub struct PitchedBuffer<T> {
    mem: RawMemory,
    width: usize,
    height: usize,
    pitch: usize,
    _t: PhantomData<T>,
}

/// The element size `cuMemAllocPitch` is told about: it accepts only 4, 8 or
/// 16, and uses it for the alignment of the pitch. The largest of those that
/// divides `size` (or 4 when none does: the pitch is in bytes anyway, and our
/// fills and copies need no more than byte alignment of it).
pub(crate) fn element_size_hint(size: usize) -> u32 {
    [16u32, 8, 4]
        .into_iter()
        .find(|&h| size != 0 && size.is_multiple_of(h as usize))
        .unwrap_or(4)
}

/// `width * height * size`, the logical size, or `Err(SizeOverflow)`.
pub(crate) fn logical_bytes(width: usize, height: usize, size: usize) -> Result<(usize, usize)> {
    let overflow = Error::SizeOverflow {
        what: "width * height * size_of::<T>()",
    };
    let len = width.checked_mul(height).ok_or(overflow.clone())?;
    let row_bytes = width.checked_mul(size).ok_or(overflow.clone())?;
    len.checked_mul(size).ok_or(overflow)?;
    Ok((len, row_bytes))
}

impl<T: DeviceCopy> PitchedBuffer<T> {
    /// Allocates `height` rows of `width` elements (`cuMemAllocPitch`). The
    /// contents are unspecified (any bytes are a valid `T`); use
    /// [`zeroed`](Self::zeroed), [`fill`](crate::MemoryMut::fill) or
    /// [`from_slice`](Self::from_slice) for defined contents.
    ///
    /// `width * height * size_of::<T>()` overflowing `usize` is
    /// `Err(SizeOverflow)`; a width or height of 0 gives a working empty
    /// buffer (no allocation).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::<f32>::new(&ctx, 1920, 1080)?;
    /// assert_eq!(buf.len(), 1920 * 1080);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, width: usize, height: usize) -> Result<Self> {
        let (_, row_bytes) = logical_bytes(width, height, crate::memory::raw::element_size::<T>())?;
        let state = ContextState::of(ctx)?;
        let (mem, pitch) =
            RawMemory::pitched(state, row_bytes, height, element_size_hint(size_of::<T>()))?;
        if height > 1 && row_bytes > 0 && (pitch < row_bytes || !pitch.is_multiple_of(16)) {
            // cuMemAllocPitch promises neither; our fill kernels need both.
            return Err(Error::InvalidArgument(
                "cuMemAllocPitch returned a pitch that is not a multiple of 16 bytes",
            ));
        }
        Ok(Self {
            mem,
            width,
            height,
            pitch,
            _t: PhantomData,
        })
    }

    /// Allocates `height` rows of `width` elements, every byte zero.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::<u32>::zeroed(&ctx, 17, 3)?;
    /// assert!(buf.to_vec()?.iter().all(|&v| v == 0));
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn zeroed(ctx: &Arc<CudaContext>, width: usize, height: usize) -> Result<Self> {
        let buf = Self::new(ctx, width, height)?;
        let e = buf.elems();
        e.memset(0, e.default_stream())?;
        Ok(buf)
    }

    /// Allocates `height` rows of `width` elements holding `data`, which is
    /// tightly packed (row after row, `width * height` elements, else
    /// `Err(LengthMismatch)`).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let buf = cuda_mem::PitchedBuffer::from_slice(&ctx, &[1u16, 2, 3, 4, 5, 6], 3, 2)?;
    /// assert_eq!(buf.row(1)?.to_vec()?, [4, 5, 6]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(
        ctx: &Arc<CudaContext>,
        data: &[T],
        width: usize,
        height: usize,
    ) -> Result<Self> {
        let (len, _) = logical_bytes(width, height, size_of::<T>())?;
        if data.len() != len {
            return Err(Error::LengthMismatch {
                expected: len,
                actual: data.len(),
            });
        }
        let buf = Self::new(ctx, width, height)?;
        buf.elems().copy_from_host(data, None)?;
        Ok(buf)
    }

    /// The whole array as the engine sees it: `height` rows of `width`
    /// elements, `pitch` bytes apart.
    pub(crate) fn elems(&self) -> Elems<'_, T> {
        Elems::rect(&self.mem, 0, self.width, self.height, self.pitch)
    }

    fn row_elems(&self, i: usize) -> Result<Elems<'_, T>> {
        self.elems().region(.., i..=i)
    }

    /// Row `i` as a shared view of `width()` elements (never its padding), or
    /// `Err(OutOfRange)`. Views have every 1D read operation.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// let first_row: Vec<f32> = b.row(0)?.to_vec()?;
    /// # Ok(()) }
    /// ```
    pub fn row(&self, i: usize) -> Result<View<'_, T>> {
        Ok(View {
            elems: self.row_elems(i)?,
        })
    }

    /// Row `i` as an exclusive view of `width()` elements, or
    /// `Err(OutOfRange)`. Views have every 1D operation (fill, memset, copies).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &mut cuda_mem::PitchedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.row_mut(3)?.fill(1.5)?;
    /// # Ok(()) }
    /// ```
    pub fn row_mut(&mut self, i: usize) -> Result<ViewMut<'_, T>> {
        Ok(ViewMut {
            elems: self.row_elems(i)?,
            _exclusive: PhantomData,
        })
    }

    /// Test helper (feature `test-hooks`): the whole allocation, `pitch() *
    /// height()` bytes, padding included (as bytes, never as `T`).
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn raw_padded_bytes(&self) -> Result<Vec<u8>> {
        Elems::<u8>::whole(&self.mem, self.mem.bytes).to_vec()
    }

    /// Test helper (feature `test-hooks`): sets every byte of the
    /// allocation, padding included, to `byte`.
    #[cfg(feature = "test-hooks")]
    #[doc(hidden)]
    pub fn raw_memset_padded(&mut self, byte: u8) -> Result<()> {
        let all = Elems::<u8>::whole(&self.mem, self.mem.bytes);
        all.memset(byte, all.default_stream())
    }
}

impl<T> std::fmt::Debug for PitchedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PitchedBuffer")
            .field("type", &std::any::type_name::<T>())
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .field("addr", &format_args!("{:#x}", self.mem.addr))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_size_hint_is_the_largest_accepted_divisor() {
        assert_eq!(element_size_hint(1), 4);
        assert_eq!(element_size_hint(2), 4);
        assert_eq!(element_size_hint(4), 4);
        assert_eq!(element_size_hint(8), 8);
        assert_eq!(element_size_hint(12), 4);
        assert_eq!(element_size_hint(16), 16);
        assert_eq!(element_size_hint(24), 8);
        assert_eq!(element_size_hint(48), 16);
        assert_eq!(element_size_hint(255), 4);
        assert_eq!(element_size_hint(0), 4);
    }

    #[test]
    fn logical_bytes_checks_every_product() {
        assert_eq!(logical_bytes(1000, 7, 12).unwrap(), (7000, 12_000));
        assert_eq!(logical_bytes(0, 7, 12).unwrap(), (0, 0));
        assert_eq!(logical_bytes(7, 0, 12).unwrap(), (0, 84));
        assert!(matches!(
            logical_bytes(usize::MAX, 2, 1),
            Err(Error::SizeOverflow { .. })
        ));
        assert!(matches!(
            logical_bytes(usize::MAX / 2, 1, 4),
            Err(Error::SizeOverflow { .. })
        ));
        assert!(matches!(
            logical_bytes(1 << 20, 1 << 20, 1 << 30),
            Err(Error::SizeOverflow { .. })
        ));
    }
}
