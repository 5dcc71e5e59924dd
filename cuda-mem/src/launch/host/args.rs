//! [`LaunchArg`]: which host values (buffers, views, `DeviceVec`s, pitched
//! buffers, graph handles, plain values) a kernel parameter of each type
//! accepts, and how each becomes its parameter, ordered on the launch's
//! stream ([`LaunchStream`], which checks the stream once a launch).

use std::cell::Cell;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::buffers::buffer::{Buffer, MemoryKind};
use crate::buffers::checked::Checked;
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::ops::{sealed::Engine, Memory, MemoryMut};
use crate::buffers::pitched::PitchedBuffer;
use crate::copy::checked::CheckedDeviceCopy;
use crate::copy::device_copy::DeviceCopy;
use crate::copy::device_ptr::DevicePtr;
use crate::copy::soa::DeviceSoA;
use crate::device::{
    CheckedSlice, CheckedSliceMut, DeviceAtomicSlice, DeviceChunksMut, DeviceSlice, DeviceSliceMut,
    DeviceTilesMut, PitchedRowsMut, PitchedSlice, PitchedSliceMut, PitchedTilesMut, SoaSlice,
    SoaSliceMut,
};
use crate::engine::{Elems, View, ViewMut};
use crate::error::{Error, Result};
use crate::graph::Held;
use crate::soa::SoaBuffer;

/// A host value that can be passed for a kernel parameter of type `P`.
///
/// | parameter | argument |
/// | --- | --- |
/// | [`DeviceSlice<T>`](crate::device::DeviceSlice) | `&` (or `&mut`) any buffer, [`DeviceVec`](crate::DeviceVec) or view of `T`s: `&buf`, `&buf.slice(..)?`, `buf.slice(..)?` |
/// | [`DeviceSliceMut<T>`](crate::device::DeviceSliceMut) | `&mut` a buffer, a `DeviceVec` or an exclusive view: `&mut buf`, `buf.slice_mut(..)?`, `&mut view_mut` |
/// | [`DeviceAtomicSlice<T>`](crate::device::DeviceAtomicSlice) | the same as `DeviceSliceMut<T>` (no host reference may see the atomic updates) |
/// | [`PitchedSlice<T>`](crate::device::PitchedSlice) | `&` (or `&mut`) a [`PitchedBuffer<T>`](crate::PitchedBuffer) |
/// | [`PitchedSliceMut<T>`](crate::device::PitchedSliceMut), [`PitchedRowsMut<T>`](crate::device::PitchedRowsMut) | `&mut` a `PitchedBuffer<T>` |
/// | [`CheckedSlice<C>`](crate::device::CheckedSlice) | `&` (or `&mut`) a [`Checked`](crate::Checked) buffer or view of `C`s: `&flags`, `flags.slice(..)?` |
/// | [`CheckedSliceMut<C>`](crate::device::CheckedSliceMut) | `&mut` a `Checked` buffer or an exclusive view: `&mut flags`, `flags.slice_mut(..)?` |
/// | [`SoaSlice<T>`](crate::device::SoaSlice) | `&` (or `&mut`) a [`SoaBuffer<T>`](crate::soa::SoaBuffer) |
/// | [`SoaSliceMut<T>`](crate::device::SoaSliceMut) | `&mut` a `SoaBuffer<T>` |
/// | any [`DeviceCopy`] type `T` | a `T`, by value |
///
/// Buffers and views are ordered on the launch's stream like
/// [`kernel_arg`](crate::Memory::kernel_arg) and
/// [`kernel_arg_mut`](crate::MemoryMut::kernel_arg_mut): the kernel runs after
/// earlier work on the memory, and later work, host access and the free wait
/// for it. The borrow lasts for the call only. Memory shared with another
/// process through CUDA IPC (an `ImportedBuffer`, or a buffer this process
/// exported) is refused, `Err(InvalidArgument)`: see `cuda_mem::ipc`.
///
/// # Safety
///
/// Implementing it promises that the parameter value made for a launch on a
/// stream is valid for a kernel of that parameter type queued there next:
/// for a slice, memory of `len` elements that nothing else writes (nothing
/// else at all, for `DeviceSliceMut`) until the kernel is done, another
/// process included (cuda-mem's impls refuse memory shared through CUDA
/// IPC: see `cuda_mem::ipc`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of type `{P}`",
    label = "not an argument for a `{P}` parameter",
    note = "a `DeviceSlice<T>` parameter takes `&` a buffer or view of `T`s (`&buf`, `buf.slice(..)?`), \
            a `DeviceSliceMut<T>` or `DeviceAtomicSlice<T>` parameter takes `&mut` a buffer or an \
            exclusive view (`&mut buf`, `buf.slice_mut(..)?`), the pitched ones a `PitchedBuffer<T>` \
            (`&mut` for the writable forms), and any other parameter a value of its own type",
    note = "the arguments are one tuple, in the kernel's parameter order: `(&mut out, &input, 2.0)`; \
            a kernel with one parameter takes `(arg,)`"
)]
pub unsafe trait LaunchArg<P> {
    /// The parameter value, ordered on the launch's stream.
    ///
    /// # Safety
    ///
    /// The value is a kernel parameter and nothing else: it goes to one
    /// kernel `launch` queues next, while `self`'s borrow of the memory
    /// lasts. A slice parameter points into device memory under a lifetime
    /// of its own, so on the host it could outlive the buffer, alias another
    /// `DeviceSliceMut` of the same memory, or be read as host memory; only
    /// the launchers that `#[kernel]` generates call this.
    #[doc(hidden)]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<P>;
}

