//! Driver probing, context creation, and the per-context state cuda-mem keeps
//! ([`ContextState`]: the context, its default stream, its device's
//! attributes, and lazily set-up cells whose contents and set-up belong to
//! the modules that use them: the fill kernels to `fill`, the default pool's
//! threshold to `pool`, the staging chunks to `staging`).

use std::any::Any;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::{sys, CudaContext, CudaStream};

use crate::error::{DriverResultExt, Error, Result};

/// Whether libcuda can be loaded (cached; never panics).
pub(crate) fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only dlopen()s the driver library by name and
    // drops the handle; it has no other preconditions.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// True when the CUDA driver can be loaded and at least one device is visible.
///
/// Never panics, also on a machine without the driver or without a GPU (where
/// cudarc itself would panic on its first call).
///
/// ```
/// if !cuda_mem::is_available() {
///     eprintln!("no CUDA device here");
/// }
/// ```
pub fn is_available() -> bool {
    device_count().map(|n| n > 0).unwrap_or(false)
}

/// The number of CUDA devices, or why there are none to count.
///
/// ```
/// match cuda_mem::device_count() {
///     Ok(n) => println!("{n} device(s)"),
///     Err(e) => println!("no CUDA: {e}"),
/// }
/// ```
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::DriverNotFound);
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(n.max(0) as usize),
        Err(e) => Err(Error::driver("cuDeviceGetCount", e)),
    }
}

/// Opens (retains) the primary context of device `ordinal`.
///
/// Unlike `CudaContext::new`, this returns `Err(DriverNotFound)` or
/// `Err(NoDevice)` instead of panicking when there is no driver or no device.
///
/// The first buffer made in a context sets up cuda-mem's state for it (its
/// fill kernels, loaded on first use, and the device pool's release
/// threshold). That state, and the context retain that comes with it, is kept
/// until the process exits, so later allocations never pay for it again.
///
/// ```no_run
/// let ctx = cuda_mem::context(0)?;
/// println!("{}", ctx.name()?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn context(ordinal: usize) -> Result<Arc<CudaContext>> {
    let count = device_count()?;
    if count == 0 {
        return Err(Error::NoDevice("a device count of 0"));
    }
    if ordinal >= count {
        return Err(Error::InvalidArgument(
            "device ordinal is not below the number of devices",
        ));
    }
    // The object cuda-mem already holds for this device, so that errors it
    // records there (from a `Drop`) are seen by the caller's next call.
    if let Some(ctx) = ContextState::primary_of(ordinal) {
        return Ok(ctx);
    }
    CudaContext::new(ordinal).op("cuDevicePrimaryCtxRetain")
}

/// Whether cuda-mem can hand out managed memory on a device with these
/// attributes (`CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`,
/// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`). Without concurrent access
/// (Windows, GPUs before Pascal) the host must not touch managed memory while
/// *any* kernel runs on the device, which a slice that outlives the call that
/// made it cannot know: a kernel another thread launches would fault the
/// host's access.
pub(crate) fn managed_support(managed: bool, concurrent_access: bool) -> Result<()> {
    match (managed, concurrent_access) {
        (false, _) => Err(Error::NotSupported(
            "this device has no managed (unified) memory",
        )),
        (true, false) => Err(Error::NotSupported(
            "this device has no concurrent managed access, so host code may not touch managed \
             memory while kernels run; use a DeviceBuffer with PinnedBuffer copies instead",
        )),
        (true, true) => Ok(()),
    }
}

