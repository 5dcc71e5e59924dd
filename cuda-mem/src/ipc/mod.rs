//! CUDA IPC: sharing device memory and events between processes on one node
//! (Linux).
//!
//! One process per GPU is how training and serving run (torchrun, mpirun,
//! SLURM). This module lets those processes share buffers without copying
//! through the host:
//!
//! - [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc) gives an
//!   [`IpcHandle<T>`] (`cuIpcGetMemHandle`): plain bytes
//!   ([`IpcHandle::to_bytes`]) to send over any channel. The other process
//!   reads them back with [`IpcHandle::from_bytes`], which checks that they
//!   describe a buffer of the same `T` (size, alignment and the layout
//!   fingerprint that typed kernel launches use), and
//!   [`IpcHandle::open`] maps the memory (`cuIpcOpenMemHandle`) as an
//!   [`ImportedBuffer<T>`]: a [`Buffer`] of kind
//!   [`Imported`], with every buffer operation (fill, copies, views, NCCL,
//!   `unsafe` kernel arguments; not slices of `#[kernel]` launches, see
//!   [below](#kernels-and-shared-memory)). Dropping it closes the mapping
//!   (`cuIpcCloseMemHandle`), so nothing can use the memory after the import
//!   is gone: the buffer *is* the import.
//! - Pools: [`MemPool::new_shareable`] makes a pool whose allocations can be
//!   shared. [`MemPool::export_fd`] gives a file descriptor for it, which
//!   travels over a Unix socket ([`send_fd`] / [`recv_fd`]);
//!   [`MemPool::import_fd`] opens it in the other process.
//!   [`PoolBuffer::export_ipc`](crate::PoolBuffer::export_ipc)
//!   (`cuMemPoolExportPointer`) gives an [`IpcHandle<T>`] of one allocation,
//!   and [`IpcHandle::open_in_pool`] (`cuMemPoolImportPointer`) imports it.
//! - Ordering: an [`IpcEvent`] (`CU_EVENT_INTERPROCESS`) is recorded by the
//!   writer after its work on a buffer ([`IpcEvent::record_after`]); the
//!   reader opens it from its [`IpcEventHandle`] and enters a wait for it in
//!   its buffer's stream order ([`IpcEvent::order_before`]), so every later
//!   operation on that buffer, on any stream, runs after the writer's work.
//!   The GPU waits; the host never sleeps.
//!
//! # The exporter's lifetime
//!
//! A handle carries the exporter's process id and start time. Opening a
//! handle, opening an event and entering an event wait check that the
//! exporter still runs and return `Err` when it has exited (no hang), and
//! [`ImportedBuffer::check_exporter`] asks at any other point. Dropping an
//! import after the exporter exited closes it like any other, so nothing
//! leaks in the importer.
//!
//! What no type can enforce across processes is the other direction: the
//! exporter must keep its buffer until every importer has dropped its
//! import (CUDA's rule; for pool allocations the importer must even have
//! freed it first). Tell the exporter over your channel when you are done.
//!
//! A handle cannot be opened in the process that exported it (CUDA refuses);
//! [`IpcHandle::open`] says so with an `Err` instead of the driver's
//! `CUDA_ERROR_INVALID_CONTEXT`. Nor can it be opened twice in one process,
//! in one context or in contexts of two devices: the driver would map the
//! same memory again, and two buffers over it would not be ordered against
//! each other, so the second open is an `Err` too (use the one import on
//! every GPU through copies: `copy_from` orders both sides).
//!
//! Work in the two processes is ordered only through [`IpcEvent`]s (or by
//! waiting and telling the other side): like any two processes sharing
//! memory, they can race if they skip that.
//!
//! # Kernels and shared memory
//!
//! Memory shared with another process (an [`ImportedBuffer`], or a buffer
//! this process exported with `export_ipc`, from the export on) is never a
//! slice parameter of a [`#[kernel]`](macro@crate::kernel) launch
//! ([`DeviceSlice`](crate::device::DeviceSlice),
//! [`DeviceSliceMut`](crate::device::DeviceSliceMut),
//! [`DeviceAtomicSlice`](crate::device::DeviceAtomicSlice)): the launch is
//! `Err(InvalidArgument)`, for its views too. A Rust kernel reads and writes
//! its slices' elements through references, which the compiler may assume
//! nothing else changes while the kernel runs: it may load an index twice,
//! once for the bounds check and once for the access. That is why a safe
//! launch borrows its buffers and orders them on the stream, but no borrow
//! or stream order of this process binds the other one, and an
//! [`IpcEvent`] orders only what the other process chooses to record. A
//! write of the other process racing with such a kernel would be undefined
//! behaviour in this one, whatever the other process's bug, so the race is
//! refused here rather than promised away. Exporting waits for this
//! process's queued work on the buffer and takes it exclusively (`&mut`),
//! so no kernel launched before the export is still running on it.
//!
//! What remains safe on shared memory is what does not hand Rust code a
//! reference into it: fills, memsets and copies (the driver's DMA or
//! cuda-mem's fixed fill kernels write and read bytes, and any bytes are a
//! valid `DeviceCopy` value), NCCL, and `unsafe` launches. To run a Rust
//! kernel on shared data, copy it into a buffer of this process
//! ([`copy_from`](crate::MemoryMut::copy_from), after
//! [`IpcEvent::order_before`]) and back, or pass its address
//! ([`kernel_arg`](crate::Memory::kernel_arg)`(..)?.device_ptr()`) to an
//! `unsafe fn` kernel, whose caller promises that the other process does
//! not write it while the kernel runs.
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::ipc::{IpcEvent, IpcEventHandle, IpcHandle};
//! use cuda_mem::DeviceBuffer;
//!
//! // Process A: write, record an event after the write, send both handles.
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let mut data = DeviceBuffer::<[f32; 3]>::new(&ctx, 1000)?;
//! data.fill_async([1.0, 2.0, 3.0], &stream)?;
//! let ready = IpcEvent::new(&ctx)?;
//! ready.record_after(&data, &stream)?;
//! let message = [data.export_ipc()?.to_bytes(), ready.handle().to_bytes()].concat();
//! // ... send `message` to process B, keep `data` until B says it is done ...
//!
//! // Process B: open both, wait on the GPU, use the buffer.
//! let (buf, ev) = message.split_at(IpcHandle::<[f32; 3]>::BYTES);
//! let imported = IpcHandle::<[f32; 3]>::from_bytes(buf)?.open(&ctx)?;
//! let ready = IpcEvent::open(&ctx, &IpcEventHandle::from_bytes(ev)?)?;
//! ready.order_before(&imported, &stream)?;
//! assert_eq!(imported.to_vec()?[999], [1.0, 2.0, 3.0]);
//! # Ok::<(), cuda_mem::Error>(())
//! ```

