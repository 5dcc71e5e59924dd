//! The hidden macros that [`#[kernel]`](macro@crate::kernel) expands to, all
//! exported and reached through `$crate`: the signature fingerprint, the
//! parameter table, the PTX entry point and the host launcher; and what they
//! name ([`__UnsafeKernel`], and [`__plain_file_name`] for `include_kernels!`).

/// A [`#[kernel]`](macro@crate::kernel) fn's signature fingerprint, from its
/// safety, its source hash and its parameter types (under the fn's lifetime
/// parameters), with `$crate` paths only: the expression behind the kernel's
/// `SIGNATURE` and its PTX fingerprint.
///
/// ```
/// use cuda_mem::device::DeviceSliceMut;
/// let a = cuda_mem::__kernel_signature!(unsafe_kernel false, source 7, lifetimes [], params [DeviceSliceMut<f32>, f32]);
/// let b = cuda_mem::__kernel_signature!(unsafe_kernel false, source 7, lifetimes ['a], params [DeviceSliceMut<'a, f32>, f32]);
/// let c = cuda_mem::__kernel_signature!(unsafe_kernel false, source 7, lifetimes [], params [[u64; 2], f32]);
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_signature {
    (unsafe_kernel $is_unsafe:literal, source $source:literal, lifetimes $lifetimes:tt, params [$($param:ty),* $(,)?]) => {
        $crate::launch::__kernel_signature(
            $is_unsafe,
            $source,
            &[$($crate::__kernel_signature!(@param $lifetimes $param)),*],
        )
    };
    (@param [$($lifetime:lifetime),*] $param:ty) => {
        $crate::launch::__param_signature::<for<$($lifetime),*> fn($param), _>()
    };
    (@each $lifetimes:tt [$($param:ty),*]) => {
        [$($crate::__kernel_signature!(@param $lifetimes $param)),*]
    };
}

/// A [`#[kernel]`](macro@crate::kernel) fn's parameter table (see
/// [`ParamAbi`](crate::launch::ParamAbi)), from its safety and parameter
/// types: the head row, then a row per parameter.
///
/// ```
/// use cuda_mem::device::DeviceSliceMut;
/// let abi = cuda_mem::__kernel_abi!(unsafe_kernel false, lifetimes [], params [DeviceSliceMut<f32>, f32]);
/// assert_eq!(abi.len(), 3);
/// assert_eq!(abi[0], cuda_mem::launch::__abi_head(false, 2));
/// ```
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_abi {
    (unsafe_kernel $is_unsafe:literal, lifetimes $lifetimes:tt, params $params:tt) => {
        $crate::__kernel_abi!(unsafe_kernel $is_unsafe, block 0, lifetimes $lifetimes, params $params)
    };
    (unsafe_kernel $is_unsafe:literal, block $block:expr, lifetimes $lifetimes:tt, params [$($param:ty),* $(,)?]) => {
        [
            $crate::launch::__abi_head_block(
                $is_unsafe,
                $crate::__kernel_abi!(@count $($param),*),
                $block,
            ),
            $($crate::__kernel_abi!(@param $lifetimes $param)),*
        ]
    };
    (@block) => {
        0
    };
    (@block [$x:literal, $y:literal, $z:literal]) => {
        $crate::launch::__block_word($x, $y, $z)
    };
    (@param [$($lifetime:lifetime),*] $param:ty) => {
        $crate::launch::__param_abi::<for<$($lifetime),*> fn($param), _>()
    };
    (@count $($param:ty),*) => {
        <[()]>::len(&[$($crate::__kernel_abi!(@unit $param)),*])
    };
    (@unit $param:ty) => {
        ()
    };
}

