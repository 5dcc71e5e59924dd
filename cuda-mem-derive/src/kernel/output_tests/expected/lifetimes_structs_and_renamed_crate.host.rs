#[cfg(feature = "particles")]
const _: () = {
    ::cm_renamed::__kernel_entry! {
        symbol "step", unsafe_kernel false, source 1523033959801330723u64, lifetimes['a],
        params[__cuda_mem_address0 __cuda_mem_rest0 : DeviceSliceMut < 'a, Particle >,
        __cuda_mem_address1 __cuda_mem_rest1 : DeviceSlice < 'a, Particle >,
        __cuda_mem_address2 __cuda_mem_rest2 : crate ::Params, __cuda_mem_address3
        __cuda_mem_rest3 : u32], callee step::on_host,
    }
};
#[cfg(feature = "particles")]
/// The kernel `step` (`#[kernel]`): launch it with [`step.launch(&MODULE, &stream, config, (out, input, params, steps))`](Self::launch).
#[allow(non_camel_case_types, dead_code)]
pub(crate) struct step;
#[cfg(feature = "particles")]
const _: () = {
    impl ::cm_renamed::__private::core::clone::Clone for step {
        fn clone(&self) -> Self {
            *self
        }
    }
    impl ::cm_renamed::__private::core::marker::Copy for step {}
    impl ::cm_renamed::__private::core::fmt::Debug for step {
        fn fmt(
            &self,
            f: &mut ::cm_renamed::__private::core::fmt::Formatter<'_>,
        ) -> ::cm_renamed::__private::core::fmt::Result {
            f.write_str("step")
        }
    }
    impl step {
        /// The kernel's name in the PTX.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const NAME: &'static str = "step";
        /// The kernel's signature fingerprint: its parameters'
        /// kinds and type layouts, its safety and its source
        /// tokens. The PTX holds the same value, computed when it
        /// was compiled.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        pub const SIGNATURE: u64 = ::cm_renamed::launch::__kernel_signature(
            false,
            1523033959801330723u64,
            &[
                ::cm_renamed::launch::__param_signature::<
                    for<'a> fn(DeviceSliceMut<'a, Particle>),
                    _,
                >(),
                ::cm_renamed::launch::__param_signature::<
                    for<'a> fn(DeviceSlice<'a, Particle>),
                    _,
                >(),
                ::cm_renamed::launch::__param_signature::<
                    for<'a> fn(crate::Params),
                    _,
                >(),
                ::cm_renamed::launch::__param_signature::<for<'a> fn(u32), _>(),
            ],
        );
        /// Runs the kernel's body on the CPU, in the host model of
        /// `cuda_mem::device`: a grid of one thread (block and grid of size 1, a
        /// warp of one lane), so the thread's grid-stride loops visit every
        /// index. For unit tests of a kernel's logic; slice parameters come from
        /// their `from_raw_parts` over host memory.
        #[allow(dead_code, clippy::all, clippy::pedantic)]
        #[cfg(feature = "particles")]
        #[allow(clippy::needless_range_loop)]
        pub fn on_host<'a>(
            out: DeviceSliceMut<'a, Particle>,
            input: DeviceSlice<'a, Particle>,
            params: crate::Params,
            mut steps: u32,
        ) {
            while steps > 0 {
                steps -= 1;
            }
            let _ = (out, input, params);
        }
    }
    const _: u64 = step::SIGNATURE;
};
impl step {
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
        module: &'static ::cm_renamed::Module,
        ctx: &::cm_renamed::launch::__Arc<::cm_renamed::CudaContext>,
    ) -> ::cm_renamed::Result<()> {
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
        module: &'static ::cm_renamed::Module,
        ctx: &::cm_renamed::launch::__Arc<::cm_renamed::CudaContext>,
        block_size: u32,
        dynamic_shared: u32,
    ) -> ::cm_renamed::Result<::cm_renamed::Occupancy> {
        module
            .__occupancy(
                Self::NAME,
                Self::SIGNATURE,
                ctx,
                ::cm_renamed::__private::core::option::Option::Some(block_size),
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
        module: &'static ::cm_renamed::Module,
        ctx: &::cm_renamed::launch::__Arc<::cm_renamed::CudaContext>,
        dynamic_shared: u32,
    ) -> ::cm_renamed::Result<::cm_renamed::Occupancy> {
        module
            .__occupancy(
                Self::NAME,
                Self::SIGNATURE,
                ctx,
                ::cm_renamed::__private::core::option::Option::None,
                dynamic_shared,
            )
    }
    /// Queues the kernel `step` on `stream`, with the grid, block and dynamic
    /// shared memory of `config`.
    ///
    /// `args` are the kernel's arguments, one tuple in parameter order:
    ///
    /// - `out`: `DeviceSliceMut<'a, Particle>`
    /// - `input`: `DeviceSlice<'a, Particle>`
    /// - `params`: `crate::Params`
    /// - `steps`: `u32`
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
    pub fn launch<
        __CudaMemArg0,
        __CudaMemParam0,
        __CudaMemArg1,
        __CudaMemParam1,
        __CudaMemArg2,
        __CudaMemParam2,
        __CudaMemArg3,
        __CudaMemParam3,
    >(
        &self,
        module: &'static ::cm_renamed::Module,
        stream: &impl ::cm_renamed::AsStream,
        config: ::cm_renamed::LaunchConfig,
        args: (__CudaMemArg0, __CudaMemArg1, __CudaMemArg2, __CudaMemArg3),
    ) -> ::cm_renamed::Result<()>
    where
        (for<'a> fn(
            DeviceSliceMut<'a, Particle>,
        )): ::cm_renamed::__private::core::ops::Fn(__CudaMemParam0),
        __CudaMemArg0: ::cm_renamed::LaunchArg<__CudaMemParam0>,
        __CudaMemParam0: ::cm_renamed::KernelParam,
        (for<'a> fn(
            DeviceSlice<'a, Particle>,
        )): ::cm_renamed::__private::core::ops::Fn(__CudaMemParam1),
        __CudaMemArg1: ::cm_renamed::LaunchArg<__CudaMemParam1>,
        __CudaMemParam1: ::cm_renamed::KernelParam,
        (for<'a> fn(
            crate::Params,
        )): ::cm_renamed::__private::core::ops::Fn(__CudaMemParam2),
        __CudaMemArg2: ::cm_renamed::LaunchArg<__CudaMemParam2>,
        __CudaMemParam2: ::cm_renamed::KernelParam,
        (for<'a> fn(u32)): ::cm_renamed::__private::core::ops::Fn(__CudaMemParam3),
        __CudaMemArg3: ::cm_renamed::LaunchArg<__CudaMemParam3>,
        __CudaMemParam3: ::cm_renamed::KernelParam,
    {
        ::cm_renamed::__kernel_launch! {
            module module, stream stream, config config, name Self::NAME, unsafe_kernel
            false, source 1523033959801330723u64, args args[__cuda_mem_arg0 :
            __CudaMemArg0 => __CudaMemParam0, __cuda_mem_arg1 : __CudaMemArg1 =>
            __CudaMemParam1, __cuda_mem_arg2 : __CudaMemArg2 => __CudaMemParam2,
            __cuda_mem_arg3 : __CudaMemArg3 => __CudaMemParam3]
        }
    }
}
