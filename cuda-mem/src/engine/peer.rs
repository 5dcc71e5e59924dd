//! Copies between CUDA contexts (usually: between GPUs) and peer access.
//!
//! A copy whose source and destination belong to different contexts is a
//! *peer copy*. Device-resident memory on both sides (device, pool, pitched)
//! goes through `cuMemcpyPeerAsync` (`cuMemcpy3DPeerAsync` for 2D); when one
//! side is pinned or unified memory, which every context can address, the
//! driver's unified-addressing copy (`cuMemcpyAsync`) moves it.
//!
//! The first peer copy between two devices enables peer access in both
//! directions where the hardware allows it ([`enable_peer_access`]); the GPUs
//! then copy directly over NVLink or PCIe. Where it does not, or after
//! [`disable_peer_access`], the driver stages the copy through host memory:
//! correct, but several times slower. [`peer_path`] says which of the two a
//! pair of contexts gets.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use cudarc::driver::{sys, CudaContext, DriverError};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};
use crate::memory::raw::RawMemory;

/// How copies between two contexts move their data, as [`peer_path`] and
/// [`enable_peer_access`] report it.
///
/// ```
/// use cuda_mem::PeerPath;
/// assert!(PeerPath::Direct.is_direct());
/// assert!(!PeerPath::ThroughHost.is_direct());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeerPath {
    /// Both are the same context: an ordinary device copy.
    SameContext,
    /// Two contexts of one device: the device copies within its own memory.
    SameDevice,
    /// Peer access is enabled between the two devices: they copy directly
    /// (NVLink or PCIe), without the host.
    Direct,
    /// No peer access between the two devices (the hardware does not allow
    /// it, or [`disable_peer_access`] turned it off): the driver stages the
    /// copies through host memory. Correct, but several times slower. (Pool
    /// memory whose pool cuda-mem opened to the other device before a disable
    /// may still be copied directly.)
    ThroughHost,
}

impl PeerPath {
    /// Whether the data moves without a detour through host memory.
    ///
    /// ```
    /// assert!(cuda_mem::PeerPath::SameDevice.is_direct());
    /// ```
    pub fn is_direct(self) -> bool {
        !matches!(self, PeerPath::ThroughHost)
    }
}

/// What cuda-mem knows about peer access between two contexts of different
/// devices.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Link {
    /// Enabled in both directions (by cuda-mem or before).
    Enabled,
    /// The hardware allows no peer access between the devices.
    Unavailable,
    /// Turned off by [`disable_peer_access`]; copies do not turn it back on.
    Disabled,
}

/// One end of a link: a context handle, and for a non-primary context a weak
/// reference that dies with it (so a recycled handle is never mistaken for
/// it). Primary contexts that cuda-mem has seen stay retained for the whole
/// run (see `context`), so their handles stay theirs.
struct End {
    key: usize,
    alive: Option<Weak<CudaContext>>,
}

impl End {
    fn of(ctx: &Arc<CudaContext>) -> Self {
        Self {
            key: ctx.cu_ctx() as usize,
            alive: (!ctx.is_primary()).then(|| Arc::downgrade(ctx)),
        }
    }

    fn is_live(&self) -> bool {
        self.alive.as_ref().is_none_or(|w| w.strong_count() > 0)
    }
}

struct Entry {
    ends: [End; 2],
    link: Link,
}

/// Every pair of contexts cuda-mem has set peer access up for. Its write
/// lock serialises the set-up and [`disable_peer_access`]; peer copies hold
/// its read lock while they are queued, so access is never withdrawn between
/// a copy's check and its launch (the disable then waits for the copy).
static LINKS: RwLock<Vec<Entry>> = RwLock::new(Vec::new());