/// A [`#[kernel]`](macro@crate::kernel) fn's PTX entry point and the
/// statics the host checks before its first launch in a context: the
/// signature fingerprint (`__cuda_mem_sig_<kernel>`, a hash that also covers
/// the struct layouts and the source), each parameter's own fingerprint
/// (`__cuda_mem_params_<kernel>`, read when the kernel's differs, to name
/// the parameter and its type in [`KernelProblem::Parameter`](crate::KernelProblem::Parameter))
/// and the parameter table
/// (`__cuda_mem_abi_<kernel>`, see [`ParamAbi`](crate::launch::ParamAbi)).
/// Emitted by `#[kernel]` through the crate path, next to the kernel fn
/// itself.
///
/// The entry point, `extern "ptx-kernel" fn` exported as `symbol`, takes
/// each parameter in two parts (its
/// [`KernelParam::__Address`](crate::KernelParam::__Address), a pointer
/// parameter for slices, so that the compiler emits global loads and stores,
/// and the rest), puts them together with
/// [`__assemble`](crate::launch::__assemble) and calls
/// `callee` with the parameters: a *safe* call, so the PTX's statics
/// describe the parameters of a safe fn that takes exactly these types, and
/// an `unsafe fn` kernel reaches the entry only through a safe wrapper that
/// `#[kernel]` writes itself (with `unsafe_kernel true`, so that its launch
/// is `unsafe`). Nothing here puts a token of the caller inside `unsafe`: a
/// hand-written call makes at most what `#[kernel]` makes (a safe fn's entry
/// point), a forwarding `crate = "..."` module that changes the types does
/// not compile, and one that claims `unsafe_kernel true` for a safe kernel
/// only makes its launch `unsafe`. Each parameter type is pasted into the
/// entry point and its body, and every paste is tied to the body's by a
/// type check; the statics are computed from the body's own signature
/// (`launch::entry`), never from the tokens again, so a type that expands
/// differently at each paste fails to compile rather than giving the host
/// a table that is not the entry point's. On host builds it checks the
/// same call (there `callee` is the kernel's `on_host`, or its safe
/// wrapper).
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_entry {
    (
        symbol $symbol:literal,
        unsafe_kernel $is_unsafe:tt,
        $(block [$bx:literal, $by:literal, $bz:literal],)?
        source $source:literal,
        lifetimes [$($lifetime:lifetime),*],
        params [$($address:ident $rest:ident: $ty:ty),* $(,)?],
        callee $callee:path $(,)?
    ) => {
        #[cfg(target_arch = "nvptx64")]
        const _: () = {
            // The entry point's body, where every parameter's type is tied to
            // one: `__assemble` takes both parts of one parameter, the entry
            // point below passes its own parts here (a type error unless
            // its types are these), and the statics read the parameters
            // back from this fn's type (see `launch::entry`). A type pasted
            // twice may expand differently each time; so nothing below takes
            // a parameter's type from anywhere else.
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn __cuda_mem_body<$($lifetime),*>(
                $(
                    $address: $crate::launch::__AddressOf<$ty>,
                    $rest: $crate::launch::__RestOf<$ty>,
                )*
            ) {
                $crate::__kernel_entry!(
                    @call $is_unsafe,
                    $callee,
                    ($($crate::launch::__assemble($address, $rest)),*)
                )
            }

            #[unsafe(export_name = $symbol)]
            #[allow(improper_ctypes_definitions, clippy::too_many_arguments)]
            pub extern "ptx-kernel" fn __cuda_mem_entry<$($lifetime),*>(
                $(
                    $address: $crate::launch::__AddressOf<$ty>,
                    $rest: $crate::launch::__RestOf<$ty>,
                )*
            ) {
                // SAFETY: the block word is this entry's own parameter table's
                // (below, in the PTX); a launch compares that table word for
                // word with its own and launches a kernel that declares a
                // block only with blocks of that shape (`launch_checked`).
                unsafe { $crate::launch::__assume_block(__CUDA_MEM_ABI[0][3]) };
                __cuda_mem_body($($address, $rest),*)
            }

            /// The kernel's signature fingerprint, read by the host before
            /// the first launch in a context.
            #[unsafe(export_name = $crate::__private::core::concat!("__cuda_mem_sig_", $symbol))]
            #[used]
            static __CUDA_MEM_SIGNATURE: u64 =
                $crate::launch::__entry_signature(&__cuda_mem_body, $is_unsafe, $source);

            /// Each parameter's fingerprint, read by the host when the
            /// kernel's differs, to name the parameter (and struct) that
            /// differs.
            #[unsafe(export_name = $crate::__private::core::concat!("__cuda_mem_params_", $symbol))]
            #[used]
            static __CUDA_MEM_PARAMS: [u64; $crate::__kernel_abi!(@count $($ty),*)] =
                $crate::launch::__entry_params(&__cuda_mem_body);

            /// The kernel's parameter table, compared word for word by the
            /// host before the first launch in a context.
            #[unsafe(export_name = $crate::__private::core::concat!("__cuda_mem_abi_", $symbol))]
            #[used]
            static __CUDA_MEM_ABI: [$crate::launch::ParamAbi; 1 + $crate::__kernel_abi!(@count $($ty),*)] =
                $crate::launch::__entry_abi(
                    &__cuda_mem_body,
                    $is_unsafe,
                    $crate::__kernel_abi!(@block $([$bx, $by, $bz])?),
                );
        };

        #[cfg(not(target_arch = "nvptx64"))]
        const _: () = {
            #[allow(dead_code, clippy::all)]
            fn __cuda_mem_entry<$($lifetime),*>() {
                $crate::__kernel_entry!(@check $is_unsafe, $callee, [$($ty),*]);
            }
        };
    };
    // On the host: the same callee, of the same types and safety, without
    // the parameters' parts (each projection would repeat the errors of a
    // type that cannot be a parameter, which the kernel's `SIGNATURE`
    // reports once).
    (@check false, $callee:path, [$($ty:ty),*]) => {
        let _: fn($($ty),*) = $callee;
    };
    (@check true, $callee:path, [$($ty:ty),*]) => {
        fn __cuda_mem_is_unsafe_kernel<K: $crate::launch::__UnsafeKernel>() {}
        __cuda_mem_is_unsafe_kernel::<$callee>();
        let _: unsafe fn(($($ty,)*)) = <$callee>::__cuda_mem_run;
    };
    // A safe kernel: a safe call of `callee` (an `unsafe fn` does not
    // compile here).
    (@call false, $callee:path, ($($param:expr),*)) => {
        $callee($($param),*)
    };
    // An `unsafe fn` kernel: `callee` is a type that `#[kernel]` made for
    // it, marked with an `unsafe impl` of `__UnsafeKernel`, whose
    // `__cuda_mem_run` (an `unsafe fn`, which only code that writes `unsafe`
    // can declare) runs the kernel. The parameters are put together outside
    // the `unsafe` block, which holds nothing of the caller's.
    (@call true, $callee:path, ($($param:expr),*)) => {{
        fn __cuda_mem_is_unsafe_kernel<K: $crate::launch::__UnsafeKernel>() {}
        __cuda_mem_is_unsafe_kernel::<$callee>();
        let __cuda_mem_kernel = <$callee>::__cuda_mem_run;
        let __cuda_mem_params = ($($param,)*);
        // SAFETY: the `unsafe impl` of `__UnsafeKernel` promises that
        // `__cuda_mem_run` runs the kernel of an entry point whose parameter
        // table says `unsafe`, so only `__launch_unsafe` (an `unsafe fn`, whose
        // caller promised the kernel's preconditions) launches it.
        #[allow(unused_unsafe)]
        unsafe {
            __cuda_mem_kernel(__cuda_mem_params)
        }
    }};
}

