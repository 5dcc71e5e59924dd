//! Pools whose allocations other processes import: shareable pools, their
//! descriptors (file descriptors) and the pointers exported from them.

use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

use cudarc::driver::{sys, CudaContext};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::pool::MemPool;

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
    /// to pass to another process over a Unix socket ([`send_fd`](crate::ipc::send_fd)). `Err`
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
    /// [`IpcHandle::open_in_pool`](crate::ipc::IpcHandle::open_in_pool): an
    /// imported pool cannot allocate.
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
