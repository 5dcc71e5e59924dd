//! Driver probing, context creation, and the per-context state cuda-mem keeps
//! (the fill kernels' module, loaded once, and the default stream).

use std::sync::{Arc, Mutex, OnceLock, Weak};

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream};

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

/// The state of every context cuda-mem has used, by `CUcontext` handle:
/// held for the whole run for primary contexts, weakly for the others.
static REGISTRY: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

struct Registered {
    key: usize,
    /// Set for primary contexts: their state lives until the process exits.
    kept: Option<Arc<ContextState>>,
    state: Weak<ContextState>,
}

/// One fill kernel loaded into a context, with how many of its blocks the
/// whole device runs at once.
pub(crate) struct FillKernel {
    pub(crate) function: CudaFunction,
    /// Blocks of [`crate::fill::BLOCK`] threads resident on the device at once
    /// (multiprocessors times the occupancy the driver computes for this kernel).
    pub(crate) resident_blocks: u64,
}

/// The two fill kernels of this crate, loaded into one context.
pub(crate) struct FillKernels {
    pub(crate) small: FillKernel,
    pub(crate) large: FillKernel,
}

/// What cuda-mem keeps per CUDA context. Every allocation holds one, which
/// also keeps the context alive.
pub(crate) struct ContextState {
    pub(crate) ctx: Arc<CudaContext>,
    /// The legacy default stream, used by the calls that take no stream.
    pub(crate) default_stream: Arc<CudaStream>,
    pub(crate) sm_count: u32,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`: see [`ContextState::require_managed_memory`].
    managed_memory: bool,
    pub(crate) concurrent_managed_access: bool,
    kernels: OnceLock<FillKernels>,
    default_pool_ready: OnceLock<()>,
    /// Serialises the first-use set-ups above; a failed one is retried on the
    /// next call instead of being cached.
    set_up: Mutex<()>,
    /// Pinned chunks for large pageable copies (see `staging`).
    pub(crate) staging: crate::staging::StagingCell,
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
    pub(crate) fn of(ctx: &Arc<CudaContext>) -> Result<Arc<Self>> {
        thread_local! {
            // The last context this thread allocated in: skips the registry's lock.
            static LAST: std::cell::RefCell<Option<(usize, Weak<ContextState>)>> = const { std::cell::RefCell::new(None) };
        }
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
        let state = Self::lookup(ctx)?;
        // During thread teardown the cache is gone: then every call looks up.
        let _ = LAST.try_with(|last| *last.borrow_mut() = Some((key, Arc::downgrade(&state))));
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

    fn lookup(ctx: &Arc<CudaContext>) -> Result<Arc<Self>> {
        let key = ctx.cu_ctx() as usize;
        let mut registry = REGISTRY.lock().unwrap_or_else(|p| p.into_inner());
        registry.retain(|r| r.state.strong_count() > 0);
        if let Some(state) = registry
            .iter()
            .find(|r| r.key == key)
            .and_then(|r| r.state.upgrade())
        {
            return Ok(state);
        }
        let attr = |a| ctx.attribute(a).op("cuDeviceGetAttribute");
        let sm_count = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let managed = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)?;
        let cma = attr(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?;
        let state = Arc::new(Self {
            ctx: ctx.clone(),
            default_stream: ctx.default_stream(),
            sm_count: sm_count.max(1) as u32,
            managed_memory: managed != 0,
            concurrent_managed_access: cma != 0,
            kernels: OnceLock::new(),
            default_pool_ready: OnceLock::new(),
            set_up: Mutex::new(()),
            staging: Mutex::new(crate::staging::StagingSlot::Untried),
        });
        registry.push(Registered {
            key,
            kept: ctx.is_primary().then(|| state.clone()),
            state: Arc::downgrade(&state),
        });
        Ok(state)
    }

    /// Runs `set_up` under the set-up lock unless `cell` is already set;
    /// stores its value only on success.
    fn once<'s, T>(
        &'s self,
        cell: &'s OnceLock<T>,
        set_up: impl FnOnce() -> Result<T>,
    ) -> Result<&'s T> {
        if let Some(value) = cell.get() {
            return Ok(value);
        }
        let _guard = self.set_up.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(value) = cell.get() {
            return Ok(value);
        }
        let value = set_up()?;
        Ok(cell.get_or_init(|| value))
    }

    /// The fill kernels, loading the embedded PTX on first use.
    pub(crate) fn fill_kernels(&self) -> Result<&FillKernels> {
        self.once(&self.kernels, || {
            let ptx = cudarc::nvrtc::Ptx::from_src(crate::fill::KERNELS_PTX);
            let module = self
                .ctx
                .load_module(ptx)
                .op("cuModuleLoadData (cuda-mem fill kernels)")?;
            let load = |name| -> Result<FillKernel> {
                let function = module.load_function(name).op("cuModuleGetFunction")?;
                let per_sm = function
                    .occupancy_max_active_blocks_per_multiprocessor(crate::fill::BLOCK, 0, None)
                    .op("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
                Ok(FillKernel {
                    function,
                    resident_blocks: self.sm_count as u64 * per_sm.max(1) as u64,
                })
            };
            Ok(FillKernels {
                small: load("cuda_mem_fill_small")?,
                large: load("cuda_mem_fill_large")?,
            })
        })
    }

    /// Raises the release threshold of the device's current pool to `u64::MAX`
    /// once (see [`MemPool`](crate::MemPool) for why).
    pub(crate) fn prepare_default_pool(&self) -> Result<()> {
        self.once(&self.default_pool_ready, || {
            crate::MemPool::device_current(&self.ctx)?.set_release_threshold(u64::MAX)
        })
        .map(drop)
    }

    /// `Err(NotSupported)` unless the device has managed (unified) memory.
    pub(crate) fn require_managed_memory(&self) -> Result<()> {
        if self.managed_memory {
            Ok(())
        } else {
            Err(Error::NotSupported(
                "this device has no managed (unified) memory",
            ))
        }
    }

    /// Checks that `stream` belongs to this context.
    pub(crate) fn check_stream(&self, stream: &CudaStream) -> Result<()> {
        if stream.context().cu_ctx() == self.ctx.cu_ctx() {
            Ok(())
        } else {
            Err(Error::ContextMismatch("the stream"))
        }
    }

    /// Makes this context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<()> {
        self.ctx.bind_to_thread().op("cuCtxSetCurrent")
    }
}
