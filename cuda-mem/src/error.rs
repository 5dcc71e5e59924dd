//! [`Error`] and [`Result`]: everything that can go wrong, said plainly.

use cudarc::driver::{sys::cudaError_enum as CuResult, DriverError};

/// What went wrong in a cuda-mem call.
///
/// Every fallible call returns this instead of panicking. Each variant's
/// message says what was wrong and what to do about it.
///
/// ```
/// use cuda_mem::Error;
/// let e = Error::LengthMismatch { expected: 4, actual: 3 };
/// assert_eq!(e.to_string(), "length mismatch: the destination holds 4 elements but the source has 3; pass slices of equal length");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The CUDA driver library (`libcuda.so`) could not be loaded.
    #[error("the CUDA driver (libcuda) was not found; install the NVIDIA driver or add its directory to LD_LIBRARY_PATH")]
    DriverNotFound,
    /// The driver loaded but reports no usable CUDA device.
    #[error("no CUDA device is available (the driver reported {0}); check `nvidia-smi` and CUDA_VISIBLE_DEVICES")]
    NoDevice(&'static str),
    /// An allocation did not fit.
    #[error("out of memory: could not allocate {requested} bytes of {kind} memory; free buffers, use smaller ones, or trim a MemPool")]
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Which memory (`"device"`, `"pinned host"`, ...).
        kind: &'static str,
    },
    /// A [`DeviceVec`](crate::DeviceVec) was asked to grow beyond the
    /// address range it reserved when it was created.
    #[error("a DeviceVec cannot grow to {requested} elements: its reserved address range holds at most {max}; create it with DeviceVec::with_max_capacity and a larger maximum")]
    CapacityExceeded {
        /// The length asked for.
        requested: usize,
        /// The most elements the reservation holds.
        max: usize,
    },
    /// Two lengths that must match do not.
    #[error("length mismatch: the destination holds {expected} elements but the source has {actual}; pass slices of equal length")]
    LengthMismatch {
        /// The length required (the destination's).
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A range does not lie inside the buffer (or ends before it starts).
    #[error("range {start}..{end} is out of bounds for a buffer of {len} elements")]
    OutOfRange {
        /// First element of the range.
        start: usize,
        /// One past the last element.
        end: usize,
        /// Length of the buffer or view.
        len: usize,
    },
    /// A size computation (`len * size_of::<T>()`, `width * height`) overflows `usize`.
    #[error("size overflow: {what} does not fit in usize; use fewer elements")]
    SizeOverflow {
        /// Which computation overflowed.
        what: &'static str,
    },
    /// The device or driver cannot do this.
    #[error("not supported on this device or driver: {0}")]
    NotSupported(&'static str),
    /// A buffer, stream or pool of one CUDA context was used with another.
    #[error("context mismatch: {0} belongs to another CUDA context; use a stream/buffer created from the same CudaContext")]
    ContextMismatch(&'static str),
    /// A checked read ([`Checked::to_vec`](crate::Checked::to_vec), ...)
    /// found an element whose bits are not a value of its
    /// [`CheckedDeviceCopy`](crate::CheckedDeviceCopy) type.
    ///
    /// ```
    /// use cuda_mem::{checked::InvalidBitPattern, Error};
    /// let e = Error::from(InvalidBitPattern { index: 7, type_name: "bool" });
    /// assert!(matches!(e, Error::InvalidBitPattern(InvalidBitPattern { index: 7, .. })));
    /// ```
    #[error("invalid bit pattern: {0}")]
    InvalidBitPattern(#[from] crate::copy::checked::InvalidBitPattern),
    /// A call was invalid for this buffer.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// A kernel's PTX does not match the host's [`#[kernel]`](macro@crate::kernel)
    /// declaration of it; nothing was launched.
    #[error(
        "kernel `{kernel}` of the kernel module `{module}`: {problem}; the PTX is stale or was \
         built from other sources: rebuild the kernel crate so that its PTX comes from the same \
         source as this program (its build script recompiles it whenever the kernel crate \
         changes; `cargo clean -p <the crate whose build script builds it>` forces that)"
    )]
    KernelMismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// The module's name (the kernel crate's, for `include_kernels!`).
        module: &'static str,
        /// What does not match.
        problem: KernelProblem,
    },
    /// A kernel declared with `#[kernel(block = [x, y, z])]` was launched
    /// with blocks of another shape; nothing was launched.
    #[error(
        "kernel `{kernel}` is declared for blocks of {} x {} x {} threads \
         (`#[kernel(block = ...)]`) but was launched with blocks of {} x {} x {}: \
         launch it with `block_dim: ({}, {}, {})`, or change its declaration",
        declared.0, declared.1, declared.2, launched.0, launched.1, launched.2,
        declared.0, declared.1, declared.2
    )]
    BlockShape {
        /// The kernel's name.
        kernel: &'static str,
        /// The block shape it is declared for.
        declared: (u32, u32, u32),
        /// The launch's `block_dim`.
        launched: (u32, u32, u32),
    },
    /// A stream whose work cuda-mem cannot order against its other uses of
    /// the memory: the per-thread or legacy default stream passed in by
    /// handle, or a stream capturing a CUDA graph.
    #[error("cuda-mem cannot order work on this stream: {0}")]
    UnsupportedStream(&'static str),
    /// NCCL returned an error (feature `nccl`).
    #[cfg(feature = "nccl")]
    #[error("NCCL error in {op}: {result}; check that every rank makes the same call with the same counts (NCCL_DEBUG=WARN says more)")]
    Nccl {
        /// The NCCL call that failed.
        op: &'static str,
        /// The `ncclResult_t`, e.g. `ncclInvalidArgument`.
        result: String,
    },
    /// A CUDA IPC handle could not be read or opened, or the process that
    /// exported it is gone (see `cuda_mem::ipc`).
    #[error("CUDA IPC: {problem}; {remedy}")]
    Ipc {
        /// What was wrong.
        problem: String,
        /// What to do about it.
        remedy: &'static str,
    },
    /// The driver returned an error.
    #[error("CUDA driver error in {op}: {name} ({code}): {description}")]
    Driver {
        /// The driver call that failed.
        op: &'static str,
        /// The `CUresult` name, e.g. `CUDA_ERROR_ILLEGAL_ADDRESS`.
        name: String,
        /// The numeric `CUresult`.
        code: u32,
        /// The driver's own description.
        description: String,
        /// The error as cudarc reports it.
        #[source]
        source: DriverError,
    },
}

