//! The memory kinds the host may touch: pinned and managed (unified)
//! buffers' constructors, host access ([`as_slice`](Buffer::as_slice),
//! [`as_mut_slice`](Buffer::as_mut_slice)), and prefetch and advice on
//! element ranges of managed memory ([`Location`], [`Advice`]).

use std::ops::RangeBounds;
use std::sync::Arc;

use cudarc::driver::{result, sys, CudaContext};

use crate::buffers::buffer::{state_of, Buffer, HostAccessible, Pinned, Unified};
use crate::copy::device_copy::DeviceCopy;
use crate::error::{Error, Result};
use crate::memory::pinned_pages::PinnedFlags;
use crate::memory::raw::{byte_len, RawMemory};
use crate::order::streams::AsStream;
use crate::order::Access;

impl<T: DeviceCopy> Buffer<T, Pinned> {
    /// Allocates `len` zeroed elements of pinned host memory (cached, not
    /// write-combined), from the context's [`PinnedCache`](crate::PinnedCache).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::<u8>::new(&cuda_mem::context(0)?, 4096)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        Self::with_flags(ctx, len, PinnedFlags::default())
    }

    /// Allocates `len` zeroed elements with the given [`PinnedFlags`], from
    /// the context's [`PinnedCache`](crate::PinnedCache) (write-combined
    /// memory is never cached).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::{PinnedBuffer, PinnedFlags};
    /// let flags = PinnedFlags { write_combined: true, ..Default::default() };
    /// let upload_only = PinnedBuffer::<f32>::with_flags(&cuda_mem::context(0)?, 1024, flags)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn with_flags(ctx: &Arc<CudaContext>, len: usize, flags: PinnedFlags) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, flags, true, true)?,
            len,
        ))
    }

    /// Allocates `len` elements from the context's
    /// [`PinnedCache`](crate::PinnedCache) without zeroing them: the
    /// contents are unspecified, as for [`DeviceBuffer::new`](crate::DeviceBuffer::new). A freshly
    /// pinned block holds zeroes; a reused one holds the bytes its previous
    /// user left: a buffer's, or a chunk of a staged `Vec` copy of this
    /// context (never uninitialised memory, and every bit pattern is a
    /// valid `T`). Use it when every element is written before it is read
    /// (a download target, a buffer filled by the host): it skips the
    /// memset that [`new`](Self::new) does on a reused block (about 1 ms for
    /// 16 MiB), so an allocation and free of any size after warm-up costs
    /// a few microseconds.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(dev: &cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// let mut download = cuda_mem::PinnedBuffer::<f32>::new_unspecified(dev.context(), dev.len())?;
    /// dev.copy_to_host_async(&mut download, s)?; // overwrites every element
    /// let first = download.as_slice()?[0];
    /// # Ok(()) }
    /// ```
    pub fn new_unspecified(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, PinnedFlags::default(), true, false)?,
            len,
        ))
    }

    /// Allocates `len` zeroed elements with `flags`, bypassing the
    /// [`PinnedCache`](crate::PinnedCache): the memory is pinned now
    /// (`cuMemHostRegister` / `cuMemHostAlloc`, milliseconds for large
    /// buffers) and unpinned and freed when the buffer is dropped, after
    /// its queued work. For memory that must not outlive the buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::{PinnedBuffer, PinnedFlags};
    /// let own = PinnedBuffer::<u8>::uncached(&cuda_mem::context(0)?, 1 << 20, PinnedFlags::default())?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn uncached(ctx: &Arc<CudaContext>, len: usize, flags: PinnedFlags) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::pinned(state_of(ctx)?, bytes, flags, false, true)?,
            len,
        ))
    }

    /// Allocates pinned memory (from the context's
    /// [`PinnedCache`](crate::PinnedCache)) holding a copy of `data`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::from_slice(&cuda_mem::context(0)?, &[1u16, 2, 3])?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        // Every element is overwritten: no memset first.
        let mut buf = Self::new_unspecified(ctx, data.len())?;
        buf.as_mut_slice()?.copy_from_slice(data);
        Ok(buf)
    }
}