/// Waits for all work of every context cuda-mem knows, and of every active
/// primary context (cudarc's `CudaContext::new`), whether cuda-mem queued it
/// or not. Host access to memory of `own`'s context whose host view the
/// driver copies asynchronously (managed memory; pinned memory without a host
/// alias) uses it, because cudarc's safe copies through a host slice are in
/// no allocation's order.
///
/// `own`'s errors are returned, and another context's only when they are
/// not sticky: a context whose synchronisation fails with a sticky error
/// will never run its queued work, so that work cannot touch the memory any
/// more; but a context with a stream capturing a CUDA graph refuses
/// `cuCtxSynchronize` (`CUDA_ERROR_STREAM_CAPTURE_*`) and keeps running its
/// work, which the caller then cannot know to be finished.
pub(crate) fn synchronize_all_contexts(own: &ContextState) -> Result<()> {
    let states: Vec<Arc<ContextState>> = REGISTRY
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(|r| r.state.upgrade())
        .collect();
    for state in &states {
        let synced = state
            .bind()
            .and_then(|()| state.ctx.synchronize().op("cuCtxSynchronize"));
        if state.ctx.cu_ctx() == own.ctx.cu_ctx() {
            synced?;
        } else {
            refuse_capture_error(synced)?;
        }
    }
    for ordinal in 0..device_count()? {
        let known = states
            .iter()
            .any(|s| s.ctx.is_primary() && s.ctx.ordinal() == ordinal);
        if !known {
            refuse_capture_error(synchronize_primary(ordinal))?;
        }
    }
    own.bind()
}

/// `Err` for a failed wait on another context that left its work running:
/// a stream there is capturing a CUDA graph (`CUDA_ERROR_STREAM_CAPTURE_*`,
/// 900-908, which are not sticky). Other failures are sticky errors of that
/// context (its work will never run) and are ignored.
fn refuse_capture_error(synced: Result<()>) -> Result<()> {
    match synced {
        Err(Error::Driver {
            code: 900..=908, ..
        }) => Err(Error::UnsupportedStream(
            "another context has a stream capturing a CUDA graph, so its queued work cannot be \
             waited for, and host access to this memory waits for every context's work (cudarc \
             may copy into it from any); retry once that capture has ended",
        )),
        _ => Ok(()),
    }
}

/// Waits for the primary context of device `ordinal`, if it is active.
fn synchronize_primary(ordinal: usize) -> Result<()> {
    let mut device = 0;
    // SAFETY: a valid out-pointer; the ordinal is below the device count.
    unsafe { sys::cuDeviceGet(&mut device, ordinal as i32).result() }.op("cuDeviceGet")?;
    let (mut flags, mut active) = (0u32, 0i32);
    // SAFETY: valid out-pointers for a valid device.
    unsafe { sys::cuDevicePrimaryCtxGetState(device, &mut flags, &mut active).result() }
        .op("cuDevicePrimaryCtxGetState")?;
    if active == 0 {
        return Ok(());
    }
    let mut ctx = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the retain is released below.
    unsafe { sys::cuDevicePrimaryCtxRetain(&mut ctx, device).result() }
        .op("cuDevicePrimaryCtxRetain")?;
    // SAFETY: `ctx` is the retained primary context; pushed and popped here.
    let synced = unsafe {
        sys::cuCtxPushCurrent_v2(ctx).result().and_then(|()| {
            let synced = sys::cuCtxSynchronize().result();
            let mut popped = std::ptr::null_mut();
            sys::cuCtxPopCurrent_v2(&mut popped).result()?;
            synced
        })
    };
    // SAFETY: balances the retain above.
    let released = unsafe { sys::cuDevicePrimaryCtxRelease_v2(device).result() };
    synced.op("cuCtxSynchronize")?;
    released.op("cuDevicePrimaryCtxRelease")
}

/// The state of every context cuda-mem has used, by `CUcontext` handle:
/// held for the whole run for primary contexts, weakly for the others.
static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

struct Registered {
    key: usize,
    /// Set for primary contexts: their state lives until the process exits.
    kept: Option<Arc<ContextState>>,
    state: Weak<ContextState>,
}

/// A value that one other module keeps per context, set up on its first
/// use by that module ([`ContextState::lazy`]). Its type is the owning
/// module's business: this module names none of them, so it depends on none
/// of those modules.
#[derive(Default)]
pub(crate) struct LazyCell(OnceLock<Box<dyn Any + Send + Sync>>);

impl LazyCell {
    /// The value, if it has been set up and is a `T`.
    #[inline]
    pub(crate) fn get<T: Any>(&self) -> Option<&T> {
        self.0.get().and_then(|v| v.downcast_ref())
    }

    /// Whether a value has been set up, of whatever type (one load: no
    /// type check, for a cell whose only set-up is the caller's own, which
    /// checked the type when it ran).
    #[inline]
    pub(crate) fn is_set(&self) -> bool {
        self.0.get().is_some()
    }
}