/// What [`Error::KernelMismatch`] found wrong with a kernel's PTX.
///
/// ```
/// use cuda_mem::KernelProblem;
/// let p = KernelProblem::Fingerprint { expected: 1, found: 2 };
/// assert!(p.to_string().contains("0x0000000000000002 in the PTX"));
/// let p = KernelProblem::Parameter { index: 1, type_name: "DeviceSlice<my::Span>" };
/// assert!(p.to_string().contains("parameter 1, of type `DeviceSlice<my::Span>`"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelProblem {
    /// The PTX has no kernel (`.entry`) of that name.
    Missing,
    /// The PTX has the kernel but not its signature fingerprint: it was not
    /// compiled from a `#[kernel]` fn (or by another version of cuda-mem).
    NoFingerprint,
    /// The fingerprints differ: a parameter's type or layout (a derived
    /// struct's field types, names and order count), the kernel's source or
    /// its safety is not what the host was compiled with.
    Fingerprint {
        /// The host's fingerprint.
        expected: u64,
        /// The one in the PTX.
        found: u64,
    },
    /// Parameter `index`'s fingerprint differs: its type, or a struct in it
    /// (a field's type, name or place), is another version than the one the
    /// PTX was built with. The kernel's fingerprint then differs too; this
    /// names the parameter and its type, and so the struct.
    Parameter {
        /// The parameter's place in the kernel's parameter list, from 0.
        index: usize,
        /// Its type as this program declares it (`core::any::type_name`),
        /// e.g. `cuda_mem::device::slice::DeviceSliceMut<my_kernels::Particle>`.
        type_name: &'static str,
    },
    /// The fingerprints agree but the parameter tables (each parameter's
    /// kind, size and alignment, and its elements', and the kernel's
    /// safety) do not: the launch would push other parameters than the
    /// kernel takes.
    Parameters,
}

