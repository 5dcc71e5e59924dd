//! [`Module`]: a kernel crate's PTX, embedded by [`include_kernels!`](crate::include_kernels),
//! loaded once per context and checked kernel by kernel (the signature
//! fingerprint and parameter table against the host's), and the
//! [`Occupancy`] of its kernels.

use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::{result, sys, CudaContext, CudaStream, LaunchConfig};

use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, KernelProblem, Result};
use crate::launch::param::ParamAbi;

/// The name of a kernel's fingerprint static is this prefix and the kernel's
/// name (`#[kernel]` spells the same string).
const SIGNATURE_PREFIX: &str = "__cuda_mem_sig_";
/// The same for its parameter table ([`ParamAbi`] rows).
const ABI_PREFIX: &str = "__cuda_mem_abi_";
/// The same for its parameters' own fingerprints (one `u64` each, in order),
/// which say which parameter a differing fingerprint comes from.
const PARAMS_PREFIX: &str = "__cuda_mem_params_";

/// What a launch declares of its kernel's parameters: the table the PTX
/// must hold word for word, and each parameter's fingerprint and type name,
/// with which a differing fingerprint is traced to the parameter (and so the
/// struct) it comes from.
#[derive(Clone, Copy)]
pub(super) struct Declared {
    /// The parameter table ([`ParamAbi`] rows), its head's block word 0.
    pub(super) abi: &'static [ParamAbi],
    /// The declared block shape (a [`__block_word`](crate::launch::__block_word)),
    /// the fourth word of the table's head in the PTX.
    pub(super) block: u64,
    /// Each parameter's fingerprint, in order.
    pub(super) signatures: &'static [u64],
    /// Parameter `i`'s type, as `core::any::type_name` spells it.
    pub(super) type_name: fn(usize) -> &'static str,
}

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
/// results are cached, so later launches do no loading, lookup by name,
/// allocation or locking: they find the function handle in a short list that
/// only grows. The loaded module, and with it its context, is kept until the
/// process exits (a `static` is never dropped).
///
/// A module that fails to load (PTX for a newer GPU or driver) is an `Err`
/// of the launch, retried at the next one.
pub struct Module {
    name: &'static str,
    ptx: &'static str,
    /// The contexts the module is loaded into. Its lock is taken by a
    /// kernel's first launch in a context only.
    loaded: Mutex<Vec<Loaded>>,
    /// The kernels checked so far, in every context: read by every launch
    /// without a lock, pushed to under `loaded`'s.
    checked: CheckedList,
}

/// The module loaded into one context.
struct Loaded {
    /// Keeps the context (and so `module` and the function handles) alive.
    ctx: Arc<CudaContext>,
    module: sys::CUmodule,
}

