//! Virtual memory management (`cuMemAddressReserve`, `cuMemCreate`,
//! `cuMemMap`, `cuMemSetAccess`): thin wrappers that turn each `CUresult`
//! into the crate's [`Error`], and [`Reservation`], an address range whose
//! start is backed by physical chunks, which grows and shrinks at its end
//! without moving. [`DeviceVec`](crate::DeviceVec) is built on it.

use std::sync::{Mutex, MutexGuard};

use cudarc::driver::sys::{self, CUdevice, CUdeviceptr, CUmemGenericAllocationHandle};
use cudarc::driver::CudaContext;

use crate::error::{DriverResultExt, Error, Result};

/// What the memory of a [`DeviceVec`](crate::DeviceVec) is, in errors.
pub(crate) const KIND: &str = "device (virtual memory)";

/// `Err(NotSupported)` unless the device of `ctx` supports virtual memory
/// management (`CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED`).
pub(crate) fn require_support(ctx: &CudaContext) -> Result<()> {
    let supported = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED)
        .op("cuDeviceGetAttribute")?;
    if supported == 0 {
        return Err(Error::NotSupported(
            "virtual memory management (cuMemCreate / cuMemMap), which DeviceVec needs, is not \
             supported by this device or driver; use a DeviceBuffer and reallocate to grow it",
        ));
    }
    Ok(())
}

/// The device memory location `device`.
fn location(device: CUdevice) -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: device,
    }
}

/// Pinned (non-migratable) device memory on `device`, no shareable handle.
fn properties(device: CUdevice) -> sys::CUmemAllocationProp {
    sys::CUmemAllocationProp {
        type_: sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
        location: location(device),
        win32HandleMetaData: std::ptr::null_mut(),
        allocFlags: sys::CUmemAllocationProp_st__bindgen_ty_1 {
            compressionType: 0,
            gpuDirectRDMACapable: 0,
            usage: 0,
            reserved: [0; 4],
        },
    }
}

/// `cuMemGetAllocationGranularity` (recommended) for device memory on `device`.
pub(crate) fn granularity(device: CUdevice) -> Result<usize> {
    let prop = properties(device);
    let mut granularity = 0usize;
    // SAFETY: valid out-pointer and a fully initialised property struct.
    unsafe {
        sys::cuMemGetAllocationGranularity(
            &mut granularity,
            &prop,
            sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_RECOMMENDED,
        )
        .result()
    }
    .op("cuMemGetAllocationGranularity")?;
    if granularity == 0 || !granularity.is_power_of_two() {
        return Err(Error::NotSupported(
            "the driver reported an allocation granularity that is not a power of two; \
             use a DeviceBuffer",
        ));
    }
    Ok(granularity)
}

/// `bytes` rounded up to a multiple of `granularity` (a power of two), or
/// `None` on overflow.
pub(crate) fn round_up(bytes: usize, granularity: usize) -> Option<usize> {
    Some(bytes.checked_add(granularity - 1)? & !(granularity - 1))
}

/// The size of the chunk mapped at byte `offset` of a reservation: at least
/// one granule, else the largest power of two at most `offset / 4`. So the
/// number of chunks grows with the logarithm of the size (4 per doubling),
/// and a shrink keeps at most one chunk of about a quarter of what stays.
///
/// Why a quarter: memory mapped as many small chunks is slower to stream
/// than one allocation (on the H200, 2 MiB chunks memset about 1.3% slower
/// than `cuMemAlloc` memory; 32 MiB chunks, within 0.4%), while larger
/// chunks leave more behind after `shrink_to_fit`.
pub(crate) fn chunk_size(offset: usize, granularity: usize) -> usize {
    let quarter = offset / 4;
    if quarter <= granularity {
        granularity
    } else {
        // Largest power of two <= quarter; a multiple of the granularity.
        1usize << (usize::BITS - 1 - quarter.leading_zeros())
    }
}

/// One physical allocation mapped at `offset..offset + size` of a reservation.
struct Chunk {
    handle: CUmemGenericAllocationHandle,
    offset: usize,
    size: usize,
}

/// An address range of `size` bytes at `base` (`cuMemAddressReserve`), whose
/// first `mapped` bytes are backed by physical chunks on `device`, readable
/// and writable by `device` and every device in `peers`. The peers are
/// behind a mutex: a copy between two devices adds one through a shared
/// reference (see `peer::prepare_copy`), while the mapped range only
/// changes under `&mut`.
///
/// Owned by a `RawMemory` of kind `AllocKind::Mapped`, which frees it
/// ([`Reservation::release`]) after every queued use. There is no `Drop`:
/// memory whose free failed is leaked, as for every other kind.
pub(crate) struct Reservation {
    base: CUdeviceptr,
    size: usize,
    granularity: usize,
    device: CUdevice,
    peers: Mutex<Vec<CUdevice>>,
    chunks: Vec<Chunk>,
    mapped: usize,
}