/// Marks the type that [`#[kernel]`](macro@crate::kernel) makes for an
/// `unsafe fn` kernel, whose `unsafe fn __cuda_mem_run(params)` (taking the
/// parameters as one tuple) the PTX entry point calls.
///
/// # Safety
///
/// The type's `__cuda_mem_run` runs the kernel of an entry point whose
/// parameter table says `unsafe` (so that only an `unsafe` launch reaches
/// it), and nothing else.
#[doc(hidden)]
pub unsafe trait __UnsafeKernel {}

/// Whether `name` is a plain file name: not empty, and no `/`, `\` or `..`
/// in it (what [`include_kernels!`](crate::include_kernels) takes).
///
/// ```
/// assert!(cuda_mem::launch::__plain_file_name("my-kernels"));
/// assert!(!cuda_mem::launch::__plain_file_name("../x"));
/// assert!(!cuda_mem::launch::__plain_file_name("a/b"));
/// assert!(!cuda_mem::launch::__plain_file_name(".."));
/// assert!(!cuda_mem::launch::__plain_file_name(""));
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __plain_file_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/'
            || bytes[i] == b'\\'
            || (bytes[i] == b'.' && i + 1 < bytes.len() && bytes[i + 1] == b'.')
        {
            return false;
        }
        i += 1;
    }
    true
}

/// The body of a [`#[kernel]`](macro@crate::kernel) fn's host launcher: a
/// call of [`__launch`](crate::launch::__launch) (or, for an `unsafe fn` kernel,
/// [`__launch_unsafe`](crate::launch::__launch_unsafe), which compiles only where the
/// caller is in an unsafe context already: the kernel's `unsafe fn launch`)
/// with the tuple of parameter types the arguments are turned into.
///
/// No token of the caller goes inside `unsafe`: the checks against the PTX
/// (its fingerprint and parameter table, computed in `__launch` from the
/// parameter types), the claims of the arguments on the stream and the
/// launch are all inside cuda-mem's generic functions, so a hand-written
/// call launches at most what the generated launcher launches.
#[cfg(feature = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_launch {
    (
        module $module:ident, stream $stream:ident, config $config:ident, name $name:expr,
        unsafe_kernel false, $(block [$bx:literal, $by:literal, $bz:literal],)? source $source:literal,
        args $args:ident [$($value:ident: $arg:ident => $param:ident),* $(,)?]
    ) => {
        $crate::launch::__launch::<
            ($($param,)*),
            _,
            $source,
            { $crate::__kernel_abi!(@block $([$bx, $by, $bz])?) },
        >($module, $name, $stream, $config, $args)
    };
    (
        module $module:ident, stream $stream:ident, config $config:ident, name $name:expr,
        unsafe_kernel true, $(block [$bx:literal, $by:literal, $bz:literal],)? source $source:literal,
        args $args:ident [$($value:ident: $arg:ident => $param:ident),* $(,)?]
    ) => {
        $crate::launch::__launch_unsafe::<
            ($($param,)*),
            _,
            $source,
            { $crate::__kernel_abi!(@block $([$bx, $by, $bz])?) },
        >($module, $name, $stream, $config, $args)
    };
}

/// Passes its tokens through on host builds (feature `host`), where they are
/// the launcher of a [`#[kernel]`](macro@crate::kernel); drops them without
/// the host API.
#[cfg(feature = "host")]
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_host {
    ($($tokens:tt)*) => { $($tokens)* };
}

/// Passes its tokens through on host builds (feature `host`), where they are
/// the launcher of a [`#[kernel]`](macro@crate::kernel); drops them without
/// the host API.
#[cfg(not(feature = "host"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __kernel_host {
    ($($tokens:tt)*) => {};
}
