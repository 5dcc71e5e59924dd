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
//!   [`ImportedBuffer<T>`]: a [`Buffer`](crate::Buffer) of kind
//!   [`Imported`](crate::Imported), with every buffer operation (fill,
//!   copies, views, NCCL, `unsafe` kernel arguments; not slices of
//!   `#[kernel]` launches, see
//!   [below](#kernels-and-shared-memory)). Dropping it closes the mapping
//!   (`cuIpcCloseMemHandle`), so nothing can use the memory after the import
//!   is gone: the buffer *is* the import.
//! - Pools: [`MemPool::new_shareable`](crate::MemPool::new_shareable) makes
//!   a pool whose allocations can be shared.
//!   [`MemPool::export_fd`](crate::MemPool::export_fd) gives a file
//!   descriptor for it, which travels over a Unix socket ([`send_fd`] /
//!   [`recv_fd`]); [`MemPool::import_fd`](crate::MemPool::import_fd) opens
//!   it in the other process.
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

// `ipc/`, the folder: the handles (`handle`, in the wire format of `wire`),
// the buffers' side (`export`: `export_ipc`, `check_exporter`), shared events
// (`event`), shareable pools (`pool`) and file descriptors over Unix sockets
// (`fd`). What freeing an import must update (which process exported it,
// which imports are open) is `memory/`'s.
//
// May use: `buffers/`, `memory/`, `context`, `order/`, `copy/`, `error`.

mod event;
mod export;
mod fd;
mod handle;
mod pool;
mod wire;

pub use event::{IpcEvent, IpcEventHandle};
pub use fd::{recv_fd, send_fd};
pub use handle::{ImportedBuffer, IpcHandle};