/// A parameter table as a launch declares it: its rows (the head's block
/// word 0) and the block word.
type Table = (&'static [ParamAbi], u64);

/// Whether a checked table `a` stands for `b`: both absent, or the same
/// rows and block (one launcher's table is one promoted constant, so the
/// address usually says it without a comparison).
#[inline(always)]
fn same_table(a: Option<Table>, b: Option<Table>) -> bool {
    match (a, b) {
        (Some((a, x)), Some((b, y))) => x == y && (std::ptr::eq(a, b) || a == b),
        (None, None) => true,
        _ => false,
    }
}

/// A kernel checked in one context: a node of a [`CheckedList`]. Keyed by
/// the context, the name, the fingerprint and the parameter table, so that
/// a launcher whose fingerprint or parameters differ from the checked ones
/// (another crate's kernel of the same name) is checked, and refused, too.
struct Checked {
    /// The context's handle. The context is kept alive by the module's
    /// [`Loaded`] entry for it, so the handle names no other context while
    /// the node exists.
    ctx: sys::CUcontext,
    name: &'static str,
    signature: u64,
    /// The parameter table compared; `None` for a `check` (which knows no
    /// parameter types), which no launch takes for its own.
    abi: Option<Table>,
    function: sys::CUfunction,
    /// The node checked before this one (null at the end).
    next: *mut Checked,
}

impl Checked {
    /// Whether this node is `kernel` checked in `ctx` with this fingerprint
    /// and table. Names are compared by address first: one launcher's name
    /// is one string constant.
    #[inline(always)]
    fn is(&self, ctx: sys::CUcontext, kernel: &str, signature: u64, abi: Option<Table>) -> bool {
        self.ctx == ctx
            && self.signature == signature
            && same_table(self.abi, abi)
            && (std::ptr::eq(self.name, kernel) || self.name == kernel)
    }
}

/// The kernels a module has checked, in every context, newest first: a
/// singly linked list whose nodes are written whole before they are
/// published and never changed or freed until the list is dropped. So a
/// launch finds its kernel with one load and a walk, without a lock (the
/// mutex it replaced cost two atomic operations per launch); pushes take
/// the module's lock, which `push` asks for as a guard.
struct CheckedList {
    head: AtomicPtr<Checked>,
}

impl CheckedList {
    const fn new() -> Self {
        Self {
            head: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// The function of `kernel` checked in `ctx` with this fingerprint and
    /// table, if any.
    #[inline(always)]
    fn find(
        &self,
        ctx: sys::CUcontext,
        kernel: &str,
        signature: u64,
        abi: Option<Table>,
    ) -> Option<sys::CUfunction> {
        let mut node = self.head.load(Ordering::Acquire);
        // SAFETY: every non-null pointer of the list is a node published by
        // `push` (a leaked `Box`, written whole before the `Release` store
        // that made it reachable, which the `Acquire` load above sees),
        // never written again and not freed before the list is dropped.
        while let Some(checked) = unsafe { node.as_ref() } {
            if checked.is(ctx, kernel, signature, abi) {
                return Some(checked.function);
            }
            node = checked.next;
        }
        None
    }

    /// Publishes a checked kernel (`node`'s `next` is overwritten). The
    /// guard of the module's lock is the proof that no other push runs at
    /// the same time.
    fn push(&self, mut node: Checked, _pushing: &MutexGuard<'_, Vec<Loaded>>) {
        node.next = self.head.load(Ordering::Relaxed);
        let node = Box::into_raw(Box::new(node));
        self.head.store(node, Ordering::Release);
    }
}

impl Drop for CheckedList {
    /// Frees the nodes. (A module launched from is borrowed for `'static`,
    /// so a list with nodes is dropped only in this module's tests.)
    fn drop(&mut self) {
        let mut node = *self.head.get_mut();
        while !node.is_null() {
            // SAFETY: every node is a leaked `Box` of `push`, reachable from
            // the head once; `&mut self` means no `find` is walking it.
            let checked = unsafe { Box::from_raw(node) };
            node = checked.next;
        }
    }
}

// SAFETY: `CUmodule` is a driver handle, usable from any thread; the
// context it lives in is kept alive by `ctx` and never unloaded.
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
            checked: CheckedList::new(),
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

    /// The function `kernel` in the context `ctx`, after checking (once per
    /// context) that its signature fingerprint in the PTX is `signature`
    /// and its parameters are `declared`. Every launch but the first in a
    /// context finds it with one lookup under the module's lock and needs
    /// no context state. The first looks the state up, and a launch on
    /// `stream` checks the stream before loading or checking anything (the
    /// synchronous copy of the check must not meet a capture).
    #[inline(always)]
    pub(super) fn function(
        &'static self,
        ctx: &Arc<CudaContext>,
        kernel: &'static str,
        signature: u64,
        declared: Option<&Declared>,
        stream: Option<&CudaStream>,
    ) -> Result<sys::CUfunction> {
        let abi = declared.map(|d| (d.abi, d.block));
        match self.checked.find(ctx.cu_ctx(), kernel, signature, abi) {
            Some(function) => Ok(function),
            None => self.load_and_check(ctx, kernel, signature, declared, stream),
        }
    }

    /// [`function`](Self::function) for a kernel not yet checked in `ctx`
    /// with this fingerprint and table: under the lock, loads the module
    /// into the context (once) and checks the kernel, and publishes it.
    #[cold]
    #[inline(never)]
    fn load_and_check(
        &'static self,
        ctx: &Arc<CudaContext>,
        kernel: &'static str,
        signature: u64,
        declared: Option<&Declared>,
        stream: Option<&CudaStream>,
    ) -> Result<sys::CUfunction> {
        let abi = declared.map(|d| (d.abi, d.block));
        let mut loaded = self.lock();
        let key = ctx.cu_ctx();
        // Checked by another thread while this one waited for the lock.
        if let Some(function) = self.checked.find(key, kernel, signature, abi) {
            return Ok(function);
        }
        let found = loaded.iter().position(|l| l.ctx.cu_ctx() == key);
        let state = ContextState::of(ctx)?;
        if let Some(stream) = stream {
            state.check_stream(stream)?;
        }
        let index = match found {
            Some(index) => index,
            None => {
                loaded.push(self.load(&state)?);
                loaded.len() - 1
            }
        };
        let function = self.check(&state, loaded[index].module, kernel, signature, declared)?;
        let node = Checked {
            ctx: key,
            name: kernel,
            signature,
            abi,
            function,
            next: std::ptr::null_mut(),
        };
        self.checked.push(node, &loaded);
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
        declared: Option<&Declared>,
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
            // Which parameter differs, where the PTX says (one built before
            // the per-parameter fingerprints does not).
            let params = format!("{PARAMS_PREFIX}{kernel}");
            if let Some(declared) = declared.filter(|_| ptx_declares(self.ptx, ".global", &params))
            {
                let (addr, bytes) = global(params)?;
                let mut words = vec![0u64; declared.signatures.len()];
                if bytes == size_of_val(words.as_slice()) {
                    // SAFETY: `addr` is the `bytes`-byte global of a module
                    // of the current context; the copy is synchronous and
                    // writes only `words`, which holds `bytes` bytes.
                    unsafe { result::memcpy_dtoh_sync(&mut words, addr) }.op("cuMemcpyDtoH")?;
                    let differs = words
                        .iter()
                        .zip(declared.signatures)
                        .position(|(a, b)| a != b);
                    if let Some(index) = differs {
                        return Err(mismatch(KernelProblem::Parameter {
                            index,
                            type_name: (declared.type_name)(index),
                        }));
                    }
                }
            }
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
        let same_rows = |d: &Declared| {
            let mut head = d.abi.first().copied().unwrap_or_default();
            head[3] = d.block;
            rows.len() == d.abi.len() && rows[0] == head && rows[1..] == d.abi[1..]
        };
        if declared.is_some_and(|d| !same_rows(d)) {
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
        self.function(ctx, kernel, signature, None, None).map(drop)
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
        let function = self.function(ctx, kernel, signature, None, None)?;
        let state = ContextState::of(ctx)?;
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
        // Every macro through `$crate`: a caller's `extern crate … as core`
        // cannot stand in for these (and skip the check, or name any text
        // as the PTX).
        const _: () = $crate::__private::core::assert!(
            $crate::launch::__plain_file_name(NAME),
            "include_kernels! takes the kernel crate's directory name (its PTX is \
             $OUT_DIR/<name>.ptx), not a path: no `/`, `\\` or `..`"
        );
        const PTX: &str = $crate::__private::core::include_str!($crate::__private::core::concat!(
            $crate::__private::core::env!("OUT_DIR"),
            "/",
            $name,
            ".ptx"
        ));
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
    use super::{ptx_declares, Checked, CheckedList, Loaded, ParamAbi};
    use cudarc::driver::sys;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    /// A handle made up from a number (never passed to the driver).
    fn handle<T>(n: usize) -> *mut T {
        n as *mut T
    }

    fn node(
        ctx: usize,
        name: &'static str,
        signature: u64,
        abi: Option<(&'static [ParamAbi], u64)>,
        function: usize,
    ) -> Checked {
        Checked {
            ctx: handle(ctx),
            name,
            signature,
            abi,
            function: handle(function),
            next: std::ptr::null_mut(),
        }
    }

    #[test]
    fn checked_kernels_are_found_by_context_name_fingerprint_and_table() {
        static ROWS: [ParamAbi; 2] = [[1, 0, 0, 0, 0], [2, 8, 8, 0, 0]];
        static OTHER_ROWS: [ParamAbi; 2] = [[1, 0, 0, 0, 0], [2, 4, 4, 0, 0]];
        let table = Some((&ROWS[..], 0));
        let lock = Mutex::new(Vec::<Loaded>::new());
        let list = CheckedList::new();
        let find = |ctx: usize, name: &str, sig: u64, abi| {
            list.find(handle(ctx), name, sig, abi).map(|f| f as usize)
        };
        assert_eq!(find(1, "step", 7, table), None);
        list.push(node(1, "step", 7, table, 100), &lock.lock().unwrap());
        list.push(node(2, "step", 7, table, 200), &lock.lock().unwrap());
        list.push(node(1, "step", 8, table, 300), &lock.lock().unwrap());
        list.push(node(1, "scale", 7, None, 400), &lock.lock().unwrap());
        assert_eq!(find(1, "step", 7, table), Some(100));
        assert_eq!(find(2, "step", 7, table), Some(200));
        assert_eq!(find(1, "step", 8, table), Some(300));
        // A name of another address but the same text is the same kernel.
        let name = String::from("step");
        assert_eq!(find(1, &name, 7, table), Some(100));
        // Another context, fingerprint, name, table or block is not.
        assert_eq!(find(3, "step", 7, table), None);
        assert_eq!(find(2, "step", 8, table), None);
        assert_eq!(find(1, "steps", 7, table), None);
        assert_eq!(find(1, "step", 7, Some((&OTHER_ROWS[..], 0))), None);
        assert_eq!(find(1, "step", 7, Some((&ROWS[..], 1))), None);
        // A `check`'s node (no table) stands for no launch, and no launch's
        // node for a `check`.
        assert_eq!(find(1, "step", 7, None), None);
        assert_eq!(find(1, "scale", 7, None), Some(400));
        assert_eq!(find(1, "scale", 7, table), None);
        // A table equal in its rows but at another address is the same.
        let copy: &'static [ParamAbi] = Box::leak(Box::new(ROWS));
        assert_eq!(find(1, "step", 7, Some((copy, 0))), Some(100));
    }

    #[test]
    fn launches_read_the_list_while_another_thread_pushes() {
        const PUSHES: usize = 2000;
        let lock = Mutex::new(Vec::<Loaded>::new());
        let list = CheckedList::new();
        // How many nodes are published: every one below it must be found,
        // with its own function.
        let published = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for reader in 0..3 {
                let (list, published) = (&list, &published);
                scope.spawn(move || {
                    let mut seen = 0;
                    while seen < PUSHES {
                        seen = published.load(Ordering::Acquire);
                        for i in [
                            0,
                            seen / 2,
                            seen.saturating_sub(1),
                            (reader * 7919 + seen) % (seen + 1),
                        ] {
                            if i < seen {
                                let found = list.find(handle(i % 3 + 1), "k", i as u64, None);
                                assert_eq!(
                                    found,
                                    Some(handle::<sys::CUfunc_st>(i + 1000)),
                                    "node {i}"
                                );
                            }
                        }
                        assert_eq!(list.find(handle(1), "k", PUSHES as u64, None), None);
                    }
                });
            }
            for i in 0..PUSHES {
                list.push(
                    node(i % 3 + 1, "k", i as u64, None, i + 1000),
                    &lock.lock().unwrap(),
                );
                published.store(i + 1, Ordering::Release);
            }
        });
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