// SAFETY: a `DeviceCopy` value is its own parameter, pushed byte for byte.
unsafe impl<T: DeviceCopy> LaunchArg<T> for T {
    #[inline]
    unsafe fn __into_param(self, _launch: &LaunchStream<'_>) -> Result<T> {
        Ok(self)
    }
}

/// The stream of a launch under way, as its arguments see it
/// ([`LaunchArg::__into_param`]): they are claimed on it, and the first
/// claim checks it (`check_stream`: that cuda-mem can order work on it, one
/// driver call); the later claims of the launch compare its context with
/// their memory's only, as a stream that cuda-mem could order a moment ago
/// still can be (a capture begun meanwhile on another thread could as well
/// begin between the check and `cuLaunchKernel`). A launch without buffer
/// arguments checks it before it queues the kernel.
#[doc(hidden)]
pub struct LaunchStream<'s> {
    stream: &'s Arc<CudaStream>,
    /// Whether a claim has checked the stream.
    checked: Cell<bool>,
}

impl<'s> LaunchStream<'s> {
    pub(super) fn new(stream: &'s Arc<CudaStream>) -> Self {
        Self {
            stream,
            checked: Cell::new(false),
        }
    }

    /// The stream.
    #[inline(always)]
    pub(super) fn stream(&self) -> &'s Arc<CudaStream> {
        self.stream
    }

    /// Whether a claim has checked the stream.
    #[inline(always)]
    pub(super) fn checked(&self) -> bool {
        self.checked.get()
    }

    /// `elems` claimed on the stream (see `Elems::claim`), the stream
    /// checked by the first claim only.
    #[inline(always)]
    fn claim<T: DeviceCopy>(&self, elems: Elems<'_, T>) -> Result<DevicePtr<T>> {
        if self.checked.get() {
            return elems.claim_on_checked(self.stream);
        }
        let ptr = elems.claim(self.stream)?;
        self.checked.set(true);
        Ok(ptr)
    }
}

/// `Err` for memory another process may use (imported, or exported by this
/// process): a Rust kernel's slices assume that nothing else writes their
/// elements while it runs, and no borrow or stream order of this process
/// binds the other one (see `cuda_mem::ipc`, "Kernels and shared memory").
#[inline(always)]
fn local<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    if elems.mem.is_interprocess() {
        return Err(Error::InvalidArgument(
            "memory shared with another process through CUDA IPC (an ImportedBuffer, or a buffer \
             this process exported) is not a slice parameter of a #[kernel] launch: the other \
             process may write it while the kernel runs; copy it into a buffer of this process \
             (copy_from) and launch on that, or pass its address (kernel_arg(..)?.device_ptr()) \
             to an unsafe fn kernel",
        ));
    }
    Ok(elems)
}

/// `elems`, if its elements are one contiguous block (a slice parameter
/// cannot describe padded rows) of memory no other process uses.
#[inline(always)]
fn contiguous<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    let elems = local(elems)?;
    if elems.is_contiguous() {
        Ok(elems)
    } else {
        Err(Error::InvalidArgument(
            "a view of padded 2D memory (a region of several rows) is not a slice parameter; pass the PitchedBuffer as a pitched parameter, or copy the region into a packed buffer",
        ))
    }
}

