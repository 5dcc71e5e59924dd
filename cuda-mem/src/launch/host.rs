//! The host side of typed launches: [`Module`] (a kernel crate's PTX, loaded
//! once per context and checked kernel by kernel), [`LaunchArg`] (which host
//! values a parameter accepts) and the launch itself.

use std::cell::Cell;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{result, sys, CudaContext, CudaStream, LaunchConfig};

use crate::buffers::buffer::{Buffer, MemoryKind};
use crate::buffers::device_vec::DeviceVec;
use crate::buffers::ops::{sealed::Engine, Memory, MemoryMut};
use crate::buffers::pitched::PitchedBuffer;
use crate::context::ContextState;
use crate::copy::device_copy::DeviceCopy;
use crate::device::{
    DeviceAtomicSlice, DeviceChunksMut, DeviceSlice, DeviceSliceMut, DeviceTilesMut,
    PitchedRowsMut, PitchedSlice, PitchedSliceMut, PitchedTilesMut,
};
use crate::engine::{Elems, View, ViewMut};
use crate::error::{DriverResultExt, Error, KernelProblem, Result};
use crate::graph::Held;
use crate::launch::ParamAbi;

/// The name of a kernel's fingerprint static is this prefix and the kernel's
/// name (`#[kernel]` spells the same string).
const SIGNATURE_PREFIX: &str = "__cuda_mem_sig_";
/// The same for its parameter table ([`ParamAbi`] rows).
const ABI_PREFIX: &str = "__cuda_mem_abi_";

/// The PTX of a kernel crate, embedded in the program, from which
/// [`#[kernel]`](macro@crate::kernel) fns are launched.
///
/// Declare it once, as a `static`, with [`include_kernels!`](crate::include_kernels)
/// (the PTX that `cuda_mem::build::KernelCrate` wrote into `OUT_DIR`):
///
/// ```ignore
/// static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("my-kernels");
/// ```
///
/// The module is loaded into a context at the first launch there
/// (`cuModuleLoadData`), and each kernel is checked at its first launch in a
/// context: the PTX must have the kernel, and the kernel's signature
/// fingerprint in the PTX must equal the one the host computed from the same
/// `#[kernel]` declaration (see [`launch`](crate::launch) for why). Both
/// results are cached, so later launches do no loading, lookup by name or
/// allocation: they find the function handle in a short list under one
/// uncontended lock. The loaded module, and with it its context, is kept
/// until the process exits (a `static` is never dropped).
///
/// A module that fails to load (PTX for a newer GPU or driver) is an `Err`
/// of the launch, retried at the next one.
pub struct Module {
    name: &'static str,
    ptx: &'static str,
    loaded: Mutex<Vec<Loaded>>,
}

/// The module loaded into one context, with the kernels checked there so far.
struct Loaded {
    /// Keeps the context (and so `module` and the function handles) alive.
    ctx: Arc<CudaContext>,
    module: sys::CUmodule,
    /// Checked kernels: name, the fingerprint and parameter table they were
    /// checked against, function. Keyed by all three, so that a launcher
    /// whose fingerprint or parameters differ from the checked ones
    /// (another crate's kernel of the same name) is checked, and refused,
    /// too.
    kernels: Vec<Checked>,
}

/// Whether a checked table `a` stands for `b`: both absent, or the same
/// rows (one launcher's table is one promoted constant, so the address
/// usually says it without a comparison).
fn same_table(a: Option<&[ParamAbi]>, b: Option<&[ParamAbi]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b) || a == b,
        (None, None) => true,
        _ => false,
    }
}

/// A kernel checked in one context (see [`Loaded::kernels`]).
struct Checked {
    name: &'static str,
    signature: u64,
    /// The parameter table compared; `None` for a `check` (which knows no
    /// parameter types), which no launch takes for its own.
    abi: Option<&'static [ParamAbi]>,
    function: sys::CUfunction,
}

// SAFETY: `CUmodule` and `CUfunction` are driver handles, usable from any
// thread; the context they live in is kept alive by `ctx` and never unloaded.
unsafe impl Send for Loaded {}

impl Module {
    /// A module named `name` (for error messages) with the PTX text `ptx`.
    /// [`include_kernels!`](crate::include_kernels) is the safe way to make
    /// one: it embeds the PTX that `KernelCrate` compiled from the kernel
    /// crate's sources in this build.
    ///
    /// # Safety
    ///
    /// Safe launches trust the PTX: the fingerprint check proves that a
    /// kernel's parameters are the ones the host declares, not what its code
    /// does. So every kernel in `ptx` that has a signature fingerprint
    /// (`__cuda_mem_sig_<name>`) must have been compiled by `#[kernel]` from
    /// Rust source (any version of it), never written or edited by hand.
    ///
    /// ```
    /// // SAFETY: no kernels at all.
    /// static KERNELS: cuda_mem::Module = unsafe { cuda_mem::Module::new("mine", ".version 8.0\n") };
    /// assert_eq!(KERNELS.name(), "mine");
    /// ```
    #[must_use]
    pub const unsafe fn new(name: &'static str, ptx: &'static str) -> Self {
        Self {
            name,
            ptx,
            loaded: Mutex::new(Vec::new()),
        }
    }

