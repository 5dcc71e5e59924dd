//! The buffers' side of IPC: `export_ipc` of device and pool buffers, and
//! what an [`ImportedBuffer`](crate::ipc::ImportedBuffer) adds to a buffer.

use std::mem::MaybeUninit;

use cudarc::driver::sys;

use crate::buffers::buffer::{Buffer, Device, Imported, Pool};
use crate::buffers::ops::Memory;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{DriverResultExt, Error, Result};
use crate::ipc::handle::IpcHandle;
use crate::ipc::wire::Kind;
use crate::memory::allocation::AllocKind;

impl<T: DeviceCopy> Buffer<T, Device> {
    /// Exports the buffer for another process (`cuIpcGetMemHandle`).
    ///
    /// Waits for the buffer's queued work first (a kernel of this process
    /// still running on it would meet the other process's writes), and takes
    /// the buffer exclusively for the call, so that no launch of this
    /// process reads it meanwhile. From then on the buffer is shared with
    /// the other process, and no [`#[kernel]`](macro@crate::kernel) launch
    /// takes it as a slice parameter (see
    /// [Kernels and shared memory](crate::ipc#kernels-and-shared-memory)); every
    /// other operation (fills, copies, NCCL, `unsafe` launches) works as
    /// before.
    ///
    /// The handle does not order later work: record an
    /// [`IpcEvent`](crate::ipc::IpcEvent) after the work the other process
    /// must see
    /// ([`IpcEvent::record_after`](crate::ipc::IpcEvent::record_after)).
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
    /// Exports an allocation of a [`MemPool::new_shareable`](crate::MemPool::new_shareable) pool
    /// (`cuMemPoolExportPointer`); the importer opens it with
    /// [`IpcHandle::open_in_pool`]. Waits for the buffer's queued work first
    /// (the allocation itself included, which the importer must not
    /// precede). `Err` for an allocation of a pool that is not shareable.
    ///
    /// As for [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc),
    /// the buffer is taken exclusively for the call and is shared with the
    /// other process from then on: no [`#[kernel]`](macro@crate::kernel)
    /// launch takes it as a slice parameter (see
    /// [Kernels and shared memory](crate::ipc#kernels-and-shared-memory)).
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
        let pool = match &*mem.kind {
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
        match &*self.elems().mem.kind {
            AllocKind::Imported { exporter, .. } => exporter.check("buffer"),
            // Only `open` and `open_in_pool` make imported buffers.
            _ => Ok(()),
        }
    }
}