impl Reservation {
    /// Reserves `bytes` (rounded up to the granularity) of address space for
    /// memory on the device of `ctx`, which must be current. Zero bytes
    /// reserve nothing (base 0).
    pub(crate) fn new(ctx: &CudaContext, bytes: usize) -> Result<Self> {
        require_support(ctx)?;
        let device = ctx.cu_device();
        let granularity = granularity(device)?;
        let size = round_up(bytes, granularity).ok_or(Error::SizeOverflow {
            what: "the DeviceVec's maximum capacity in bytes",
        })?;
        let mut base: CUdeviceptr = 0;
        if size > 0 {
            // SAFETY: valid out-pointer; a size and alignment that are
            // multiples of the granularity; no fixed address, no flags.
            unsafe { sys::cuMemAddressReserve(&mut base, size, granularity, 0, 0).result() }
                .map_err(|e| {
                    Error::driver_sized("cuMemAddressReserve", e, size, "virtual address")
                })?;
        }
        Ok(Self {
            base,
            size,
            granularity,
            device,
            peers: Mutex::new(Vec::new()),
            chunks: Vec::new(),
            mapped: 0,
        })
    }

    /// The first address of the range.
    pub(crate) fn base(&self) -> u64 {
        self.base
    }

    /// Bytes of address space reserved.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Bytes mapped at the start of the range.
    pub(crate) fn mapped(&self) -> usize {
        self.mapped
    }

    /// The granularity every chunk is a multiple of.
    pub(crate) fn granularity(&self) -> usize {
        self.granularity
    }

    /// Grants `devices` read and write access to `offset..offset + bytes`
    /// (mapped).
    fn set_access(&self, offset: usize, bytes: usize, devices: &[CUdevice]) -> Result<()> {
        let descs: Vec<sys::CUmemAccessDesc> = devices
            .iter()
            .map(|&d| sys::CUmemAccessDesc {
                location: location(d),
                flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            })
            .collect();
        // SAFETY: the range is mapped (a whole number of chunks of this
        // reservation); `descs` holds `descs.len()` initialised descriptors.
        unsafe {
            sys::cuMemSetAccess(
                self.base + offset as u64,
                bytes,
                descs.as_ptr(),
                descs.len(),
            )
            .result()
        }
        .op("cuMemSetAccess")
    }

    /// Maps chunks until at least `bytes` (at most the reservation) are
    /// mapped, and grants this device and every peer access to them. On any
    /// failure (out of memory part-way, say) every chunk this call mapped is
    /// unmapped and released again, so the mapped range is what it was.
    /// The context must be current.
    pub(crate) fn grow_to(&mut self, bytes: usize) -> Result<()> {
        let target = round_up(bytes, self.granularity).ok_or(Error::SizeOverflow {
            what: "the DeviceVec's capacity in bytes",
        })?;
        if target <= self.mapped {
            return Ok(());
        }
        if target > self.size {
            return Err(Error::InvalidArgument(
                "internal: growth beyond the reservation must be refused by the caller",
            ));
        }
        let first_new = self.chunks.len();
        let old_mapped = self.mapped;
        let result = self.map_chunks(target).and_then(|()| {
            let mut devices = vec![self.device];
            devices.extend_from_slice(&self.peers());
            self.set_access(old_mapped, target - old_mapped, &devices)
        });
        if result.is_err() && self.unmap_from(first_new).is_err() {
            // Nothing can use the new chunks yet (no length covers them), so
            // they go at once. Those that would not unmap may lack access
            // for some device: leaked, and never counted as mapped (a later
            // growth fails to map over them instead of handing them out).
            self.chunks.truncate(first_new);
            self.mapped = old_mapped;
        }
        result
    }

