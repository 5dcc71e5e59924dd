//! [`IpcHandle`]: the typed, serialisable handle to a buffer that another
//! process opens (`open`, `open_in_pool`) as an [`ImportedBuffer`], and the
//! checks an open makes: the element type, the exporter, one import per
//! allocation, and the length against what the driver mapped.

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext};

use crate::buffers::buffer::{Buffer, Imported};
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{DriverResultExt, Error, Result};
use crate::ipc::wire::{corrupt, Frame, Kind, FRAME_BYTES};
use crate::memory::allocation::AllocKind;
use crate::memory::exporter::Exporter;
use crate::memory::open_imports;
use crate::memory::pool::MemPool;
use crate::memory::raw::{byte_len, RawMemory};

/// A [`Buffer`] of memory another process exported, opened in this one
/// (see the [module docs](crate::ipc)). Dropping it closes the import.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// # fn f(bytes: &[u8]) -> cuda_mem::Result<()> {
/// let ctx = cuda_mem::context(0)?;
/// let imported: cuda_mem::ipc::ImportedBuffer<u32> =
///     cuda_mem::ipc::IpcHandle::from_bytes(bytes)?.open(&ctx)?;
/// let first = imported.slice(0..1)?.to_vec()?;
/// drop(imported); // closes the import; tell the exporter it may free
/// # Ok(()) }
/// ```
pub type ImportedBuffer<T> = Buffer<T, Imported>;

/// A typed, serialisable handle to a buffer of `T` that another process can
/// open: from [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc)
/// or [`PoolBuffer::export_ipc`](crate::PoolBuffer::export_ipc).
///
/// It carries the driver's 64-byte handle, the length, `T`'s size,
/// alignment and layout fingerprint, and which process exported it.
/// [`from_bytes`](Self::from_bytes) refuses bytes that describe another `T`.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// # fn f(buf: &mut cuda_mem::DeviceBuffer<u64>) -> cuda_mem::Result<()> {
/// let bytes: Vec<u8> = buf.export_ipc()?.to_bytes();
/// assert_eq!(bytes.len(), cuda_mem::ipc::IpcHandle::<u64>::BYTES);
/// # Ok(()) }
/// ```
pub struct IpcHandle<T> {
    kind: Kind,
    raw: [u8; 64],
    len: usize,
    exporter: Exporter,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for IpcHandle<T> {
    fn clone(&self) -> Self {
        Self {
            kind: self.kind,
            raw: self.raw,
            len: self.len,
            exporter: self.exporter,
            _t: PhantomData,
        }
    }
}

impl<T> std::fmt::Debug for IpcHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcHandle")
            .field("type", &std::any::type_name::<T>())
            .field("kind", &self.kind)
            .field("len", &self.len)
            .field("exporter_pid", &self.exporter.pid)
            .finish()
    }
}

impl<T: DeviceCopy> IpcHandle<T> {
    /// The length of [`to_bytes`](Self::to_bytes)'s output, the same for
    /// every `T`.
    ///
    /// ```
    /// # use cuda_mem::prelude::*;
    /// assert_eq!(cuda_mem::ipc::IpcHandle::<u8>::BYTES, cuda_mem::ipc::IpcHandle::<[f64; 4]>::BYTES);
    /// ```
    pub const BYTES: usize = FRAME_BYTES;

    pub(super) fn new(kind: Kind, raw: [u8; 64], len: usize) -> Self {
        Self {
            kind,
            raw,
            len,
            exporter: Exporter::this_process(),
            _t: PhantomData,
        }
    }

    /// The number of elements of the exported buffer.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(buf: &mut cuda_mem::DeviceBuffer<u64>) -> cuda_mem::Result<()> {
    /// assert_eq!(buf.export_ipc()?.len(), buf.len());
    /// # Ok(()) }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the exported buffer has no elements.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(buf: &mut cuda_mem::DeviceBuffer<u64>) -> cuda_mem::Result<()> {
    /// assert_eq!(buf.export_ipc()?.is_empty(), buf.is_empty());
    /// # Ok(()) }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The process id of the exporter.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(buf: &mut cuda_mem::DeviceBuffer<u64>) -> cuda_mem::Result<()> {
    /// assert_eq!(buf.export_ipc()?.exporter_pid(), std::process::id());
    /// # Ok(()) }
    /// ```
    pub fn exporter_pid(&self) -> u32 {
        self.exporter.pid
    }

