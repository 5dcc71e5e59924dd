//! NCCL with cuda-mem buffers (feature `nccl`).
//!
//! cuda-mem does not reimplement NCCL: it uses cudarc's bindings
//! ([`cuda_mem::cudarc::nccl`]), whose `Comm` takes any `DevicePtr` /
//! `DevicePtrMut`, and every cuda-mem buffer and view is one. Call the
//! collectives through the functions of this module ([`all_reduce`],
//! [`all_gather`], [`reduce_scatter`], [`broadcast`], [`reduce`]): they
//! check the lengths NCCL relies on and return `Err` when a receive buffer is
//! too short. cudarc's own `Comm` methods do not check them (for any buffer,
//! cudarc's `CudaSlice` included): `all_gather` into a buffer shorter than
//! `send.len() * world_size`, or `all_reduce` into one shorter than `send`,
//! writes past its end.
//!
//! Each call orders the communicator's stream after the buffers' earlier
//! work (fills, copies, kernels, on any stream) and waits for that stream
//! before it returns, so the collective is complete and the buffers can be
//! used or dropped right away.
//!
//! Two rules follow from that wait:
//! - **One thread per rank.** A thread that drives several communicators
//!   (`Comm::from_devices`) hangs in the first collective, which waits for
//!   ranks that thread has not reached yet.
//! - **No NCCL groups** (`cudarc::nccl::group_start` / `Comm::group`) with
//!   cuda-mem buffers. Inside a group NCCL launches nothing until the group
//!   ends, so the wait comes before the collective and a buffer dropped
//!   before the group ends would be freed under it. (cudarc's own `CudaSlice`
//!   has the same hole: `group_start` is a safe function.)
//!
//! A [`PitchedBuffer`](crate::PitchedBuffer) (or region) with padded rows is
//! not one contiguous block, which is what NCCL reads and writes: these
//! functions return `Err(InvalidArgument)` for it, before NCCL runs (on
//! every rank that passes one: give all ranks the same shapes). Copy it
//! into a packed buffer first (`DeviceBuffer::copy_from` takes it directly,
//! one `cuMemcpy2D`), or use a pitched buffer whose rows are unpadded
//! (one row, or a pitch equal to the row's bytes), which works as is.
//!
//! NCCL reduces numbers, not structs. [`cast`](crate::Memory::cast) and
//! [`cast_mut`](crate::MemoryMut::cast_mut) view a buffer of your
//! `#[derive(DeviceCopy)]` struct as its scalar fields (a struct of `f64`s as
//! `f64`s; any struct as bytes for `send`, `recv` and `broadcast`), so an
//! all-reduce sums each field across the ranks.
//!
//! Set `NCCL_NVLS_ENABLE=0` where GPUs are shared: NVLink multicast (NVLS)
//! can take a host's GPUs out of service.
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::cudarc::nccl::{Comm, Id, ReduceOp};
//! use cuda_mem::{DeviceBuffer, DeviceCopy};
//!
//! #[derive(Clone, Copy, DeviceCopy)]
//! #[repr(C)]
//! struct Moments { count: f64, sum: f64, sum_sq: f64 }
//!
//! let n = cuda_mem::device_count()?;
//! let id = Id::new().expect("NCCL unique id");
//! std::thread::scope(|s| {
//!     for rank in 0..n {
//!         s.spawn(move || -> cuda_mem::Result<()> {
//!             let ctx = cuda_mem::context(rank)?;
//!             ctx.bind_to_thread()?; // NCCL uses the current device
//!             let comm = Comm::from_rank(ctx.new_stream()?, rank, n, id).expect("NCCL communicator");
//!             let mut stats = DeviceBuffer::<Moments>::new(&ctx, 1024)?;
//!             stats.fill(Moments { count: 1.0, sum: rank as f64, sum_sq: 0.0 })?;
//!             cuda_mem::nccl::all_reduce_in_place(&comm, &mut stats.cast_mut::<f64>()?, &ReduceOp::Sum)?;
//!             assert_eq!(stats.to_vec()?[0].count, n as f64);
//!             Ok(())
//!         });
//!     }
//! });
//! # Ok::<(), cuda_mem::Error>(())
//! ```