    /// The module's name.
    ///
    /// ```
    /// # static KERNELS: cuda_mem::Module = unsafe { cuda_mem::Module::new("mine", "") };
    /// println!("{}", KERNELS.name());
    /// ```
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The PTX text.
    ///
    /// ```
    /// # static KERNELS: cuda_mem::Module = unsafe { cuda_mem::Module::new("mine", ".version 8.0\n") };
    /// assert!(KERNELS.ptx().starts_with(".version"));
    /// ```
    #[must_use]
    pub const fn ptx(&self) -> &'static str {
        self.ptx
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Loaded>> {
        self.loaded.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The function `kernel` in `state`'s context, after checking (once)
    /// that its signature fingerprint in the PTX is `signature`.
    /// A launch on `stream` checks the stream before loading or checking
    /// anything (the synchronous copy of the check must not meet a capture).
    fn function(
        &'static self,
        state: &ContextState,
        kernel: &'static str,
        signature: u64,
        abi: Option<&'static [ParamAbi]>,
        stream: Option<&CudaStream>,
    ) -> Result<sys::CUfunction> {
        let mut loaded = self.lock();
        let key = state.ctx.cu_ctx();
        let found = loaded.iter().position(|l| l.ctx.cu_ctx() == key);
        if let Some(index) = found {
            let checked = loaded[index]
                .kernels
                .iter()
                .find(|c| c.signature == signature && same_table(c.abi, abi) && c.name == kernel);
            if let Some(checked) = checked {
                return Ok(checked.function);
            }
        }
        if let Some(stream) = stream {
            state.check_stream(stream)?;
        }
        let index = match found {
            Some(index) => index,
            None => {
                loaded.push(self.load(state)?);
                loaded.len() - 1
            }
        };
        let entry = &mut loaded[index];
        let function = self.check(state, entry.module, kernel, signature, abi)?;
        entry.kernels.push(Checked {
            name: kernel,
            signature,
            abi,
            function,
        });
        Ok(function)
    }

    /// Loads the PTX into `state`'s context.
    fn load(&self, state: &ContextState) -> Result<Loaded> {
        let ptx = CString::new(self.ptx).map_err(|_| {
            Error::InvalidArgument("the PTX text of a kernel module contains a NUL byte")
        })?;
        state.bind()?;
        // SAFETY: `ptx` is a NUL-terminated PTX text, and the context is current.
        let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }
            .op("cuModuleLoadData (a #[kernel] module)")?;
        Ok(Loaded {
            ctx: state.ctx.clone(),
            module,
            kernels: Vec::new(),
        })
    }

    /// Looks `kernel` up in `module` and compares its fingerprint static with
    /// `expected` and its parameter table, word for word, with `abi`.
    fn check(
        &self,
        state: &ContextState,
        module: sys::CUmodule,
        kernel: &'static str,
        expected: u64,
        abi: Option<&[ParamAbi]>,
    ) -> Result<sys::CUfunction> {
        let mismatch = |problem| Error::KernelMismatch {
            kernel,
            module: self.name,
            problem,
        };
        let not_found = |e: &result::DriverError| e.0 == sys::CUresult::CUDA_ERROR_NOT_FOUND;
        // The PTX text says whether the entry and its fingerprint exist, so a
        // missing one is an error without a failing driver call (which
        // compute-sanitizer would count).
        if !ptx_declares(self.ptx, ".entry", kernel) {
            return Err(mismatch(KernelProblem::Missing));
        }
        let fingerprint = format!("{SIGNATURE_PREFIX}{kernel}");
        let table = format!("{ABI_PREFIX}{kernel}");
        if !ptx_declares(self.ptx, ".global", &fingerprint)
            || !ptx_declares(self.ptx, ".global", &table)
        {
            return Err(mismatch(KernelProblem::NoFingerprint));
        }
        // The address and size of one of the kernel's statics.
        let global = |symbol: String| {
            let symbol =
                CString::new(symbol).map_err(|_| mismatch(KernelProblem::NoFingerprint))?;
            // SAFETY: `module` is loaded in the current context (bound
            // below, before the first call) and never unloaded.
            match unsafe { result::module::get_global(module, symbol) } {
                Ok(global) => Ok(global),
                Err(e) if not_found(&e) => Err(mismatch(KernelProblem::NoFingerprint)),
                Err(e) => Err(Error::driver("cuModuleGetGlobal", e)),
            }
        };
        let name = CString::new(kernel).map_err(|_| mismatch(KernelProblem::Missing))?;
        state.bind()?;
        // SAFETY: `module` is loaded in the current context and never unloaded.
        let function = match unsafe { result::module::get_function(module, name) } {
            Ok(function) => function,
            Err(e) if not_found(&e) => return Err(mismatch(KernelProblem::Missing)),
            Err(e) => return Err(Error::driver("cuModuleGetFunction", e)),
        };
        let (addr, bytes) = global(fingerprint)?;
        if bytes != size_of::<u64>() {
            return Err(mismatch(KernelProblem::NoFingerprint));
        }
        let mut found = [0u8; 8];
        // SAFETY: `addr` is the 8-byte global of a module of the current
        // context; the copy is synchronous and writes only `found`.
        unsafe { result::memcpy_dtoh_sync(&mut found, addr) }.op("cuMemcpyDtoH")?;
        let found = u64::from_le_bytes(found);
        if found != expected {
            return Err(mismatch(KernelProblem::Fingerprint { expected, found }));
        }
        let (addr, bytes) = global(table)?;
        let mut rows = vec![[0u64; 5]; bytes / size_of::<ParamAbi>()];
        if bytes != std::mem::size_of_val(rows.as_slice()) || rows.is_empty() {
            return Err(mismatch(KernelProblem::Parameters));
        }
        // SAFETY: `addr` is the `bytes`-byte global of a module of the
        // current context; the copy is synchronous and writes only `rows`,
        // which holds `bytes` bytes (checked above).
        unsafe { result::memcpy_dtoh_sync(rows.as_flattened_mut(), addr) }.op("cuMemcpyDtoH")?;
        if abi.is_some_and(|abi| rows != abi) {
            return Err(mismatch(KernelProblem::Parameters));
        }
        Ok(function)
    }

    /// Loads the module into `ctx` (once) and checks `kernel` against
    /// `signature`, as its first launch there would (the launch compares the
    /// parameter table as well, from the parameters it pushes). Called by the
    /// `check` method `#[kernel]` generates.
    #[doc(hidden)]
    pub fn __check(
        &'static self,
        kernel: &'static str,
        signature: u64,
        ctx: &Arc<CudaContext>,
    ) -> Result<()> {
        let state = ContextState::of(ctx)?;
        self.function(&state, kernel, signature, None, None)
            .map(drop)
    }

    /// Starts a launch of `kernel` (whose host-side fingerprint is
    /// `signature`) on `stream`: checks the stream, and finds and checks the
    /// kernel. Called by the code `#[kernel]` generates.
    #[doc(hidden)]
    pub fn __begin<'s>(
        &'static self,
        kernel: &'static str,
        signature: u64,
        abi: &'static [ParamAbi],
        stream: &'s Arc<CudaStream>,
    ) -> Result<Launch<'s>> {
        let state = ContextState::of(stream.context())?;
        let function = self.function(&state, kernel, signature, Some(abi), Some(stream))?;
        Ok(Launch {
            state,
            stream,
            function,
            stream_checked: Cell::new(false),
        })
    }
}