thread_local! {
    /// The last primary context this thread allocated in: its `CUcontext`
    /// and its state, which `REGISTRY` keeps (`Registered::kept`) until the
    /// process exits, so that it is held by pointer (no destructor, no
    /// `Weak` to upgrade) and [`ContextState::of`] finds it in a few loads.
    static LAST_PRIMARY: std::cell::Cell<(usize, *const ContextState)> =
        const { std::cell::Cell::new((0, std::ptr::null())) };
    /// The last other context this thread allocated in (its `CUcontext` and
    /// state), which lets [`ContextState::of`] skip the registry's lock.
    static LAST: std::cell::RefCell<Option<(usize, Weak<ContextState>)>> =
        const { std::cell::RefCell::new(None) };
}

/// A device's shared memory, in bytes: what one block may take (with the
/// opt-in above 48 KB), what an SM has, and what the driver keeps of it
/// for each resident block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedMemory {
    pub(crate) per_block: usize,
    pub(crate) per_sm: usize,
    pub(crate) reserved_per_block: usize,
}

impl SharedMemory {
    /// How many blocks that each take `bytes` of shared memory one SM holds
    /// at once, as far as shared memory goes (0: a block may not take that
    /// much).
    pub(crate) fn blocks(&self, bytes: usize) -> usize {
        if bytes > self.per_block {
            return 0;
        }
        self.per_sm / (bytes + self.reserved_per_block)
    }
}

