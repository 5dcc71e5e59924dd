const _: () = {
    #[allow(non_camel_case_types)]
    struct __CudaMemUnsafeKernel;
    unsafe impl ::cuda_mem::launch::__UnsafeKernel for __CudaMemUnsafeKernel {}
    impl __CudaMemUnsafeKernel {
        #[inline(always)]
        #[allow(clippy::all)]
        unsafe fn __cuda_mem_run(
            (__cuda_mem_param0, __cuda_mem_param1): (DevicePtr<u32>, u32),
        ) {
            unsafe { poke::on_host(__cuda_mem_param0, __cuda_mem_param1) }
        }
    }
    ::cuda_mem::__kernel_entry! {
        symbol "poke", unsafe_kernel true, source 1287833718837152191u64, lifetimes[],
        params[__cuda_mem_address0 __cuda_mem_rest0 : DevicePtr < u32 >,
        __cuda_mem_address1 __cuda_mem_rest1 : u32], callee __CudaMemUnsafeKernel,
    }
};
/// Writes `value` at `ptr`.
///
/// # Safety
/// `ptr` points to a `u32` in device memory that no one else uses.
///
/// The kernel `poke` (`#[kernel]`): launch it with [`poke.launch(&MODULE, &stream, config, (ptr, value))`](Self::launch).
#[allow(non_camel_case_types, dead_code)]
struct poke;
const _: () = {
    impl ::cuda_mem::__private::core::clone::Clone for poke {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl ::cuda_mem::__private::core::marker::Copy for poke {}
    impl ::cuda_mem::__private::core::fmt::Debug for poke {
        fn fmt(
            &self,
            f: &mut ::cuda_mem::__private::core::fmt::Formatter<'_>,
        ) -> ::cuda_mem::__private::core::fmt::Result {
            f.write_str("poke")
        }
    }
    impl poke {
        /// The kernel's name in the PTX.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const NAME: &'static str = "poke";
        /// The kernel's signature fingerprint: its parameters'
        /// kinds and type layouts, its safety and its source
        /// tokens. The PTX holds the same value, computed when it
        /// was compiled.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const SIGNATURE: u64 = ::cuda_mem::launch::__kernel_signature(
            true,
            1287833718837152191u64,
            &[
                ::cuda_mem::launch::__param_signature::<fn(DevicePtr<u32>), _>(),
                ::cuda_mem::launch::__param_signature::<fn(u32), _>(),
            ],
        );
        /// Runs the kernel's body on the CPU, in the host model of
        /// `cuda_mem::device`: a grid of one thread (block and grid of size 1, a
        /// warp of one lane), so the thread's grid-stride loops visit every
        /// index. For unit tests of a kernel's logic; slice parameters come from
        /// their `from_raw_parts` over host memory.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub unsafe fn on_host(ptr: DevicePtr<u32>, value: u32) {
            unsafe { *ptr.as_raw() = value };
        }
    }
    const _: u64 = poke::SIGNATURE;
};
impl poke {
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
    /// Queues the kernel `poke` on `stream`, with the grid, block and dynamic
    /// shared memory of `config`.
    ///
    /// `args` are the kernel's arguments, one tuple in parameter order:
    ///
    /// - `ptr`: `DevicePtr<u32>`
    /// - `value`: `u32`
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
    ///
    /// # Safety
    ///
    /// The kernel is an `unsafe fn`: the caller upholds its preconditions (its
    /// `# Safety` section) for these arguments and this configuration.
    pub unsafe fn launch<__CudaMemArg0, __CudaMemParam0, __CudaMemArg1, __CudaMemParam1>(
        &self,
        module: &'static ::cuda_mem::Module,
        stream: &impl ::cuda_mem::AsStream,
        config: ::cuda_mem::LaunchConfig,
        args: (__CudaMemArg0, __CudaMemArg1),
    ) -> ::cuda_mem::Result<()>
    where
        fn(DevicePtr<u32>): ::cuda_mem::__private::core::ops::Fn(__CudaMemParam0),
        __CudaMemArg0: ::cuda_mem::LaunchArg<__CudaMemParam0>,
        __CudaMemParam0: ::cuda_mem::KernelParam,
        fn(u32): ::cuda_mem::__private::core::ops::Fn(__CudaMemParam1),
        __CudaMemArg1: ::cuda_mem::LaunchArg<__CudaMemParam1>,
        __CudaMemParam1: ::cuda_mem::KernelParam,
    {
        ::cuda_mem::__kernel_launch! {
            module module, stream stream, config config, name Self::NAME, unsafe_kernel
            true, source 1287833718837152191u64, args args[__cuda_mem_arg0 :
            __CudaMemArg0 => __CudaMemParam0, __cuda_mem_arg1 : __CudaMemArg1 =>
            __CudaMemParam1]
        }
    }
}