/// The live entry of the pair `a`, `b` (context handles), if any. Entries of
/// destroyed contexts are skipped (and pruned under the write lock), so a
/// recycled handle is never taken for them.
fn find(links: &[Entry], a: usize, b: usize) -> Option<usize> {
    links.iter().position(|e| {
        let (x, y) = (e.ends[0].key, e.ends[1].key);
        ((x, y) == (a, b) || (x, y) == (b, a)) && e.ends.iter().all(End::is_live)
    })
}

fn read_links() -> RwLockReadGuard<'static, Vec<Entry>> {
    LINKS.read().unwrap_or_else(|p| p.into_inner())
}

/// What the table says about the pair `a`, `b`.
fn known_link(links: &[Entry], a: &CudaContext, b: &CudaContext) -> Option<Link> {
    find(links, a.cu_ctx() as usize, b.cu_ctx() as usize).map(|i| links[i].link)
}

fn record(links: &mut Vec<Entry>, a: &Arc<CudaContext>, b: &Arc<CudaContext>, link: Link) {
    match find(links, a.cu_ctx() as usize, b.cu_ctx() as usize) {
        Some(i) => links[i].link = link,
        None => links.push(Entry {
            ends: [End::of(a), End::of(b)],
            link,
        }),
    }
}

fn lock_links() -> RwLockWriteGuard<'static, Vec<Entry>> {
    let mut links = LINKS.write().unwrap_or_else(|p| p.into_inner());
    links.retain(|e| e.ends.iter().all(End::is_live));
    links
}

/// Whether each device's kernels and copy engines may access the other's
/// memory (`cuDeviceCanAccessPeer`, both ways). `false` for one device.
///
/// ```no_run
/// let (a, b) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
/// println!("peer access possible: {}", cuda_mem::can_access_peer(&a, &b)?);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn can_access_peer(a: &Arc<CudaContext>, b: &Arc<CudaContext>) -> Result<bool> {
    if a.cu_device() == b.cu_device() {
        return Ok(false);
    }
    let one_way = |from: &CudaContext, to: &CudaContext| -> Result<bool> {
        let mut can = 0;
        // SAFETY: a valid out-pointer and two device handles from live contexts.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, from.cu_device(), to.cu_device()).result() }
            .op("cuDeviceCanAccessPeer")?;
        Ok(can != 0)
    };
    Ok(one_way(a, b)? && one_way(b, a)?)
}

/// Enables peer access between the devices of `a` and `b` in both
/// directions (`cuCtxEnablePeerAccess`), where the hardware allows it, and
/// says how copies between them move data from now on.
///
/// Peer copies call this themselves the first time two devices exchange data,
/// so most programs never need to. Calling it again is cheap and returns the
/// same answer; after [`disable_peer_access`] it turns access back on. With
/// peer access, kernels on one device may also dereference the other's
/// device memory (`cuMemAlloc` memory; pool memory needs its pool's access,
/// which cuda-mem grants to the other device, for the whole pool and for the
/// rest of the run, the first time a peer copy touches the pool).
///
/// Returns [`PeerPath::ThroughHost`] (not an error) when the devices cannot
/// be peers, [`PeerPath::SameContext`] / [`PeerPath::SameDevice`] when there
/// is nothing to enable.
///
/// ```no_run
/// let (a, b) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
/// match cuda_mem::enable_peer_access(&a, &b)? {
///     cuda_mem::PeerPath::Direct => println!("GPU to GPU"),
///     other => println!("copies go {other:?}"),
/// }
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn enable_peer_access(a: &Arc<CudaContext>, b: &Arc<CudaContext>) -> Result<PeerPath> {
    set_up(a, b, true)
}