/// `elems` claimed on the launch's stream (ordered after earlier work, later
/// work and host access waiting for the kernel), as a read-only slice.
#[inline(always)]
fn shared<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    launch: &LaunchStream<'_>,
) -> Result<DeviceSlice<'p, T>> {
    let ptr = launch.claim(contiguous(elems)?)?;
    // SAFETY: `len` elements of a live allocation at `ptr` (a dangling,
    // aligned, non-null address for an empty slice, which is never
    // dereferenced: the kernel's entry point takes every slice's address to
    // be non-null, see `KernelParam::__assemble`), borrowed by the caller for
    // the launch; the claim orders every other write to the allocation
    // before or after the kernel.
    Ok(unsafe { DeviceSlice::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

/// Like [`shared`], writable: the caller holds the memory exclusively.
#[inline(always)]
fn exclusive<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    launch: &LaunchStream<'_>,
) -> Result<DeviceSliceMut<'p, T>> {
    let ptr = launch.claim(contiguous(elems)?)?;
    // SAFETY: as in `shared`; the caller's `&mut` (or exclusive view) means
    // no other argument of this launch and no host reference aliases it.
    Ok(unsafe { DeviceSliceMut::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

/// Like [`exclusive`], for atomic access by every thread.
#[inline(always)]
fn atomic<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    launch: &LaunchStream<'_>,
) -> Result<DeviceAtomicSlice<'p, T>> {
    let ptr = launch.claim(contiguous(elems)?)?;
    // SAFETY: as in `exclusive`; inside the kernel every access through the
    // slice is atomic.
    Ok(unsafe { DeviceAtomicSlice::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

macro_rules! slice_args {
    ($make:ident, $param:ident: $([$($gen:tt)*] $arg:ty, $elems:expr;)*) => { $(
        // SAFETY: see `shared` / `exclusive`: the argument borrows the memory
        // (exclusively for `DeviceSliceMut`) for the launch, and the claim
        // orders it on the launch's stream.
        unsafe impl<'p, $($gen)*> LaunchArg<$param<'p, T>> for $arg {

            #[inline]
            unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<$param<'p, T>> {
                let elems: fn(&Self) -> Elems<'_, T> = $elems;
                $make(elems(&self), launch)
            }
        }
    )* };
}

slice_args! { shared, DeviceSlice:
    ['b, T: DeviceCopy, K: MemoryKind] &'b Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b DeviceVec<T>, |v| v.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] View<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b View<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

// A buffer a graph holds (`Graph::capture`'s closure, `Graph::buffers`).
slice_args! { shared, DeviceSlice:
    ['b, 'h, T: DeviceCopy, M: Memory<T> + ?Sized] &'b Held<'h, M>, |h| h.elems();
    ['b, 'h, T: DeviceCopy, M: Memory<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { exclusive, DeviceSliceMut:
    ['b, 'h, T: DeviceCopy, M: MemoryMut<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { atomic, DeviceAtomicSlice:
    ['b, 'h, T: DeviceCopy, M: MemoryMut<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { exclusive, DeviceSliceMut:
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

slice_args! { atomic, DeviceAtomicSlice:
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

/// The checked slice parameters: `$make` (`shared` or `exclusive`) makes
/// the slice of the bits, which the checked form wraps.
macro_rules! checked_args {
    ($make:ident, $param:ident: $([$($gen:tt)*] $arg:ty;)*) => { $(
        // SAFETY: as `slice_args`: the bits' slice is made by `$make` from
        // memory the argument borrows (exclusively for `CheckedSliceMut`)
        // for the launch; any bits in it are sound, as every read checks.
        unsafe impl<'p, $($gen)*> LaunchArg<$param<'p, C>> for $arg {

            #[inline]
            unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<$param<'p, C>> {
                $make(self.bits().elems(), launch).map($param::from_bits)
            }
        }
    )* };
}

checked_args! { shared, CheckedSlice:
    ['b, C: CheckedDeviceCopy, M: Memory<C::Bits>] &'b Checked<C, M>;
    ['b, C: CheckedDeviceCopy, M: Memory<C::Bits>] &'b mut Checked<C, M>;
    ['v, C: CheckedDeviceCopy] Checked<C, View<'v, C::Bits>>;
    ['v, C: CheckedDeviceCopy] Checked<C, ViewMut<'v, C::Bits>>;
}

checked_args! { exclusive, CheckedSliceMut:
    ['b, C: CheckedDeviceCopy, M: MemoryMut<C::Bits>] &'b mut Checked<C, M>;
    ['v, C: CheckedDeviceCopy] Checked<C, ViewMut<'v, C::Bits>>;
}

// SAFETY: the whole allocation of the structure of arrays, claimed on the
// stream (`shared`: borrowed for the launch, nothing else writes it), whose
// arrays the device finds by `region_offset` from `len`, as `SoaBuffer`
// laid them out.
unsafe impl<'p, T: DeviceSoA, K: MemoryKind> LaunchArg<SoaSlice<'p, T>> for &SoaBuffer<T, K> {
    #[inline]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<SoaSlice<'p, T>> {
        let (bytes, len) = self.arrays();
        let all = shared(bytes, launch)?;
        // SAFETY: see the impl.
        Ok(unsafe { SoaSlice::from_raw_parts(all.as_ptr().cast_mut(), len) })
    }
}

// SAFETY: as above, through `&mut`.
unsafe impl<'p, T: DeviceSoA, K: MemoryKind> LaunchArg<SoaSlice<'p, T>> for &mut SoaBuffer<T, K> {
    #[inline]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<SoaSlice<'p, T>> {
        // SAFETY: the caller's contract, passed on.
        unsafe { LaunchArg::<SoaSlice<'p, T>>::__into_param(&*self, launch) }
    }
}

// SAFETY: as above, `exclusive`: the `&mut` borrow means no other argument
// of the launch and no host reference aliases the allocation.
unsafe impl<'p, T: DeviceSoA, K: MemoryKind> LaunchArg<SoaSliceMut<'p, T>>
    for &mut SoaBuffer<T, K>
{
    #[inline]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<SoaSliceMut<'p, T>> {
        let (bytes, len) = self.arrays();
        let all = exclusive(bytes, launch)?;
        // SAFETY: see the impl.
        Ok(unsafe { SoaSliceMut::from_raw_parts(all.as_mut_ptr(), len) })
    }
}

// SAFETY: the argument makes a `DeviceSliceMut` (memory borrowed
// exclusively for the launch, claimed on its stream), whose parts are those
// of a `DeviceTilesMut` over the same memory.
unsafe impl<'p, A, T: DeviceCopy, const TILE: usize> LaunchArg<DeviceTilesMut<'p, T, TILE>> for A
where
    A: LaunchArg<DeviceSliceMut<'p, T>>,
{
    #[inline]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<DeviceTilesMut<'p, T, TILE>> {
        // SAFETY: the caller's promise, passed on.
        let slice = unsafe { self.__into_param(launch) }?;
        // SAFETY: the slice's memory, with the same access.
        Ok(unsafe { DeviceTilesMut::from_raw_parts(slice.as_mut_ptr(), slice.len()) })
    }
}

// SAFETY: as for `DeviceTilesMut`.
unsafe impl<'p, A, T: DeviceCopy, const C: usize> LaunchArg<DeviceChunksMut<'p, T, C>> for A
where
    A: LaunchArg<DeviceSliceMut<'p, T>>,
{
    #[inline]
    unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<DeviceChunksMut<'p, T, C>> {
        // SAFETY: the caller's promise, passed on.
        let slice = unsafe { self.__into_param(launch) }?;
        // SAFETY: the slice's memory, with the same access.
        Ok(unsafe { DeviceChunksMut::from_raw_parts(slice.as_mut_ptr(), slice.len()) })
    }
}

// SAFETY: the argument makes a `PitchedSliceMut` (a pitched buffer borrowed
// exclusively, claimed on the stream), whose parts are those of a
// `PitchedTilesMut` over the same rows.
unsafe impl<'p, A, T: DeviceCopy, const W: usize, const H: usize>
    LaunchArg<PitchedTilesMut<'p, T, W, H>> for A
where
    A: LaunchArg<PitchedSliceMut<'p, T>>,
{
    #[inline]
    unsafe fn __into_param(
        self,
        launch: &LaunchStream<'_>,
    ) -> Result<PitchedTilesMut<'p, T, W, H>> {
        // SAFETY: the caller's promise, passed on.
        let image = unsafe { self.__into_param(launch) }?;
        // SAFETY: the image's rows, with the same access.
        Ok(unsafe {
            PitchedTilesMut::from_raw_parts(
                image.as_mut_ptr(),
                image.pitch(),
                image.width(),
                image.height(),
            )
        })
    }
}

/// `buffer` claimed on the launch's stream, as the parts of a pitched parameter:
/// `(ptr, pitch, width, height)`, with the pitch checked against `T`'s
/// alignment and the sizes against `u32::MAX` (which the device types
/// require).
fn pitched<T: DeviceCopy>(
    buffer: &PitchedBuffer<T>,
    launch: &LaunchStream<'_>,
) -> Result<(*mut T, usize, usize, usize)> {
    let elems = local(buffer.elems())?;
    if !elems.shape.pitch.is_multiple_of(align_of::<T>()) {
        return Err(Error::InvalidArgument(
            "the pitch of this PitchedBuffer is not a multiple of the element type's alignment, \
             which pitched kernel parameters need; use an element type of alignment 16 or less",
        ));
    }
    let s = elems.shape;
    if [s.pitch, s.width, s.rows]
        .into_iter()
        .any(|n| n > u32::MAX as usize)
    {
        // In practice only an empty buffer (no allocation) is this large.
        return Err(Error::InvalidArgument(
            "this PitchedBuffer's pitch, width or height is above u32::MAX, which pitched \
             kernel parameters do not take (their cell addresses are 32-bit multiply-adds); \
             pass an array of at most u32::MAX rows and columns",
        ));
    }
    let ptr = launch.claim(elems)?;
    Ok((non_null(ptr.as_raw()), s.pitch, s.width, s.rows))
}

/// `ptr`, or a dangling, aligned, non-null pointer for an empty buffer
/// (address 0: no allocation). A kernel builds slices from the pointer
/// (`PitchedSlice::row`, `DeviceSlice::as_slice`), a slice may not start at
/// null even when it is empty, and the entry point of a kernel tells the
/// compiler that every slice parameter's address is non-null (which drops
/// the null tests of the `Option`s it returns); nothing is ever read through
/// the dangling pointer, since the buffer has no elements.
fn non_null<T>(ptr: *mut T) -> *mut T {
    if ptr.is_null() {
        std::ptr::NonNull::dangling().as_ptr()
    } else {
        ptr
    }
}

/// The `PitchedBuffer` behind a pitched argument.
trait AsPitched<T> {
    fn pitched(&self) -> &PitchedBuffer<T>;
}
impl<T> AsPitched<T> for PitchedBuffer<T> {
    fn pitched(&self) -> &PitchedBuffer<T> {
        self
    }
}
impl<T> AsPitched<T> for Held<'_, PitchedBuffer<T>> {
    fn pitched(&self) -> &PitchedBuffer<T> {
        self.get()
    }
}

macro_rules! pitched_args {
    ($($param:ident: $arg:ty, $ptr:ty;)*) => { $(
        // SAFETY: `height` rows of `width` elements, `pitch` bytes apart, of
        // a live allocation, or none at all with a dangling non-null pointer
        // (rows never overlap: `pitch >= width *
        // size_of::<T>()`, checked at allocation; `pitch` a multiple of the
        // alignment, checked above), borrowed for the launch (exclusively
        // for the writable forms) and ordered on the launch's stream.
        unsafe impl<'p, 'b, T: DeviceCopy> LaunchArg<$param<'p, T>> for $arg {

            #[inline]
            unsafe fn __into_param(self, launch: &LaunchStream<'_>) -> Result<$param<'p, T>> {
                let (ptr, pitch, width, height) = pitched(AsPitched::pitched(&*self), launch)?;
                // SAFETY: see above.
                Ok(unsafe { $param::from_raw_parts(ptr as $ptr, pitch, width, height) })
            }
        }
    )* };
}

pitched_args! {
    PitchedSlice: &'b Held<'_, PitchedBuffer<T>>, *const T;
    PitchedSlice: &'b mut Held<'_, PitchedBuffer<T>>, *const T;
    PitchedSliceMut: &'b mut Held<'_, PitchedBuffer<T>>, *mut T;
    PitchedRowsMut: &'b mut Held<'_, PitchedBuffer<T>>, *mut T;
    PitchedSlice: &'b PitchedBuffer<T>, *const T;
    PitchedSlice: &'b mut PitchedBuffer<T>, *const T;
    PitchedSliceMut: &'b mut PitchedBuffer<T>, *mut T;
    PitchedRowsMut: &'b mut PitchedBuffer<T>, *mut T;
}

#[cfg(test)]
mod tests {
    #[test]
    fn empty_pitched_buffers_get_an_aligned_non_null_pointer() {
        let p = super::non_null(std::ptr::null_mut::<[f64; 2]>());
        assert!(!p.is_null());
        assert!((p as usize).is_multiple_of(align_of::<[f64; 2]>()));
        let real = 0x7000_0100usize as *mut u32;
        assert_eq!(super::non_null(real), real);
    }
}