/// What cuda-mem keeps per CUDA context. Every allocation holds one, which
/// also keeps the context alive.
pub(crate) struct ContextState {
    pub(crate) ctx: Arc<CudaContext>,
    /// The legacy default stream, used by the calls that take no stream.
    pub(crate) default_stream: Arc<CudaStream>,
    /// The stream buffers report to cudarc (`DeviceSlice::stream`). cuda-mem
    /// queues nothing on it: cudarc passes it back to `device_ptr` only when
    /// the work will run on a stream it does not name (a copy between two
    /// contexts, whose stream is the destination's), so such a use is
    /// refused (see `Elems::address_for_cudarc`).
    pub(crate) cudarc_stream: Arc<CudaStream>,
    pub(crate) sm_count: u32,
    /// The device's shared memory per block and per SM.
    pub(crate) shared_memory: SharedMemory,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`: see [`ContextState::require_managed_memory`].
    managed_memory: bool,
    pub(crate) concurrent_managed_access: bool,
    /// The fill kernels, loaded by `fill` on first use.
    pub(crate) fill_kernels: LazyCell,
    /// The kernels of `cuda_mem::algo`, loaded on first use.
    pub(crate) algo_kernels: LazyCell,
    /// Set once `pool` has raised the release threshold of the device's
    /// current pool.
    pub(crate) default_pool: LazyCell,
    /// The per-lane events of large pageable copies (see `staging`).
    pub(crate) staging: LazyCell,
    /// The cache of pinned host blocks (see `pinned_cache`).
    pub(crate) pinned_cache: LazyCell,
    /// Serialises the first-use set-ups of the cells above; a failed one is
    /// retried on the next call instead of being cached.
    set_up: Mutex<()>,
}

impl ContextState {
    /// The state of `ctx`'s context, created on first use and shared by every
    /// allocation in that context.
    ///
    /// The state of a primary context lives (and keeps the context retained)
    /// until the process exits: dropping it with the last buffer would reload
    /// the fill kernels and redo the pool set-up on the next allocation (it
    /// made a pool alloc+free 0.6 µs slower on an H200). The state of any
    /// other context lives while buffers of that context do, so that a
    /// program creating and dropping contexts does not leak them.
    #[inline]
    pub(crate) fn of(ctx: &Arc<CudaContext>) -> Result<Arc<Self>> {
        let key = ctx.cu_ctx() as usize;
        let (last, state) = LAST_PRIMARY.with(std::cell::Cell::get);
        if last == key && !state.is_null() {
            // SAFETY: `state` is `Arc::as_ptr` of the state of a primary
            // context, set by `of_other` from the `Arc` that `REGISTRY`
            // keeps (`kept`) until the process exits (entries with a
            // strong count are never removed): the allocation is live and
            // its strong count at least 1, so one more count, and an `Arc`
            // that gives it back when dropped, are sound. The key is that
            // context's `CUcontext`, which its retain (held by the state)
            // keeps from naming another context.
            return Ok(unsafe {
                Arc::increment_strong_count(state);
                Arc::from_raw(state)
            });
        }
        Self::of_other(ctx)
    }

    /// [`ContextState::of`] past the thread's last primary context (out of
    /// line): the last other context (a `Weak`), or the registry's state,
    /// remembered for the next call.
    #[inline(never)]
    fn of_other(ctx: &Arc<CudaContext>) -> Result<Arc<Self>> {
        let key = ctx.cu_ctx() as usize;
        let cached = LAST
            .try_with(|last| {
                last.borrow()
                    .as_ref()
                    .filter(|(k, _)| *k == key)
                    .and_then(|(_, state)| state.upgrade())
            })
            .ok()
            .flatten();
        if let Some(state) = cached {
            return Ok(state);
        }
        let (state, kept) = Self::lookup(ctx)?;
        if kept {
            LAST_PRIMARY.with(|last| last.set((key, Arc::as_ptr(&state))));
        } else {
            // During thread teardown the cache is gone: then every call looks up.
            let _ = LAST.try_with(|last| *last.borrow_mut() = Some((key, Arc::downgrade(&state))));
        }
        Ok(state)
    }

    /// Every live context state, or none if the registry is busy (at process
    /// exit, a thread may hold it forever).
    pub(crate) fn all_live() -> Vec<Arc<Self>> {
        match REGISTRY.try_lock() {
            Ok(registry) => registry.iter().filter_map(|r| r.state.upgrade()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// The state of the primary context of device `ordinal`, if cuda-mem holds one.
    pub(crate) fn primary_of(ordinal: usize) -> Option<Arc<CudaContext>> {
        let registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        registry
            .iter()
            .filter_map(|r| r.kept.as_ref())
            .find(|state| state.ctx.ordinal() == ordinal)
            .map(|state| state.ctx.clone())
    }

    /// The registry's state of `ctx`'s context, made and registered if
    /// there is none, and whether the registry keeps it until the process
    /// exits (`Registered::kept`: a primary context's).
    fn lookup(ctx: &Arc<CudaContext>) -> Result<(Arc<Self>, bool)> {
        let key = ctx.cu_ctx() as usize;
        let mut registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        registry.retain(|r| r.state.strong_count() > 0);
        if let Some(found) = registry
            .iter()
            .find(|r| r.key == key)
            .and_then(|r| Some((r.state.upgrade()?, r.kept.is_some())))
        {
            return Ok(found);
        }
        if crate::order::streams::is_sealed_context(ctx) {
            // The handle of `Stream`s, which `Stream::new` keeps from ever
            // getting here: the state's own handle is handed out.
            return Err(Error::NotSupported(
                "a cuda-mem bug: a context's state was about to be made from the handle of its \
                 cuda_mem::Streams; please report it",
            ));
        }
        let attr = |a| ctx.attribute(a).op("cuDeviceGetAttribute");
        let sm_count = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let managed = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?;
        let cma = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?;
        // Read by the algorithms' choice of tiles only: a driver that does
        // not know one of these (the reservation is CUDA 11's) gets the
        // 48 KB every device has, and the smallest tiles.
        let bytes = |a, default: usize| ctx.attribute(a).map_or(default, |v| v.max(0) as usize);
        let shared_memory = SharedMemory {
            per_block: bytes(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                48 << 10,
            ),
            per_sm: bytes(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                48 << 10,
            ),
            reserved_per_block: bytes(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
                1 << 10,
            ),
        };
        let cudarc_stream = ctx.new_stream().op("cuStreamCreate")?;
        let state = Arc::new(Self {
            ctx: ctx.clone(),
            default_stream: ctx.default_stream(),
            cudarc_stream,
            sm_count: sm_count.max(1) as u32,
            shared_memory,
            managed_memory: managed != 0,
            concurrent_managed_access: cma != 0,
            fill_kernels: LazyCell::default(),
            algo_kernels: LazyCell::default(),
            default_pool: LazyCell::default(),
            staging: LazyCell::default(),
            pinned_cache: LazyCell::default(),
            set_up: Mutex::new(()),
        });
        let kept = ctx.is_primary().then(|| state.clone());
        let is_kept = kept.is_some();
        registry.push(Registered {
            key,
            kept,
            state: Arc::downgrade(&state),
        });
        Ok((state, is_kept))
    }

    /// The value of `cell`, set up by `set_up` on first use (under the
    /// set-up lock, so once per context; a failure is returned and not
    /// cached, so the next call tries again). Each cell holds one type, that
    /// of its owning module's `set_up`.
    #[inline]
    pub(crate) fn lazy<'s, T: Any + Send + Sync>(
        &'s self,
        cell: &'s LazyCell,
        set_up: impl FnOnce() -> Result<T>,
    ) -> Result<&'s T> {
        if let Some(value) = cell.get() {
            return Ok(value);
        }
        self.set_up_lazy(cell, set_up)
    }

    /// [`ContextState::lazy`] before the value is set up (out of line).
    #[inline(never)]
    fn set_up_lazy<'s, T: Any + Send + Sync>(
        &'s self,
        cell: &'s LazyCell,
        set_up: impl FnOnce() -> Result<T>,
    ) -> Result<&'s T> {
        let _guard = self.set_up.lock().unwrap_or_else(|p| p.into_inner());
        if cell.0.get().is_none() {
            let value: Box<dyn Any + Send + Sync> = Box::new(set_up()?);
            let _ = cell.0.set(value);
        }
        cell.get().ok_or(Error::InvalidArgument(
            "a per-context cell of cuda-mem holds a value of another type (a bug in cuda-mem; \
             please report it)",
        ))
    }

    /// `Err(NotSupported)` unless the device has managed (unified) memory
    /// that the host may touch while kernels run (see [`managed_support`]).
    pub(crate) fn require_managed_memory(&self) -> Result<()> {
        managed_support(self.managed_memory, self.concurrent_managed_access)
    }

    /// Checks that `stream` belongs to this context and that cuda-mem can
    /// order work on it (see [`check_orderable`](crate::order::streams::check_orderable)). The context's own default
    /// stream, which cuda-mem uses for the calls that take no stream, passes.
    #[inline]
    pub(crate) fn check_stream(&self, stream: &CudaStream) -> Result<()> {
        self.check_context(stream)?;
        if std::ptr::eq(stream, &*self.default_stream) {
            return Ok(());
        }
        crate::order::streams::check_orderable(stream)
    }

    /// Checks that `stream` belongs to this context (the first half of
    /// [`check_stream`](Self::check_stream)).
    #[inline]
    pub(crate) fn check_context(&self, stream: &CudaStream) -> Result<()> {
        // One `Arc` is one context (the common case), without reading it.
        let own = Arc::ptr_eq(stream.context(), &self.ctx);
        if !own && stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(Error::ContextMismatch("the stream"));
        }
        Ok(())
    }

    /// Makes this context current on the calling thread (see
    /// [`current::bind`](crate::current::bind)).
    #[inline]
    pub(crate) fn bind(&self) -> Result<()> {
        crate::current::bind(&self.ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_capture_errors_of_other_contexts_are_refused() {
        use sys::CUresult::*;
        let driver = |result: sys::CUresult| {
            Err(Error::Driver {
                op: "cuCtxSynchronize",
                name: format!("{result:?}"),
                code: result as u32,
                description: String::new(),
                source: cudarc::driver::DriverError(result),
            })
        };
        for capture in [
            CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
            CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
        ] {
            let refused = refuse_capture_error(driver(capture))
                .unwrap_err()
                .to_string();
            assert!(refused.contains("capturing a CUDA graph"), "{refused}");
        }
        for sticky in [CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED] {
            assert!(refuse_capture_error(driver(sticky)).is_ok());
        }
        assert!(refuse_capture_error(Ok(())).is_ok());
    }

    #[test]
    fn managed_memory_needs_concurrent_access() {
        assert!(managed_support(true, true).is_ok());
        let refused = managed_support(true, false).unwrap_err().to_string();
        assert!(
            refused.contains("no concurrent managed access"),
            "{refused}"
        );
        let none = managed_support(false, true).unwrap_err().to_string();
        assert!(none.contains("no managed (unified) memory"), "{none}");
    }
}