mod fd;

pub use fd::{recv_fd, send_fd};

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::buffers::buffer::{Buffer, Device, Imported, MemoryKind, Pool};
use crate::buffers::ops::Memory;
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::allocation::AllocKind;
use crate::memory::exporter::Exporter;
use crate::memory::open_imports;
use crate::memory::pool::MemPool;
use crate::memory::raw::{byte_len, RawMemory};
use crate::order::WHOLE;

/// A [`Buffer`] of memory another process exported, opened in this one
/// (see the [module docs](self)). Dropping it closes the import.
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

/// The wire format: magic, version, what the handle is.
const MAGIC: [u8; 4] = *b"CMIP";
const VERSION: u16 = 1;

/// What a handle's 64 driver bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A `CUipcMemHandle` of `cuMemAlloc` memory.
    Memory = 1,
    /// A `CUmemPoolPtrExportData` of a shareable pool's allocation.
    PoolPointer = 2,
    /// A zero-length buffer: nothing to map.
    Empty = 3,
    /// A `CUipcEventHandle`.
    Event = 4,
}

impl Kind {
    fn from_u8(b: u8) -> Option<Self> {
        [Self::Memory, Self::PoolPointer, Self::Empty, Self::Event]
            .into_iter()
            .find(|k| *k as u8 == b)
    }
}

