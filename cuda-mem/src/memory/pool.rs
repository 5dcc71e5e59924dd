//! [`MemPool`]: a stream-ordered memory pool with a sane release threshold,
//! trimming and usage statistics, and the one-time set-up of each device's
//! default pool for cuda-mem's `PoolBuffer`s.

use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys, CudaContext};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};

/// A CUDA memory pool (`cuMemPoolCreate`) for [`PoolBuffer`](crate::PoolBuffer)s.
///
/// **Release threshold.** CUDA's default threshold is 0: at every
/// synchronisation the pool hands all unused memory back to the driver, and
/// the next allocation maps it again. On an H200 that makes an
/// alloc/free/synchronise cycle about 45× slower (117 µs instead of 2.6 µs).
/// cuda-mem therefore sets the threshold to `u64::MAX` (keep everything) for
/// the pools it creates and for the device's default pool the first time a
/// [`PoolBuffer`](crate::PoolBuffer) uses it, as RMM and CCCL do. Memory then
/// stays reserved until you call [`MemPool::trim_to`] or lower the threshold
/// with [`MemPool::set_release_threshold`].
///
/// Cloning is cheap (shared handle); the pool is destroyed when the last clone
/// and the last buffer from it are gone.
///
/// ```no_run
/// use cuda_mem::{MemPool, PoolBuffer};
/// let ctx = cuda_mem::context(0)?;
/// let stream = ctx.new_stream()?;
/// let pool = MemPool::new(&ctx)?;
/// let buf = PoolBuffer::<f32>::from_pool(&pool, 1 << 20, &stream)?;
/// println!("{:?}", pool.usage()?);
/// buf.free_on_stream(&stream)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct MemPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    state: Arc<ContextState>,
    handle: sys::CUmemoryPool,
    owned: bool,
    /// Created with POSIX file descriptors as shareable handles (`ipc`).
    shareable: bool,
    /// Imported from another process (`ipc`): pointers are imported from it.
    imported: bool,
}

/// The handles of the pools this process created (`cuMemPoolCreate`) that
/// are still alive. A descriptor of one of them imported back into this
/// process (`ipc`) must not become a second owner, nor a pointer imported
/// from it a second owner of this process's own allocation.
static CREATED_HERE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn created_here() -> std::sync::MutexGuard<'static, Vec<usize>> {
    CREATED_HERE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Whether `handle` is a live pool created in this process.
pub(crate) fn is_created_here(handle: sys::CUmemoryPool) -> bool {
    created_here().contains(&(handle as usize))
}

/// Whether the pool that owns the allocation at `addr` (its
/// `CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`) was created in this process. A
/// failed query answers `false`: only a positive answer changes anything.
pub(crate) fn owner_created_here(addr: u64) -> bool {
    pool_of(addr).is_ok_and(|pool| !pool.is_null() && is_created_here(pool))
}

/// The pool that owns the stream-ordered allocation at `addr`
/// (`CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`).
fn pool_of(addr: u64) -> Result<sys::CUmemoryPool> {
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: the attribute is a `CUmemoryPool`, written to a valid
    // out-pointer of that type; any address may be queried.
    unsafe {
        sys::cuPointerGetAttribute(
            (&mut pool as *mut sys::CUmemoryPool).cast::<c_void>(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE,
            addr,
        )
        .result()
    }
    .op("cuPointerGetAttribute(MEMPOOL_HANDLE)")?;
    Ok(pool)
}

// SAFETY: a CUmemoryPool handle may be used from any thread; the driver
// synchronises access to the pool.
unsafe impl Send for PoolInner {}
// SAFETY: as above.
unsafe impl Sync for PoolInner {}

impl Drop for PoolInner {
    fn drop(&mut self) {
        if self.owned && !self.imported {
            // Forgotten before the handle is destroyed (and may be reused).
            created_here().retain(|&h| h != self.handle as usize);
        }
        if self.owned {
            // Outstanding stream-ordered frees are fine: the driver releases the
            // pool once they complete.
            let r = self.state.ctx.bind_to_thread();
            self.state.ctx.record_err(r);
            // SAFETY: the pool was created by us and no allocation from it is
            // alive (each holds a clone of the pool).
            let r = unsafe { result::mem_pool::destroy(self.handle) };
            self.state.ctx.record_err(r);
        }
    }
}

/// Raises the release threshold of the device's current pool to `u64::MAX`
/// once per context (see [`MemPool`] for why), before the first
/// stream-ordered allocation from it.
#[inline]
pub(crate) fn prepare_default_pool(state: &ContextState) -> Result<()> {
    // Set up already (the common case): this function is the cell's only
    // set-up, whose `()` was type-checked when it ran.
    if state.default_pool.is_set() {
        return Ok(());
    }
    state
        .lazy(&state.default_pool, || {
            MemPool::device_current(&state.ctx)?.set_release_threshold(u64::MAX)
        })
        .map(drop)
}

/// Usage statistics of a [`MemPool`], read from the driver.
///
/// ```no_run
/// # let pool: cuda_mem::MemPool = unimplemented!();
/// let u = pool.usage()?;
/// assert!(u.used_current <= u.reserved_current);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// Bytes the pool currently holds from the driver.
    pub reserved_current: u64,
    /// High-water mark of `reserved_current` since creation or the last reset.
    pub reserved_high: u64,
    /// Bytes currently handed out to allocations.
    pub used_current: u64,
    /// High-water mark of `used_current` since creation or the last reset.
    pub used_high: u64,
}

