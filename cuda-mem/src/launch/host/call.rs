//! The launch itself: [`Launch`] (a checked function and its stream), the
//! argument and parameter tuples ([`KernelParams`], [`LaunchArgs`]) and the
//! generic launchers `#[kernel]` calls (`__launch`, `__launch_unsafe`).

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{sys, CudaStream, LaunchConfig};

use crate::context::ContextState;
use crate::error::{Error, Result};
use crate::launch::host::args::{LaunchArg, LaunchStream};
use crate::launch::host::module::{Declared, Module};
use crate::launch::param::ParamAbi;
use crate::order::streams::AsStream;

/// A launch under way: the checked function and the stream. Made by
/// [`Module::__begin`]; the generated launcher turns each argument into its
/// parameter with [`Launch::param`], then calls [`Launch::__finish`]. Its
/// arguments see its [`LaunchStream`] (a deref).
#[doc(hidden)]
pub struct Launch<'s> {
    on: LaunchStream<'s>,
    function: sys::CUfunction,
}

impl<'s> std::ops::Deref for Launch<'s> {
    type Target = LaunchStream<'s>;

    fn deref(&self) -> &LaunchStream<'s> {
        &self.on
    }
}

impl Launch<'_> {
    /// The parameter value of `arg`, ordered on the launch's stream.
    ///
    /// # Safety
    ///
    /// As for [`LaunchArg::__into_param`]: the value goes to this launch's
    /// [`__finish`](Launch::__finish) only, while `arg`'s borrow lasts.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn param<A: LaunchArg<P>, P>(&self, arg: A) -> Result<P> {
        // SAFETY: the caller's promise, passed on.
        unsafe { arg.__into_param(&self.on) }
    }

    /// Queues the kernel.
    ///
    /// # Safety
    ///
    /// `params` point to the kernel's parameters, of its parameter types and
    /// in order, each made by [`Launch::param`] on this launch; the kernel's
    /// preconditions (none for a safe `#[kernel]` fn) hold; `config`'s
    /// block is the kernel's declared shape if it has one (`#[kernel(block
    /// = ...)]`, which its entry point takes as known).
    #[doc(hidden)]
    pub unsafe fn __finish(self, config: LaunchConfig, params: &mut [*mut c_void]) -> Result<()> {
        let stream = self.on.stream();
        if !self.on.checked() {
            check_stream(stream)?;
        }
        let (grid, block) = (config.grid_dim, config.block_dim);
        // The device's global indices are exact 64-bit numbers for fewer
        // than 2^63 threads (`cuda_mem::device::global_linear_idx`); CUDA's
        // limits allow up to 2^73. (A product that overflows 64 bits on the
        // way is at least 2^64: refused too.)
        if !below_2_63_threads(grid, block) {
            return Err(Error::InvalidArgument(
                "a kernel launch of 2^63 threads or more (grid size times block size); \
                 launch fewer threads, with a grid-stride loop covering the data",
            ));
        }
        let (function, params) = (self.function, params.as_mut_ptr());
        // Queued as the stream's context's work, that context current or not.
        crate::current::on_stream(stream, "cuLaunchKernel", |s| {
            // SAFETY: the function belongs to the stream's context (the module
            // was found, and the function checked and cached, through it); the
            // caller guarantees the parameters.
            unsafe {
                sys::cuLaunchKernel(
                    function,
                    grid.0,
                    grid.1,
                    grid.2,
                    block.0,
                    block.1,
                    block.2,
                    config.shared_mem_bytes,
                    s,
                    params,
                    std::ptr::null_mut(),
                )
            }
        })
    }
}

/// Whether a launch of `grid` blocks of `block` threads has fewer than
/// 2^63 threads (a product that overflows 64 bits on the way is at least
/// 2^64).
fn below_2_63_threads(grid: (u32, u32, u32), block: (u32, u32, u32)) -> bool {
    let threads = [grid.0, grid.1, grid.2, block.0, block.1, block.2]
        .into_iter()
        .try_fold(1u64, |n, d| n.checked_mul(u64::from(d)));
    threads.is_some_and(|n| n < 1 << 63)
}

impl Module {
    /// Starts a launch of `kernel` (whose host-side fingerprint is
    /// `signature`) on `stream`: checks the stream, and finds and checks the
    /// kernel. Called by [`__launch`]; its `Launch` lives here, not in
    /// `module`, which does not know launches.
    #[doc(hidden)]
    pub fn __begin<'s>(
        &'static self,
        kernel: &'static str,
        signature: u64,
        abi: &'static [ParamAbi],
        stream: &'s (impl AsStream + ?Sized),
    ) -> Result<Launch<'s>> {
        let stream = crate::order::streams::cuda_stream(stream);
        let declared = Declared {
            abi,
            block: abi.first().map_or(0, |head| head[3]),
            signatures: &[],
            type_name: |_| "",
        };
        self.begin(kernel, signature, &declared, stream)
    }

    /// [`__begin`](Self::__begin) with the parameters' own fingerprints and
    /// type names, which name the parameter a differing fingerprint comes
    /// from. Inlined into each launcher, whose kernel, fingerprint and table
    /// are constants there.
    #[inline(always)]
    fn begin<'s>(
        &'static self,
        kernel: &'static str,
        signature: u64,
        declared: &Declared,
        stream: &'s Arc<CudaStream>,
    ) -> Result<Launch<'s>> {
        let function = self.function(
            stream.context(),
            kernel,
            signature,
            Some(declared),
            Some(stream),
        )?;
        Ok(Launch {
            on: LaunchStream::new(stream),
            function,
        })
    }
}