/// Turns peer access between the devices of `a` and `b` off in both
/// directions (`cuCtxDisablePeerAccess`). Later copies between them are
/// staged through host memory ([`PeerPath::ThroughHost`]) until
/// [`enable_peer_access`] is called; copies no longer enable it themselves.
///
/// It first waits for all work in both contexts (peer copies queued from
/// other threads included), so nothing that relies on peer access is cut
/// off. Pool access that cuda-mem's copies granted to the other device stays
/// (so copies of pool memory may still go directly).
///
/// ```no_run
/// let (a, b) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
/// cuda_mem::disable_peer_access(&a, &b)?;
/// assert_eq!(cuda_mem::peer_path(&a, &b)?, cuda_mem::PeerPath::ThroughHost);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn disable_peer_access(a: &Arc<CudaContext>, b: &Arc<CudaContext>) -> Result<()> {
    if a.cu_device() == b.cu_device() {
        return Ok(());
    }
    keep_primaries(a, b)?;
    // No new peer copy between them is queued from here on (they hold the
    // read lock), and the ones queued before end before access is withdrawn.
    let mut links = lock_links();
    record(&mut links, a, b, Link::Disabled);
    a.synchronize().op("cuCtxSynchronize")?;
    b.synchronize().op("cuCtxSynchronize")?;
    for (from, to) in [(a, b), (b, a)] {
        from.bind_to_thread().op("cuCtxSetCurrent")?;
        // SAFETY: `to` is a live context; the current context is `from`.
        match unsafe { sys::cuCtxDisablePeerAccess(to.cu_ctx()).result() } {
            Ok(()) => {}
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED => {}
            Err(e) => return Err(Error::driver("cuCtxDisablePeerAccess", e)),
        }
    }
    Ok(())
}

/// How cuda-mem's copies between `a` and `b` move their data, without
/// changing anything: [`PeerPath::Direct`] where the devices can be peers and
/// [`disable_peer_access`] has not turned that off (the first copy enables
/// it), else [`PeerPath::ThroughHost`].
///
/// ```no_run
/// let (a, b) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
/// println!("{:?}", cuda_mem::peer_path(&a, &b)?);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub fn peer_path(a: &Arc<CudaContext>, b: &Arc<CudaContext>) -> Result<PeerPath> {
    if let Some(path) = trivial_path(a, b) {
        return Ok(path);
    }
    let known = known_link(&read_links(), a, b);
    Ok(match known {
        Some(Link::Enabled) => PeerPath::Direct,
        Some(Link::Unavailable | Link::Disabled) => PeerPath::ThroughHost,
        None if can_access_peer(a, b)? => PeerPath::Direct,
        None => PeerPath::ThroughHost,
    })
}

/// Registers both contexts with cuda-mem, which keeps primary contexts
/// retained for the whole run: a primary context released by everyone would
/// be reset, losing its peer access behind the table's back.
fn keep_primaries(a: &Arc<CudaContext>, b: &Arc<CudaContext>) -> Result<()> {
    ContextState::of(a)?;
    ContextState::of(b)?;
    Ok(())
}

fn trivial_path(a: &CudaContext, b: &CudaContext) -> Option<PeerPath> {
    if a.cu_ctx() == b.cu_ctx() {
        Some(PeerPath::SameContext)
    } else if a.cu_device() == b.cu_device() {
        Some(PeerPath::SameDevice)
    } else {
        None
    }
}

/// The path for a copy between `a` and `b`, enabling peer access first if
/// nobody has decided about this pair yet (`enable == false`: a copy's first
/// use, which falls back to the host when enabling fails), or unless it is
/// on already (`enable == true`, [`enable_peer_access`], which reports
/// driver errors).
fn set_up(a: &Arc<CudaContext>, b: &Arc<CudaContext>, enable: bool) -> Result<PeerPath> {
    if let Some(path) = trivial_path(a, b) {
        return Ok(path);
    }
    keep_primaries(a, b)?;
    let mut links = lock_links();
    match known_link(&links, a, b) {
        Some(Link::Enabled) => return Ok(PeerPath::Direct),
        Some(_) if !enable => return Ok(PeerPath::ThroughHost),
        _ => {}
    }
    if !can_access_peer(a, b)? {
        record(&mut links, a, b, Link::Unavailable);
        return Ok(PeerPath::ThroughHost);
    }
    let first = match enable_one_way(a, b) {
        Ok(newly) => newly,
        Err(e) => return give_up(&mut links, a, b, enable, e),
    };
    if let Err(e) = enable_one_way(b, a) {
        if first {
            // Do not keep one direction (and one of the device's peer slots).
            let _ = a.bind_to_thread();
            // SAFETY: the current context is `a`, which enabled access to `b` just above.
            let _ = unsafe { sys::cuCtxDisablePeerAccess(b.cu_ctx()) };
        }
        return give_up(&mut links, a, b, enable, e);
    }
    record(&mut links, a, b, Link::Enabled);
    Ok(PeerPath::Direct)
}