/// Encoding and decoding of the common frame: header, the 64 driver bytes,
/// kind-specific numbers, the exporter, an FNV-1a checksum.
struct Frame {
    kind: Kind,
    raw: [u8; 64],
    /// `[bytes, len, size_of::<T>, align_of::<T>, T::__LAYOUT]`; zeros for events.
    numbers: [u64; 5],
    exporter: Exporter,
}

/// Bytes of an encoded [`Frame`].
const FRAME_BYTES: usize = 4 + 2 + 1 + 1 + 64 + 5 * 8 + 4 + 8 + 8 + 8;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn corrupt(problem: String) -> Error {
    Error::Ipc {
        problem,
        remedy: "pass the exact bytes that `to_bytes` returned in the exporting process, \
                 exported by the same version of cuda-mem",
    }
}

impl Frame {
    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FRAME_BYTES);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(self.kind as u8);
        out.push(0);
        out.extend_from_slice(&self.raw);
        for n in self.numbers {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&self.exporter.pid.to_le_bytes());
        out.extend_from_slice(&self.exporter.start.to_le_bytes());
        out.extend_from_slice(&self.exporter.pid_ns.to_le_bytes());
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(out.len(), FRAME_BYTES);
        out
    }

    fn decode(bytes: &[u8], what: &str) -> Result<Self> {
        if bytes.len() != FRAME_BYTES {
            return Err(corrupt(format!(
                "an encoded {what} is {FRAME_BYTES} bytes, these are {} (truncated or joined \
                 with other data?)",
                bytes.len()
            )));
        }
        if bytes[..4] != MAGIC {
            return Err(corrupt(format!(
                "these bytes are not a cuda-mem {what} (no magic)"
            )));
        }
        let (body, sum) = bytes.split_at(FRAME_BYTES - 8);
        if fnv1a(body).to_le_bytes() != sum {
            return Err(corrupt(format!(
                "the {what} bytes are corrupted (checksum mismatch)"
            )));
        }
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
        let version = u16::from_le_bytes([bytes[4], bytes[5]]);
        if version != VERSION {
            return Err(corrupt(format!(
                "the {what} has format version {version}, this cuda-mem reads version {VERSION}"
            )));
        }
        let kind = Kind::from_u8(bytes[6])
            .ok_or_else(|| corrupt(format!("unknown {what} kind {}", bytes[6])))?;
        let mut raw = [0u8; 64];
        raw.copy_from_slice(&bytes[8..72]);
        let numbers = [0, 1, 2, 3, 4].map(|i| u64_at(72 + 8 * i));
        let pid = u32::from_le_bytes(bytes[112..116].try_into().unwrap_or_default());
        Ok(Self {
            kind,
            raw,
            numbers,
            exporter: Exporter {
                pid,
                start: u64_at(116),
                pid_ns: u64_at(124),
            },
        })
    }
}

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

    fn new(kind: Kind, raw: [u8; 64], len: usize) -> Self {
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

impl<T: DeviceCopy> Buffer<T, Device> {
    /// Exports the buffer for another process (`cuIpcGetMemHandle`).
    ///
    /// Waits for the buffer's queued work first (a kernel of this process
    /// still running on it would meet the other process's writes), and takes
    /// the buffer exclusively for the call, so that no launch of this
    /// process reads it meanwhile. From then on the buffer is shared with
    /// the other process, and no [`#[kernel]`](macro@crate::kernel) launch
    /// takes it as a slice parameter (see
    /// [Kernels and shared memory](self#kernels-and-shared-memory)); every
    /// other operation (fills, copies, NCCL, `unsafe` launches) works as
    /// before.
    ///
    /// The handle does not order later work: record an [`IpcEvent`] after
    /// the work the other process must see ([`IpcEvent::record_after`]).
    /// Keep the buffer until every importer has dropped its import.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let mut buf = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4096)?;
    /// let bytes = buf.export_ipc()?.to_bytes();
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    ///
    /// Not while a claim for a launch (or any other borrow) is held, which
    /// could queue a kernel on the buffer after the export's wait:
    ///
    /// ```compile_fail,E0502
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = ctx.new_stream()?;
    /// let mut buf = cuda_mem::DeviceBuffer::<u32>::zeroed(&ctx, 4096)?;
    /// let arg = buf.kernel_arg(&stream)?; // for a launch not made yet
    /// let bytes = buf.export_ipc()?.to_bytes(); // error: `buf` is borrowed
    /// drop(arg);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn export_ipc(&mut self) -> Result<IpcHandle<T>> {
        let mem = self.elems().mem;
        if mem.bytes == 0 {
            return Ok(IpcHandle::new(Kind::Empty, [0; 64], 0));
        }
        self.synchronize()?;
        mem.state.bind()?;
        let mut handle = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; `mem.addr` is the base of a live
        // `cuMemAlloc` allocation of the current context.
        unsafe { sys::cuIpcGetMemHandle(handle.as_mut_ptr(), mem.addr).result() }
            .op("cuIpcGetMemHandle")?;
        // SAFETY: written by the successful call above.
        let handle: sys::CUipcMemHandle = unsafe { handle.assume_init() };
        mem.mark_exported();
        Ok(IpcHandle::new(
            Kind::Memory,
            handle.reserved.map(|c| c as u8),
            self.len(),
        ))
    }
}

