const _: () = {
    ::cuda_mem::__kernel_entry! {
        symbol "tick", unsafe_kernel false, source 8761116119685133851u64, lifetimes[],
        params[], callee tick::on_host,
    }
};
/// The kernel `tick` (`#[kernel]`): launch it with [`tick.launch(&MODULE, &stream, config, ())`](Self::launch).
#[allow(non_camel_case_types, dead_code)]
struct tick;
const _: () = {
    impl ::cuda_mem::__private::core::clone::Clone for tick {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl ::cuda_mem::__private::core::marker::Copy for tick {}
    impl ::cuda_mem::__private::core::fmt::Debug for tick {
        fn fmt(
            &self,
            f: &mut ::cuda_mem::__private::core::fmt::Formatter<'_>,
        ) -> ::cuda_mem::__private::core::fmt::Result {
            f.write_str("tick")
        }
    }
    impl tick {
        /// The kernel's name in the PTX.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const NAME: &'static str = "tick";
        /// The kernel's signature fingerprint: its parameters'
        /// kinds and type layouts, its safety and its source
        /// tokens. The PTX holds the same value, computed when it
        /// was compiled.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const SIGNATURE: u64 = ::cuda_mem::launch::__kernel_signature(
            false,
            8761116119685133851u64,
            &[],
        );
        /// Runs the kernel's body on the CPU, in the host model of
        /// `cuda_mem::device`: a grid of one thread (block and grid of size 1, a
        /// warp of one lane), so the thread's grid-stride loops visit every
        /// index. For unit tests of a kernel's logic; slice parameters come from
        /// their `from_raw_parts` over host memory.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub fn on_host() {}
    }
    const _: u64 = tick::SIGNATURE;
};
impl tick {
    /// Loads `module` into `ctx` (once per context) and checks that its PTX
    /// has this kernel with this [`SIGNATURE`](Self::SIGNATURE), as the
    /// kernel's first launch in a context does: to report a stale PTX at
    /// start-up, or to keep the loading out of a timed section.
    ///
    /// # Errors
    ///
    /// `Err(KernelMismatch)` as for `launch`, and the driver's errors of
    /// loading the module.
    pub fn check(
        &self,
        module: &'static ::cuda_mem::Module,
        ctx: &::cuda_mem::launch::__Arc<::cuda_mem::CudaContext>,
    ) -> ::cuda_mem::Result<()> {
        module.__check(Self::NAME, Self::SIGNATURE, ctx)
    }
    /// The kernel's occupancy in `ctx` with blocks of
    /// `block_size` threads and `dynamic_shared` bytes of dynamic
    /// shared memory per block: how many blocks run at once on a
    /// multiprocessor (`cuOccupancyMaxActiveBlocksPerMultiprocessor`),
    /// and from it a grid of whole waves
    /// (`occupancy.waves(1)`) or one sized for a grid-stride loop
    /// (`occupancy.for_elements(n)`). Checks the module as
    /// [`check`](Self::check) does.
    ///
    /// # Errors
    ///
    /// As for `check`, and `InvalidArgument` for a block size
    /// or an amount of shared memory the kernel cannot run with.
    pub fn occupancy(
        &self,
        module: &'static ::cuda_mem::Module,
        ctx: &::cuda_mem::launch::__Arc<::cuda_mem::CudaContext>,
        block_size: u32,
        dynamic_shared: u32,
    ) -> ::cuda_mem::Result<::cuda_mem::Occupancy> {
        module
            .__occupancy(
                Self::NAME,
                Self::SIGNATURE,
                ctx,
                ::cuda_mem::__private::core::option::Option::Some(block_size),
                dynamic_shared,
            )
    }
    /// [`occupancy`](Self::occupancy) with the block size the
    /// driver finds best for this kernel
    /// (`cuOccupancyMaxPotentialBlockSize`: the most threads
    /// resident per multiprocessor), or, for a kernel declared
    /// with `#[kernel(block = [x, y, z])]`, that block's size
    /// (`x * y * z`; a grid from it is 1D, so write the
    /// `block_dim` of such a launch yourself).
    ///
    /// # Errors
    ///
    /// As for `occupancy`.
    pub fn max_occupancy(
        &self,
        module: &'static ::cuda_mem::Module,
        ctx: &::cuda_mem::launch::__Arc<::cuda_mem::CudaContext>,
        dynamic_shared: u32,
    ) -> ::cuda_mem::Result<::cuda_mem::Occupancy> {
        module
            .__occupancy(
                Self::NAME,
                Self::SIGNATURE,
                ctx,
                ::cuda_mem::__private::core::option::Option::None,
                dynamic_shared,
            )
    }
    /// Queues the kernel `tick` on `stream`, with the grid, block and dynamic
    /// shared memory of `config`.
    ///
    /// `args` are the kernel's arguments, one tuple in parameter order:
    ///
    /// - none: pass `()`
    ///
    /// A `DeviceSlice<T>` parameter takes `&` a buffer or view of `T`s, a
    /// `DeviceSliceMut<T>` parameter `&mut` a buffer or an exclusive view, and
    /// any other parameter a value of its type (the trait `LaunchArg`).
    ///
    /// Buffers and views are ordered on `stream` like `kernel_arg` /
    /// `kernel_arg_mut`: the kernel runs after earlier work on them, and later
    /// work, host access and their free wait for it; they are borrowed for
    /// this call only.
    ///
    /// # Errors
    ///
    /// `Err(KernelMismatch)` naming the kernel when the module's PTX lacks it or
    /// its signature fingerprint differs from [`SIGNATURE`](Self::SIGNATURE)
    /// (checked at the first launch in each context; nothing is launched), and
    /// the driver's errors (a stream of another context, a configuration the
    /// kernel cannot run with).
    pub fn launch(
        &self,
        module: &'static ::cuda_mem::Module,
        stream: &impl ::cuda_mem::AsStream,
        config: ::cuda_mem::LaunchConfig,
        args: (),
    ) -> ::cuda_mem::Result<()> {
        ::cuda_mem::__kernel_launch! {
            module module, stream stream, config config, name Self::NAME, unsafe_kernel
            false, source 8761116119685133851u64, args args[]
        }
    }
}