impl<T: DeviceCopy> Buffer<T, Unified> {
    /// Allocates `len` zeroed elements of managed memory, attached globally.
    /// `Err(NotSupported)` on a device without managed memory.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::UnifiedBuffer::<f64>::new(&cuda_mem::context(0)?, 1000)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>, len: usize) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        Ok(Self::from_raw(
            RawMemory::unified(state_of(ctx)?, bytes)?,
            len,
        ))
    }

    /// Allocates managed memory holding a copy of `data`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::UnifiedBuffer::from_slice(&cuda_mem::context(0)?, &[1i32, -1])?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        let buf = Self::new(ctx, data.len())?;
        buf.elems().copy_from_host(data, None)?;
        Ok(buf)
    }

    /// Queues a migration of the elements in `range` to `to` (any device,
    /// or the host) on `stream` (`cuMemPrefetchAsync`). Like every operation
    /// on the buffer, it runs after the work queued on those elements before
    /// it and before the work queued after it; host access waits for it.
    /// Prefetching moves pages, never contents.
    ///
    /// `range` counts elements (`..`, `a..b`, `a..=b`, ...); one outside the
    /// buffer is `Err(OutOfRange)`. The driver migrates whole pages, so the
    /// pages around an unaligned range may move too. An ordinal that names
    /// no device is `Err(InvalidArgument)`; a device that cannot take managed
    /// memory (no concurrent managed access) is `Err(NotSupported)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::Location;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch(..b.len() / 2, Location::Device, s)?; // the first half to the GPU
    /// b.prefetch(b.len() / 2.., Location::Host, s)?; // the second half to the host
    /// b.prefetch(.., Location::DeviceOrdinal(1), s)?; // everything to GPU 1
    /// # Ok(()) }
    /// ```
    pub fn prefetch(
        &self,
        range: impl RangeBounds<usize>,
        to: Location,
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        let e = self.elems().sub(range)?;
        self.mem.state.check_stream(stream)?;
        let location = self.location(to)?;
        if e.byte_size() == 0 {
            return Ok(());
        }
        self.mem.order.run(e.span(), stream, || {
            self.mem.state.bind()?;
            // SAFETY: a range inside the live allocation (checked by `sub`);
            // prefetching moves pages, never changes contents.
            unsafe {
                result::mem_prefetch_async(e.addr(), e.byte_size(), location, stream.cu_stream())
            }
            .map_err(|err| {
                refused(
                    err,
                    "cuMemPrefetchAsync",
                    "prefetching managed memory to that device (it has no concurrent managed \
                     access); prefetch to Location::Device or Location::Host instead",
                )
            })
        })
    }

    /// Queues a migration of the whole buffer to its device's memory on
    /// `stream`: `prefetch(.., Location::Device, stream)`.
    /// `Err(NotSupported)` without concurrent managed access.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch_to_device(s)?;
    /// # Ok(()) }
    /// ```
    pub fn prefetch_to_device(&self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.prefetch(.., Location::Device, stream)
    }

    /// Queues a migration of the whole buffer to host memory on `stream`:
    /// `prefetch(.., Location::Host, stream)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// b.prefetch_to_host(s)?;
    /// # Ok(()) }
    /// ```
    pub fn prefetch_to_host(&self, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.prefetch(.., Location::Host, stream)
    }

    /// Gives the driver a hint about how the whole buffer is used
    /// (`cuMemAdvise`): `advise_range(.., advice)`.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::Advice;
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.advise(Advice::ReadMostly(true))?;
    /// b.advise(Advice::PreferredLocation(Some(cuda_mem::Location::Device)))?;
    /// # Ok(()) }
    /// ```
    pub fn advise(&self, advice: Advice) -> Result<()> {
        self.advise_range(.., advice)
    }

    /// Gives the driver a hint about how the elements in `range` are used
    /// (`cuMemAdvise`; it applies to the whole pages the range touches).
    /// Advice is not an operation on the stream order: it takes effect at
    /// once. `range` counts elements; one outside the buffer is
    /// `Err(OutOfRange)`; an ordinal that names no device is
    /// `Err(InvalidArgument)`, advice the device cannot take `Err(NotSupported)`.
    ///
    /// ```no_run
    /// use cuda_mem::{Advice, Location};
    /// # fn f(b: &cuda_mem::UnifiedBuffer<f32>) -> cuda_mem::Result<()> {
    /// b.advise_range(..1024, Advice::ReadMostly(true))?;
    /// b.advise_range(1024.., Advice::PreferredLocation(Some(Location::Host)))?;
    /// # Ok(()) }
    /// ```
    pub fn advise_range(&self, range: impl RangeBounds<usize>, advice: Advice) -> Result<()> {
        use sys::CUmem_advise::*;
        let e = self.elems().sub(range)?;
        // The location of the advice that takes none (the driver ignores it).
        let device = self.location(Location::Device)?;
        let (advice, loc) = match advice {
            Advice::ReadMostly(true) => (CU_MEM_ADVISE_SET_READ_MOSTLY, device),
            Advice::ReadMostly(false) => (CU_MEM_ADVISE_UNSET_READ_MOSTLY, device),
            Advice::PreferredLocation(Some(l)) => {
                (CU_MEM_ADVISE_SET_PREFERRED_LOCATION, self.location(l)?)
            }
            Advice::PreferredLocation(None) => (CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION, device),
            Advice::AccessedBy(l, true) => (CU_MEM_ADVISE_SET_ACCESSED_BY, self.location(l)?),
            Advice::AccessedBy(l, false) => (CU_MEM_ADVISE_UNSET_ACCESSED_BY, self.location(l)?),
        };
        if e.byte_size() == 0 {
            return Ok(());
        }
        self.mem.state.bind()?;
        // SAFETY: a range inside the live allocation (checked by `sub`);
        // advice never changes contents.
        unsafe { result::mem_advise(e.addr(), e.byte_size(), advice, loc) }.map_err(|err| {
            refused(
                err,
                "cuMemAdvise",
                "this memory advice on this device (it needs concurrent managed access on the \
                 device it names); leave the advice out",
            )
        })
    }

    /// The driver's form of `to`, for this buffer.
    fn location(&self, to: Location) -> Result<sys::CUmemLocation> {
        use sys::CUmemLocationType::*;
        let (type_, id) = match to {
            Location::Device => (CU_MEM_LOCATION_TYPE_DEVICE, self.mem.state.ctx.ordinal()),
            Location::DeviceOrdinal(ordinal) => {
                if ordinal >= crate::context::device_count()? {
                    return Err(Error::InvalidArgument(
                        "Location::DeviceOrdinal names no device (it is not below \
                         cuda_mem::device_count()); use an ordinal of a visible device",
                    ));
                }
                (CU_MEM_LOCATION_TYPE_DEVICE, ordinal)
            }
            Location::Host => (CU_MEM_LOCATION_TYPE_HOST, 0),
        };
        Ok(sys::CUmemLocation {
            type_,
            id: i32::try_from(id).map_err(|_| {
                Error::InvalidArgument("a device ordinal above i32::MAX; use a visible device")
            })?,
        })
    }
}