impl<T: DeviceCopy> Buffer<T, Pool> {
    /// Exports an allocation of a [`MemPool::new_shareable`] pool
    /// (`cuMemPoolExportPointer`); the importer opens it with
    /// [`IpcHandle::open_in_pool`]. Waits for the buffer's queued work first
    /// (the allocation itself included, which the importer must not
    /// precede). `Err` for an allocation of a pool that is not shareable.
    ///
    /// As for [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc),
    /// the buffer is taken exclusively for the call and is shared with the
    /// other process from then on: no [`#[kernel]`](macro@crate::kernel)
    /// launch takes it as a slice parameter (see
    /// [Kernels and shared memory](self#kernels-and-shared-memory)).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ctx = cuda_mem::context(0)?;
    /// let stream = ctx.new_stream()?;
    /// let pool = cuda_mem::MemPool::new_shareable(&ctx)?;
    /// let mut buf = cuda_mem::PoolBuffer::<f64>::from_pool(&pool, 100, &stream)?;
    /// let bytes = buf.export_ipc()?.to_bytes();
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn export_ipc(&mut self) -> Result<IpcHandle<T>> {
        let mem = self.elems().mem;
        if mem.bytes == 0 {
            return Ok(IpcHandle::new(Kind::Empty, [0; 64], 0));
        }
        let pool = match &mem.kind {
            AllocKind::Pool(Some(pool)) if pool.is_shareable() => pool,
            _ => {
                return Err(Error::Ipc {
                    problem: "this pool allocation cannot be exported: its pool was not created \
                              shareable"
                        .into(),
                    remedy: "allocate it from a MemPool::new_shareable pool \
                             (PoolBuffer::from_pool)",
                })
            }
        };
        // The driver exports pointers only of a pool that has been shared
        // ("an already shared memory pool"; seen on the H200, driver 580:
        // CUDA_ERROR_INVALID_VALUE before the pool's first export), so the
        // pool is exported once here; the descriptor closes at once.
        drop(pool.export_fd()?);
        self.synchronize()?;
        mem.state.bind()?;
        let mut data = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; `mem.addr` is a live stream-ordered
        // allocation of a shareable pool whose allocation has completed
        // (synchronised above).
        unsafe { sys::cuMemPoolExportPointer(data.as_mut_ptr(), mem.addr).result() }
            .op("cuMemPoolExportPointer")?;
        // SAFETY: written by the successful call above.
        let data: sys::CUmemPoolPtrExportData = unsafe { data.assume_init() };
        mem.mark_exported();
        Ok(IpcHandle::new(Kind::PoolPointer, data.reserved, self.len()))
    }
}