/// Whether the NCCL library (`libnccl.so`) can be loaded. cudarc's NCCL calls
/// panic without it, so check first.
///
/// ```
/// if !cuda_mem::nccl::is_available() {
///     eprintln!("no NCCL here: install libnccl2 or add its directory to LD_LIBRARY_PATH");
/// }
/// ```
pub fn is_available() -> bool {
    use std::sync::OnceLock;
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only tries to dlopen() the library by its
    // usual names and drops the handles; it has no other preconditions.
    *PRESENT.get_or_init(|| unsafe { cudarc::nccl::sys::is_culib_present() })
}

use std::sync::Arc;

use cudarc::driver::{sys, CudaStream, DevicePtr, DevicePtrMut, DeviceSlice};
use cudarc::nccl::{Comm, NcclType, ReduceOp};

use crate::error::{Error, Result};

/// An NCCL result as a cuda-mem [`Error`].
fn nccl<S>(
    op: &'static str,
    r: core::result::Result<S, cudarc::nccl::result::NcclError>,
) -> Result<()> {
    r.map(drop).map_err(|e| Error::Nccl {
        op,
        result: format!("{:?}", e.0),
    })
}

/// `Err(InvalidArgument)` if any buffer whose length `lens` reads is padded
/// 2D memory (cuda-mem's `DeviceSlice::len` records that on this thread),
/// and `Err(UnsupportedStream)` if the communicator's stream is one that
/// cuda-mem's `DevicePtr` answers with address 0 (see [`check_stream`]):
/// NCCL would be handed address 0, and it does not check its pointers.
/// `Err(InvalidArgument)` too if a buffer belongs to another context than
/// the communicator's stream (another device): NCCL's kernels would address
/// it from the communicator's device. `contexts` reads each buffer's length
/// and context with [`seen`].
fn contiguous_buffers(
    comm: &Comm,
    contexts: impl FnOnce() -> [Option<sys::CUcontext>; 2],
) -> Result<()> {
    let stream = comm.stream();
    check_stream(&stream)?;
    let _ = crate::engine::take_cudarc_refusal();
    let contexts = contexts();
    if let Some(reason) = crate::engine::take_cudarc_refusal() {
        return Err(Error::InvalidArgument(reason));
    }
    if contexts
        .into_iter()
        .flatten()
        .any(|c| c != stream.context().cu_ctx())
    {
        return Err(Error::InvalidArgument(
            "a buffer belongs to another context (device) than the communicator's stream; pass buffers of the communicator's device, or copy them there first (copy_from)",
        ));
    }
    Ok(())
}

/// Reads `buf`'s length (which records padded 2D memory, see
/// [`contiguous_buffers`]) and returns its context: that of the stream it
/// reports to cudarc, the context of its memory.
fn seen<T>(buf: &impl DeviceSlice<T>) -> Option<sys::CUcontext> {
    buf.len();
    Some(buf.stream().context().cu_ctx())
}

/// `Err(UnsupportedStream)` if `stream` is capturing a CUDA graph (NCCL
/// would record the collective with address 0, to fault when the graph
/// runs) or is the stream cuda-mem buffers report to cudarc
/// (`DeviceSlice::stream`, which a communicator can be built on): on both,
/// cuda-mem's `DevicePtr` gives address 0 rather than an unordered use.
fn check_stream(stream: &Arc<CudaStream>) -> Result<()> {
    if crate::order::streams::is_capturing(stream)? {
        return Err(Error::UnsupportedStream(
            "the communicator's stream is capturing a CUDA graph, and cuda-mem cannot order a collective recorded there; end the capture first (or run the collective outside it)",
        ));
    }
    let state = crate::context::ContextState::of(stream.context())?;
    if Arc::ptr_eq(stream, &state.cudarc_stream) {
        return Err(Error::UnsupportedStream(
            "the communicator's stream is the one cuda-mem buffers report to cudarc (DeviceSlice::stream), on which they refuse to be used; build the communicator on a stream from ctx.new_stream()",
        ));
    }
    Ok(())
}