impl Module {
    /// The occupancy of `kernel` (whose fingerprint is `signature`) in
    /// `ctx` with blocks of `block_size` threads, or the size
    /// `cuOccupancyMaxPotentialBlockSize` picks (`None`), and
    /// `dynamic_shared` bytes of dynamic shared memory per block. Called by
    /// the `occupancy` method `#[kernel]` generates.
    #[doc(hidden)]
    pub fn __occupancy(
        &'static self,
        kernel: &'static str,
        signature: u64,
        ctx: &Arc<CudaContext>,
        block_size: Option<u32>,
        dynamic_shared: u32,
    ) -> Result<Occupancy> {
        let state = ContextState::of(ctx)?;
        let function = self.function(&state, kernel, signature, None, None)?;
        let invalid = |_| {
            Error::InvalidArgument(
                "a block size of 1 to 1024 threads and dynamic shared memory the device can give a block",
            )
        };
        let block_size = match block_size {
            Some(size) => size,
            None => {
                let (mut min_grid, mut size) = (0, 0);
                state.bind()?;
                // SAFETY: `function` belongs to the current context (bound
                // above); the outputs are two live integers.
                unsafe {
                    sys::cuOccupancyMaxPotentialBlockSize(
                        &mut min_grid,
                        &mut size,
                        function,
                        None,
                        dynamic_shared as usize,
                        0,
                    )
                }
                .result()
                .op("cuOccupancyMaxPotentialBlockSize")?;
                u32::try_from(size).map_err(invalid)?
            }
        };
        let mut blocks = 0;
        state.bind()?;
        // SAFETY: as above.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                function,
                i32::try_from(block_size).map_err(invalid)?,
                dynamic_shared as usize,
            )
        }
        .result()
        .op("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
        let blocks_per_sm = u32::try_from(blocks).map_err(invalid)?;
        if blocks_per_sm == 0 {
            return Err(Error::InvalidArgument(
                "no block of this size fits on a multiprocessor with this kernel's registers and \
                 shared memory; use smaller blocks or less dynamic shared memory",
            ));
        }
        Ok(Occupancy {
            block_size,
            blocks_per_sm,
            multiprocessors: state.sm_count,
            dynamic_shared,
        })
    }
}

/// How many blocks of a kernel run at once on each multiprocessor of a
/// device: what `kernel.occupancy(..)` and `kernel.max_occupancy(..)` (the
/// methods of every [`#[kernel]`](macro@crate::kernel)) report, from
/// `cuOccupancyMaxActiveBlocksPerMultiprocessor`. A grid of whole *waves*
/// (`blocks_per_sm * multiprocessors` blocks, or a multiple) keeps every
/// multiprocessor busy to the end, the launch shape of a grid-stride loop.
///
/// ```
/// let o = cuda_mem::Occupancy { block_size: 256, blocks_per_sm: 8, multiprocessors: 132, dynamic_shared: 0 };
/// assert_eq!(o.wave_blocks(), 1056);
/// assert_eq!(o.waves(2).grid_dim, (2112, 1, 1));
/// assert_eq!(o.for_elements(1000).grid_dim, (4, 1, 1)); // fewer blocks than a wave
/// assert_eq!(o.for_elements(1 << 30).grid_dim, (1056, 1, 1)); // one wave, grid-stride
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    /// Threads per block.
    pub block_size: u32,
    /// Blocks of that size that run at once on one multiprocessor.
    pub blocks_per_sm: u32,
    /// The device's multiprocessors.
    pub multiprocessors: u32,
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_shared: u32,
}

impl Occupancy {
    /// The blocks of one wave: `blocks_per_sm * multiprocessors`.
    ///
    /// ```
    /// let o = cuda_mem::Occupancy { block_size: 128, blocks_per_sm: 16, multiprocessors: 2, dynamic_shared: 0 };
    /// assert_eq!(o.wave_blocks(), 32);
    /// ```
    #[must_use]
    pub fn wave_blocks(&self) -> u32 {
        self.blocks_per_sm.saturating_mul(self.multiprocessors)
    }

    /// A 1D launch of `waves` whole waves (at least one).
    ///
    /// ```
    /// let o = cuda_mem::Occupancy { block_size: 128, blocks_per_sm: 16, multiprocessors: 2, dynamic_shared: 0 };
    /// let c = o.waves(3);
    /// assert_eq!((c.grid_dim, c.block_dim), ((96, 1, 1), (128, 1, 1)));
    /// ```
    #[must_use]
    pub fn waves(&self, waves: u32) -> LaunchConfig {
        self.config(self.wave_blocks().saturating_mul(waves.max(1)))
    }

    /// A 1D launch for a grid-stride loop over `n` elements: one block per
    /// `block_size` elements, but no more than one wave (at least one
    /// block).
    ///
    /// ```
    /// let o = cuda_mem::Occupancy { block_size: 256, blocks_per_sm: 8, multiprocessors: 132, dynamic_shared: 0 };
    /// assert_eq!(o.for_elements(0).grid_dim, (1, 1, 1));
    /// ```
    #[must_use]
    pub fn for_elements(&self, n: usize) -> LaunchConfig {
        let blocks = n.div_ceil(self.block_size.max(1) as usize).max(1);
        self.config(blocks.min(self.wave_blocks() as usize) as u32)
    }

    fn config(&self, blocks: u32) -> LaunchConfig {
        LaunchConfig {
            grid_dim: (blocks.max(1), 1, 1),
            block_dim: (self.block_size, 1, 1),
            shared_mem_bytes: self.dynamic_shared,
        }
    }
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("name", &self.name)
            .field("ptx_bytes", &self.ptx.len())
            .finish()
    }
}