impl<T: DeviceCopy> Buffer<T, Imported> {
    /// `Err` when the process that exported this memory has exited: its
    /// contents are then undefined. Call it wherever a long-lived import
    /// should notice (each step of a loop); dropping the import is always
    /// fine.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(imported: &cuda_mem::ipc::ImportedBuffer<f32>) -> cuda_mem::Result<()> {
    /// imported.check_exporter()?;
    /// # Ok(()) }
    /// ```
    pub fn check_exporter(&self) -> Result<()> {
        match &self.elems().mem.kind {
            AllocKind::Imported { exporter, .. } => exporter.check("buffer"),
            // Only `open` and `open_in_pool` make imported buffers.
            _ => Ok(()),
        }
    }
}

/// An event two processes share (`CU_EVENT_INTERPROCESS`): the writer
/// records it after its work on a buffer, the reader's GPU waits for it.
///
/// Created with [`IpcEvent::new`] (timing disabled, as CUDA requires), sent
/// as an [`IpcEventHandle`], opened with [`IpcEvent::open`]. Dropping it
/// destroys this process's handle to the event.
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// # fn f(buf: &cuda_mem::DeviceBuffer<u8>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
/// let ev = cuda_mem::ipc::IpcEvent::new(&cuda_mem::context(0)?)?;
/// ev.record_after(buf, s)?;
/// let bytes = ev.handle().to_bytes();
/// # Ok(()) }
/// ```
pub struct IpcEvent {
    state: Arc<ContextState>,
    event: sys::CUevent,
    handle: IpcEventHandle,
}

// SAFETY: a CUevent may be used from any thread; the driver synchronises it.
unsafe impl Send for IpcEvent {}
// SAFETY: as above; every method only passes the handle to the driver.
unsafe impl Sync for IpcEvent {}

/// The serialisable handle of an [`IpcEvent`].
///
/// ```no_run
/// # use cuda_mem::prelude::*;
/// # fn f(ev: &cuda_mem::ipc::IpcEvent) -> cuda_mem::Result<()> {
/// let bytes = ev.handle().to_bytes();
/// let back = cuda_mem::ipc::IpcEventHandle::from_bytes(&bytes)?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct IpcEventHandle {
    raw: [u8; 64],
    exporter: Exporter,
}

impl IpcEventHandle {
    /// The length of [`to_bytes`](Self::to_bytes)'s output.
    ///
    /// ```
    /// # use cuda_mem::prelude::*;
    /// assert_eq!(cuda_mem::ipc::IpcEventHandle::BYTES, cuda_mem::ipc::IpcHandle::<u8>::BYTES);
    /// ```
    pub const BYTES: usize = FRAME_BYTES;

    /// The handle as [`BYTES`](Self::BYTES) bytes.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(ev: &cuda_mem::ipc::IpcEvent) {
    /// let bytes: Vec<u8> = ev.handle().to_bytes();
    /// # }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        Frame {
            kind: Kind::Event,
            raw: self.raw,
            numbers: [0; 5],
            exporter: self.exporter,
        }
        .encode()
    }

    /// Reads what [`to_bytes`](Self::to_bytes) wrote; `Err` for truncated,
    /// corrupted or foreign bytes, or a buffer handle.
    ///
    /// ```
    /// # use cuda_mem::prelude::*;
    /// assert!(cuda_mem::ipc::IpcEventHandle::from_bytes(b"not a handle").is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let frame = Frame::decode(bytes, "IPC event handle")?;
        if frame.kind != Kind::Event {
            return Err(corrupt(
                "these bytes are an IPC buffer handle, not an event handle (read them with \
                 IpcHandle::from_bytes)"
                    .into(),
            ));
        }
        if frame.numbers != [0; 5] {
            return Err(corrupt("the event handle has unexpected contents".into()));
        }
        Ok(Self {
            raw: frame.raw,
            exporter: frame.exporter,
        })
    }
}

