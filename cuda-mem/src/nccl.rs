//! NCCL with cuda-mem buffers (feature `nccl`).
//!
//! cuda-mem does not wrap NCCL: it re-exports cudarc's bindings as
//! [`cuda_mem::cudarc::nccl`], whose `Comm` takes any
//! `DevicePtr` / `DevicePtrMut`, and every cuda-mem buffer and view is one.
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
//! NCCL reduces numbers, not structs. [`cast`](crate::Buffer::cast) and
//! [`cast_mut`](crate::Buffer::cast_mut) view a buffer of your
//! `#[derive(DeviceCopy)]` struct as its scalar fields (a struct of `f64`s as
//! `f64`s; any struct as bytes for `send`, `recv` and `broadcast`), so an
//! all-reduce sums each field across the ranks.
//!
//! Set `NCCL_NVLS_ENABLE=0` where GPUs are shared: NVLink multicast (NVLS)
//! can take a host's GPUs out of service.
//!
//! ```no_run
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
//!             comm.all_reduce_in_place(&mut stats.cast_mut::<f64>()?, &ReduceOp::Sum)
//!                 .expect("all-reduce");
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
