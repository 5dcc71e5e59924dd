//! [`PinnedPages`]: page-locked host memory whose *host* view is a second,
//! unregistered mapping of the same pages, and the registry that translates
//! that view back for cuda-mem's own copies; [`PinnedFlags`] and their driver
//! flag bits (for both `cuMemHostAlloc` and `cuMemHostRegister`), once.
//!
//! # Why two mappings
//!
//! cudarc's safe copies (`memcpy_htod`, `memcpy_dtoh`, `clone_htod`) take any
//! `&[T]` / `&mut [T]` and assume it is pageable memory, for which the
//! driver's copy is synchronous: they neither wait for the copy nor record
//! it. If the slice is page-locked memory the driver knows (what
//! `cuMemHostAlloc` returns), the copy is an asynchronous DMA instead, and
//! nothing orders it: the host reads the slice before the DMA has written
//! it, frees it while the DMA runs, or writes it just before a late DMA
//! overwrites the write.
//!
//! So on Linux cuda-mem creates pinned memory as a shared memory file
//! (`memfd_create`) mapped twice: the first mapping is registered with the
//! driver (`cuMemHostRegister`) and is what DMA and kernels use (the buffer's
//! device address); the second is never registered, and is the only one the
//! host ever sees (`as_slice`, `as_mut_slice`, the `PinnedAllocator`'s
//! blocks). Both map the same physical pages, so the host sees every byte the
//! device wrote, but to the driver (and to cudarc) a host slice is ordinary
//! pageable memory: any copy through it is synchronous. cuda-mem's own
//! synchronous copies look a host slice up in this module's registry and copy
//! through the registered mapping instead, at full DMA speed.
//!
//! Write-combined memory (a `cuMemHostAlloc` flag that `cuMemHostRegister`
//! does not have) and platforms other than Linux keep one mapping; their host
//! access waits for every context instead (see `Buffer::as_slice`).

use std::collections::BTreeMap;
use std::sync::RwLock;

use cudarc::driver::{result, sys};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};

/// Host-allocation flags of [`PinnedBuffer`](crate::PinnedBuffer).
///
/// The default (all off) is plain cached page-locked memory, good for copies
/// in both directions. Write-combined memory is faster for the device to read
/// but very slow for the CPU to read, so it is off unless asked for.
///
/// ```
/// let flags = cuda_mem::PinnedFlags { portable: true, ..Default::default() };
/// assert!(!flags.write_combined);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PinnedFlags {
    /// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, not just this one.
    pub portable: bool,
    /// `CU_MEMHOSTALLOC_DEVICEMAP`: map into the device address space and read
    /// the device address with `cuMemHostGetDevicePointer`. (With unified
    /// addressing, which every 64-bit platform has, the memory is
    /// device-accessible anyway.)
    pub device_map: bool,
    /// `CU_MEMHOSTALLOC_WRITECOMBINED`: faster device reads over PCIe, very slow
    /// CPU reads.
    pub write_combined: bool,
}

impl PinnedFlags {
    /// Whether memory with these flags gets an unregistered host alias
    /// (every flag combination on Linux but write-combined): then the driver
    /// copies through a host slice of it synchronously, like pageable memory.
    pub(crate) fn aliased(self) -> bool {
        cfg!(target_os = "linux") && !self.write_combined
    }

    /// The `cuMemHostAlloc` flag bits.
    pub(crate) fn alloc_bits(self) -> u32 {
        let mut bits = 0;
        if self.portable {
            bits |= sys::CU_MEMHOSTALLOC_PORTABLE;
        }
        if self.device_map {
            bits |= sys::CU_MEMHOSTALLOC_DEVICEMAP;
        }
        if self.write_combined {
            bits |= sys::CU_MEMHOSTALLOC_WRITECOMBINED;
        }
        bits
    }

    /// The `cuMemHostRegister` flag bits (registration knows no
    /// write-combining; see `pinned_pages`).
    pub(crate) fn register_bits(self) -> u32 {
        let mut bits = 0;
        if self.portable {
            bits |= sys::CU_MEMHOSTREGISTER_PORTABLE;
        }
        if self.device_map {
            bits |= sys::CU_MEMHOSTREGISTER_DEVICEMAP;
        }
        bits
    }
}