/// A launch under way: the checked function and the stream. Made by
/// [`Module::__begin`]; the generated launcher turns each argument into its
/// parameter with [`Launch::param`], then calls [`Launch::__finish`].
#[doc(hidden)]
pub struct Launch<'s> {
    state: Arc<ContextState>,
    stream: &'s Arc<CudaStream>,
    function: sys::CUfunction,
    /// Whether an argument's claim has checked the stream (`check_stream`:
    /// its context, and that cuda-mem can order work on it). Launches
    /// without buffer arguments check it in `__finish`.
    stream_checked: Cell<bool>,
}

impl Launch<'_> {
    /// The parameter value of `arg`, ordered on the launch's stream.
    ///
    /// # Safety
    ///
    /// As for [`LaunchArg::__into_param`]: the value goes to this launch's
    /// [`__finish`](Launch::__finish) only, while `arg`'s borrow lasts.
    #[doc(hidden)]
    pub unsafe fn param<A: LaunchArg<P>, P>(&self, arg: A) -> Result<P> {
        // SAFETY: the caller's promise, passed on.
        let param = unsafe { arg.__into_param(self.stream) }?;
        if A::__CHECKS_STREAM {
            self.stream_checked.set(true);
        }
        Ok(param)
    }

    /// Queues the kernel.
    ///
    /// # Safety
    ///
    /// `params` point to the kernel's parameters, of its parameter types and
    /// in order, each made by [`Launch::param`] on this launch; the kernel's
    /// preconditions (none for a safe `#[kernel]` fn) hold.
    #[doc(hidden)]
    pub unsafe fn __finish(self, config: LaunchConfig, params: &mut [*mut c_void]) -> Result<()> {
        if !self.stream_checked.get() {
            self.state.check_stream(self.stream)?;
        }
        let (grid, block) = (config.grid_dim, config.block_dim);
        // The device's global indices are exact 64-bit numbers for fewer
        // than 2^63 threads (`cuda_mem::device::global_linear_idx`); CUDA's
        // limits allow up to 2^73. (Six factors below 2^32: the product fits
        // in 192 bits, checked in two steps of 128.)
        let blocks = u128::from(grid.0) * u128::from(grid.1) * u128::from(grid.2);
        let threads = u128::from(block.0) * u128::from(block.1) * u128::from(block.2);
        if blocks.saturating_mul(threads) >= 1 << 63 {
            return Err(Error::InvalidArgument(
                "a kernel launch of 2^63 threads or more (grid size times block size); \
                 launch fewer threads, with a grid-stride loop covering the data",
            ));
        }
        self.state.bind()?;
        // SAFETY: the function belongs to the current context (checked and
        // cached per context), which is the stream's (the module was found
        // through the stream's context); the caller guarantees the
        // parameters.
        unsafe {
            sys::cuLaunchKernel(
                self.function,
                grid.0,
                grid.1,
                grid.2,
                block.0,
                block.1,
                block.2,
                config.shared_mem_bytes,
                self.stream.cu_stream(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .op("cuLaunchKernel")
    }
}

/// The parameters of a kernel, as a tuple `(P0, P1, ..)` of
/// [`KernelParam`](crate::launch::KernelParam) types: their fingerprints, their
/// parameter table and where each of their parts is, for the launch.
/// Implemented for tuples of up to 24 parameters.
#[doc(hidden)]
pub trait KernelParams {
    /// Each parameter's fingerprint, in order.
    const SIGNATURES: &'static [u64];
    /// The parameter table of a safe kernel with these parameters.
    const ABI_SAFE: &'static [ParamAbi];
    /// The parameter table of an `unsafe fn` kernel with these parameters.
    const ABI_UNSAFE: &'static [ParamAbi];
    /// The number of PTX parameters (each parameter has one or two parts).
    const PARTS: usize;

    /// Writes the address of each PTX parameter into `out`, in order: for
    /// each parameter, its address part (if it has one) and its rest, both
    /// inside the parameter value (see `KernelParam::__Address`).
    fn __parts(&mut self, out: &mut [*mut c_void; MAX_PARTS]);
}

/// The most PTX parameters a launch pushes (two parts for each of up to 24
/// parameters).
#[doc(hidden)]
pub const MAX_PARTS: usize = 48;

/// The arguments of a launch, as a tuple `(A0, A1, ..)` whose every element
/// is a [`LaunchArg`] for the parameter in the same place of `P`.
///
/// # Safety
///
/// `__into_params` makes the parameters as [`LaunchArg::__into_param`]
/// does, each for its own parameter.
#[doc(hidden)]
pub unsafe trait LaunchArgs<P> {
    /// The parameters, ordered on the launch's stream.
    ///
    /// # Safety
    ///
    /// As for [`Launch::param`].
    unsafe fn __into_params(self, launch: &Launch<'_>) -> Result<P>;
}

/// Pushes the parts of the parameter `p` (see [`KernelParams::__parts`]).
#[inline(always)]
fn push_parts<P: crate::launch::KernelParam>(
    p: &mut P,
    out: &mut [*mut c_void; MAX_PARTS],
    next: &mut usize,
) {
    const {
        assert!(
            size_of::<P>() == size_of::<P::__Address>() + size_of::<P::__Rest>(),
            "a kernel parameter's two parts make the whole parameter"
        );
    }
    let base = (p as *mut P).cast::<u8>();
    if size_of::<P::__Address>() != 0 {
        out[*next] = base.cast();
        *next += 1;
    }
    out[*next] = base.wrapping_add(size_of::<P::__Address>()).cast();
    *next += 1;
}

macro_rules! tuple_params {
    ($(($($p:ident $a:ident $i:tt),*))*) => {$(
        impl<$($p: crate::launch::KernelParam),*> KernelParams for ($($p,)*) {
            const SIGNATURES: &'static [u64] = &[$(<$p as crate::launch::KernelParam>::SIGNATURE),*];
            const ABI_SAFE: &'static [ParamAbi] = &[
                crate::launch::__abi_head(false, <[&str]>::len(&[$(stringify!($p)),*])),
                $(crate::launch::__param_abi::<fn($p), $p>()),*
            ];
            const ABI_UNSAFE: &'static [ParamAbi] = &[
                crate::launch::__abi_head(true, <[&str]>::len(&[$(stringify!($p)),*])),
                $(crate::launch::__param_abi::<fn($p), $p>()),*
            ];
            const PARTS: usize = 0 $(+ 1 + (size_of::<<$p as crate::launch::KernelParam>::__Address>() != 0) as usize)*;

            #[inline(always)]
            #[allow(unused_variables, unused_mut)]
            fn __parts(&mut self, out: &mut [*mut c_void; MAX_PARTS]) {
                let mut next = 0;
                $(push_parts(&mut self.$i, out, &mut next);)*
            }
        }

        // SAFETY: each argument becomes its own parameter through its
        // `LaunchArg` impl, as `Launch::param` does.
        unsafe impl<$($a: LaunchArg<$p>, $p),*> LaunchArgs<($($p,)*)> for ($($a,)*) {
            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn __into_params(self, launch: &Launch<'_>) -> Result<($($p,)*)> {
                // SAFETY: the caller's promise, for each argument.
                Ok(($(unsafe { launch.param::<$a, $p>(self.$i) }?,)*))
            }
        }
    )*};
}

tuple_params! {
    ()
    (P0 A0 0)
    (P0 A0 0, P1 A1 1)
    (P0 A0 0, P1 A1 1, P2 A2 2)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18, P19 A19 19)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18, P19 A19 19, P20 A20 20)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18, P19 A19 19, P20 A20 20, P21 A21 21)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18, P19 A19 19, P20 A20 20, P21 A21 21, P22 A22 22)
    (P0 A0 0, P1 A1 1, P2 A2 2, P3 A3 3, P4 A4 4, P5 A5 5, P6 A6 6, P7 A7 7, P8 A8 8, P9 A9 9,
     P10 A10 10, P11 A11 11, P12 A12 12, P13 A13 13, P14 A14 14, P15 A15 15, P16 A16 16,
     P17 A17 17, P18 A18 18, P19 A19 19, P20 A20 20, P21 A21 21, P22 A22 22, P23 A23 23)
}