    /// `cuMemCreate` + `cuMemMap` of chunks from `self.mapped` to `target`.
    fn map_chunks(&mut self, target: usize) -> Result<()> {
        let prop = properties(self.device);
        while self.mapped < target {
            let offset = self.mapped;
            let size = chunk_size(offset, self.granularity).min(target - offset);
            let mut handle: CUmemGenericAllocationHandle = 0;
            // SAFETY: valid out-pointer and properties; the size is a
            // multiple of the granularity.
            unsafe { sys::cuMemCreate(&mut handle, size, &prop, 0).result() }
                .map_err(|e| Error::driver_sized("cuMemCreate", e, size, KIND))?;
            // SAFETY: `offset..offset + size` lies in the reservation and is
            // unmapped (chunks are mapped in order at `self.mapped`); the
            // handle is `size` bytes.
            let mapped =
                unsafe { sys::cuMemMap(self.base + offset as u64, size, 0, handle, 0).result() };
            if let Err(e) = mapped {
                // SAFETY: the handle was created above and is mapped nowhere.
                let _ = unsafe { sys::cuMemRelease(handle).result() };
                return Err(Error::driver_sized("cuMemMap", e, size, KIND));
            }
            self.chunks.push(Chunk {
                handle,
                offset,
                size,
            });
            self.mapped = offset + size;
        }
        Ok(())
    }

    /// Unmaps and releases chunk `first` and every later one. The caller
    /// guarantees that no queued or future work uses them. Stops at the first
    /// failure, leaving the remaining chunks mapped (and counted).
    fn unmap_from(&mut self, first: usize) -> Result<()> {
        while self.chunks.len() > first {
            let Some(chunk) = self.chunks.last() else {
                break;
            };
            let (addr, size, handle) = (self.base + chunk.offset as u64, chunk.size, chunk.handle);
            // SAFETY: exactly the range this chunk was mapped at; the caller
            // guarantees nothing uses it any more.
            unsafe { sys::cuMemUnmap(addr, size).result() }.op("cuMemUnmap")?;
            self.mapped = chunk.offset;
            self.chunks.pop();
            // SAFETY: the handle is no longer mapped anywhere.
            unsafe { sys::cuMemRelease(handle).result() }.op("cuMemRelease")?;
        }
        Ok(())
    }

    /// Unmaps and releases the chunks that lie wholly at or beyond byte
    /// `keep` (they hold nothing the caller needs, and no queued work uses
    /// them). The chunk that contains byte `keep - 1` stays.
    pub(crate) fn shrink_to(&mut self, keep: usize) -> Result<()> {
        let first = self.chunks.partition_point(|c| c.offset < keep);
        self.unmap_from(first)
    }

    fn peers(&self) -> MutexGuard<'_, Vec<CUdevice>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Grants `peer` access to the mapped range and to every chunk mapped
    /// later. The context must be current.
    pub(crate) fn add_peer(&self, peer: CUdevice) -> Result<()> {
        let mut peers = self.peers();
        if peer == self.device || peers.contains(&peer) {
            return Ok(());
        }
        if self.mapped > 0 {
            self.set_access(0, self.mapped, &[peer])?;
        }
        peers.push(peer);
        Ok(())
    }

    /// Unmaps and releases every chunk and frees the address range. The
    /// caller guarantees that no queued work uses the memory.
    pub(crate) fn release(&mut self) -> Result<()> {
        self.unmap_from(0)?;
        if self.size > 0 {
            // SAFETY: the whole range reserved in `new`, now unmapped.
            unsafe { sys::cuMemAddressFree(self.base, self.size).result() }
                .op("cuMemAddressFree")?;
            self.size = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_grow_with_the_offset() {
        let g = 2 << 20;
        assert_eq!(chunk_size(0, g), g);
        assert_eq!(chunk_size(4 * g, g), g);
        assert_eq!(chunk_size(8 * g, g), 2 * g);
        assert_eq!(chunk_size(9 * g, g), 2 * g);
        assert_eq!(chunk_size(16 * g, g), 4 * g);
        // Every chunk is a multiple of the granularity.
        for offset in (0..4096).map(|i| i * g) {
            assert_eq!(chunk_size(offset, g) % g, 0, "offset {offset}");
            assert!(chunk_size(offset, g) <= offset / 4 + g, "offset {offset}");
        }
    }

    #[test]
    fn a_doubling_growth_maps_few_chunks() {
        let g = 2usize << 20;
        let (mut mapped, mut chunks) = (0usize, 0usize);
        while mapped < 16 << 30 {
            mapped += chunk_size(mapped, g);
            chunks += 1;
        }
        assert_eq!(mapped, 16 << 30);
        assert!(chunks <= 4 * 12, "{chunks} chunks");
    }

    #[test]
    fn rounding_is_checked() {
        assert_eq!(round_up(1, 4096), Some(4096));
        assert_eq!(round_up(0, 4096), Some(0));
        assert_eq!(round_up(8192, 4096), Some(8192));
        assert_eq!(round_up(usize::MAX, 4096), None);
    }
}