impl core::fmt::Display for KernelProblem {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Missing => f.write_str("the PTX has no kernel of that name"),
            Self::NoFingerprint => f.write_str(
                "the PTX has the kernel but no signature fingerprint for it, so it was not \
                 compiled from a `#[kernel]` fn of this cuda-mem version",
            ),
            Self::Parameters => f.write_str(
                "its parameters in the PTX (their kinds, sizes and alignments, or the kernel's \
                 `unsafe`) are not the ones this program passes, although the fingerprints agree",
            ),
            Self::Parameter { index, type_name } => write!(
                f,
                "its parameter {index}, of type `{type_name}`, is another type in the PTX, or a \
                 struct in it is another version there (a field's type, name or place: two \
                 fields swapped count)"
            ),
            Self::Fingerprint { expected, found } => write!(
                f,
                "its signature fingerprint is {found:#018x} in the PTX but {expected:#018x} in \
                 this program: a parameter's type, a struct of its parameters (a field's type, \
                 name or place: two fields swapped count), the kernel's source or its `unsafe` \
                 differ"
            ),
        }
    }
}

/// `Result<T, cuda_mem::Error>`.
///
/// ```
/// fn f() -> cuda_mem::Result<u32> { Ok(1) }
/// assert_eq!(f().unwrap(), 1);
/// ```
pub type Result<T, E = Error> = core::result::Result<T, E>;

impl Error {
    /// Wraps a driver error from the call `op`, mapping the codes that have a
    /// variant of their own (out of memory, no device, not supported).
    /// Out of line: every driver call's error path comes here, and none of
    /// them is the path a program runs (their callers' frames stay small).
    #[cold]
    #[inline(never)]
    pub(crate) fn driver(op: &'static str, err: DriverError) -> Self {
        Self::driver_sized(op, err, 0, "device")
    }

    /// Like [`Error::driver`], for an allocation of `requested` bytes.
    #[cold]
    #[inline(never)]
    pub(crate) fn driver_sized(
        op: &'static str,
        err: DriverError,
        requested: usize,
        kind: &'static str,
    ) -> Self {
        match err.0 {
            CuResult::CUDA_ERROR_OUT_OF_MEMORY => Self::OutOfMemory { requested, kind },
            CuResult::CUDA_ERROR_NO_DEVICE => Self::NoDevice("CUDA_ERROR_NO_DEVICE"),
            CuResult::CUDA_ERROR_STUB_LIBRARY => Self::NoDevice("CUDA_ERROR_STUB_LIBRARY"),
            _ => {
                let text = |r: core::result::Result<&core::ffi::CStr, DriverError>| {
                    r.map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_else(|_| "unknown".into())
                };
                Self::Driver {
                    op,
                    name: text(err.error_name()),
                    code: err.0 as u32,
                    description: text(err.error_string()),
                    source: err,
                }
            }
        }
    }
}

/// `.map_err(Error::driver(op))` for driver results.
pub(crate) trait DriverResultExt<T> {
    /// Attaches the name of the failing driver call.
    fn op(self, op: &'static str) -> Result<T>;
}

impl<T> DriverResultExt<T> for core::result::Result<T, DriverError> {
    #[inline(always)]
    fn op(self, op: &'static str) -> Result<T> {
        self.map_err(|e| Error::driver(op, e))
    }
}

/// Reports an error from a place that cannot return one (a `Drop`, a cudarc
/// trait method) to the context, where the next call on it will see it.
pub(crate) fn record_in(ctx: &cudarc::driver::CudaContext, result: Result<()>) {
    if let Err(Error::Driver { source, .. }) = result {
        ctx.record_err::<()>(Err(source));
    }
}

/// Lets `?` turn errors of cudarc calls (`ctx.new_stream()?`) into [`Error`].
///
/// ```
/// # fn f(e: cudarc::driver::DriverError) {
/// let err: cuda_mem::Error = e.into();
/// # }
/// ```
impl From<DriverError> for Error {
    fn from(err: DriverError) -> Self {
        Error::driver("a cudarc call", err)
    }
}