/// One block of pinned memory: `bytes` bytes reachable by DMA at `dma`, and by
/// the host at `host` (the same address when [`PinnedPages::is_aliased`] is
/// false). Freed by [`PinnedPages::free`]; dropping it without that leaks it,
/// which is what error paths want: they never free memory a DMA may still
/// use.
pub(crate) struct PinnedPages {
    dma: *mut u8,
    host: *mut u8,
    /// The length of each mapping (`bytes` rounded up to whole pages), when
    /// the block is a registered mapping plus an alias; `None` for a
    /// `cuMemHostAlloc` block.
    mapped: Option<usize>,
}

// SAFETY: the pointers are owned addresses of mappings that live until
// `free`; nothing here dereferences them, and the driver calls on them are
// thread-safe.
unsafe impl Send for PinnedPages {}
// SAFETY: as above; shared access only reads the addresses.
unsafe impl Sync for PinnedPages {}

/// The host aliases in use: host address -> (length, registered address).
static ALIASES: RwLock<BTreeMap<usize, (usize, usize)>> = RwLock::new(BTreeMap::new());

/// The registered (DMA) address of `len` bytes at host address `host`, when
/// they lie inside one host alias of pinned memory (see [`registered_or_self`]).
fn dma_address(host: *const u8, len: usize) -> Option<*mut u8> {
    let start = host as usize;
    let aliases = ALIASES.read().unwrap_or_else(|p| p.into_inner());
    let (&alias, &(alias_len, dma)) = aliases.range(..=start).next_back()?;
    let offset = start - alias;
    (offset.checked_add(len)? <= alias_len).then_some((dma + offset) as *mut u8)
}

/// `host`, or, when its `len` bytes lie in a host alias of pinned memory, the
/// registered mapping of the same bytes: what cuda-mem's own synchronous
/// copies hand the driver, so that a slice of a `PinnedBuffer` (or of a
/// `PinnedAllocator` `Vec`) is copied by DMA rather than as pageable memory.
pub(crate) fn registered_or_self(host: *mut u8, len: usize) -> *mut u8 {
    dma_address(host, len).unwrap_or(host)
}

impl PinnedPages {
    /// `bytes > 0` zeroed bytes of pinned memory of `state`'s context.
    pub(crate) fn new(state: &ContextState, bytes: usize, flags: PinnedFlags) -> Result<Self> {
        debug_assert!(bytes > 0);
        state.bind()?;
        if flags.aliased() {
            Self::aliased(bytes, flags)
        } else {
            Self::allocated(bytes, flags)
        }
    }

    /// The address DMA and kernels use.
    pub(crate) fn dma(&self) -> *mut u8 {
        self.dma
    }

    /// The address the host uses.
    pub(crate) fn host(&self) -> *mut u8 {
        self.host
    }

    /// Whether the host address is an unregistered alias, so host slices are
    /// pageable memory to the driver.
    pub(crate) fn is_aliased(&self) -> bool {
        self.mapped.is_some()
    }

    /// `cuMemHostAlloc`: one mapping, zeroed here.
    fn allocated(bytes: usize, flags: PinnedFlags) -> Result<Self> {
        // SAFETY: the context is current (the caller bound it); the memory is
        // zeroed below before anyone can read it.
        let host = unsafe { result::malloc_host(bytes, flags.alloc_bits()) }
            .map_err(|e| Error::driver_sized("cuMemHostAlloc", e, bytes, "pinned host"))?
            .cast::<u8>();
        // SAFETY: `bytes` freshly allocated, writable, unshared bytes.
        unsafe { std::ptr::write_bytes(host, 0, bytes) };
        Ok(Self {
            dma: host,
            host,
            mapped: None,
        })
    }

