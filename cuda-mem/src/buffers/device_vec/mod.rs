//! [`DeviceVec<T>`]: a growable vector in device memory that grows in place.
//! It reserves an address range once and maps physical memory at its end as
//! it grows (virtual memory management, see `vmm`), so its address never
//! changes and growth copies nothing. Every buffer operation comes from the
//! same engine as [`Buffer`](crate::Buffer)'s.
//!
//! This file holds [`DeviceVec`]; `pusher` holds [`Pusher`], which appends
//! single elements to it in batches.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::engine::{AsView, Elems};
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::allocation::AllocKind;
use crate::memory::raw::{byte_len, element_size, RawMemory};
use crate::memory::vmm::{self, Reservation};
use crate::order::streams::AsStream;
use crate::order::Access;

mod pusher;

pub use pusher::Pusher;

/// A growable vector of `T` in device memory whose address never changes.
///
/// It reserves an address range up front (`cuMemAddressReserve`; the
/// maximum capacity, see below) and backs its start with physical memory
/// (`cuMemCreate`, `cuMemMap`, `cuMemSetAccess`) as it grows. Growing maps
/// new memory after the old, so the elements stay where they are and
/// nothing is copied, unlike a reallocation, which needs the old and the new
/// buffer at once and copies every element. [`shrink_to_fit`](Self::shrink_to_fit)
/// unmaps and releases what the elements no longer need.
///
/// Besides [`len`](crate::Memory::len) and [`capacity`](Self::capacity) it has every
/// operation of a [`DeviceBuffer`](crate::DeviceBuffer), from the same
/// implementation: [`memset`](crate::MemoryMut::memset), [`fill`](crate::MemoryMut::fill), copies to
/// and from the host and any buffer or view, views
/// ([`slice`](crate::Memory::slice), [`slice_mut`](crate::MemoryMut::slice_mut)), kernel arguments
/// ([`kernel_arg`](crate::Memory::kernel_arg), typed launches of
/// [`#[kernel]`](macro@crate::kernel) fns with `&vec` / `&mut vec`), cudarc's
/// `DevicePtr` traits, and the same stream ordering of all of them.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// use cuda_mem::DeviceVec;
///
/// let ctx = cuda_mem::context(0)?;
/// let mut hits = DeviceVec::<u32>::new(&ctx)?;
/// hits.extend_from_host(&[1, 2, 3])?;
/// let addr = hits.as_device_ptr();
/// hits.resize(1_000_000, 7)?; // maps more memory after the old: no copy
/// assert_eq!(hits.as_device_ptr(), addr); // same address
/// assert_eq!(hits.slice(..4)?.to_vec()?, [1, 2, 3, 7]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
///
/// # The reservation
///
/// The address range is reserved when the vector is made and never changes:
/// [`new`](Self::new) and [`with_capacity`](Self::with_capacity) reserve as
/// many bytes as the device has memory (its total memory: address space
/// costs no memory, and a vector cannot usefully grow beyond that);
/// [`with_max_capacity`](Self::with_max_capacity) sets the maximum
/// yourself. Growth beyond it is `Err(CapacityExceeded)`. Every size is
/// rounded up to the allocation granularity the driver reports
/// (`cuMemGetAllocationGranularity`, 2 MiB on current GPUs), so even a small
/// vector maps one granule. The GPU's virtual address space is large (about
/// 128 TiB on 64-bit Linux) but not endless: a program that keeps thousands
/// of vectors alive should give them smaller maximums.
///
/// # What growth costs
///
/// [`reserve`](Self::reserve) and the calls that grow the vector map chunks
/// of physical memory at the end of the mapped range: one `cuMemCreate` and
/// one `cuMemMap` per chunk, and one `cuMemSetAccess` per growth. Chunks
/// are at least one granule and about a quarter of the offset they start
/// at, so growing from nothing to 16 GiB maps about 50 chunks, and
/// [`shrink_to_fit`](Self::shrink_to_fit) keeps at most about a quarter more
/// than the elements need. (Smaller chunks would give back more, but memory
/// mapped as many small chunks streams measurably slower than one
/// allocation.) `reserve` grows by at least half the capacity (like
/// `Vec`'s amortised growth; it falls back to the exact size when that
/// does not fit in memory); [`reserve_exact`](Self::reserve_exact) maps just
/// what is asked for. Growth does not wait for queued work: the new memory
/// is new, and no queued operation can touch it. Shrinking waits for every
/// queued operation on the vector first, as a free does.
///
/// # Why the address is stable, and what survives growth
///
/// The elements live at the start of the reserved range, and growth only
/// maps memory after them, so [`as_device_ptr`](crate::Memory::as_device_ptr) is the
/// same for the vector's whole life. A [`DevicePtr`](crate::DevicePtr)
/// stored in a device struct stays valid across growth, and a kernel
/// captured into a CUDA graph with the vector's address keeps working
/// after the vector has grown: the graph replays with the same address,
/// which still holds the same elements (and the new ones after them). Only
/// a shrink below what a captured kernel touches, or dropping the vector,
/// takes memory away under it, as for any buffer.
///
/// Growth, truncation and shrinking take `&mut self`, so the borrow checker
/// ends every view and kernel argument before them: no
/// [`View`](crate::View) or [`KernelArg`](crate::KernelArg) outlives a
/// change of length.
///
/// ```compile_fail,E0502
/// # use cuda_mem::prelude::*;
/// # fn f(v: &mut cuda_mem::DeviceVec<f32>) -> cuda_mem::Result<()> {
/// let head = v.slice(..1)?;
/// v.extend_from_host(&[1.0])?; // `v` is borrowed by `head`
/// head.to_vec()?;
/// # Ok(()) }
/// ```
///
/// # Several GPUs
///
/// The memory lives on the device of the vector's context and is accessible
/// to that device. [`share_with`](Self::share_with) grants a peer device
/// access to the mapped range and to every chunk mapped later, so kernels
/// on the peer can read and write it directly. Copies between contexts
/// ([`copy_from`](crate::MemoryMut::copy_from), [`extend_from_device`](Self::extend_from_device))
/// work as for buffers; like pool memory, mapped memory does not follow
/// `cuCtxEnablePeerAccess`, so the first peer copy between the two devices
/// grants the other device access the way `share_with` does.
///
/// # Errors, never panics
///
/// A device without virtual memory management gives `Err(NotSupported)`;
/// growth beyond the reservation `Err(CapacityExceeded)`; running out of
/// memory in the middle of a growth `Err(OutOfMemory)`, after unmapping and
/// releasing every chunk that growth had mapped: the length, capacity and
/// elements are what they were.
pub struct DeviceVec<T> {
    mem: RawMemory,
    len: usize,
    _t: PhantomData<T>,
}