/// The error of a managed-memory call `op` that failed with `err`: the
/// driver's refusal (`NOT_SUPPORTED`, `INVALID_DEVICE`) is `NotSupported`
/// with `refusal`, anything else the driver error.
fn refused(err: cudarc::driver::DriverError, op: &'static str, refusal: &'static str) -> Error {
    match err.0 {
        sys::CUresult::CUDA_ERROR_NOT_SUPPORTED | sys::CUresult::CUDA_ERROR_INVALID_DEVICE => {
            Error::NotSupported(refusal)
        }
        _ => Error::driver(op, err),
    }
}

/// Where managed memory should live or be moved: for
/// [`UnifiedBuffer::prefetch`](crate::UnifiedBuffer::prefetch) and [`Advice`].
///
/// ```
/// use cuda_mem::Location;
/// assert_ne!(Location::Device, Location::Host);
/// assert_ne!(Location::Device, Location::DeviceOrdinal(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// The buffer's device (the device of its context).
    Device,
    /// Host memory.
    Host,
    /// The device with this ordinal (as in [`context`](crate::context())),
    /// which may be another than the buffer's.
    DeviceOrdinal(usize),
}

/// A usage hint for [`UnifiedBuffer::advise`](crate::UnifiedBuffer::advise)
/// (CUDA 12/13 location form).
///
/// ```
/// use cuda_mem::{Advice, Location};
/// let hints = [Advice::ReadMostly(true), Advice::AccessedBy(Location::Host, true)];
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advice {
    /// Set (`true`) or clear read-mostly: the driver may keep read-only copies.
    ReadMostly(bool),
    /// Set (`Some`) or clear (`None`) the preferred location.
    PreferredLocation(Option<Location>),
    /// Set (`true`) or clear that this processor accesses the memory, so it stays mapped there.
    AccessedBy(Location, bool),
}

impl<T: DeviceCopy, K: HostAccessible> Buffer<T, K> {
    /// Waits for queued work that uses the buffer. When the host view is
    /// memory the driver copies asynchronously (managed memory; pinned
    /// memory without a host alias), also for every context: a copy cudarc
    /// queued through an earlier slice of it is in no allocation's order
    /// (see the crate docs, "Soundness").
    fn wait_for_host_access(&self, access: Access) -> Result<()> {
        self.mem.order.wait(access)?;
        if self.mem.host_view_is_registered() {
            crate::context::synchronize_all_contexts(&self.mem.state)?;
        }
        Ok(())
    }

    /// The elements, after waiting for every queued operation on the buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let buf = cuda_mem::PinnedBuffer::from_slice(&cuda_mem::context(0)?, &[1u8, 2])?;
    /// assert_eq!(buf.as_slice()?, &[1, 2]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait_for_host_access(Access::Shared)?;
        let host = self.mem.host_ptr().cast::<T>();
        if self.len == 0 || size_of::<T>() == 0 || host.is_null() {
            return Ok(&[]);
        }
        // SAFETY: `host` points to `len` initialised (zeroed or copied-into)
        // elements of host-accessible memory, suitably aligned (page or 256-byte
        // aligned allocation, align_of::<T>() <= 256); no queued operation
        // touches it (waited above) and none can start while `&self` is
        // borrowed by the slice except reads.
        Ok(unsafe { std::slice::from_raw_parts(host, self.len) })
    }

    /// The elements, mutably, after waiting for every queued operation.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let mut buf = cuda_mem::PinnedBuffer::<u8>::new(&cuda_mem::context(0)?, 2)?;
    /// buf.as_mut_slice()?.copy_from_slice(&[3, 4]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait_for_host_access(Access::Exclusive)?;
        let host = self.mem.host_ptr().cast::<T>();
        if self.len == 0 || size_of::<T>() == 0 || host.is_null() {
            return Ok(&mut []);
        }
        // SAFETY: as in `as_slice`, and `&mut self` excludes every other access.
        Ok(unsafe { std::slice::from_raw_parts_mut(host, self.len) })
    }
}