/// Checks the stream of a launch without buffer arguments, as
/// `ContextState::check_stream` does (the stream's own context needs no
/// comparison): cuda-mem must be able to order work on it. Only the
/// context's own default stream, which `check_orderable` refuses by its
/// handle, needs the context's state to pass.
fn check_stream(stream: &Arc<CudaStream>) -> Result<()> {
    crate::order::streams::check_orderable(stream).or_else(|refused| {
        match ContextState::of(stream.context()) {
            Ok(state) => state.check_stream(stream),
            Err(_) => Err(refused),
        }
    })
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
    /// An array of two null addresses per parameter, which
    /// [`__parts`](Self::__parts) fills.
    type PartArray: AsMut<[*mut c_void]>;
    /// The array, all null.
    const NO_PARTS: Self::PartArray;

    /// Parameter `index`'s type, as `core::any::type_name` spells it (`""`
    /// past the last).
    fn __type_name(index: usize) -> &'static str;

    /// Writes the address of each PTX parameter into `out`, in order: for
    /// each parameter, its address part (if it has one) and its rest, both
    /// inside the parameter value (see `KernelParam::__Address`).
    fn __parts(&mut self, out: &mut Parts<Self::PartArray>);
}

/// The addresses of a launch's PTX parameters, as [`KernelParams::__parts`]
/// pushes them, in `A`, an array of two per parameter (the most a parameter
/// has). Sized by the tuple: one of 48 for every launch, uninitialised,
/// cost a `memset` of its unpushed tail per launch (LLVM merged the
/// undefined bytes into the zero next to them).
#[doc(hidden)]
pub struct Parts<A> {
    parts: A,
    /// How many are pushed: `parts[..len]`.
    len: usize,
}

impl<A: AsMut<[*mut c_void]>> Parts<A> {
    #[inline(always)]
    fn new(empty: A) -> Self {
        Self {
            parts: empty,
            len: 0,
        }
    }

    #[inline(always)]
    fn push(&mut self, part: *mut c_void) {
        self.parts.as_mut()[self.len] = part;
        self.len += 1;
    }