    /// The handle as [`BYTES`](Self::BYTES) bytes, to send to another
    /// process over any channel (a pipe, a socket, a file).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(buf: &mut cuda_mem::DeviceBuffer<u64>) -> cuda_mem::Result<()> {
    /// std::fs::write("/dev/shm/my-buffer.handle", buf.export_ipc()?.to_bytes()).unwrap();
    /// # Ok(()) }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes = self.len as u64 * size_of::<T>() as u64;
        Frame {
            kind: self.kind,
            raw: self.raw,
            numbers: [
                bytes,
                self.len as u64,
                size_of::<T>() as u64,
                align_of::<T>() as u64,
                T::__LAYOUT,
            ],
            exporter: self.exporter,
        }
        .encode()
    }

    /// Reads a handle that [`to_bytes`](Self::to_bytes) wrote. `Err` when
    /// the bytes are truncated, corrupted, from another format version, not
    /// a buffer handle, or describe a buffer of another element type (size,
    /// alignment or layout fingerprint differ: the error names both).
    ///
    /// ```
    /// # use cuda_mem::prelude::*;
    /// use cuda_mem::ipc::IpcHandle;
    /// assert!(IpcHandle::<u32>::from_bytes(&[0u8; 10]).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let frame = Frame::decode(bytes, "IPC buffer handle")?;
        if frame.kind == Kind::Event {
            return Err(corrupt(
                "these bytes are an IPC event handle, not a buffer handle (read them with \
                 IpcEventHandle::from_bytes)"
                    .into(),
            ));
        }
        let [bytes, len, size, align, layout] = frame.numbers;
        let (my_size, my_align) = (size_of::<T>() as u64, align_of::<T>() as u64);
        if size != my_size || align != my_align || layout != T::__LAYOUT {
            return Err(Error::Ipc {
                problem: format!(
                    "the handle is of a buffer whose elements are {size} bytes, aligned to \
                     {align}, layout fingerprint {layout:#018x}, but `{}` is {my_size} bytes, \
                     aligned to {my_align}, fingerprint {:#018x}",
                    std::any::type_name::<T>(),
                    T::__LAYOUT
                ),
                remedy: "open it as the element type the exporter used: the same struct \
                         definition (field order, types and repr) in both programs",
            });
        }
        let len = usize::try_from(len).map_err(|_| corrupt("the length does not fit".into()))?;
        if byte_len::<T>(len)? as u64 != bytes {
            return Err(corrupt(format!(
                "the handle says {len} elements but {bytes} bytes"
            )));
        }
        if (frame.kind == Kind::Empty) != (len == 0) {
            return Err(corrupt(
                "the handle's kind and length disagree (empty vs not)".into(),
            ));
        }
        Ok(Self {
            kind: frame.kind,
            raw: frame.raw,
            len,
            exporter: frame.exporter,
            _t: PhantomData,
        })
    }

    /// Claims this handle for an import in this process (see
    /// `open_imports`), or `Err` when it is open already.
    fn claim(&self) -> Result<open_imports::Claim> {
        open_imports::claim((self.kind as u8, self.raw)).ok_or_else(already_open)
    }

    /// Refuses a handle this process exported, and one whose exporter has
    /// exited.
    fn check_openable(&self) -> Result<()> {
        if self.exporter.is_this_process() {
            return Err(Error::Ipc {
                problem: "this handle was exported by this very process, and CUDA cannot open \
                          an IPC handle in the process that exported it"
                    .into(),
                remedy: "use the original buffer here; open the handle in another process",
            });
        }
        self.exporter.check("buffer")
    }

    /// Opens a handle of device memory (`cuIpcOpenMemHandle`, with lazy
    /// peer access when the memory lives on another GPU) in `ctx`.
    ///
    /// `Err` for a handle this process exported (CUDA cannot open those),
    /// when the exporter has exited, for a pool allocation's handle (use
    /// [`open_in_pool`](Self::open_in_pool)), when the handle claims more
    /// elements than the exporter's allocation holds (the bytes were
    /// altered: the checksum only catches accidents), or the driver's error.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(bytes: &[u8]) -> cuda_mem::Result<()> {
    /// let ctx = cuda_mem::context(0)?;
    /// let imported = cuda_mem::ipc::IpcHandle::<f32>::from_bytes(bytes)?.open(&ctx)?;
    /// println!("{} elements, first {}", imported.len(), imported.slice(0..1)?.to_vec()?[0]);
    /// # Ok(()) }
    /// ```
    pub fn open(&self, ctx: &Arc<CudaContext>) -> Result<ImportedBuffer<T>> {
        let state = ContextState::of(ctx)?;
        self.check_openable()?;
        match self.kind {
            Kind::Empty => {
                return Ok(Buffer::from_raw(
                    RawMemory::imported(
                        state,
                        0,
                        0,
                        AllocKind::Imported {
                            pool: None,
                            exporter: self.exporter,
                        },
                    ),
                    0,
                ))
            }
            Kind::Memory => {}
            _ => {
                return Err(Error::Ipc {
                    problem: "this handle is of a pool allocation".into(),
                    remedy: "import the pool with MemPool::import_fd and open the handle with \
                             IpcHandle::open_in_pool",
                })
            }
        }
        let bytes = byte_len::<T>(self.len)?;
        let claim = self.claim()?;
        let handle = sys::CUipcMemHandle {
            reserved: self.raw.map(|b| b as core::ffi::c_char),
        };
        state.bind()?;
        let mut addr = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; the context is current; the handle's bytes
        // came from `cuIpcGetMemHandle` (checksummed); the memory is only
        // handed out as `DeviceCopy` values, for which any bytes are valid.
        let r = unsafe {
            sys::cuIpcOpenMemHandle_v2(
                addr.as_mut_ptr(),
                handle,
                sys::CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS as u32,
            )
            .result()
        };
        if let Err(e) = r {
            // The exporter may have exited between the check and the call.
            self.exporter.check("buffer")?;
            return Err(Error::driver("cuIpcOpenMemHandle", e));
        }
        // SAFETY: written by the successful call above.
        let addr = unsafe { addr.assume_init() };
        // The length is only checksummed, not authenticated: bytes that
        // claim more elements than the exporter's allocation holds would
        // give a buffer past the end of the mapping.
        if let Err(e) = mapped_range(addr).and_then(|range| check_fits(addr, bytes, range)) {
            // SAFETY: `addr` was returned by the successful open above, which
            // added the reference this call removes; nothing uses it.
            let r = unsafe { sys::cuIpcCloseMemHandle(addr).result() };
            r.op("cuIpcCloseMemHandle")?;
            return Err(e);
        }
        if !claim.mapped(ctx.cu_ctx() as usize, addr) {
            // Other bytes for an allocation open here already: the driver
            // counted a second reference to the same mapping. Give it back,
            // leaving the existing import as it is.
            // SAFETY: `addr` was returned by the successful open above, which
            // added the reference this call removes.
            let r = unsafe { sys::cuIpcCloseMemHandle(addr).result() };
            r.op("cuIpcCloseMemHandle")?;
            return Err(already_open());
        }
        Ok(Buffer::from_raw(
            RawMemory::imported(
                state,
                addr,
                bytes,
                AllocKind::Imported {
                    pool: None,
                    exporter: self.exporter,
                },
            ),
            self.len,
        ))
    }

    /// Opens a handle of a pool allocation (`cuMemPoolImportPointer`) from
    /// `pool`, the exporter's pool imported with [`MemPool::import_fd`].
    /// The import holds a clone of `pool`, and is freed when dropped; drop
    /// it before the exporter frees the allocation. `Err` as for
    /// [`open`](Self::open), and for an allocation already open here.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(fd: std::os::fd::OwnedFd, bytes: &[u8]) -> cuda_mem::Result<()> {
    /// let ctx = cuda_mem::context(0)?;
    /// let pool = cuda_mem::MemPool::import_fd(&ctx, fd)?;
    /// let imported = cuda_mem::ipc::IpcHandle::<u16>::from_bytes(bytes)?.open_in_pool(&pool)?;
    /// # Ok(()) }
    /// ```
    pub fn open_in_pool(&self, pool: &MemPool) -> Result<ImportedBuffer<T>> {
        let state = pool.state().clone();
        self.check_openable()?;
        match self.kind {
            Kind::Empty => {
                return Ok(Buffer::from_raw(
                    RawMemory::imported(
                        state,
                        0,
                        0,
                        AllocKind::Imported {
                            pool: Some(pool.clone()),
                            exporter: self.exporter,
                        },
                    ),
                    0,
                ))
            }
            Kind::PoolPointer => {}
            _ => {
                return Err(Error::Ipc {
                    problem: "this handle is of cuMemAlloc device memory, not of a pool \
                              allocation"
                        .into(),
                    remedy: "open it with IpcHandle::open",
                })
            }
        }
        if !pool.is_imported() {
            // Only another process's pool holds another process's pointers;
            // importing into one of this process's pools could hand out an
            // allocation this process owns, under a second owner that frees it.
            return Err(Error::Ipc {
                problem: "open_in_pool needs the exporter's pool, imported into this process; \
                          this pool was created here"
                    .into(),
                remedy: "receive the exporter's pool descriptor (recv_fd) and import it with \
                         MemPool::import_fd, then open the handle in that pool",
            });
        }
        let bytes = byte_len::<T>(self.len)?;
        let claim = self.claim()?;
        let mut data = sys::CUmemPoolPtrExportData { reserved: self.raw };
        state.bind()?;
        let mut addr = MaybeUninit::uninit();
        // SAFETY: valid out-pointer and export data from `cuMemPoolExportPointer`
        // (checksummed); the pool handle is live (held by `pool`); the
        // exporter synchronised the allocation before exporting it.
        let r = unsafe {
            sys::cuMemPoolImportPointer(addr.as_mut_ptr(), pool.handle(), &mut data).result()
        };
        if let Err(e) = r {
            self.exporter.check("pool allocation")?;
            return Err(Error::driver("cuMemPoolImportPointer", e));
        }
        // SAFETY: written by the successful call above.
        let addr = unsafe { addr.assume_init() };
        let ctx = state.ctx.cu_ctx() as usize;
        // This process's own allocation, through a descriptor of one of its
        // own pools imported back (and a handle whose exporter was forged):
        // freeing the import would free memory that a buffer here owns, so
        // it is left as it is.
        if crate::memory::pool::owner_created_here(addr) {
            return Err(Error::Ipc {
                problem: "this handle is of an allocation of a pool created in this very \
                          process (its descriptor was imported back here)"
                    .into(),
                remedy: "use the original buffer here; open the handle in another process",
            });
        }
        // Other bytes for an allocation open here already: the driver handed
        // out the address of the first import again, and freeing it here
        // would free the first import's memory, so it is left as it is.
        if !claim.mapped(ctx, addr) {
            return Err(already_open());
        }
        let imported = Buffer::from_raw(
            RawMemory::imported(
                state,
                addr,
                bytes,
                AllocKind::Imported {
                    pool: Some(pool.clone()),
                    exporter: self.exporter,
                },
            ),
            self.len,
        );
        // As in `open`: the length must fit the allocation. Dropping the
        // buffer frees the import.
        mapped_range(addr).and_then(|range| check_fits(addr, bytes, range))?;
        Ok(imported)
    }
}