impl IpcEvent {
    /// Creates an interprocess event in `ctx`
    /// (`CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING`).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let ev = cuda_mem::ipc::IpcEvent::new(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        state.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_INTERPROCESS as u32
            | sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32;
        let mut event = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; the context is current; the flags are the
        // pair CUDA requires for an interprocess event.
        unsafe { sys::cuEventCreate(event.as_mut_ptr(), flags).result() }.op("cuEventCreate")?;
        // SAFETY: written by the successful call above.
        let event = unsafe { event.assume_init() };
        let mut handle = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; an interprocess event of the current context.
        let r = unsafe { sys::cuIpcGetEventHandle(handle.as_mut_ptr(), event).result() };
        if let Err(e) = r {
            // SAFETY: created above, used by nothing.
            let _ = unsafe { sys::cuEventDestroy_v2(event) };
            return Err(Error::driver("cuIpcGetEventHandle", e));
        }
        // SAFETY: written by the successful call above.
        let handle: sys::CUipcEventHandle = unsafe { handle.assume_init() };
        Ok(Self {
            state,
            event,
            handle: IpcEventHandle {
                raw: handle.reserved.map(|c| c as u8),
                exporter: Exporter::this_process(),
            },
        })
    }

    /// Opens an event another process created (`cuIpcOpenEventHandle`).
    /// `Err` for an event of this process, or when its creator has exited.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(bytes: &[u8]) -> cuda_mem::Result<()> {
    /// use cuda_mem::ipc::{IpcEvent, IpcEventHandle};
    /// let ev = IpcEvent::open(&cuda_mem::context(0)?, &IpcEventHandle::from_bytes(bytes)?)?;
    /// # Ok(()) }
    /// ```
    pub fn open(ctx: &Arc<CudaContext>, handle: &IpcEventHandle) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        if handle.exporter.is_this_process() {
            return Err(Error::Ipc {
                problem: "this event was created by this very process, and CUDA cannot open an \
                          IPC event handle in the process that created it"
                    .into(),
                remedy: "use the original IpcEvent here; open the handle in another process",
            });
        }
        handle.exporter.check("event")?;
        state.bind()?;
        let raw = sys::CUipcEventHandle {
            reserved: handle.raw.map(|b| b as core::ffi::c_char),
        };
        let mut event = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; the context is current; the handle's bytes
        // came from `cuIpcGetEventHandle` (checksummed).
        let r = unsafe { sys::cuIpcOpenEventHandle(event.as_mut_ptr(), raw).result() };
        if let Err(e) = r {
            handle.exporter.check("event")?;
            return Err(Error::driver("cuIpcOpenEventHandle", e));
        }
        Ok(Self {
            state,
            // SAFETY: written by the successful call above.
            event: unsafe { event.assume_init() },
            handle: handle.clone(),
        })
    }

    /// The handle to send to the other process.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(ev: &cuda_mem::ipc::IpcEvent) {
    /// let bytes = ev.handle().to_bytes();
    /// # }
    /// ```
    pub fn handle(&self) -> &IpcEventHandle {
        &self.handle
    }

    fn check_stream(&self, stream: &CudaStream) -> Result<()> {
        if stream.context().cu_ctx() != self.state.ctx.cu_ctx() {
            return Err(Error::ContextMismatch("the stream (the IPC event's)"));
        }
        crate::order::streams::check_orderable(stream)
    }

    /// Records the event on `stream` after every queued operation on `buf`
    /// (in `buf`'s stream order, so work on other streams counts too). The
    /// other process's [`order_before`](Self::order_before) then waits for
    /// that work. Record before sending the handle, or before telling the
    /// other process that a new recording is there: a wait waits for the
    /// latest recording at the time the wait is queued.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(ev: &cuda_mem::ipc::IpcEvent, buf: &mut cuda_mem::DeviceBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// buf.fill_async(1.0, s)?;
    /// ev.record_after(buf, s)?;
    /// # Ok(()) }
    /// ```
    pub fn record_after<T: DeviceCopy, K: MemoryKind>(
        &self,
        buf: &Buffer<T, K>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.check_stream(stream)?;
        let mem = buf.elems().mem;
        mem.state.check_stream(stream)?;
        mem.order.run(WHOLE, stream, || {
            self.state.bind()?;
            // SAFETY: a live event and stream of the current context.
            unsafe { sys::cuEventRecord(self.event, stream.cu_stream()).result() }
                .op("cuEventRecord")
        })
    }

    /// Makes `stream` wait (on the GPU) for the work the other process
    /// recorded this event after, and enters that wait in `buf`'s stream
    /// order: every later operation on `buf`, on any stream, and host
    /// access to it, come after the other process's work. `Err` when the
    /// event's creator has exited.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(ev: &cuda_mem::ipc::IpcEvent, buf: &cuda_mem::ipc::ImportedBuffer<f32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {
    /// ev.order_before(buf, s)?;
    /// let data = buf.to_vec()?; // sees the writer's data
    /// # Ok(()) }
    /// ```
    pub fn order_before<T: DeviceCopy, K: MemoryKind>(
        &self,
        buf: &Buffer<T, K>,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        self.check_stream(stream)?;
        self.handle.exporter.check("event")?;
        let mem = buf.elems().mem;
        mem.state.check_stream(stream)?;
        mem.order.run(WHOLE, stream, || {
            self.state.bind()?;
            // SAFETY: a live event and stream of the current context.
            unsafe { sys::cuStreamWaitEvent(stream.cu_stream(), self.event, 0).result() }
                .op("cuStreamWaitEvent")
        })
    }
}