    /// The pushed addresses, in order.
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [*mut c_void] {
        &mut self.parts.as_mut()[..self.len]
    }
}

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
fn push_parts<P: crate::launch::KernelParam, A: AsMut<[*mut c_void]>>(
    p: &mut P,
    out: &mut Parts<A>,
) {
    const {
        assert!(
            size_of::<P>() == size_of::<P::__Address>() + size_of::<P::__Rest>(),
            "a kernel parameter's two parts make the whole parameter"
        );
    }
    let base = (p as *mut P).cast::<u8>();
    if size_of::<P::__Address>() != 0 {
        out.push(base.cast());
    }
    out.push(base.wrapping_add(size_of::<P::__Address>()).cast());
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
            type PartArray = [*mut c_void; 2 * <[&str]>::len(&[$(stringify!($p)),*])];
            const NO_PARTS: Self::PartArray = [std::ptr::null_mut(); 2 * <[&str]>::len(&[$(stringify!($p)),*])];

            fn __type_name(index: usize) -> &'static str {
                <[&'static str]>::get(&[$(core::any::type_name::<$p>()),*], index)
                    .copied()
                    .unwrap_or("")
            }

            #[inline(always)]
            #[allow(unused_variables, unused_mut)]
            fn __parts(&mut self, out: &mut Parts<Self::PartArray>) {
                $(push_parts(&mut self.$i, out);)*
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
pub fn __launch<P: KernelParams, A: LaunchArgs<P>, const SOURCE: u64, const BLOCK: u64>(
    module: &'static Module,
    kernel: &'static str,
    stream: &impl AsStream,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    // SAFETY: the table checked says a safe kernel, which has no
    // preconditions (see `cuda_mem::launch`).
    unsafe { launch_checked::<P, A, SOURCE, BLOCK, false>(module, kernel, stream, config, args) }
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
pub unsafe fn __launch_unsafe<
    P: KernelParams,
    A: LaunchArgs<P>,
    const SOURCE: u64,
    const BLOCK: u64,
>(
    module: &'static Module,
    kernel: &'static str,
    stream: &impl AsStream,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    let stream = crate::order::streams::cuda_stream(stream);
    // SAFETY: the caller's promise.
    unsafe { launch_checked::<P, A, SOURCE, BLOCK, true>(module, kernel, stream, config, args) }
}

/// The launch: the block shape checked against `BLOCK` (a
/// [`__block_word`](crate::launch::__block_word), 0 for none), the kernel
/// against `P` and `BLOCK`, the arguments claimed on the stream, the
/// parameters' parts pushed.
///
/// # Safety
///
/// When `UNSAFE`, the kernel's preconditions hold.
#[inline]
unsafe fn launch_checked<
    P: KernelParams,
    A: LaunchArgs<P>,
    const SOURCE: u64,
    const BLOCK: u64,
    const UNSAFE: bool,
>(
    module: &'static Module,
    kernel: &'static str,
    stream: &Arc<CudaStream>,
    config: LaunchConfig,
    args: A,
) -> Result<()> {
    // A kernel that declares its block shape takes it as known (its entry
    // point's `__assume_block`, from the same table word): launched with no
    // other.
    if BLOCK != 0 {
        let declared = crate::launch::__block_shape(BLOCK);
        if config.block_dim != declared {
            return Err(Error::BlockShape {
                kernel,
                declared,
                launched: config.block_dim,
            });
        }
    }
    let signature = const { crate::launch::__kernel_signature(UNSAFE, SOURCE, P::SIGNATURES) };
    // One constant per launcher: only a first launch in a context reads it.
    let declared = const {
        &Declared {
            abi: if UNSAFE { P::ABI_UNSAFE } else { P::ABI_SAFE },
            block: BLOCK,
            signatures: P::SIGNATURES,
            type_name: P::__type_name,
        }
    };
    let launch = module.begin(kernel, signature, declared, stream)?;
    // SAFETY: the parameters go to this launch only (below), while the
    // arguments' borrows last (this call).
    let mut params = unsafe { args.__into_params(&launch) }?;
    let mut parts = Parts::new(P::NO_PARTS);
    params.__parts(&mut parts);
    debug_assert_eq!(parts.len, P::PARTS);
    // SAFETY: the parts point into `params`, made by `param` for this launch,
    // in the order and shape of the entry point's parameters (one or two per
    // parameter, see `KernelParam::__Address`); the PTX's fingerprint and
    // table matched those of these very parameter types, and `UNSAFE` is the
    // kernel's safety (a safe kernel has no preconditions; an unsafe one's
    // caller promised them).
    unsafe { launch.__finish(config, parts.as_mut_slice()) }
}

#[cfg(test)]
mod tests {
    use super::{below_2_63_threads, KernelParams, Parts};
    use crate::device::DeviceSlice;
    use std::ffi::c_void;

    /// The addresses a tuple's parts point at, as offsets into the tuple.
    fn offsets<P: KernelParams>(params: &mut P) -> Vec<usize> {
        let base = (params as *mut P).cast::<u8>() as usize;
        let mut parts = Parts::new(P::NO_PARTS);
        params.__parts(&mut parts);
        let pushed: Vec<*mut c_void> = parts.as_mut_slice().to_vec();
        assert_eq!(pushed.len(), P::PARTS);
        pushed.into_iter().map(|p| p as usize - base).collect()
    }

    #[test]
    fn parts_point_at_each_parameter_in_order() {
        let words = [7u32; 3];
        let slice = || {
            // SAFETY: a host array standing in for device memory; the slice
            // is only pushed, never read.
            unsafe { DeviceSlice::from_raw_parts(words.as_ptr(), words.len()) }
        };
        // A slice is two parts (its address, its length), a scalar one.
        let mut one = (slice(), 2.5f32);
        let at = offsets(&mut one);
        let (a, b) = (&raw const one.0 as usize, &raw const one.1 as usize);
        let base = &raw const one as usize;
        assert_eq!(at, [a - base, a - base + 8, b - base]);
        // The most parts there are: 24 slices, 48 parts, two per parameter.
        let s = slice;
        let mut many = (
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
            s(),
        );
        let at = offsets(&mut many);
        assert_eq!(at.len(), 48);
        let first = &raw const many.0 as usize - &raw const many as usize;
        assert_eq!(&at[..2], [first, first + 8]);
        let mut sorted = at.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 48, "every part is its own");
        // No parameters, no parts.
        assert!(offsets(&mut ()).is_empty());
    }

    #[test]
    fn launches_of_2_63_threads_or_more_are_found() {
        let max = u32::MAX;
        assert!(below_2_63_threads((1, 1, 1), (1, 1, 1)));
        assert!(below_2_63_threads((0, max, max), (max, max, max)));
        // 2^62 and 2^63 threads, by several factorings.
        assert!(below_2_63_threads((1 << 31, 1 << 31, 1), (1, 1, 1)));
        assert!(!below_2_63_threads((1 << 31, 1 << 31, 1), (2, 1, 1)));
        assert!(below_2_63_threads(
            (1 << 20, 1 << 20, 1 << 12),
            (1 << 9, 1, 2)
        ));
        assert!(!below_2_63_threads(
            (1 << 20, 1 << 20, 1 << 12),
            (1 << 11, 1, 1)
        ));
        assert!(!below_2_63_threads((1, 1, 1), (1 << 21, 1 << 21, 1 << 21)));
        // Products past 64 bits.
        assert!(!below_2_63_threads((max, max, max), (max, max, max)));
        assert!(!below_2_63_threads((max, max, 1), (max, 1, 1)));
    }
}