/// Launches the safe kernel `kernel` of `module` with the arguments `args`
/// for its parameters `P` (a tuple of parameter types), on `stream`, with
/// `config`: what the launcher of a safe [`#[kernel]`](macro@crate::kernel)
/// fn does (`SOURCE` is the hash of the kernel's tokens). The kernel's
/// fingerprint and parameter table in the PTX are checked against the ones
/// of `P` (as a safe kernel) at its first launch in a context.
///
/// # Errors
///
/// As for the generated `launch`.
#[doc(hidden)]
#[inline]
pub fn __launch<P: KernelParams, A: LaunchArgs<P>, const SOURCE: u64>(
    module: &'static Module,
    kernel: &'static str,
    stream: &Arc<CudaStream>,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    // SAFETY: the table checked says a safe kernel, which has no
    // preconditions (see `cuda_mem::launch`).
    unsafe { launch_checked::<P, A, SOURCE, false>(module, kernel, stream, config, args) }
}

/// [`__launch`] for an `unsafe fn` kernel.
///
/// # Safety
///
/// The kernel's own preconditions hold for these arguments and this
/// configuration.
///
/// # Errors
///
/// As for [`__launch`].
#[doc(hidden)]
#[inline]
pub unsafe fn __launch_unsafe<P: KernelParams, A: LaunchArgs<P>, const SOURCE: u64>(
    module: &'static Module,
    kernel: &'static str,
    stream: &Arc<CudaStream>,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    // SAFETY: the caller's promise.
    unsafe { launch_checked::<P, A, SOURCE, true>(module, kernel, stream, config, args) }
}

/// The launch: the kernel checked against `P`, the arguments claimed on the
/// stream, the parameters' parts pushed.
///
/// # Safety
///
/// When `UNSAFE`, the kernel's preconditions hold.
#[inline]
unsafe fn launch_checked<
    P: KernelParams,
    A: LaunchArgs<P>,
    const SOURCE: u64,
    const UNSAFE: bool,
>(
    module: &'static Module,
    kernel: &'static str,
    stream: &Arc<CudaStream>,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    let signature = const { crate::launch::__kernel_signature(UNSAFE, SOURCE, P::SIGNATURES) };
    let abi = if UNSAFE { P::ABI_UNSAFE } else { P::ABI_SAFE };
    let launch = module.__begin(kernel, signature, abi, stream)?;
    // SAFETY: the parameters go to this launch only (below), while the
    // arguments' borrows last (this call).
    let mut params = unsafe { args.__into_params(&launch) }?;
    let mut parts = [std::ptr::null_mut(); MAX_PARTS];
    params.__parts(&mut parts);
    // SAFETY: the parts point into `params`, made by `param` for this launch,
    // in the order and shape of the entry point's parameters (one or two per
    // parameter, see `KernelParam::__Address`); the PTX's fingerprint and
    // table matched those of these very parameter types, and `UNSAFE` is the
    // kernel's safety (a safe kernel has no preconditions; an unsafe one's
    // caller promised them).
    unsafe { launch.__finish(config, &mut parts[..P::PARTS]) }
}

