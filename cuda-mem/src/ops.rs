//! The public operations of buffers and views. Each is implemented once, on
//! [`Elems`](crate::engine::Elems); these macros give every buffer kind and view
//! the same documented methods that forward to it.

/// Read operations: for every buffer kind, [`View`](crate::View) and [`ViewMut`](crate::ViewMut).
macro_rules! read_ops {
    ([$($gen:tt)*] $target:ty, $name:literal) => {
        impl<$($gen)*> $target {
            /// Number of elements.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// let n = x.len();
            /// # }
            /// ```
            pub fn len(&self) -> usize {
                self.elems().len
            }

            /// Whether there are no elements.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// if x.is_empty() { return; }
            /// # }
            /// ```
            pub fn is_empty(&self) -> bool {
                self.elems().len == 0
            }

            /// Size in bytes: `len() * size_of::<T>()`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// assert_eq!(x.byte_size(), x.len() * 4);
            /// # }
            /// ```
            pub fn byte_size(&self) -> usize {
                self.elems().byte_size()
            }

            /// The device address of the first element, for use inside device
            /// structs. It stays valid while the memory lives; dereferencing it
            /// (in a kernel) is up to you.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// let p: cuda_mem::DevicePtr<u32> = x.as_device_ptr();
            /// # }
            /// ```
            pub fn as_device_ptr(&self) -> $crate::DevicePtr<T> {
                $crate::DevicePtr::from_addr(self.elems().addr())
            }

            /// The CUDA context the memory belongs to.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// let ctx = x.context().clone();
            /// # }
            /// ```
            pub fn context(&self) -> &std::sync::Arc<cudarc::driver::CudaContext> {
                self.elems().context()
            }

            /// A shared view of `range`, or `Err(OutOfRange)`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") -> cuda_mem::Result<()> {")]
            /// let middle = x.slice(1..3)?;
            /// # Ok(()) }
            /// ```
            pub fn slice(&self, range: impl std::ops::RangeBounds<usize>) -> $crate::Result<$crate::View<'_, T>> {
                Ok($crate::View { elems: self.elems().sub(range)? })
            }

            /// Like [`slice`](Self::slice), with `None` for a range out of bounds.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") {")]
            /// assert!(x.get(x.len()..x.len() + 1).is_none());
            /// # }
            /// ```
            pub fn get(&self, range: impl std::ops::RangeBounds<usize>) -> Option<$crate::View<'_, T>> {
                self.slice(range).ok()
            }

            /// The same memory seen as elements of another [`DeviceCopy`]($crate::DeviceCopy)
            /// type `U` (like `bytemuck::cast_slice`): for a struct of `f32`s
            /// handed to a library that knows only `f32` (NCCL, cuBLAS), or
            /// for bytes. Both types have no padding and accept every bit
            /// pattern, so the reinterpretation is always sound.
            ///
            /// `Err(InvalidArgument)` unless the byte size is a multiple of
            /// `size_of::<U>()` and the first element's address is aligned for `U`.
            /// Both types must be `'static` (as in bytemuck), so a cast cannot
            /// turn a lifetime-tagged handle into one of another lifetime.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") -> cuda_mem::Result<()> {")]
            /// let bytes = x.cast::<u8>()?;
            /// assert_eq!(bytes.len(), x.byte_size());
            /// # Ok(()) }
            /// ```
            pub fn cast<U: $crate::DeviceCopy + 'static>(&self) -> $crate::Result<$crate::View<'_, U>>
            where
                T: 'static,
            {
                Ok($crate::View { elems: self.elems().cast()? })
            }

            /// Copies every element into `dst` (lengths must match) and returns
            /// once the data is there. Large copies (8 MiB and up) into
            /// ordinary pageable memory are staged through pinned chunks on
            /// several threads, faster than the driver's own pageable copy.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") -> cuda_mem::Result<()> {")]
            /// let mut host = vec![0; x.len()];
            /// x.copy_to_host(&mut host)?;
            /// # Ok(()) }
            /// ```
            pub fn copy_to_host(&self, dst: &mut [T]) -> $crate::Result<()> {
                self.elems().copy_to_host(dst)
            }

            /// Copies the elements into a new `Vec`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ") -> cuda_mem::Result<()> {")]
            /// let v = x.to_vec()?;
            /// # Ok(()) }
            /// ```
            pub fn to_vec(&self) -> $crate::Result<Vec<T>> {
                self.elems().to_vec()
            }

            /// Queues a copy of every element into the host-accessible buffer
            /// `dst` (pinned or unified, of this context or another; lengths
            /// must match) on `stream`. `dst`'s `as_slice` waits for it.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ", ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {")]
            /// let stream = ctx.new_stream()?;
            /// let mut host = cuda_mem::PinnedBuffer::new(ctx, x.len())?;
            /// x.copy_to_host_async(&mut host, &stream)?;
            /// let values = host.as_slice()?; // waits for the copy
            /// # Ok(()) }
            /// ```
            pub fn copy_to_host_async<H: $crate::HostAccessible>(
                &self,
                dst: &mut $crate::Buffer<T, H>,
                stream: &std::sync::Arc<cudarc::driver::CudaStream>,
            ) -> $crate::Result<()> {
                dst.elems().copy_from(self.elems(), stream)
            }

            /// This memory as a kernel argument the kernel only reads, ordered on
            /// `stream` (see [`KernelArg`]($crate::KernelArg)).
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &", $name, ", s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {")]
            /// let arg = x.kernel_arg(s)?;
            /// # Ok(()) }
            /// ```
            pub fn kernel_arg(&self, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> $crate::Result<$crate::KernelArg<'_, T>> {
                Ok($crate::KernelArg::new(self.elems().claim(stream)?))
            }
        }

        /// `stream()` is a stream cuda-mem keeps for this purpose and never
        /// queues work on; cudarc uses it only for copies between two
        /// contexts, which cuda-mem refuses at this boundary (use
        /// `copy_from`, a peer copy cuda-mem orders on both sides).
        impl<$($gen)*> cudarc::driver::DeviceSlice<T> for $target {
            fn len(&self) -> usize {
                self.elems().len
            }
            fn stream(&self) -> &std::sync::Arc<cudarc::driver::CudaStream> {
                self.elems().cudarc_stream()
            }
        }

        /// For cudarc's own calls (`memcpy_dtoh`, NCCL, `launch` through raw
        /// pointers): `stream` waits for earlier work on the memory, and the
        /// guard synchronises `stream` when dropped, so the use is complete
        /// before anything else touches the memory. A use cuda-mem cannot
        /// order (a capturing stream, a copy between two contexts) gets
        /// address 0, which makes the driver fail the cudarc call. For
        /// asynchronous kernel launches use `kernel_arg`.
        impl<$($gen)*> cudarc::driver::DevicePtr<T> for $target {
            fn device_ptr<'s>(&'s self, stream: &'s cudarc::driver::CudaStream) -> (cudarc::driver::sys::CUdeviceptr, cudarc::driver::SyncOnDrop<'s>) {
                let addr = self.elems().address_for_cudarc(stream);
                (addr, cudarc::driver::SyncOnDrop::Sync(Some(stream)))
            }
        }
    };
}

