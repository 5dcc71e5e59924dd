//! [`IpcEvent`]: an event two processes share, and the [`IpcEventHandle`]
//! that carries it.

use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::buffers::buffer::{Buffer, MemoryKind};
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::error::{DriverResultExt, Error, Result};
use crate::ipc::wire::{corrupt, Frame, Kind, FRAME_BYTES};
use crate::memory::exporter::Exporter;
use crate::order::streams::AsStream;
use crate::order::WHOLE;

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
    pub(super) raw: [u8; 64],
    pub(super) exporter: Exporter,
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
        stream: &impl AsStream,
    ) -> Result<()> {
        let stream = crate::order::streams::cuda_stream(stream);
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
    /// `stream` is a cudarc stream, not a [`Stream`](crate::Stream): a wait
    /// for an event that the other process may have recorded in a capture
    /// would make the stream join it, which a `Stream`'s calls would not
    /// notice (they do not ask the driver).
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