/// A host value that can be passed for a kernel parameter of type `P`.
///
/// | parameter | argument |
/// | --- | --- |
/// | [`DeviceSlice<T>`](crate::device::DeviceSlice) | `&` (or `&mut`) any buffer, [`DeviceVec`](crate::DeviceVec) or view of `T`s: `&buf`, `&buf.slice(..)?`, `buf.slice(..)?` |
/// | [`DeviceSliceMut<T>`](crate::device::DeviceSliceMut) | `&mut` a buffer, a `DeviceVec` or an exclusive view: `&mut buf`, `buf.slice_mut(..)?`, `&mut view_mut` |
/// | [`DeviceAtomicSlice<T>`](crate::device::DeviceAtomicSlice) | the same as `DeviceSliceMut<T>` (no host reference may see the atomic updates) |
/// | [`PitchedSlice<T>`](crate::device::PitchedSlice) | `&` (or `&mut`) a [`PitchedBuffer<T>`](crate::PitchedBuffer) |
/// | [`PitchedSliceMut<T>`](crate::device::PitchedSliceMut), [`PitchedRowsMut<T>`](crate::device::PitchedRowsMut) | `&mut` a `PitchedBuffer<T>` |
/// | any [`DeviceCopy`] type `T` | a `T`, by value |
///
/// Buffers and views are ordered on the launch's stream like
/// [`kernel_arg`](crate::Memory::kernel_arg) and
/// [`kernel_arg_mut`](crate::MemoryMut::kernel_arg_mut): the kernel runs after
/// earlier work on the memory, and later work, host access and the free wait
/// for it. The borrow lasts for the call only. Memory shared with another
/// process through CUDA IPC (an `ImportedBuffer`, or a buffer this process
/// exported) is refused, `Err(InvalidArgument)`: see `cuda_mem::ipc`.
///
/// # Safety
///
/// Implementing it promises that the parameter value made for a launch on a
/// stream is valid for a kernel of that parameter type queued there next:
/// for a slice, memory of `len` elements that nothing else writes (nothing
/// else at all, for `DeviceSliceMut`) until the kernel is done, another
/// process included (cuda-mem's impls refuse memory shared through CUDA
/// IPC: see `cuda_mem::ipc`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of type `{P}`",
    label = "not an argument for a `{P}` parameter",
    note = "a `DeviceSlice<T>` parameter takes `&` a buffer or view of `T`s (`&buf`, `buf.slice(..)?`), \
            a `DeviceSliceMut<T>` or `DeviceAtomicSlice<T>` parameter takes `&mut` a buffer or an \
            exclusive view (`&mut buf`, `buf.slice_mut(..)?`), the pitched ones a `PitchedBuffer<T>` \
            (`&mut` for the writable forms), and any other parameter a value of its own type",
    note = "the arguments are one tuple, in the kernel's parameter order: `(&mut out, &input, 2.0)`; \
            a kernel with one parameter takes `(arg,)`"
)]
pub unsafe trait LaunchArg<P> {
    /// Whether `__into_param` checks the stream with `check_stream` (a
    /// claim does), so that the launch need not check it again.
    #[doc(hidden)]
    const __CHECKS_STREAM: bool = false;

    /// The parameter value, ordered on `stream`.
    ///
    /// # Safety
    ///
    /// The value is a kernel parameter and nothing else: it goes to one
    /// kernel launched on `stream` next, while `self`'s borrow of the memory
    /// lasts. A slice parameter points into device memory under a lifetime
    /// of its own, so on the host it could outlive the buffer, alias another
    /// `DeviceSliceMut` of the same memory, or be read as host memory; only
    /// the launchers that `#[kernel]` generates call this.
    #[doc(hidden)]
    unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<P>;
}

// SAFETY: a `DeviceCopy` value is its own parameter, pushed byte for byte.
unsafe impl<T: DeviceCopy> LaunchArg<T> for T {
    #[inline]
    unsafe fn __into_param(self, _stream: &Arc<CudaStream>) -> Result<T> {
        Ok(self)
    }
}

/// `Err` for memory another process may use (imported, or exported by this
/// process): a Rust kernel's slices assume that nothing else writes their
/// elements while it runs, and no borrow or stream order of this process
/// binds the other one (see `cuda_mem::ipc`, "Kernels and shared memory").
fn local<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    if elems.mem.is_interprocess() {
        return Err(Error::InvalidArgument(
            "memory shared with another process through CUDA IPC (an ImportedBuffer, or a buffer \
             this process exported) is not a slice parameter of a #[kernel] launch: the other \
             process may write it while the kernel runs; copy it into a buffer of this process \
             (copy_from) and launch on that, or pass its address (kernel_arg(..)?.device_ptr()) \
             to an unsafe fn kernel",
        ));
    }
    Ok(elems)
}

/// `elems`, if its elements are one contiguous block (a slice parameter
/// cannot describe padded rows) of memory no other process uses.
fn contiguous<T: DeviceCopy>(elems: Elems<'_, T>) -> Result<Elems<'_, T>> {
    let elems = local(elems)?;
    if elems.is_contiguous() {
        Ok(elems)
    } else {
        Err(Error::InvalidArgument(
            "a view of padded 2D memory (a region of several rows) is not a slice parameter; pass the PitchedBuffer as a pitched parameter, or copy the region into a packed buffer",
        ))
    }
}

/// `elems` claimed on `stream` (ordered after earlier work, later work and
/// host access waiting for the kernel), as a read-only slice.
fn shared<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    stream: &Arc<CudaStream>,
) -> Result<DeviceSlice<'p, T>> {
    let ptr = contiguous(elems)?.claim(stream)?;
    // SAFETY: `len` elements of a live allocation at `ptr` (a dangling,
    // aligned, non-null address for an empty slice, which is never
    // dereferenced: the kernel's entry point takes every slice's address to
    // be non-null, see `KernelParam::__assemble`), borrowed by the caller for
    // the launch; the claim orders every other write to the allocation
    // before or after the kernel.
    Ok(unsafe { DeviceSlice::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

/// Like [`shared`], writable: the caller holds the memory exclusively.
fn exclusive<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    stream: &Arc<CudaStream>,
) -> Result<DeviceSliceMut<'p, T>> {
    let ptr = contiguous(elems)?.claim(stream)?;
    // SAFETY: as in `shared`; the caller's `&mut` (or exclusive view) means
    // no other argument of this launch and no host reference aliases it.
    Ok(unsafe { DeviceSliceMut::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

/// Like [`exclusive`], for atomic access by every thread.
fn atomic<'p, T: DeviceCopy>(
    elems: Elems<'_, T>,
    stream: &Arc<CudaStream>,
) -> Result<DeviceAtomicSlice<'p, T>> {
    let ptr = contiguous(elems)?.claim(stream)?;
    // SAFETY: as in `exclusive`; inside the kernel every access through the
    // slice is atomic.
    Ok(unsafe { DeviceAtomicSlice::from_raw_parts(non_null(ptr.as_raw()), elems.len()) })
}

macro_rules! slice_args {
    ($make:ident, $param:ident: $([$($gen:tt)*] $arg:ty, $elems:expr;)*) => { $(
        // SAFETY: see `shared` / `exclusive`: the argument borrows the memory
        // (exclusively for `DeviceSliceMut`) for the launch, and the claim
        // orders it on the launch's stream.
        unsafe impl<'p, $($gen)*> LaunchArg<$param<'p, T>> for $arg {
            const __CHECKS_STREAM: bool = true;

            #[inline]
            unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<$param<'p, T>> {
                let elems: fn(&Self) -> Elems<'_, T> = $elems;
                $make(elems(&self), stream)
            }
        }
    )* };
}