/// The `Err` for a second import of an allocation open in this process.
fn already_open() -> Error {
    Error::Ipc {
        problem: "this handle is already open in this process (in this context or another: \
                  two imports of one allocation would not be ordered against each other)"
            .into(),
        remedy: "use the existing ImportedBuffer (its views: slice, slice_mut) instead of opening \
                 the handle again; for another GPU, copy between it and a buffer there \
                 (copy_from orders both)",
    }
}

/// The address range the driver mapped around `addr`
/// (`cuMemGetAddressRange`): its base and size in bytes.
fn mapped_range(addr: u64) -> Result<(u64, usize)> {
    let (mut base, mut size) = (0, 0);
    // SAFETY: valid out-pointers; the caller's context is current and `addr`
    // was just returned by an import in it.
    unsafe { sys::cuMemGetAddressRange_v2(&mut base, &mut size, addr).result() }
        .op("cuMemGetAddressRange")?;
    Ok((base, size))
}

/// `Err` unless the `bytes` bytes at `addr` lie inside the mapped range
/// `(base, size)`: a handle whose length was altered after `to_bytes`
/// (and its checksum recomputed) must not give a buffer past the mapping.
fn check_fits(addr: u64, bytes: usize, (base, size): (u64, usize)) -> Result<()> {
    let inside = addr
        .checked_sub(base)
        .and_then(|offset| offset.checked_add(bytes as u64))
        .is_some_and(|end| end <= size as u64);
    if inside {
        return Ok(());
    }
    Err(corrupt(format!(
        "the handle says {bytes} bytes, but the exporter's allocation holds {} from the \
         imported address (the length was altered)",
        (base as u128 + size as u128).saturating_sub(addr as u128)
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::event::IpcEventHandle;
    use crate::ipc::wire::fnv1a;

    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Pair {
        a: u32,
        b: f32,
    }
    // SAFETY: two 4-byte fields, no padding, any bits valid.
    unsafe impl DeviceCopy for Pair {}

    fn handle<T: DeviceCopy>(kind: Kind, len: usize) -> IpcHandle<T> {
        let mut raw = [0u8; 64];
        for (i, b) in raw.iter_mut().enumerate() {
            *b = (i * 7 + 3) as u8;
        }
        IpcHandle::new(kind, raw, len)
    }

    #[test]
    fn a_handle_round_trips() {
        let h = handle::<Pair>(Kind::Memory, 12345);
        let bytes = h.to_bytes();
        assert_eq!(bytes.len(), IpcHandle::<Pair>::BYTES);
        let back = IpcHandle::<Pair>::from_bytes(&bytes).unwrap();
        assert_eq!(back.len(), 12345);
        assert_eq!(back.raw, h.raw);
        assert_eq!(back.kind, Kind::Memory);
        assert_eq!(back.exporter, Exporter::this_process());
        assert_eq!(back.to_bytes(), bytes);
    }

    #[test]
    fn every_corrupted_byte_is_refused() {
        let bytes = handle::<u64>(Kind::PoolPointer, 7).to_bytes();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x10;
            assert!(
                IpcHandle::<u64>::from_bytes(&bad).is_err(),
                "flipped byte {i}"
            );
        }
        for n in 0..bytes.len() {
            assert!(IpcHandle::<u64>::from_bytes(&bytes[..n]).is_err());
        }
    }

    #[test]
    fn another_element_type_is_refused_naming_both() {
        let bytes = handle::<Pair>(Kind::Memory, 3).to_bytes();
        // Same size and alignment, another layout.
        let e = IpcHandle::<u64>::from_bytes(&bytes)
            .unwrap_err()
            .to_string();
        assert!(e.contains("8 bytes") && e.contains("u64"), "{e}");
        let e = IpcHandle::<[u32; 2]>::from_bytes(&bytes)
            .unwrap_err()
            .to_string();
        assert!(e.contains("fingerprint"), "{e}");
        assert!(IpcHandle::<u32>::from_bytes(&bytes).is_err());
    }

    /// Bytes of a handle of `len` elements of `T` with a valid checksum,
    /// as anyone who reads the format can write them.
    fn forged<T: DeviceCopy>(kind: Kind, len: u64) -> Vec<u8> {
        let mut bytes = handle::<T>(kind, 1).to_bytes();
        bytes[72..80].copy_from_slice(&len.wrapping_mul(size_of::<T>() as u64).to_le_bytes());
        bytes[80..88].copy_from_slice(&len.to_le_bytes());
        let sum = fnv1a(&bytes[..FRAME_BYTES - 8]);
        bytes[FRAME_BYTES - 8..].copy_from_slice(&sum.to_le_bytes());
        bytes
    }

    #[test]
    fn a_forged_length_passes_the_checksum_but_not_the_mapping() {
        // The checksum cannot stop a forged length ...
        let h = IpcHandle::<u64>::from_bytes(&forged::<u64>(Kind::Memory, 1 << 20)).unwrap();
        assert_eq!(h.len(), 1 << 20);
        // ... so the length is checked against what the driver mapped.
        let base = 0x7f00_0000_0000;
        assert!(check_fits(base, 8, (base, 8)).is_ok());
        assert!(check_fits(base, 8, (base, 4096)).is_ok());
        assert!(check_fits(base + 64, 64, (base, 128)).is_ok());
        let e = check_fits(base, 8 << 20, (base, 8))
            .unwrap_err()
            .to_string();
        assert!(e.contains("8388608 bytes") && e.contains("holds 8"), "{e}");
        assert!(check_fits(base + 64, 65, (base, 128)).is_err());
        assert!(check_fits(base - 1, 1, (base, 128)).is_err());
        assert!(check_fits(u64::MAX, usize::MAX, (base, 128)).is_err());
        // A length whose byte count overflows is refused when read.
        assert!(IpcHandle::<u64>::from_bytes(&forged::<u64>(Kind::Memory, u64::MAX / 4)).is_err());
    }

    #[test]
    fn event_and_buffer_handles_are_not_confused() {
        let ev = IpcEventHandle {
            raw: [5; 64],
            exporter: Exporter::this_process(),
        };
        let bytes = ev.to_bytes();
        assert!(IpcHandle::<u8>::from_bytes(&bytes).is_err());
        assert_eq!(IpcEventHandle::from_bytes(&bytes).unwrap().raw, [5; 64]);
        let buf = handle::<u8>(Kind::Memory, 1).to_bytes();
        assert!(IpcEventHandle::from_bytes(&buf).is_err());
    }
}