/// `Err(LengthMismatch)` unless `have >= need`.
fn at_least(need: usize, have: usize) -> Result<()> {
    if have >= need {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            expected: need,
            actual: have,
        })
    }
}

/// `Err(InvalidArgument)` unless `root` is a rank of `comm`.
fn check_root(comm: &Comm, root: i32) -> Result<usize> {
    usize::try_from(root)
        .ok()
        .filter(|&r| r < comm.world_size())
        .ok_or(Error::InvalidArgument(
            "the root is not a rank of the communicator",
        ))
}

/// All-reduce (`ncclAllReduce`): every rank's `recv` gets the reduction of
/// all ranks' `send`, element by element. NCCL writes `send.len()` elements,
/// so `recv` must hold at least that many (else `Err(LengthMismatch)`).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// use cuda_mem::cudarc::nccl::ReduceOp;
/// let send = cuda_mem::DeviceBuffer::from_slice(ctx, &[1.0f32; 1024])?;
/// let mut recv = cuda_mem::DeviceBuffer::<f32>::new(ctx, 1024)?;
/// cuda_mem::nccl::all_reduce(comm, &send, &mut recv, &ReduceOp::Sum)?;
/// # Ok(()) }
/// ```
pub fn all_reduce<T: NcclType>(
    comm: &Comm,
    send: &impl DevicePtr<T>,
    recv: &mut impl DevicePtrMut<T>,
    op: &ReduceOp,
) -> Result<()> {
    at_least(send.len(), recv.len())?;
    contiguous_buffers(comm, || [seen(send), seen(recv)])?;
    nccl("ncclAllReduce", comm.all_reduce(send, recv, op))
}

/// In-place all-reduce of `buf` (no length to check).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, buf: &mut cuda_mem::DeviceBuffer<f64>) -> cuda_mem::Result<()> {
/// cuda_mem::nccl::all_reduce_in_place(comm, buf, &cuda_mem::cudarc::nccl::ReduceOp::Max)?;
/// # Ok(()) }
/// ```
pub fn all_reduce_in_place<T: NcclType>(
    comm: &Comm,
    buf: &mut impl DevicePtrMut<T>,
    op: &ReduceOp,
) -> Result<()> {
    contiguous_buffers(comm, || [seen(buf), None])?;
    nccl("ncclAllReduce", comm.all_reduce_in_place(buf, op))
}

/// All-gather (`ncclAllGather`): every rank's `recv` gets all ranks' `send`,
/// in rank order. `recv` must hold `send.len() * world_size` elements (else
/// `Err(LengthMismatch)`).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// let send = cuda_mem::DeviceBuffer::from_slice(ctx, &[comm.rank() as u32; 16])?;
/// let mut all = cuda_mem::DeviceBuffer::<u32>::new(ctx, 16 * comm.world_size())?;
/// cuda_mem::nccl::all_gather(comm, &send, &mut all)?;
/// # Ok(()) }
/// ```
pub fn all_gather<T: NcclType>(
    comm: &Comm,
    send: &impl DevicePtr<T>,
    recv: &mut impl DevicePtrMut<T>,
) -> Result<()> {
    let need = send
        .len()
        .checked_mul(comm.world_size())
        .ok_or(Error::SizeOverflow {
            what: "send.len() * world_size",
        })?;
    at_least(need, recv.len())?;
    contiguous_buffers(comm, || [seen(send), seen(recv)])?;
    nccl("ncclAllGather", comm.all_gather(send, recv))
}