    /// A memory file mapped twice, the first mapping registered.
    #[cfg(target_os = "linux")]
    fn aliased(bytes: usize, flags: PinnedFlags) -> Result<Self> {
        let too_big = || Error::OutOfMemory {
            requested: bytes,
            kind: "pinned host",
        };
        // SAFETY: `sysconf` has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|&p| p > 0)
            .unwrap_or(4096);
        let len = bytes.checked_next_multiple_of(page).ok_or_else(too_big)?;
        let file_len = libc::off_t::try_from(len).map_err(|_| too_big())?;
        // SAFETY: a NUL-terminated name and valid flags.
        let fd = unsafe { libc::memfd_create(c"cuda-mem-pinned".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(os_error("memfd_create", bytes));
        }
        let map = || map_not_inherited(fd, len);
        // SAFETY: `fd` is the file created above.
        let sized = unsafe { libc::ftruncate(fd, file_len) } == 0;
        let dma = sized.then(map).flatten();
        let host = dma.and_then(|_| map());
        let mapping_error = os_error("mmap", bytes);
        // SAFETY: the mappings keep the file alive; the descriptor is ours.
        unsafe { libc::close(fd) };
        let unmap = |p: *mut u8| {
            // SAFETY: a mapping of `len` bytes created above, not handed out.
            unsafe { libc::munmap(p.cast(), len) };
        };
        let (Some(dma), Some(host)) = (dma, host) else {
            dma.map(unmap);
            return Err(if sized {
                mapping_error
            } else {
                os_error("ftruncate", bytes)
            });
        };
        // SAFETY: `dma` is a live mapping of `len` bytes that nothing else
        // uses; the context is current.
        let registered =
            unsafe { sys::cuMemHostRegister_v2(dma.cast(), len, flags.register_bits()).result() };
        if let Err(e) = registered {
            unmap(dma);
            unmap(host);
            return Err(Error::driver_sized(
                "cuMemHostRegister",
                e,
                bytes,
                "pinned host",
            ));
        }
        ALIASES
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(host as usize, (len, dma as usize));
        // The file's pages start zeroed (the kernel zero-fills them).
        Ok(Self {
            dma,
            host,
            mapped: Some(len),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn aliased(bytes: usize, flags: PinnedFlags) -> Result<Self> {
        Self::allocated(bytes, flags)
    }

    /// Frees the block. The caller has waited for every DMA that used it and
    /// bound its context. On an error the memory is leaked, never unmapped
    /// under a device that may still reach it.
    pub(crate) fn free(self) -> Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        match this.mapped {
            None => {
                // SAFETY: a `cuMemHostAlloc` block nobody uses any more (the
                // caller's promise); freed once (`self` is consumed).
                unsafe { result::free_host(this.dma.cast()) }.op("cuMemFreeHost")
            }
            Some(len) => {
                // SAFETY: the registered mapping of this block, unused by any
                // queued work (the caller's promise).
                unsafe { sys::cuMemHostUnregister(this.dma.cast()).result() }
                    .op("cuMemHostUnregister")?;
                ALIASES
                    .write()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&(this.host as usize));
                #[cfg(target_os = "linux")]
                for p in [this.dma, this.host] {
                    // SAFETY: mappings of `len` bytes created in `aliased`,
                    // unregistered above, and no longer handed out.
                    unsafe { libc::munmap(p.cast(), len) };
                }
                Ok(())
            }
        }
    }

    /// Forgets the block, to be found again by [`PinnedPages::from_host`]
    /// (the allocator hands out only the host address).
    pub(crate) fn into_host(self) -> *mut u8 {
        // Without a `Drop`, letting the block go leaks nothing the registry
        // and `from_host` cannot find again.
        self.host
    }

    /// The block whose host address is `host`, as returned by
    /// [`PinnedPages::into_host`].
    ///
    /// # Safety
    /// `host` comes from `into_host` of one block, which nothing else owns now.
    pub(crate) unsafe fn from_host(host: *mut u8) -> Self {
        let aliases = ALIASES.read().unwrap_or_else(|p| p.into_inner());
        match aliases.get(&(host as usize)) {
            Some(&(len, dma)) => Self {
                dma: dma as *mut u8,
                host,
                mapped: Some(len),
            },
            None => Self {
                dma: host,
                host,
                mapped: None,
            },
        }
    }
}

/// A shared read-write mapping of the first `len` bytes of file `fd`, or
/// `None`. It is not inherited by a `fork`ed child (`MADV_DONTFORK`): a
/// shared mapping would otherwise stay shared with the child, so that a
/// buffer the parent owns, or the next one the pinned cache hands the
/// same block to, would change under it when the child writes its copy of
/// an old buffer. The child sees no mapping at all, as with the driver's own
/// pinned memory.
#[cfg(target_os = "linux")]
fn map_not_inherited(fd: libc::c_int, len: usize) -> Option<*mut u8> {
    // SAFETY: a fresh shared mapping of the file; the kernel picks the
    // address.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the whole mapping created above, nothing else uses it yet.
    if unsafe { libc::madvise(p, len, libc::MADV_DONTFORK) } != 0 {
        // SAFETY: as above; never handed out.
        unsafe { libc::munmap(p, len) };
        return None;
    }
    Some(p.cast::<u8>())
}

/// An operating-system failure while creating pinned memory.
#[cfg(target_os = "linux")]
fn os_error(call: &'static str, bytes: usize) -> Error {
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::ENOMEM) | Some(libc::EMFILE) | Some(libc::ENFILE) => Error::OutOfMemory {
            requested: bytes,
            kind: "pinned host",
        },
        _ => Error::NotSupported(match call {
            "memfd_create" => {
                "memfd_create failed: pinned memory needs a Linux kernel with memfd (3.17+)"
            }
            "ftruncate" => "ftruncate of the pinned memory file failed",
            _ => "mmap of the pinned memory file failed",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_flags_map_to_driver_bits() {
        assert_eq!(PinnedFlags::default().alloc_bits(), 0);
        let all = PinnedFlags {
            portable: true,
            device_map: true,
            write_combined: true,
        };
        assert_eq!(all.alloc_bits(), 7);
        assert_eq!(
            all.register_bits(),
            sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP
        );
    }

    /// A forked child must not share the pinned pages (see
    /// [`map_not_inherited`]): in the child the range is not mapped.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_forked_child_does_not_share_the_mappings() {
        // SAFETY: a NUL-terminated name and valid flags.
        let fd = unsafe { libc::memfd_create(c"cuda-mem-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: `fd` is the file created above.
        assert_eq!(unsafe { libc::ftruncate(fd, 4096) }, 0);
        let p = map_not_inherited(fd, 4096).expect("mapped");
        // SAFETY: the mappings keep the file alive; the descriptor is ours.
        unsafe { libc::close(fd) };
        // SAFETY: the page mapped above, ours alone.
        unsafe { p.write(7) };
        let mut resident = [0u8; 1];
        // SAFETY: the child only calls async-signal-safe functions
        // (`mincore`, `_exit`) on memory allocated before the fork.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            // SAFETY: a page-aligned range and a one-page result vector.
            let r = unsafe { libc::mincore(p.cast(), 4096, resident.as_mut_ptr()) };
            // Exit 0 only when the range is not mapped in the child (ENOMEM).
            // SAFETY: `_exit` ends the child without running the parent's
            // destructors or test harness.
            unsafe { libc::_exit(if r == -1 { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waiting for the child forked above.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status));
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "the child still maps the pinned pages"
        );
        // SAFETY: the parent still maps the page; read it, then unmap it.
        assert_eq!(unsafe { p.read() }, 7);
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(p.cast(), 4096) };
    }

    #[test]
    fn translation_covers_exactly_the_registered_ranges() {
        let host = 0x7000_0000_0000usize;
        let dma = 0x1000_0000_0000usize;
        ALIASES.write().unwrap().insert(host, (8192, dma));
        assert_eq!(dma_address(host as *const u8, 8192), Some(dma as *mut u8));
        assert_eq!(
            dma_address((host + 100) as *const u8, 50),
            Some((dma + 100) as *mut u8)
        );
        assert_eq!(dma_address((host + 8000) as *const u8, 193), None);
        assert_eq!(dma_address((host - 1) as *const u8, 1), None);
        assert_eq!(
            dma_address((host + 8192) as *const u8, 0),
            Some((dma + 8192) as *mut u8)
        );
        ALIASES.write().unwrap().remove(&host);
        assert_eq!(dma_address(host as *const u8, 1), None);
    }
}