/// `cuCtxEnablePeerAccess` from `from` to `to`; `Ok(true)` if this call
/// turned it on, `Ok(false)` if it was on already.
fn enable_one_way(from: &CudaContext, to: &CudaContext) -> Result<bool, DriverError> {
    from.bind_to_thread()?;
    // SAFETY: `to` is a live context of a device that `from`'s device may
    // access (checked by the caller); the current context is `from`; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(to.cu_ctx(), 0).result() } {
        Ok(()) => Ok(true),
        Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(false),
        Err(e) => Err(e),
    }
}

/// Peer access could not be enabled. A device with as many peers as it can
/// have (`CUDA_ERROR_TOO_MANY_PEERS`), or any failure on a copy's automatic
/// attempt, leaves the copies staged through the host; an explicit
/// [`enable_peer_access`] reports other errors.
fn give_up(
    links: &mut Vec<Entry>,
    a: &Arc<CudaContext>,
    b: &Arc<CudaContext>,
    explicit: bool,
    err: DriverError,
) -> Result<PeerPath> {
    if explicit && err.0 != sys::cudaError_enum::CUDA_ERROR_TOO_MANY_PEERS {
        return Err(Error::driver("cuCtxEnablePeerAccess", err));
    }
    record(links, a, b, Link::Unavailable);
    Ok(PeerPath::ThroughHost)
}

/// A copy between two contexts, readied by [`prepare_copy`]: hold it until
/// the copy is queued.
pub(crate) struct PeerCopy {
    _no_disable: RwLockReadGuard<'static, Vec<Entry>>,
}

/// Readies a copy between the allocations `dst` and `src` of two contexts:
/// enables peer access on the first copy between the two devices (unless it
/// was disabled or is impossible), and lets each device reach the other's
/// pool and `DeviceVec` memory involved (neither follows
/// `cuCtxEnablePeerAccess`).
pub(crate) fn prepare_copy(dst: &RawMemory, src: &RawMemory) -> Result<PeerCopy> {
    let (dst_ctx, src_ctx) = (&dst.state.ctx, &src.state.ctx);
    let mut links = read_links();
    // Only the first copy between two contexts of different devices sets the
    // pair up (under the write lock); the others just read the table.
    if known_link(&links, dst_ctx, src_ctx).is_none() && trivial_path(dst_ctx, src_ctx).is_none() {
        drop(links);
        set_up(dst_ctx, src_ctx, false)?;
        // Re-read under the read lock: a disable may have come in between.
        links = read_links();
    }
    if known_link(&links, dst_ctx, src_ctx) == Some(Link::Enabled) {
        for (mem, other) in [(dst, src), (src, dst)] {
            if mem.is_pool() {
                crate::memory::pool::grant_peer_access(mem.addr, other.state.ctx.ordinal())?;
            }
            // Memory mapped into a reserved range (a `DeviceVec`) does not
            // follow `cuCtxEnablePeerAccess` either: its range grants access.
            if let crate::memory::allocation::AllocKind::Mapped(reservation) = &*mem.kind {
                mem.state.bind()?;
                reservation.add_peer(other.state.ctx.cu_device())?;
            }
        }
    }
    Ok(PeerCopy { _no_disable: links })
}