slice_args! { shared, DeviceSlice:
    ['b, T: DeviceCopy, K: MemoryKind] &'b Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b DeviceVec<T>, |v| v.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] View<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b View<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

// A buffer a graph holds (`Graph::capture`'s closure, `Graph::buffers`).
slice_args! { shared, DeviceSlice:
    ['b, 'h, T: DeviceCopy, M: Memory<T> + ?Sized] &'b Held<'h, M>, |h| h.elems();
    ['b, 'h, T: DeviceCopy, M: Memory<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { exclusive, DeviceSliceMut:
    ['b, 'h, T: DeviceCopy, M: MemoryMut<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { atomic, DeviceAtomicSlice:
    ['b, 'h, T: DeviceCopy, M: MemoryMut<T> + ?Sized] &'b mut Held<'h, M>, |h| h.elems();
}

slice_args! { exclusive, DeviceSliceMut:
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

slice_args! { atomic, DeviceAtomicSlice:
    ['b, T: DeviceCopy, K: MemoryKind] &'b mut Buffer<T, K>, |b| b.elems();
    ['b, T: DeviceCopy] &'b mut DeviceVec<T>, |v| v.elems();
    ['v, T: DeviceCopy] ViewMut<'v, T>, |v| v.elems;
    ['b, 'v, T: DeviceCopy] &'b mut ViewMut<'v, T>, |v| v.elems;
}

// SAFETY: the argument makes a `DeviceSliceMut` (memory borrowed
// exclusively for the launch, claimed on its stream), whose parts are those
// of a `DeviceTilesMut` over the same memory.
unsafe impl<'p, A, T: DeviceCopy, const TILE: usize> LaunchArg<DeviceTilesMut<'p, T, TILE>> for A
where
    A: LaunchArg<DeviceSliceMut<'p, T>>,
{
    const __CHECKS_STREAM: bool = A::__CHECKS_STREAM;

    #[inline]
    unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<DeviceTilesMut<'p, T, TILE>> {
        // SAFETY: the caller's promise, passed on.
        let slice = unsafe { self.__into_param(stream) }?;
        // SAFETY: the slice's memory, with the same access.
        Ok(unsafe { DeviceTilesMut::from_raw_parts(slice.as_mut_ptr(), slice.len()) })
    }
}

// SAFETY: as for `DeviceTilesMut`.
unsafe impl<'p, A, T: DeviceCopy, const C: usize> LaunchArg<DeviceChunksMut<'p, T, C>> for A
where
    A: LaunchArg<DeviceSliceMut<'p, T>>,
{
    const __CHECKS_STREAM: bool = A::__CHECKS_STREAM;

    #[inline]
    unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<DeviceChunksMut<'p, T, C>> {
        // SAFETY: the caller's promise, passed on.
        let slice = unsafe { self.__into_param(stream) }?;
        // SAFETY: the slice's memory, with the same access.
        Ok(unsafe { DeviceChunksMut::from_raw_parts(slice.as_mut_ptr(), slice.len()) })
    }
}

// SAFETY: the argument makes a `PitchedSliceMut` (a pitched buffer borrowed
// exclusively, claimed on the stream), whose parts are those of a
// `PitchedTilesMut` over the same rows.
unsafe impl<'p, A, T: DeviceCopy, const W: usize, const H: usize>
    LaunchArg<PitchedTilesMut<'p, T, W, H>> for A
where
    A: LaunchArg<PitchedSliceMut<'p, T>>,
{
    const __CHECKS_STREAM: bool = A::__CHECKS_STREAM;

    #[inline]
    unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<PitchedTilesMut<'p, T, W, H>> {
        // SAFETY: the caller's promise, passed on.
        let image = unsafe { self.__into_param(stream) }?;
        // SAFETY: the image's rows, with the same access.
        Ok(unsafe {
            PitchedTilesMut::from_raw_parts(
                image.as_mut_ptr(),
                image.pitch(),
                image.width(),
                image.height(),
            )
        })
    }
}

/// `buffer` claimed on `stream`, as the parts of a pitched parameter:
/// `(ptr, pitch, width, height)`, with the pitch checked against `T`'s
/// alignment (which the device types require).
fn pitched<T: DeviceCopy>(
    buffer: &PitchedBuffer<T>,
    stream: &Arc<CudaStream>,
) -> Result<(*mut T, usize, usize, usize)> {
    let elems = local(buffer.elems())?;
    if !elems.shape.pitch.is_multiple_of(align_of::<T>()) {
        return Err(Error::InvalidArgument(
            "the pitch of this PitchedBuffer is not a multiple of the element type's alignment, \
             which pitched kernel parameters need; use an element type of alignment 16 or less",
        ));
    }
    let ptr = elems.claim(stream)?;
    let s = elems.shape;
    Ok((non_null(ptr.as_raw()), s.pitch, s.width, s.rows))
}

/// `ptr`, or a dangling, aligned, non-null pointer for an empty buffer
/// (address 0: no allocation). A kernel builds slices from the pointer
/// (`PitchedSlice::row`, `DeviceSlice::as_slice`), a slice may not start at
/// null even when it is empty, and the entry point of a kernel tells the
/// compiler that every slice parameter's address is non-null (which drops
/// the null tests of the `Option`s it returns); nothing is ever read through
/// the dangling pointer, since the buffer has no elements.
fn non_null<T>(ptr: *mut T) -> *mut T {
    if ptr.is_null() {
        std::ptr::NonNull::dangling().as_ptr()
    } else {
        ptr
    }
}

/// The `PitchedBuffer` behind a pitched argument.
trait AsPitched<T> {
    fn pitched(&self) -> &PitchedBuffer<T>;
}
impl<T> AsPitched<T> for PitchedBuffer<T> {
    fn pitched(&self) -> &PitchedBuffer<T> {
        self
    }
}
impl<T> AsPitched<T> for Held<'_, PitchedBuffer<T>> {
    fn pitched(&self) -> &PitchedBuffer<T> {
        self.get()
    }
}

macro_rules! pitched_args {
    ($($param:ident: $arg:ty, $ptr:ty;)*) => { $(
        // SAFETY: `height` rows of `width` elements, `pitch` bytes apart, of
        // a live allocation, or none at all with a dangling non-null pointer
        // (rows never overlap: `pitch >= width *
        // size_of::<T>()`, checked at allocation; `pitch` a multiple of the
        // alignment, checked above), borrowed for the launch (exclusively
        // for the writable forms) and ordered on the launch's stream.
        unsafe impl<'p, 'b, T: DeviceCopy> LaunchArg<$param<'p, T>> for $arg {
            const __CHECKS_STREAM: bool = true;

            #[inline]
            unsafe fn __into_param(self, stream: &Arc<CudaStream>) -> Result<$param<'p, T>> {
                let (ptr, pitch, width, height) = pitched(AsPitched::pitched(&*self), stream)?;
                // SAFETY: see above.
                Ok(unsafe { $param::from_raw_parts(ptr as $ptr, pitch, width, height) })
            }
        }
    )* };
}

pitched_args! {
    PitchedSlice: &'b Held<'_, PitchedBuffer<T>>, *const T;
    PitchedSlice: &'b mut Held<'_, PitchedBuffer<T>>, *const T;
    PitchedSliceMut: &'b mut Held<'_, PitchedBuffer<T>>, *mut T;
    PitchedRowsMut: &'b mut Held<'_, PitchedBuffer<T>>, *mut T;
    PitchedSlice: &'b PitchedBuffer<T>, *const T;
    PitchedSlice: &'b mut PitchedBuffer<T>, *const T;
    PitchedSliceMut: &'b mut PitchedBuffer<T>, *mut T;
    PitchedRowsMut: &'b mut PitchedBuffer<T>, *mut T;
}

/// A [`Module`] holding the PTX that `cuda_mem::build::KernelCrate` built
/// from the kernel crate `name` (its directory name) in this package's build
/// script: `$OUT_DIR/<name>.ptx`, embedded with `include_str!`.
///
/// `name` is a plain file name (no `/`, `\` or `..`, a build error
/// otherwise), so the PTX is one that the build script wrote into `OUT_DIR`.
/// That file is trusted to be `KernelCrate`'s output: a build script that
/// writes another `.ptx` file there takes on [`Module::new`]'s promise.
///
/// ```ignore
/// // build.rs: cuda_mem::build::KernelCrate::new("my-kernels").build().unwrap_or_else(|e| e.exit());
/// static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("my-kernels");
///
/// my_kernels::scale.launch(&KERNELS, &stream, config, (&mut data, 2.0))?;
/// ```
///
/// (The name check is `cuda_mem::launch::__plain_file_name`, whose examples
/// show what it refuses; a doctest has no `OUT_DIR`, so any use of this
/// macro fails to build there, whatever the name.)
#[macro_export]
macro_rules! include_kernels {
    ($name:literal) => {{
        const NAME: &str = $name;
        const _: () = ::core::assert!(
            $crate::launch::__plain_file_name(NAME),
            "include_kernels! takes the kernel crate's directory name (its PTX is \
             $OUT_DIR/<name>.ptx), not a path: no `/`, `\\` or `..`"
        );
        const PTX: &str =
            ::core::include_str!(::core::concat!(::core::env!("OUT_DIR"), "/", $name, ".ptx"));
        // SAFETY: the PTX that `cuda_mem::build::KernelCrate` compiled from
        // the kernel crate `NAME` in this package's build script (a file of
        // `OUT_DIR`, `NAME` being a plain file name): every fingerprinted
        // kernel in it comes from a `#[kernel]` fn. (No token of the caller
        // is inside this block.)
        unsafe { $crate::Module::new(NAME, PTX) }
    }};
}

/// Whether a line of `ptx` declares `name` with `directive` (`.entry` for a
/// kernel, `.global` for a variable): the name followed by `(`, `[`, `;`,
/// ` ` or the line's end, so that `step` does not match `step2`.
fn ptx_declares(ptx: &str, directive: &str, name: &str) -> bool {
    ptx.lines().any(|line| {
        let line = line.trim_start();
        (line.starts_with(".visible") || line.starts_with(directive) || line.starts_with(".global"))
            && line.contains(directive)
            && line.match_indices(name).any(|(at, _)| {
                let before = line[..at].chars().next_back();
                let after = line[at + name.len()..].chars().next();
                before.is_some_and(char::is_whitespace)
                    && after.is_none_or(|c| matches!(c, '(' | '[' | ';' | ' ' | '\t'))
            })
    })
}

#[cfg(test)]
mod tests {
    use super::ptx_declares;

    #[test]
    fn empty_pitched_buffers_get_an_aligned_non_null_pointer() {
        let p = super::non_null(std::ptr::null_mut::<[f64; 2]>());
        assert!(!p.is_null());
        assert!((p as usize).is_multiple_of(align_of::<[f64; 2]>()));
        let real = 0x7000_0100usize as *mut u32;
        assert_eq!(super::non_null(real), real);
    }

    #[test]
    fn declarations_are_found_by_their_whole_name() {
        let ptx = ".visible .entry step(\n\t.param .u64 step_param_0\n)\n\
                   .visible .global .align 8 .b8 __cuda_mem_sig_step[8] = {1, 2};\n";
        assert!(ptx_declares(ptx, ".entry", "step"));
        assert!(!ptx_declares(ptx, ".entry", "ste"));
        assert!(!ptx_declares(ptx, ".entry", "step2"));
        assert!(!ptx_declares(ptx, ".entry", "step_param_0"));
        assert!(ptx_declares(ptx, ".global", "__cuda_mem_sig_step"));
        assert!(!ptx_declares(ptx, ".global", "__cuda_mem_sig_ste"));
        assert!(!ptx_declares(ptx, ".entry", "__cuda_mem_sig_step"));
    }
}