/// Reduce-scatter (`ncclReduceScatter`): the reduction of all ranks' `send`
/// is split in `world_size` parts of `recv.len()` elements and rank `r` gets
/// part `r`. `send` must hold `recv.len() * world_size` elements (else
/// `Err(LengthMismatch)`).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// use cuda_mem::cudarc::nccl::ReduceOp;
/// let send = cuda_mem::DeviceBuffer::from_slice(ctx, &vec![1i32; 8 * comm.world_size()])?;
/// let mut part = cuda_mem::DeviceBuffer::<i32>::new(ctx, 8)?;
/// cuda_mem::nccl::reduce_scatter(comm, &send, &mut part, &ReduceOp::Sum)?;
/// # Ok(()) }
/// ```
pub fn reduce_scatter<T: NcclType>(
    comm: &Comm,
    send: &impl DevicePtr<T>,
    recv: &mut impl DevicePtrMut<T>,
    op: &ReduceOp,
) -> Result<()> {
    let need = recv
        .len()
        .checked_mul(comm.world_size())
        .ok_or(Error::SizeOverflow {
            what: "recv.len() * world_size",
        })?;
    at_least(need, send.len())?;
    contiguous_buffers(comm, || [seen(send), seen(recv)])?;
    nccl("ncclReduceScatter", comm.reduce_scatter(send, recv, op))
}

/// Broadcast (`ncclBroadcast`): `recv.len()` elements of the root's `send`
/// go to every rank's `recv`. On the root `send` is required and must hold
/// `recv.len()` elements; elsewhere it is ignored (pass `None`).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// let params = cuda_mem::DeviceBuffer::from_slice(ctx, &[0.5f32; 64])?;
/// let mut mine = cuda_mem::DeviceBuffer::<f32>::new(ctx, 64)?;
/// let send = (comm.rank() == 0).then_some(&params);
/// cuda_mem::nccl::broadcast(comm, send, &mut mine, 0)?;
/// # Ok(()) }
/// ```
pub fn broadcast<T: NcclType, S: DevicePtr<T>>(
    comm: &Comm,
    send: Option<&S>,
    recv: &mut impl DevicePtrMut<T>,
    root: i32,
) -> Result<()> {
    if check_root(comm, root)? == comm.rank() {
        let send = send.ok_or(Error::InvalidArgument(
            "broadcast: the root rank must pass its send buffer",
        ))?;
        at_least(recv.len(), send.len())?;
    }
    contiguous_buffers(comm, || [send.and_then(seen), seen(recv)])?;
    nccl("ncclBroadcast", comm.broadcast(send, recv, root))
}

/// Reduce (`ncclReduce`): the reduction of all ranks' `send` lands in the
/// root's `recv`, which is required there and must hold `send.len()`
/// elements; elsewhere it is ignored (pass `None`).
///
/// ```no_run
/// # fn f(comm: &cuda_mem::cudarc::nccl::Comm, ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
/// use cuda_mem::cudarc::nccl::ReduceOp;
/// let local = cuda_mem::DeviceBuffer::from_slice(ctx, &[1u64; 32])?;
/// let mut total = cuda_mem::DeviceBuffer::<u64>::new(ctx, 32)?;
/// let recv = (comm.rank() == 0).then_some(&mut total);
/// cuda_mem::nccl::reduce(comm, &local, recv, &ReduceOp::Sum, 0)?;
/// # Ok(()) }
/// ```
pub fn reduce<T: NcclType, R: DevicePtrMut<T>>(
    comm: &Comm,
    send: &impl DevicePtr<T>,
    recv: Option<&mut R>,
    op: &ReduceOp,
    root: i32,
) -> Result<()> {
    if check_root(comm, root)? == comm.rank() {
        let recv = recv.as_ref().ok_or(Error::InvalidArgument(
            "reduce: the root rank must pass its receive buffer",
        ))?;
        at_least(send.len(), recv.len())?;
    }
    contiguous_buffers(comm, || [seen(send), recv.as_deref().and_then(seen)])?;
    nccl("ncclReduce", comm.reduce(send, recv, op, root))
}