// The engine: every buffer operation (`Memory` / `MemoryMut` in `ops`,
// views, kernel arguments, cudarc's traits, typed launches in
// `launch::host`) works on `elems()`, the first `len` elements of the mapped
// memory.
impl<T: DeviceCopy> DeviceVec<T> {
    pub(crate) fn elems(&self) -> Elems<'_, T> {
        Elems::whole(&self.mem, self.len)
    }
}

/// The error of growing or shrinking a `DeviceVec` whose memory is not a
/// reservation. Never returned (the constructors make only reservations);
/// it is there so that the match on the memory's kind cannot panic.
const NOT_MAPPED: Error =
    Error::InvalidArgument("internal: a DeviceVec without a reserved address range");

/// The address range reserved for `T`s by default: the device's total memory.
fn default_max_bytes(ctx: &CudaContext) -> Result<usize> {
    ctx.total_mem().op("cuDeviceTotalMem")
}

impl<T: DeviceCopy> DeviceVec<T> {
    /// An empty vector on the device of `ctx`, with the default maximum
    /// capacity (the device's total memory; see [the reservation](#the-reservation)).
    /// Maps no memory yet. `Err(NotSupported)` on a device without virtual
    /// memory management.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let v = cuda_mem::DeviceVec::<f32>::new(&cuda_mem::context(0)?)?;
    /// assert_eq!((v.len(), v.capacity()), (0, 0));
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        Self::with_capacity(ctx, 0)
    }

    /// An empty vector with room for at least `capacity` elements (mapped
    /// now) and the default maximum capacity.
    ///
    /// ```no_run
    /// let v = cuda_mem::DeviceVec::<u64>::with_capacity(&cuda_mem::context(0)?, 1 << 20)?;
    /// assert!(v.capacity() >= 1 << 20);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn with_capacity(ctx: &Arc<CudaContext>, capacity: usize) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        state.bind()?;
        let max_bytes = default_max_bytes(ctx)?.max(byte_len::<T>(capacity)?);
        Self::reserved(state, capacity, max_bytes)
    }

    /// An empty vector with room for at least `capacity` elements that can
    /// grow to at least `max_capacity` elements (both rounded up to the
    /// allocation granularity): only that much address space is reserved.
    /// `Err(InvalidArgument)` if `capacity > max_capacity`.
    ///
    /// ```no_run
    /// let ctx = cuda_mem::context(0)?;
    /// let mut v = cuda_mem::DeviceVec::<u8>::with_max_capacity(&ctx, 0, 64 << 20)?;
    /// assert!(v.max_capacity() >= 64 << 20);
    /// assert!(matches!(v.reserve(1 << 30), Err(cuda_mem::Error::CapacityExceeded { .. })));
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn with_max_capacity(
        ctx: &Arc<CudaContext>,
        capacity: usize,
        max_capacity: usize,
    ) -> Result<Self> {
        if capacity > max_capacity {
            return Err(Error::InvalidArgument(
                "DeviceVec::with_max_capacity: the capacity exceeds the maximum capacity; \
                 pass a capacity at most the maximum",
            ));
        }
        let state = ContextState::of(ctx)?;
        state.bind()?;
        let max_bytes = byte_len::<T>(max_capacity)?;
        Self::reserved(state, capacity, max_bytes)
    }

    /// Reserves `max_bytes` and maps room for `capacity` elements.
    fn reserved(state: Arc<ContextState>, capacity: usize, max_bytes: usize) -> Result<Self> {
        let reservation = Reservation::new(&state.ctx, max_bytes)?;
        let mut vec = Self {
            mem: RawMemory::mapped(state, reservation),
            len: 0,
            _t: PhantomData,
        };
        // On failure the vector is dropped, which frees the reservation.
        vec.grow_for(capacity, true)?;
        Ok(vec)
    }

    /// A vector holding a copy of `data`, with the default maximum capacity.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let v = cuda_mem::DeviceVec::from_slice(&cuda_mem::context(0)?, &[1.0f64, 2.0])?;
    /// assert_eq!(v.to_vec()?, [1.0, 2.0]);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn from_slice(ctx: &Arc<CudaContext>, data: &[T]) -> Result<Self> {
        let mut vec = Self::with_capacity(ctx, data.len())?;
        vec.extend_from_host(data)?;
        Ok(vec)
    }

    /// The reservation (`DeviceVec`'s constructors make only mapped memory,
    /// so this is always `Some`).
    fn reservation(&self) -> Option<&Reservation> {
        match &*self.mem.kind {
            AllocKind::Mapped(r) => Some(r),
            _ => None,
        }
    }

    /// Elements the mapped memory holds: the vector grows this far without
    /// mapping more.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &cuda_mem::DeviceVec<u32>) {
    /// assert!(v.capacity() >= v.len());
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        self.mem.bytes / element_size::<T>()
    }

    /// Elements the reserved address range holds: the vector can never
    /// grow beyond this (`Err(CapacityExceeded)`).
    ///
    /// ```no_run
    /// # fn f(v: &cuda_mem::DeviceVec<u32>) {
    /// assert!(v.max_capacity() >= v.capacity());
    /// # }
    /// ```
    pub fn max_capacity(&self) -> usize {
        self.reservation().map_or(0, Reservation::size) / element_size::<T>()
    }

    /// The allocation granularity in bytes (`cuMemGetAllocationGranularity`):
    /// the mapped memory, and the reservation, are whole multiples of it.
    ///
    /// ```no_run
    /// # fn f(v: &cuda_mem::DeviceVec<u32>) {
    /// assert!(v.granularity().is_power_of_two());
    /// # }
    /// ```
    pub fn granularity(&self) -> usize {
        self.reservation().map_or(1, Reservation::granularity)
    }

    /// Makes the capacity at least `len + additional`, mapping more memory
    /// if needed: at least half the current capacity more (amortised
    /// growth), or exactly what is needed when that much more does not fit
    /// in the device's memory. The address and the elements stay.
    /// `Err(CapacityExceeded)` beyond the maximum capacity;
    /// `Err(OutOfMemory)` leaves the vector as it was.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) -> cuda_mem::Result<()> {
    /// v.reserve(1000)?;
    /// assert!(v.capacity() >= v.len() + 1000);
    /// # Ok(()) }
    /// ```
    pub fn reserve(&mut self, additional: usize) -> Result<()> {
        let needed = self.needed(additional)?;
        self.grow_for(needed, false)
    }

    /// Like [`reserve`](Self::reserve), mapping only what is needed
    /// (rounded up to the granularity).
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) -> cuda_mem::Result<()> {
    /// v.reserve_exact(1000)?;
    /// # Ok(()) }
    /// ```
    pub fn reserve_exact(&mut self, additional: usize) -> Result<()> {
        let needed = self.needed(additional)?;
        self.grow_for(needed, true)
    }

    fn needed(&self, additional: usize) -> Result<usize> {
        self.len
            .checked_add(additional)
            .ok_or(Error::CapacityExceeded {
                requested: usize::MAX,
                max: self.max_capacity(),
            })
    }

    /// Maps memory until `needed` elements fit: exactly (rounded to the
    /// granularity), or with amortised headroom when `exact` is false.
    fn grow_for(&mut self, needed: usize, exact: bool) -> Result<()> {
        if needed <= self.capacity() {
            return Ok(());
        }
        let max = self.max_capacity();
        if needed > max {
            return Err(Error::CapacityExceeded {
                requested: needed,
                max,
            });
        }
        // Cannot overflow: at most the reservation's size.
        let needed_bytes = needed * element_size::<T>();
        let mapped = self.mem.bytes;
        self.mem.state.bind()?;
        let AllocKind::Mapped(reservation) = &mut *self.mem.kind else {
            return Err(NOT_MAPPED);
        };
        let ample = needed_bytes
            .max(mapped.saturating_add(mapped / 2))
            .min(reservation.size());
        let target = if exact { needed_bytes } else { ample };
        let grown = match reservation.grow_to(target) {
            Err(Error::OutOfMemory { .. }) if target > needed_bytes => {
                reservation.grow_to(needed_bytes)
            }
            other => other,
        };
        self.mem.bytes = reservation.mapped();
        grown.map_err(|e| match e {
            Error::OutOfMemory { kind, .. } => Error::OutOfMemory {
                requested: vmm::round_up(needed_bytes, reservation.granularity())
                    .unwrap_or(needed_bytes)
                    - mapped,
                kind,
            },
            e => e,
        })
    }

    /// The elements `len..len + n` of the mapped memory (the capacity holds them).
    fn tail(&self, n: usize) -> Elems<'_, T> {
        Elems::at(&self.mem, self.len * element_size::<T>(), n)
    }

    /// Appends a copy of `data`, growing as [`reserve`](Self::reserve)
    /// does; returns once `data` may be reused. On an error the length is
    /// unchanged.
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) -> cuda_mem::Result<()> {
    /// v.extend_from_host(&[4, 5, 6])?;
    /// # Ok(()) }
    /// ```
    pub fn extend_from_host(&mut self, data: &[T]) -> Result<()> {
        self.reserve(data.len())?;
        self.tail(data.len()).copy_from_host(data, None)?;
        self.len += data.len();
        Ok(())
    }

    /// Appends a copy of any buffer or view (of any memory kind, on this
    /// device or another), queued on the context's default stream and
    /// ordered like [`copy_from`](crate::MemoryMut::copy_from). On an error the length
    /// is unchanged.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>, results: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {
    /// v.extend_from_device(&results.slice(3..10)?)?;
    /// # Ok(()) }
    /// ```
    pub fn extend_from_device(&mut self, src: &impl AsView<T>) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.extend_from_device_async(src, &stream)
    }

    /// Like [`extend_from_device`](Self::extend_from_device), queued on
    /// `stream` (of this context, or of the source's for a copy between two
    /// contexts).
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>, b: &cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// v.extend_from_device_async(b, s)?;
    /// # Ok(()) }
    /// ```
    pub fn extend_from_device_async(
        &mut self,
        src: &impl AsView<T>,
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        let src = src.as_view().elems;
        self.reserve(src.len())?;
        self.tail(src.len()).copy_from(src, stream)?;
        self.len += src.len();
        Ok(())
    }

    /// A [`Pusher`] that appends single elements in batches: it collects
    /// them on the host and copies each batch with one driver call (when
    /// the batch is full, on [`Pusher::flush`], [`Pusher::finish`] and when
    /// dropped), never one call per element.
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) -> cuda_mem::Result<()> {
    /// let mut pusher = v.pusher();
    /// for i in 0..10_000 {
    ///     pusher.push(i * i)?;
    /// }
    /// pusher.finish()?;
    /// # Ok(()) }
    /// ```
    pub fn pusher(&mut self) -> Pusher<'_, T> {
        Pusher {
            batch: Vec::with_capacity(Pusher::<T>::BATCH),
            vec: self,
        }
    }

    /// Sets the length to `new_len`: truncates, or appends copies of
    /// `value` through [`fill`](crate::MemoryMut::fill) (at memory bandwidth, on the
    /// context's default stream), growing as [`reserve`](Self::reserve) does.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &mut cuda_mem::DeviceVec<f32>) -> cuda_mem::Result<()> {
    /// v.resize(1 << 20, 0.5)?;
    /// assert_eq!(v.len(), 1 << 20);
    /// # Ok(()) }
    /// ```
    pub fn resize(&mut self, new_len: usize, value: T) -> Result<()> {
        let stream = self.mem.state.default_stream.clone();
        self.resize_async(new_len, value, &stream)
    }

    /// Like [`resize`](Self::resize), with the fill queued on `stream`.
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// v.resize_async(1000, 1.0, s)?;
    /// # Ok(()) }
    /// ```
    pub fn resize_async(&mut self, new_len: usize, value: T, stream: &impl AsStream) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
        self.mem.state.check_stream(stream)?;
        if new_len <= self.len {
            self.truncate(new_len);
            return Ok(());
        }
        let added = new_len - self.len;
        self.reserve(added)?;
        self.tail(added).fill(&value, stream)?;
        self.len = new_len;
        Ok(())
    }

    /// Shortens the vector to `new_len` elements (nothing if it is not
    /// shorter). The memory stays mapped: [`shrink_to_fit`](Self::shrink_to_fit)
    /// releases it.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) {
    /// v.truncate(2);
    /// assert!(v.len() <= 2);
    /// # }
    /// ```
    pub fn truncate(&mut self, new_len: usize) {
        self.len = self.len.min(new_len);
    }

    /// Removes every element (the memory stays mapped).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) {
    /// v.clear();
    /// assert!(v.is_empty());
    /// # }
    /// ```
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Unmaps and releases the memory the elements do not need, returning it
    /// to the device: every chunk that lies wholly beyond the elements
    /// (`cuMemUnmap`, `cuMemRelease`). Chunks are about a quarter of their
    /// offset (see [what growth costs](#what-growth-costs)), so the capacity
    /// afterwards is at most about `len + len / 4`, rounded up to the
    /// granularity. It first waits for every queued operation on the
    /// vector, as a free does. The address stays.
    ///
    /// ```no_run
    /// # fn f(v: &mut cuda_mem::DeviceVec<u32>) -> cuda_mem::Result<()> {
    /// v.truncate(10);
    /// v.shrink_to_fit()?;
    /// # Ok(()) }
    /// ```
    pub fn shrink_to_fit(&mut self) -> Result<()> {
        let keep = self.len * element_size::<T>();
        if keep >= self.mem.bytes {
            return Ok(());
        }
        // Queued work may still use the elements beyond `len` (truncated
        // after it was queued); `&mut self` means every kernel argument has
        // been launched.
        self.mem.order.wait(Access::Exclusive)?;
        self.mem.state.bind()?;
        let AllocKind::Mapped(reservation) = &mut *self.mem.kind else {
            return Err(NOT_MAPPED);
        };
        let result = reservation.shrink_to(keep);
        self.mem.bytes = reservation.mapped();
        result
    }

    /// Grants the device of `peer` read and write access to the vector's
    /// memory: the mapped range now (`cuMemSetAccess`), and every chunk
    /// mapped by later growth. Kernels on that device may then use the
    /// vector's address directly. Nothing to do for `peer` on the vector's
    /// own device. `Err(NotSupported)` when the two devices cannot access
    /// each other (`cuDeviceCanAccessPeer`).
    ///
    /// ```no_run
    /// let (gpu0, gpu1) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
    /// let mut v = cuda_mem::DeviceVec::<f32>::new(&gpu0)?;
    /// v.share_with(&gpu1)?;
    /// v.resize(1 << 20, 1.0)?; // the new chunks are shared too
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn share_with(&mut self, peer: &Arc<CudaContext>) -> Result<()> {
        let own = &self.mem.state.ctx;
        if peer.cu_device() == own.cu_device() {
            return Ok(());
        }
        if !crate::engine::peer::can_access_peer(own, peer)? {
            return Err(Error::NotSupported(
                "DeviceVec::share_with: these two devices cannot access each other's memory \
                 (cuDeviceCanAccessPeer); copy between them with copy_from instead",
            ));
        }
        self.mem.state.bind()?;
        let AllocKind::Mapped(reservation) = &mut *self.mem.kind else {
            return Err(NOT_MAPPED);
        };
        reservation.add_peer(peer.cu_device())
    }
}

impl<T> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVec")
            .field("type", &std::any::type_name::<T>())
            .field("len", &self.len)
            .field("mapped_bytes", &self.mem.bytes)
            .field("addr", &format_args!("{:#x}", self.mem.addr))
            .finish()
    }
}