impl IpcEvent {
    /// Whether the work the event was last recorded after has completed
    /// (`cuEventQuery`), without waiting. `Err` when the event's creator has
    /// exited.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(ev: &cuda_mem::ipc::IpcEvent) -> cuda_mem::Result<()> {
    /// if !ev.is_complete()? {
    ///     println!("the writer is still working");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn is_complete(&self) -> Result<bool> {
        self.handle.exporter.check("event")?;
        self.state.bind()?;
        // SAFETY: a live event of the current context.
        match unsafe { sys::cuEventQuery(self.event) } {
            sys::CUresult::CUDA_SUCCESS => Ok(true),
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            e => Err(Error::driver(
                "cuEventQuery",
                cudarc::driver::DriverError(e),
            )),
        }
    }
}

impl Drop for IpcEvent {
    fn drop(&mut self) {
        let r = self.state.ctx.bind_to_thread();
        self.state.ctx.record_err(r);
        // SAFETY: created or opened by us; queued records and waits keep
        // working after a destroy (the driver releases the event when they
        // complete).
        let r = unsafe { sys::cuEventDestroy_v2(self.event).result() };
        self.state.ctx.record_err(r);
    }
}

impl std::fmt::Debug for IpcEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IpcEvent")
            .field("creator_pid", &self.handle.exporter.pid)
            .finish()
    }
}