fn device_location(ordinal: usize) -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: ordinal as i32,
    }
}

/// Lets the device `peer_ordinal` read and write every allocation of the
/// pool that the stream-ordered allocation at `addr` came from
/// (`cuMemPoolSetAccess`), unless it already may. Pool memory does not follow
/// `cuCtxEnablePeerAccess`; peer copies of it need this.
pub(crate) fn grant_peer_access(addr: u64, peer_ordinal: usize) -> Result<()> {
    let pool = pool_of(addr)?;
    let mut location = device_location(peer_ordinal);
    let mut flags = std::mem::MaybeUninit::<sys::CUmemAccess_flags>::uninit();
    // SAFETY: valid out-pointer, pool handle from the driver, a device location.
    unsafe { sys::cuMemPoolGetAccess(flags.as_mut_ptr(), pool, &mut location).result() }
        .op("cuMemPoolGetAccess")?;
    // SAFETY: written by the successful call above.
    if unsafe { flags.assume_init() } == sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE
    {
        return Ok(());
    }
    let desc = sys::CUmemAccessDesc {
        location,
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: one valid access descriptor for a device that can be a peer of
    // the pool's device (the caller enabled peer access between them).
    unsafe { sys::cuMemPoolSetAccess(pool, &desc, 1).result() }.op("cuMemPoolSetAccess")
}

impl MemPool {
    /// Creates a new pool on `ctx`'s device, with the release threshold at `u64::MAX`.
    ///
    /// `Err(NotSupported)` when the device or driver has no memory pools.
    ///
    /// ```no_run
    /// let pool = cuda_mem::MemPool::new(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn new(ctx: &Arc<CudaContext>) -> Result<Self> {
        Self::create(ctx, sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE)
    }

    /// [`MemPool::new`] with the shareable handle types `handle_types`
    /// (`ipc` makes pools another process can import).
    pub(crate) fn create(
        ctx: &Arc<CudaContext>,
        handle_types: sys::CUmemAllocationHandleType,
    ) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        Self::require_pools(&state)?;
        state.bind()?;
        // SAFETY: all-zero is a valid CUmemPoolProps (no handle types, no limits);
        // we then set the fields that matter.
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location = device_location(ctx.ordinal());
        props.handleTypes = handle_types;
        // SAFETY: `props` is fully initialised.
        let handle = unsafe { result::mem_pool::create(&props) }.op("cuMemPoolCreate")?;
        created_here().push(handle as usize);
        let pool = Self {
            inner: Arc::new(PoolInner {
                state,
                handle,
                owned: true,
                shareable: handle_types != sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE,
                imported: false,
            }),
        };
        pool.set_release_threshold(u64::MAX)?;
        Ok(pool)
    }

    /// The device's current pool (the one `cuMemAllocAsync` uses), which is not
    /// destroyed when dropped. Its release threshold is raised to `u64::MAX`
    /// the first time cuda-mem allocates from it (see the type docs).
    ///
    /// ```no_run
    /// let pool = cuda_mem::MemPool::device_current(&cuda_mem::context(0)?)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn device_current(ctx: &Arc<CudaContext>) -> Result<Self> {
        let state = ContextState::of(ctx)?;
        Self::require_pools(&state)?;
        state.bind()?;
        let mut handle = std::mem::MaybeUninit::uninit();
        // SAFETY: valid out-pointer and device handle.
        unsafe { sys::cuDeviceGetMemPool(handle.as_mut_ptr(), ctx.cu_device()).result() }
            .op("cuDeviceGetMemPool")?;
        // SAFETY: written by the successful call above.
        let handle = unsafe { handle.assume_init() };
        Ok(Self {
            inner: Arc::new(PoolInner {
                state,
                handle,
                owned: false,
                shareable: false,
                imported: false,
            }),
        })
    }

    /// A pool another process shared (`ipc`), destroyed when the last clone
    /// and the last pointer imported from it are gone.
    pub(crate) fn from_imported(state: Arc<ContextState>, handle: sys::CUmemoryPool) -> Self {
        Self {
            inner: Arc::new(PoolInner {
                state,
                handle,
                owned: true,
                shareable: false,
                imported: true,
            }),
        }
    }

    /// Whether the pool was made shareable ([`MemPool::new_shareable`]).
    pub(crate) fn is_shareable(&self) -> bool {
        self.inner.shareable
    }

    /// Whether the pool was imported from another process
    /// ([`MemPool::import_fd`]).
    pub(crate) fn is_imported(&self) -> bool {
        self.inner.imported
    }

    pub(crate) fn require_pools(state: &ContextState) -> Result<()> {
        if state.ctx.has_async_alloc() {
            Ok(())
        } else {
            Err(Error::NotSupported("memory pools (stream-ordered allocation) are not supported by this device or driver"))
        }
    }

    pub(crate) fn handle(&self) -> sys::CUmemoryPool {
        self.inner.handle
    }

    pub(crate) fn state(&self) -> &Arc<ContextState> {
        &self.inner.state
    }

    pub(crate) fn context_handle(&self) -> usize {
        self.inner.state.ctx.cu_ctx() as usize
    }

    fn get_u64(&self, attr: sys::CUmemPool_attribute) -> Result<u64> {
        self.inner.state.bind()?;
        let mut value = 0u64;
        // SAFETY: every attribute read here is a cuuint64_t.
        unsafe {
            result::mem_pool::get_attribute(
                self.inner.handle,
                attr,
                (&mut value as *mut u64).cast::<c_void>(),
            )
        }
        .op("cuMemPoolGetAttribute")?;
        Ok(value)
    }

    fn set_u64(&self, attr: sys::CUmemPool_attribute, mut value: u64) -> Result<()> {
        self.inner.state.bind()?;
        // SAFETY: every attribute written here is a cuuint64_t.
        unsafe {
            result::mem_pool::set_attribute(
                self.inner.handle,
                attr,
                (&mut value as *mut u64).cast::<c_void>(),
            )
        }
        .op("cuMemPoolSetAttribute")
    }

    /// Bytes of unused memory the pool keeps at a synchronisation instead of
    /// giving them back to the driver.
    ///
    /// ```no_run
    /// # let pool: cuda_mem::MemPool = unimplemented!();
    /// assert_eq!(pool.release_threshold()?, u64::MAX);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn release_threshold(&self) -> Result<u64> {
        self.get_u64(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    }

    /// Sets the release threshold (see the type docs for the trade-off).
    ///
    /// ```no_run
    /// # let pool: cuda_mem::MemPool = unimplemented!();
    /// pool.set_release_threshold(1 << 30)?; // keep at most 1 GiB of unused memory
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        self.set_u64(
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            bytes,
        )
    }

    /// Gives unused memory back to the driver until at most `keep_bytes` stay reserved.
    ///
    /// ```no_run
    /// # let pool: cuda_mem::MemPool = unimplemented!();
    /// pool.trim_to(0)?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn trim_to(&self, keep_bytes: usize) -> Result<()> {
        self.inner.state.bind()?;
        // SAFETY: a valid pool handle; trimming never touches memory in use.
        unsafe { result::mem_pool::trim_to(self.inner.handle, keep_bytes) }.op("cuMemPoolTrimTo")
    }

    /// Reserved and used bytes, current and high-water, as the driver reports them.
    ///
    /// ```no_run
    /// # let pool: cuda_mem::MemPool = unimplemented!();
    /// println!("{} bytes in use", pool.usage()?.used_current);
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn usage(&self) -> Result<PoolUsage> {
        use sys::CUmemPool_attribute::*;
        Ok(PoolUsage {
            reserved_current: self.get_u64(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
            reserved_high: self.get_u64(CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)?,
            used_current: self.get_u64(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
            used_high: self.get_u64(CU_MEMPOOL_ATTR_USED_MEM_HIGH)?,
        })
    }

    /// Resets both high-water marks to the current values.
    ///
    /// ```no_run
    /// # let pool: cuda_mem::MemPool = unimplemented!();
    /// pool.reset_high_water()?;
    /// # Ok::<(), cuda_mem::Error>(())
    /// ```
    pub fn reset_high_water(&self) -> Result<()> {
        // The driver only accepts 0 for these two attributes.
        self.set_u64(
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH,
            0,
        )?;
        self.set_u64(sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0)
    }
}

impl std::fmt::Debug for MemPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemPool")
            .field("handle", &self.inner.handle)
            .field("owned", &self.inner.owned)
            .finish()
    }
}