/// Write operations: for every buffer kind and [`ViewMut`](crate::ViewMut).
macro_rules! write_ops {
    ([$($gen:tt)*] $target:ty, $name:literal) => {
        impl<$($gen)*> $target {
            /// Sets every byte to `byte` (`cuMemsetD8`), on the context's default
            /// stream: later operations through cuda-mem are ordered after it and
            /// host access waits for it.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ") -> cuda_mem::Result<()> {")]
            /// x.memset(0)?;
            /// # Ok(()) }
            /// ```
            pub fn memset(&mut self, byte: u8) -> $crate::Result<()> {
                let e = self.elems();
                e.memset(byte, e.default_stream())
            }

            /// Like [`memset`](Self::memset), queued on `stream`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {")]
            /// x.memset_async(0xff, s)?;
            /// # Ok(()) }
            /// ```
            pub fn memset_async(&mut self, byte: u8, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> $crate::Result<()> {
                self.elems().memset(byte, stream)
            }

            /// Sets every element to `value`, at memory bandwidth for every
            /// element size (a driver memset when the value's bytes repeat with
            /// period 1, 2 or 4, else cuda-mem's fill kernels), on the context's
            /// default stream.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", v: u32) -> cuda_mem::Result<()> {")]
            /// x.fill(v)?;
            /// # Ok(()) }
            /// ```
            pub fn fill(&mut self, value: T) -> $crate::Result<()> {
                let e = self.elems();
                e.fill(&value, e.default_stream())
            }

            /// Like [`fill`](Self::fill), queued on `stream`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", v: u32, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {")]
            /// x.fill_async(v, s)?;
            /// # Ok(()) }
            /// ```
            pub fn fill_async(&mut self, value: T, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> $crate::Result<()> {
                self.elems().fill(&value, stream)
            }

            /// Copies `src` in (lengths must match); returns once `src` may be
            /// reused (as with `cuMemcpyHtoD`, the last part of the transfer
            /// may still be on its way: every later operation on the memory,
            /// host access included, comes after it). Large copies (8 MiB and
            /// up) from ordinary pageable memory are staged through pinned
            /// chunks on several threads, several times faster than the
            /// driver's own pageable copy; the first one in a context pins
            /// the 16 MiB of chunks it keeps.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", data: &[u32]) -> cuda_mem::Result<()> {")]
            /// x.copy_from_host(data)?;
            /// # Ok(()) }
            /// ```
            pub fn copy_from_host(&mut self, src: &[T]) -> $crate::Result<()> {
                self.elems().copy_from_host(src)
            }

            /// Queues a copy from the host-accessible buffer `src` (pinned or
            /// unified; lengths must match) on `stream`. `src` cannot be changed
            /// from the host until the copy is done (`as_mut_slice` waits).
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", ctx: &std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {")]
            /// let stream = ctx.new_stream()?;
            /// let host = cuda_mem::PinnedBuffer::<u32>::new(ctx, x.len())?;
            /// x.copy_from_host_async(&host, &stream)?;
            /// # Ok(()) }
            /// ```
            pub fn copy_from_host_async<H: $crate::HostAccessible>(
                &mut self,
                src: &$crate::Buffer<T, H>,
                stream: &std::sync::Arc<cudarc::driver::CudaStream>,
            ) -> $crate::Result<()> {
                self.elems().copy_from(src.elems(), stream)
            }

            /// Copies from any buffer kind or view (lengths must match), on the
            /// context's default stream. The source may belong to another
            /// context or device: that is a peer copy (`cuMemcpyPeerAsync`
            /// between device memory), which enables peer access the first
            /// time two devices exchange data; see
            /// [`peer_path`]($crate::peer_path).
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", y: &cuda_mem::DeviceBuffer<u32>) -> cuda_mem::Result<()> {")]
            /// x.copy_from(y)?;
            /// # Ok(()) }
            /// ```
            pub fn copy_from(&mut self, src: &impl $crate::AsView<T>) -> $crate::Result<()> {
                let e = self.elems();
                e.copy_from(src.as_view().elems, e.default_stream())
            }

            /// Like [`copy_from`](Self::copy_from), queued on `stream`. For a
            /// copy between two contexts, `stream` may belong to either (else
            /// `Err(ContextMismatch)`); work on both sides is ordered around it.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", y: &cuda_mem::DeviceBuffer<u32>, s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {")]
            /// x.copy_from_async(y, s)?;
            /// # Ok(()) }
            /// ```
            pub fn copy_from_async(&mut self, src: &impl $crate::AsView<T>, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> $crate::Result<()> {
                self.elems().copy_from(src.as_view().elems, stream)
            }

            /// An exclusive view of `range`, or `Err(OutOfRange)`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", v: u32) -> cuda_mem::Result<()> {")]
            /// x.slice_mut(1..3)?.fill(v)?;
            /// # Ok(()) }
            /// ```
            pub fn slice_mut(&mut self, range: impl std::ops::RangeBounds<usize>) -> $crate::Result<$crate::ViewMut<'_, T>> {
                Ok($crate::ViewMut { elems: self.elems().sub(range)?, _exclusive: std::marker::PhantomData })
            }

            /// Like [`slice_mut`](Self::slice_mut), with `None` for a range out of bounds.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ") {")]
            /// assert!(x.get_mut(..0).is_some());
            /// # }
            /// ```
            pub fn get_mut(&mut self, range: impl std::ops::RangeBounds<usize>) -> Option<$crate::ViewMut<'_, T>> {
                self.slice_mut(range).ok()
            }

            /// Like [`cast`](Self::cast), as an exclusive view that can be
            /// written: every write leaves valid `T`s behind.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ") -> cuda_mem::Result<()> {")]
            /// x.cast_mut::<u8>()?.memset(0)?;
            /// # Ok(()) }
            /// ```
            pub fn cast_mut<U: $crate::DeviceCopy + 'static>(&mut self) -> $crate::Result<$crate::ViewMut<'_, U>>
            where
                T: 'static,
            {
                Ok($crate::ViewMut { elems: self.elems().cast()?, _exclusive: std::marker::PhantomData })
            }

            /// Splits into two exclusive views at element `mid`.
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ") -> cuda_mem::Result<()> {")]
            /// let (mut a, b) = x.split_at_mut(1)?;
            /// # Ok(()) }
            /// ```
            pub fn split_at_mut(&mut self, mid: usize) -> $crate::Result<($crate::ViewMut<'_, T>, $crate::ViewMut<'_, T>)> {
                let e = self.elems();
                let (a, b) = (e.sub(..mid)?, e.sub(mid..)?);
                Ok((
                    $crate::ViewMut { elems: a, _exclusive: std::marker::PhantomData },
                    $crate::ViewMut { elems: b, _exclusive: std::marker::PhantomData },
                ))
            }

            /// This memory as a kernel argument the kernel may write, ordered on
            /// `stream` (see [`KernelArg`]($crate::KernelArg)).
            ///
            /// ```no_run
            #[doc = concat!("# fn f(x: &mut ", $name, ", s: &std::sync::Arc<cuda_mem::CudaStream>) -> cuda_mem::Result<()> {")]
            /// let out = x.kernel_arg_mut(s)?;
            /// # Ok(()) }
            /// ```
            pub fn kernel_arg_mut(&mut self, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> $crate::Result<$crate::KernelArg<'_, T>> {
                Ok($crate::KernelArg::new(self.elems().claim(stream)?))
            }
        }

        impl<$($gen)*> cudarc::driver::DevicePtrMut<T> for $target {
            fn device_ptr_mut<'s>(&'s mut self, stream: &'s cudarc::driver::CudaStream) -> (cudarc::driver::sys::CUdeviceptr, cudarc::driver::SyncOnDrop<'s>) {
                let addr = self.elems().address_for_cudarc(stream);
                (addr, cudarc::driver::SyncOnDrop::Sync(Some(stream)))
            }
        }
    };
}

pub(crate) use {read_ops, write_ops};