impl MemPool {
    /// Creates a pool (like [`MemPool::new`]) whose allocations other
    /// processes can import: `handleTypes` is POSIX file descriptors.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// let pool = cuda_mem::MemPool::new_shareable(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new_shareable(ctx: &Arc<CudaContext>) -> Result<Self> {
        Self::create(
            ctx,
            sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        )
    }

    /// A file descriptor for the pool (`cuMemPoolExportToShareableHandle`),
    /// to pass to another process over a Unix socket ([`send_fd`]). `Err`
    /// for a pool not made with [`new_shareable`](Self::new_shareable).
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(sock: &std::os::unix::net::UnixStream) -> cuda_mem::Result<()> {
    /// use std::os::fd::AsFd;
    /// let pool = cuda_mem::MemPool::new_shareable(&cuda_mem::context(0)?)?;
    /// let fd = pool.export_fd()?;
    /// cuda_mem::ipc::send_fd(sock, fd.as_fd(), b"pool").expect("send the pool");
    /// # Ok(()) }
    /// ```
    pub fn export_fd(&self) -> Result<OwnedFd> {
        if !self.is_shareable() {
            return Err(Error::Ipc {
                problem: "this pool cannot be exported: it was not created shareable".into(),
                remedy: "create it with MemPool::new_shareable",
            });
        }
        self.state().bind()?;
        let mut fd: core::ffi::c_int = -1;
        // SAFETY: for POSIX file descriptors the out-parameter is an `int`.
        let r = unsafe {
            sys::cuMemPoolExportToShareableHandle(
                (&mut fd as *mut core::ffi::c_int).cast(),
                self.handle(),
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
            .result()
        };
        match r {
            // SAFETY: the driver returned a new descriptor that we now own.
            Ok(()) if fd >= 0 => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
            Ok(()) => Err(Error::InvalidArgument(
                "cuMemPoolExportToShareableHandle returned no file descriptor",
            )),
            Err(e) => Err(Error::driver("cuMemPoolExportToShareableHandle", e)),
        }
    }

    /// Imports a pool another process exported ([`export_fd`](Self::export_fd))
    /// into `ctx` (`cuMemPoolImportFromShareableHandle`), giving it access
    /// from `ctx`'s device if the pool lives on another one. Only for
    /// [`IpcHandle::open_in_pool`]: an imported pool cannot allocate.
    ///
    /// ```no_run
    /// # use cuda_mem::prelude::*;
    /// # fn f(sock: &std::os::unix::net::UnixStream) -> cuda_mem::Result<()> {
    /// let (_, fd) = cuda_mem::ipc::recv_fd(sock, &mut [0u8; 4]).expect("receive the pool");
    /// let pool = cuda_mem::MemPool::import_fd(&cuda_mem::context(0)?, fd)?;
    /// # Ok(()) }
    /// ```
    pub fn import_fd(ctx: &Arc<CudaContext>, fd: OwnedFd) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        Self::require_pools(&state)?;
        state.bind()?;
        let mut handle = MaybeUninit::uninit();
        // SAFETY: valid out-pointer; for POSIX file descriptors the handle
        // argument is the descriptor's value; the driver dups what it keeps,
        // and `fd` stays open (owned here) during the call.
        unsafe {
            sys::cuMemPoolImportFromShareableHandle(
                handle.as_mut_ptr(),
                fd.as_raw_fd() as isize as *mut core::ffi::c_void,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
            .result()
        }
        .op("cuMemPoolImportFromShareableHandle")?;
        drop(fd);
        // SAFETY: written by the successful call above.
        let handle = unsafe { handle.assume_init() };
        if crate::memory::pool::is_created_here(handle) {
            // The driver handed back this process's own pool: a second owner
            // would destroy it under the first (left as it is).
            return Err(Error::Ipc {
                problem: "this descriptor is of a pool created in this very process".into(),
                remedy: "use the pool itself here; import its descriptor in another process",
            });
        }
        let pool = Self::from_imported(state, handle);
        pool.grant_own_device()?;
        Ok(pool)
    }

    /// Lets this context's device read and write the (imported) pool's
    /// memory, unless it already may: imported pools are only accessible
    /// from their own device at first.
    fn grant_own_device(&self) -> Result<()> {
        let ordinal = self.state().ctx.ordinal() as i32;
        let mut location = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ordinal,
        };
        let mut flags = MaybeUninit::<sys::CUmemAccess_flags>::uninit();
        // SAFETY: valid out-pointer, a live pool handle, a device location.
        unsafe { sys::cuMemPoolGetAccess(flags.as_mut_ptr(), self.handle(), &mut location) }
            .result()
            .op("cuMemPoolGetAccess")?;
        // SAFETY: written by the successful call above.
        if unsafe { flags.assume_init() }
            == sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        {
            return Ok(());
        }
        let desc = sys::CUmemAccessDesc {
            location,
            flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one valid access descriptor for this context's device.
        unsafe { sys::cuMemPoolSetAccess(self.handle(), &desc, 1).result() }
            .op("cuMemPoolSetAccess")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
