//! Typed GPU memory for Rust: your own `#[repr(C)]` structs in device,
//! pinned, unified, pooled and 2D-pitched memory, filled with a typed value at
//! memory bandwidth, copied without data races or use-after-free, and shared
//! with kernels written in Rust.
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::{DeviceBuffer, DeviceCopy};
//!
//! #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
//! #[repr(C)]
//! struct Particle { pos: [f32; 3], mass: f32, id: u32 } // 20 bytes, no padding: proved at compile time
//!
//! let ctx = cuda_mem::context(0)?; // Err, never a panic, without a driver or GPU
//! let mut particles = DeviceBuffer::<Particle>::new(&ctx, 1_000_000)?;
//! particles.fill(Particle { pos: [0.0; 3], mass: 1.0, id: 7 })?;
//! particles.slice_mut(10..20)?.memset(0)?;
//! let host: Vec<Particle> = particles.to_vec()?;
//! assert_eq!(host[10].mass, 0.0);
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! The repository's `examples/` directory has a runnable program for each
//! section below (`cargo run --release --example NAME`): `quickstart`,
//! `particles`, `pipeline`, `pool`, `image2d`, `allocator`, `device_vec`,
//! `graph` and `nccl_allreduce`.
//!
//! # Memory kinds
//!
//! Every buffer holds `len` elements of one `T: DeviceCopy` and has the same
//! operations, defined once in the traits [`Memory`] and [`MemoryMut`]
//! (`use cuda_mem::prelude::*;`): [`len`](Memory::len), [`byte_size`](Memory::byte_size),
//! [`memset`](MemoryMut::memset), [`fill`](MemoryMut::fill), copies to and from the
//! host and between any two kinds, views ([`slice`](Memory::slice),
//! [`slice_mut`](MemoryMut::slice_mut)) with the same operations, kernel
//! arguments, and cudarc's `DevicePtr` / `DevicePtrMut`. What differs is where
//! the memory lives and who may touch it:
//!
//! | type | memory | the host may read it | use it for |
//! | --- | --- | --- | --- |
//! | [`DeviceBuffer<T>`] | device (`cuMemAlloc`) | no: copy it out | data the GPU works on; the default |
//! | [`PinnedBuffer<T>`] | page-locked host (`cuMemHostAlloc`) | [`as_slice`](Buffer::as_slice), [`as_mut_slice`](Buffer::as_mut_slice) | staging for copies: the source or target of every asynchronous host copy, at full bandwidth |
//! | [`UnifiedBuffer<T>`] | managed (`cuMemAllocManaged`) | `as_slice`, `as_mut_slice` | data both sides touch, or irregularly; [`prefetch_to_device`](UnifiedBuffer::prefetch_to_device) before the GPU's heavy use, [`prefetch_to_host`](UnifiedBuffer::prefetch_to_host) before the host's, [`advise`](UnifiedBuffer::advise) |
//! | [`PoolBuffer<T>`] | stream-ordered pool (`cuMemAllocAsync`) | no | temporaries allocated and freed every step: a microsecond each from a [`MemPool`], which keeps its memory (release threshold, [`trim_to`](MemPool::trim_to), [`usage`](MemPool::usage)) |
//! | [`PitchedBuffer<T>`] | device, rows padded (`cuMemAllocPitch`) | no | images and other 2D arrays: 2D copies (to and from every other kind, and host data with its own pitch) and fills that never touch the row padding, [`row`](PitchedBuffer::row) and [`region`](Memory::region) views |
//! | [`DeviceVec<T>`] | device, mapped into a reserved address range (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`) | no | data whose size is not known up front: grows in place ([`extend_from_host`](DeviceVec::extend_from_host), [`extend_from_device`](DeviceVec::extend_from_device), [`resize`](DeviceVec::resize), batched [`pusher`](DeviceVec::pusher)) without moving or copying, [`shrink_to_fit`](DeviceVec::shrink_to_fit) gives memory back |
//!
//! Allocator-aware code gets allocators: [`PinnedAllocator`] and
//! [`UnifiedAllocator`] implement `allocator_api2::alloc::Allocator`, so
//! `allocator_api2::vec::Vec<T, PinnedAllocator>` (and hashbrown maps) live in
//! pinned or managed memory. Device memory is not host-dereferenceable, so it
//! gets no `Allocator` (a `Vec` would read it on the host); [`CudaAllocator`]
//! hands out device bytes as an owned [`DeviceAlloc`] or a raw
//! [`DevicePtr<u8>`] instead.
//!
//! Buffers keep their CUDA context alive. [`context`] opens a device's primary
//! context; cuda-mem takes and re-exports cudarc's [`CudaContext`] and
//! [`CudaStream`] (`Arc`s), and re-exports [`cudarc`] itself for kernel
//! launches.
//!
//! # The `DeviceCopy` contract
//!
//! Device code and `memset` can write any bytes into a buffer, and the host
//! reads them back as `T`. That is only sound for types that satisfy the
//! [`DeviceCopy`] contract: no padding bytes, every bit pattern a valid value,
//! no host pointers or references, a C-compatible layout, alignment at most
//! 256. It is implemented for the integers, floats, arrays of `DeviceCopy`
//! and [`DevicePtr<T>`] (a device address: the way to put pointers in
//! structs), and never for `bool`, `char`, enums, `Option`, tuples, references
//! or raw pointers (`bool` and fieldless enums go through
//! [`CheckedDeviceCopy`], [below](#types-with-invalid-bit-patterns-checkeddevicecopy)).
//!
//! `#[derive(DeviceCopy)]` on a `#[repr(C)]` struct proves every rule at
//! compile time, with the error on your code, and on host builds also
//! implements cudarc's `DeviceRepr`, so the struct can be a kernel argument.
//! With `default-features = false` this crate is `#![no_std]` and builds for
//! `nvptx64-nvidia-cuda`, so a kernel crate can share the struct definitions
//! (see [below](#your-own-kernels-in-rust)). A derived struct without type
//! parameters is also `bytemuck::Pod`, so bytemuck's byte views work on it;
//! [`bytes_of`] and [`bytes_of_slice`] give them for every `DeviceCopy` type,
//! generic and lifetime-tagged ones included, and [`DevicePod<T>`] brings a
//! foreign `Pod` type in.
//! Features `glam` and `mint` make those crates' vectors and matrices
//! `DeviceCopy`.
//!
//! # Types with invalid bit patterns: `CheckedDeviceCopy`
//!
//! `bool` and enums are never `DeviceCopy`: a kernel or a `memset` can write
//! a byte that is none of their values, and reading it as one would be
//! undefined behaviour. [`CheckedDeviceCopy`] keeps them in device memory as
//! the bits of a `DeviceCopy` type ([`Bits`](CheckedDeviceCopy::Bits): `u8`
//! for `bool`, the `repr` integer of a fieldless enum, a `{Name}Bits` struct
//! of the fields' bits for a `#[repr(C)]` struct) and brings every value back
//! through [`try_from_bits`](CheckedDeviceCopy::try_from_bits), which refuses
//! bits that are not a value. [`Checked<C, M>`](Checked) is memory of such
//! values, any buffer or view `M` of their bits:
//! [`CheckedDeviceBuffer<C>`](CheckedDeviceBuffer), pinned, unified and pool
//! forms, views. Kernels take it as a
//! [`CheckedSlice<C>`](device::CheckedSlice) or
//! [`CheckedSliceMut<C>`](device::CheckedSliceMut).
//!
//! ```no_run
//! use cuda_mem::{checked::InvalidBitPattern, CheckedDeviceBuffer, CheckedDeviceCopy, Error};
//! use cuda_mem::prelude::*;
//!
//! #[derive(Clone, Copy, Debug, PartialEq, CheckedDeviceCopy)]
//! #[repr(u8)]
//! enum Phase { Solid, Liquid, Gas }
//!
//! let ctx = cuda_mem::context(0)?;
//! let mut phases = CheckedDeviceBuffer::from_slice(&ctx, &[Phase::Gas, Phase::Solid])?;
//! assert_eq!(phases.to_vec()?, [Phase::Gas, Phase::Solid]);
//! phases.memset(0x02)?; // every element Gas: allowed
//! assert!(phases.memset(0x09).is_err()); // no phase: refused, nothing written
//! phases.bits_mut().slice_mut(1..)?.memset(0x09)?; // the raw bits take anything...
//! assert!(matches!( // ...and every checked read names the first that is no value
//!     phases.to_vec(),
//!     Err(Error::InvalidBitPattern(InvalidBitPattern { index: 1, .. }))
//! ));
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! In a kernel (built for the nvptx target, see [Your own kernels in Rust](#your-own-kernels-in-rust)):
//!
//! ```ignore
//! #[kernel]
//! pub fn melt(mut out: CheckedSliceMut<Phase>, phases: CheckedSlice<Phase>, hot: CheckedSlice<bool>) {
//!     for (_, mut slot, (phase, hot)) in out.grid_stride_zip((phases, hot)) {
//!         match (phase, hot) {
//!             (Ok(Phase::Solid), Ok(true)) => slot.set(Phase::Liquid),
//!             (Ok(p), Ok(_)) => slot.set(p),
//!             (Err(_bits), _) | (_, Err(_bits)) => {} // bits that are no value: yours to handle
//!         }
//!     }
//! }
//! ```
//!
//! Why it is sound: no value of such a type is ever made from memory. The
//! memory holds `Bits`, which any bytes are; a value comes into being only
//! in `try_from_bits`, by matching the bits against the values (an enum's
//! discriminants, a `bool`'s 0 and 1, field by field for a struct), in safe
//! code. Every path that hands out values goes through it: on the host
//! [`to_vec`](Checked::to_vec) and [`copy_to_host`](Checked::copy_to_host)
//! (`Err(Error::InvalidBitPattern(..))` with the first index; host slices
//! of pinned and unified memory come as the raw bits,
//! `bits().as_slice()`), on the device [`CheckedSlice::get`](device::CheckedSlice::get)
//! and [`CheckedMut::get`](device::CheckedMut::get) (the value or the raw
//! bits); no `&C` into device or host memory exists. Writes take values
//! ([`fill`](Checked::fill), [`copy_from_host`](Checked::copy_from_host),
//! [`CheckedMut::set`](device::CheckedMut::set)) or bytes that make values
//! ([`memset`](Checked::memset) refuses the others); writing raw bits
//! ([`bits_mut`](Checked::bits_mut)) is allowed because reads check. So the
//! trait is safe to implement by hand, and the derive emits safe code only:
//! an attribute macro that rewrites the item after the derive read it can
//! make the build fail, never make a value that is not one. A struct's
//! `{Name}Bits` is `#[derive(DeviceCopy)]`, which refuses padding as it does
//! for any struct. The cost is a pass over the values on each side (a
//! `DeviceCopy` type is copied as it is): see the benchmark's `checked`
//! rows. [`checked::values_of_bits`] and [`checked::bits_of_values`]
//! convert slices of your own.
//!
//! # Structures of arrays: `DeviceSoA`
//!
//! A kernel that reads 2 of a struct's 8 fields still reads all 8 from an
//! array of structs. `#[derive(DeviceSoA)]` (next to `DeviceCopy`, on a
//! `#[repr(C)]` struct of named fields) keeps the struct as a structure of
//! arrays: `{Name}SoA` ([`soa::SoaBuffer<T, K>`] in device memory; pinned,
//! unified and pool memory as `SoaBuffer<T, Pinned>`, ...), each field in
//! an array of its own, all of them the same length and moved together.
//!
//! ```no_run
//! use cuda_mem::prelude::*;
//! use cuda_mem::DeviceSoA;
//!
//! #[derive(Clone, Copy, Debug, PartialEq, DeviceCopy, DeviceSoA)]
//! #[repr(C)]
//! struct Particle { pos: [f32; 3], vel: [f32; 3], mass: f32, charge: f32 }
//!
//! let ctx = cuda_mem::context(0)?;
//! let host = vec![Particle { pos: [0.0; 3], vel: [1.0; 3], mass: 2.0, charge: 1.0 }; 1 << 20];
//! let mut soa = ParticleSoA::from_slice(&ctx, &host)?; // transposed on the GPU
//! soa.fields_mut().charge.fill(-1.0)?; // one field's array: a ViewMut
//! let mass: cuda_mem::View<'_, f32> = soa.fields().mass; // a view like any other
//! assert_eq!(mass.len(), 1 << 20);
//! assert_eq!(soa.to_vec()?[7].charge, -1.0); // structs again
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! Field views work wherever a view does: fills, copies, `cuda_mem::algo`,
//! and kernel parameters (a `DeviceSlice<f32>` of the masses). A kernel
//! takes the whole structure as a `{Name}Slice` / `{Name}SliceMut`
//! ([`device::SoaSlice`], [`device::SoaSliceMut`]): `get(i)` reads a
//! struct field by field, `fields()` gives each field's array, and a
//! thread writes its own structs as with `DeviceSliceMut`:
//!
//! ```ignore
//! #[kernel]
//! pub fn kinetic(bodies: ParticleSlice, mut energy: DeviceSliceMut<f32>) {
//!     let f = bodies.fields(); // reads only the two arrays it uses
//!     for (_, e, (&v, &m)) in energy.grid_stride_zip((f.vel, f.mass)) {
//!         *e = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
//!     }
//! }
//! ```
//!
//! Why it is
//! sound: a `SoaBuffer` is one allocation cut into one region per field
//! (256-byte aligned, `len` elements of the field's type), and every field
//! is `DeviceCopy`, so any bytes are a value; the exclusive views of
//! `fields_mut` are of disjoint regions. `DeviceSoA` is an `unsafe trait`
//! (its table must be the same in the host's build and the kernels', where
//! each side finds the arrays by its own); the derive's `unsafe impl`
//! comes from cuda-mem's own macro, which reads the table off the struct's
//! fields. cuda-mem also checks the field table against
//! the struct ([`soa::check_fields`]: the fields in order, without gaps,
//! ending at the struct's size) before the transposition kernels move a
//! byte by it, and a view made with a type that is not the table's size
//! and alignment panics.
//!
//! # Asynchronous work: the rules
//!
//! - **Every operation is queued on a stream.** The `_async` methods take the
//!   stream ([`AsStream`]: cudarc's `Arc<CudaStream>` from `ctx.new_stream()`,
//!   or a [`Stream`], which only cuda-mem queues work on, so its calls skip
//!   the driver's check that the stream is not capturing a graph); the
//!   others use the context's default stream. Copies that take or
//!   return host slices ([`copy_from_host`](MemoryMut::copy_from_host),
//!   [`copy_to_host`](Memory::copy_to_host), [`to_vec`](Memory::to_vec))
//!   return when the host memory may be reused or read.
//! - **Asynchronous host copies need pinned (or unified) memory.**
//!   [`copy_from_host_async`](MemoryMut::copy_from_host_async) and
//!   [`copy_to_host_async`](Memory::copy_to_host_async) take a
//!   [`PinnedBuffer`] or [`UnifiedBuffer`], never a `&[T]`: from pageable
//!   memory the driver cannot copy asynchronously anyway, and a borrowed slice
//!   could be changed or freed while the copy still runs. The buffer records
//!   the copy instead.
//! - **Host access waits.** [`as_slice`](Buffer::as_slice) and
//!   [`as_mut_slice`](Buffer::as_mut_slice) first wait for every queued
//!   operation on the buffer (copies, kernels, prefetches), so the host never
//!   sees memory the GPU may still change. [`synchronize`](Memory::synchronize)
//!   waits explicitly.
//! - **Operations on overlapping bytes run in the order you queue them**, on
//!   any streams: each allocation remembers which byte ranges its queued
//!   operations use and on which streams, and an operation on another stream
//!   first waits for those whose ranges overlap its own (one event per
//!   allocation, re-recorded; nothing is allocated per operation). Disjoint
//!   views of one allocation on different streams do not wait for each other,
//!   so they overlap in time (the `pipeline` example streams chunk views of
//!   one buffer per direction).
//! - **Kernels** get a buffer through [`kernel_arg`](Memory::kernel_arg) or
//!   [`kernel_arg_mut`](MemoryMut::kernel_arg_mut)`(&stream)`: a [`KernelArg`]
//!   (a `DeviceRepr`, the layout of a `T*`) that orders the launch after
//!   earlier work on the buffer and makes later work, host access and the free
//!   wait for the kernel. It borrows the buffer, so the buffer cannot be
//!   dropped or touched from the host while the argument exists. Arguments
//!   of one buffer may be taken on several streams before any launch (two
//!   read-only ones, or the halves of `split_at_mut`): host access and the
//!   free then wait for every one of those streams.
//! - **Drop never panics and never frees memory in use.** Device and
//!   unified buffers (and uncached pinned ones) wait for their queued work,
//!   then free; pool buffers are freed stream-ordered behind their last use,
//!   without waiting ([`free_on_stream`](PoolBuffer::free_on_stream) picks
//!   the stream); pinned buffers go back to their context's [`PinnedCache`]
//!   without waiting, guarded by an event behind their last use (below). If
//!   the free fails (a context broken by a faulting kernel), the memory is
//!   leaked and the error recorded in the context, as cudarc does.
//! - **Pinned memory is cached.** Pinning is slow (a `cuMemHostRegister` of
//!   64 MiB takes tens of milliseconds), so a dropped [`PinnedBuffer`]'s
//!   block goes back to its context's [`PinnedCache`], and the next buffer
//!   of its size class (powers of two to 4 MiB, whole 2 MiB above) takes it:
//!   alloc+free after warm-up costs microseconds. A block is handed out
//!   again only once the event recorded behind its last queued use has
//!   fired (`cuEventQuery`); otherwise a fresh block is pinned, never one a
//!   DMA or kernel may still touch. [`PinnedBuffer::new`] zeroes a reused
//!   block; [`PinnedBuffer::new_unspecified`] does not (its contents are
//!   then the bytes the previous buffer left, as for [`DeviceBuffer::new`]).
//!   At most [`PinnedCache::release_threshold`] unused bytes stay cached
//!   (default 1 GiB), [`PinnedCache::trim_to`] frees more, and every cached
//!   block is freed at process exit. Opt out with [`PinnedBuffer::uncached`],
//!   [`PinnedCache::set_enabled`] or `CUDA_MEM_PINNED_CACHE=0`.
//!   Write-combined memory and [`PinnedAllocator`] blocks are not cached (an
//!   allocator's `allocate` / `deallocate` pin and free, as before). Large
//!   synchronous copies from or to a pageable `Vec` stage through one block
//!   of the cache (a ring of 4 MiB chunks) on up to 12 persistent worker
//!   threads.
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::{DeviceBuffer, PinnedBuffer};
//!
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let upload = PinnedBuffer::from_slice(&ctx, &[1.0f32; 4096])?;
//! let mut device = DeviceBuffer::<f32>::new(&ctx, 4096)?;
//! let mut download = PinnedBuffer::<f32>::new(&ctx, 4096)?;
//! device.copy_from_host_async(&upload, &stream)?; // returns at once
//! device.slice_mut(..2048)?.fill_async(2.0, &stream)?;
//! device.copy_to_host_async(&mut download, &stream)?;
//! assert_eq!(download.as_slice()?[0], 2.0); // waits for the three operations
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Awaiting GPU work: futures
//!
//! Two words, two meanings. An `_async` method *queues* work on a stream and
//! returns at once, with no future ([`fill_async`](MemoryMut::fill_async),
//! [`copy_to_host_async`](Memory::copy_to_host_async), typed launches,
//! [`Graph::launch`]). A [`Future`](std::future::Future) you `.await` is
//! what these return:
//!
//! - [`Completion::of_stream`]`(&stream)`: resolves when everything queued
//!   on the stream before it has finished (kernels, copies, fills, graph
//!   launches, anything);
//! - [`Memory::completion`]: when every operation queued on a buffer so far
//!   has finished, on whatever streams;
//! - [`Memory::download`]`(&stream)`: a device-to-host copy into a new
//!   `Vec<T>` (a [`Download`]), staged through a pinned block of the
//!   [`PinnedCache`];
//! - [`MemoryMut::upload`]`(vec, &stream)`: a host-to-device copy from a
//!   `Vec<T>` taken by value and handed back when the copy is done (an
//!   [`Upload`]).
//!
//! They need no particular runtime: std's `Future` and `Waker` only, woken
//! by the driver's stream callback (`cuStreamAddCallback`, called once per
//! stream and future, with the error if the context failed). Nothing
//! busy-waits and no thread is started per future; a poll never waits for
//! the GPU. (The copies' `memcpy` between the `Vec` and the pinned block
//! runs on the thread that makes the upload, or that polls the finished
//! download.)
//!
//! **Dropping or forgetting a future is safe.** The memory, not the future,
//! keeps track of the work queued on it (the stream order above): a future
//! borrows nothing, dropping it cancels nothing (the queued work and the
//! callback run on), and a buffer whose work a forgotten future was waiting
//! for still waits for that work before it is freed or used again. The
//! staging block of a dropped download or upload goes back to the cache
//! behind an event, like any dropped [`PinnedBuffer`]. What `mem::forget`
//! costs: the future's own state (a few dozen bytes once its callbacks have
//! run) and, for a download or an upload, its pinned block, which is never
//! returned to the cache.
//!
//! ```no_run
//! # async fn serve(ctx: std::sync::Arc<cuda_mem::CudaContext>) -> cuda_mem::Result<()> {
//! use cuda_mem::prelude::*;
//! let stream = ctx.new_stream()?;
//! let mut data = cuda_mem::PoolBuffer::<f32>::new(1 << 20, &stream)?;
//! let input = vec![1.0f32; 1 << 20];
//! let input = data.upload(input, &stream)?.await?; // the Vec comes back
//! data.fill_async(2.0, &stream)?; // queued, returns at once
//! cuda_mem::Completion::of_stream(&stream)?.await?;
//! let out: Vec<f32> = data.download(&stream)?.await?;
//! assert_eq!((input.len(), out[0]), (1 << 20, 2.0));
//! # Ok(()) }
//! ```
//!
//! # Fill
//!
//! [`fill(value)`](MemoryMut::fill) sets every element to `value` at the card's
//! write bandwidth, for any `T`. When the value's bytes repeat with period 1,
//! 2 or 4 (`0u64`, `-1i32`, any `f32`, `[7u8; 12]`) and the address allows it,
//! it is one driver call, `cuMemsetD8/D16/D32Async` (the 2D forms for
//! [`PitchedBuffer`]). Any other value, say a 12-byte struct, goes to
//! cuda-mem's fill kernels (Rust, compiled to PTX when this crate is built,
//! loaded once per context): 16-byte coalesced stores of the repeating
//! pattern, with unaligned heads and tails of views written separately.
//! [`memset(byte)`](MemoryMut::memset) sets bytes. Pitched fills skip the row
//! padding.
//!
//! # Device-wide algorithms
//!
//! [`algo`] reduces, scans, compacts and sorts any buffer or view in one
//! call: [`algo::sum`], [`algo::min`], [`algo::max`], [`algo::count`],
//! [`algo::min_index`] / [`algo::max_index`] (each waits for its value, or
//! keeps it on the device: [`algo::reduce_into`] and friends), the
//! single-pass [`algo::inclusive_scan`] / [`algo::exclusive_scan`], for
//! `i32`, `u32`, `i64`, `u64`, `f32` and `f64`; [`algo::select_flagged`],
//! [`algo::unique`], [`algo::run_length_encode`];
//! [`algo::histogram_even`] and [`algo::histogram_range`]; and the radix sorts
//! [`algo::sort`] and [`algo::sort_pairs`] (stable; values of any type). A call is one operation on
//! its buffers, ordered like a copy; its temporaries come from the
//! stream-ordered pool (graph memory nodes inside [`Graph::capture`]).
//! Why it is sound: the kernels touch only the buffers the call borrows
//! (`&` for inputs, `&mut` for outputs, so an output never overlaps an
//! input except in place, where each tile reads its elements before it
//! writes them) and temporaries no one else can name, freed behind the
//! kernels on the same stream; the lengths are checked before any launch.
//!
//! # Your own kernels in Rust
//!
//! Put your shared structs and your kernels in a `#![no_std]` crate that
//! depends on `cuda-mem` with `default-features = false`, and make each kernel
//! a `fn` with [`#[kernel]`](macro@kernel). Its parameters are
//! [`KernelParam`]s: [`device::DeviceSlice`] (elements it reads),
//! [`device::DeviceSliceMut`] (elements each thread writes),
//! [`device::DeviceAtomicSlice`], the pitched forms, and `DeviceCopy`
//! values; its body uses [`device`], the device std.
//!
//! ```
//! use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
//!
//! /// `out[i] = a * x[i] + out[i]`.
//! #[cuda_mem::kernel]
//! pub fn saxpy(mut out: DeviceSliceMut<f32>, x: DeviceSlice<f32>, a: f32) {
//!     for (i, y) in out.grid_stride_mut() {
//!         if let Some(x) = x.get(i) {
//!             *y += a * x;
//!         }
//!     }
//! }
//! ```
//!
//! Compile that crate to PTX from your `build.rs` with
//! `cuda_mem::build::KernelCrate` (feature `build`): it runs a nested nightly
//! cargo with the target, `-Zbuild-std=core` and the flags it needs (the
//! kernel crate needs no `#![feature]` or configuration files), writes the
//! PTX into `OUT_DIR`, installs the pinned nightly with `rust-src` through
//! rustup when it is missing (and says so), and prints
//! `cargo:rerun-if-changed` for every source file the kernels read.
//!
//! ```ignore
//! // build.rs (cuda-mem as a build-dependency, default-features = false, features = ["build"])
//! fn main() {
//!     cuda_mem::build::KernelCrate::new("my-kernels")
//!         .build()
//!         .unwrap_or_else(|e| e.exit()); // writes $OUT_DIR/my-kernels.ptx
//! }
//! ```
//!
//! The program embeds that PTX as a [`Module`] and launches each kernel
//! through its typed launcher, without `unsafe`:
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! # use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
//! # #[cuda_mem::kernel]
//! # pub fn saxpy(mut out: DeviceSliceMut<f32>, x: DeviceSlice<f32>, a: f32) { let _ = (out, x, a); }
//! # // SAFETY: no kernels.
//! # static KERNELS: cuda_mem::Module = unsafe { cuda_mem::Module::new("my-kernels", "") };
//! // static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("my-kernels");
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let x = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
//! let mut y = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1.0f32; 3])?;
//! let config = cuda_mem::LaunchConfig::for_num_elems(3);
//! saxpy.launch(&KERNELS, &stream, config, (&mut y, &x, 2.0))?;
//! assert_eq!(y.to_vec()?, [3.0, 5.0, 7.0]); // waits for the kernel
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! The argument types are checked at compile time; the PTX's signature
//! fingerprint of the kernel at its first launch in a context (a stale PTX is
//! [`Error::KernelMismatch`]); the buffers are ordered on the stream like
//! [`kernel_arg`](Memory::kernel_arg) arguments. [`launch`] has the whole
//! soundness argument.
//!
//! Kernels that are not `#[kernel]` fns (CUDA C++, hand-written PTX) are
//! launched through cudarc, with buffers as [`KernelArg`]s, in `unsafe`:
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::cudarc::driver::{LaunchConfig, PushKernelArg};
//! use cuda_mem::cudarc::nvrtc::Ptx;
//!
//! # const MY_KERNELS_PTX: &str = "";
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let scale = ctx.load_module(Ptx::from_src(MY_KERNELS_PTX))?.load_function("scale_f32")?;
//! let mut data = cuda_mem::DeviceBuffer::from_slice(&ctx, &[1.0f32, 2.0, 3.0])?;
//! let n: usize = data.len();
//! let arg = data.kernel_arg_mut(&stream)?;
//! // SAFETY: `scale_f32(data: *mut f32, n: usize, factor: f32)` reads and writes `n` floats.
//! unsafe {
//!     stream
//!         .launch_builder(&scale)
//!         .arg(&arg)
//!         .arg(&n)
//!         .arg(&2.0f32)
//!         .launch(LaunchConfig::for_num_elems(n as u32))?;
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Inside the kernel crate, [`device`] is the device std: thread and block
//! indices, grid-stride loops, the kernel-parameter types of buffers
//! ([`device::DeviceSlice`] to read, [`device::DeviceSliceMut`] whose safe
//! methods give each thread only its own elements, [`device::DeviceAtomicSlice`],
//! pitched views), shared memory, barriers, scoped atomics, warp operations,
//! `device_printf!`, an opt-in printing panic handler and `f32`/`f64` math.
//! It builds on the host too, where a kernel body runs as a grid of one
//! thread (`saxpy::on_host(..)` above, for unit tests).
//!
//! Functions the kernels call from another crate must be `#[inline]` (a call
//! out of the kernel crate would leave an `.extern .func` in the PTX, which
//! the builder rejects); `cuda_mem::device` is. The repository's
//! `examples/particles-shared` (structs, the CPU check's update step and
//! three `#[kernel]` fns), `examples/build.rs` and the `particles`,
//! `pipeline` and `reduce` examples are a complete, tested setup.
//!
//! # CUDA graphs
//!
//! [`Graph::capture`] records the operations a closure queues (fills,
//! copies, host copies through pinned memory, `#[kernel]` launches) into a
//! CUDA graph once; [`Graph::launch`] replays them with one driver call. The
//! graph holds the buffers it was given, `&mut` those it writes and `&`
//! those it only reads, for as long as it lives, and orders each launch like
//! an operation on them; between launches, [`Graph::buffers`] hands them out
//! (host access waits for the launches). Pool memory that the graph
//! allocates itself comes from the [`Recorder`]: [`temporary`](Recorder::temporary)
//! and [`output`](Recorder::output). The `graph` example replays Jacobi
//! sweeps over a pitched grid.
//!
//! ```no_run
//! use cuda_mem::prelude::*;
//! use cuda_mem::{DeviceBuffer, Graph, PinnedBuffer};
//!
//! let ctx = cuda_mem::context(0)?;
//! let stream = ctx.new_stream()?;
//! let mut input = PinnedBuffer::<f32>::new(&ctx, 4096)?;
//! let mut data = DeviceBuffer::<f32>::new(&ctx, 4096)?;
//! let mut graph = Graph::capture(&stream, (&mut input, &mut data), |rec, (input, mut data)| {
//!     data.copy_from_host_async(&*input, rec)?;
//!     data.slice_mut(..16)?.fill_async(0.0, rec)
//! })?;
//! for step in 0..1000 {
//!     graph.buffers().0.as_mut_slice()?.fill(step as f32); // waits for the last launch
//!     graph.launch(&stream)?;
//! }
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! # Several GPUs
//!
//! Every buffer kind lives on any device: allocate it with that device's
//! context. A stream of another context is refused (`Err(ContextMismatch)`).
//! A copy between two contexts ([`copy_from`](MemoryMut::copy_from) of a buffer
//! or view on another device) is a peer copy, queued on a stream of either
//! context and ordered against work on both sides; the first one between two
//! devices enables peer access where the hardware allows it, and
//! [`peer_path`] says whether copies go GPU to GPU ([`PeerPath::Direct`]) or
//! are staged through host memory ([`PeerPath::ThroughHost`]).
//!
//! ```no_run
//! # use cuda_mem::prelude::*;
//! use cuda_mem::{DeviceBuffer, PeerPath};
//! let (gpu0, gpu1) = (cuda_mem::context(0)?, cuda_mem::context(1)?);
//! let a = DeviceBuffer::from_slice(&gpu0, &[1.0f32; 4096])?;
//! let mut b = DeviceBuffer::<f32>::zeroed(&gpu1, 4096)?;
//! b.copy_from(&a)?; // cuMemcpyPeerAsync, on gpu1's default stream
//! if cuda_mem::peer_path(&gpu0, &gpu1)? == PeerPath::ThroughHost {
//!     eprintln!("no peer access between these GPUs: copies are staged through the host");
//! }
//! # Ok::<(), cuda_mem::Error>(())
//! ```
//!
//! With the `nccl` feature, buffers and views are NCCL buffers for
//! `cuda_mem::cudarc::nccl` (see the `nccl` module).
//!
//! # Soundness
//!
//! No safe call reaches undefined behaviour, including through what cuda-mem
//! hands to cudarc (host slices, its `DevicePtr` / `DevicePtrMut` impls) and
//! what it takes from cudarc (streams). These are the attack classes found
//! by reviews with safe programs (`#![forbid(unsafe_code)]`), on an H200 and
//! on the CPU (the derive, `#[kernel]` and IPC rows; their GPU tests have
//! run on an H200 since), how each is closed, and the test that keeps it
//! closed; a change that reopens one fails that test. The rows from the
//! stale PTX with two fields swapped to the kernel body compiled in an unsafe
//! context are round 3's (issue 29): their CPU tests and compile-fail cases
//! fail on the code before the fix and pass after, and their GPU tests
//! passed on an H200 (2026-12-02, with memcheck, racecheck and synccheck at
//! 0 on `kernels` and `ipc`). The last row is the futures' (issue 33), which
//! were designed against it.
//!
//! | class | closed by | test |
//! | --- | --- | --- |
//! | `#[derive(DeviceCopy)]` fooled: a `crate = "..."` module with forged witnesses; a module named like the expansion's internal alias; an attribute macro that rewrites a field after the derive; a hidden macro that implements cudarc's traits for any type | the proof runs in cuda-mem's own `macro_rules!` through `$crate` (the crate path only locates it), on the real, expanded struct (its fields by destructuring, its layout by `size_of` / `offset_of!`), and every impl (cuda-mem's, bytemuck's, cudarc's) comes only from there | `cuda-mem-derive/tests/ui/fail/attack_{a,b,c,d}_*.rs` and `direct_call_*.rs` (trybuild) |
//! | a *generic* derived struct whose real `repr` is not the one the derive read (an attribute macro after the derive, or the derive's hidden macro called with a false plan) viewed as bytes with padding: through `bytemuck::bytes_of` (the derive made it `Pod`), a warp shuffle, or a non-generic derived struct with it as a field | `Pod` only for non-generic structs (their layout is proved exactly); the warp shuffles and every byte view of cuda-mem re-check a generic struct's real layout at the instantiation (`__LAYOUT`), and the exact plan evaluates every field's layout | `cuda-mem-derive/tests/ui/fail/`: `attack_c_attribute_changes_generic_repr.rs`, `direct_call_generic_plan_lies.rs`, `nested_generic_padding.rs`, `warp_shuffle_checks_the_layout.rs` |
//! | a pinned or unified host slice given to cudarc's safe copies, which treat every `&[T]` as pageable and neither wait nor record: the DMA ran on after the call (read before written, overwritten later, freed under it) | pinned memory's host view is a second, unregistered mapping of the same pages, which the driver copies synchronously (cuda-mem's own copies still DMA from the registered mapping); host access to managed memory (and to write-combined or non-Linux pinned memory, which has no alias) waits for every context | `tests/tests/boundaries.rs`: `host_slices_given_to_cudarc_copies_are_done_when_cudarc_returns` |
//! | a pinned buffer dropped while a copy or kernel queued on it still runs, its block handed to the next buffer of that size by the pinned cache (the DMA lands in, or reads, the new buffer) | the block goes back with an event recorded behind every queued use (kernel arguments included, on a stream ordered after all of them) and is handed out only once `cuEventQuery` says it fired; staged copies wait for it | `tests/tests/pinned_cache.rs`: `a_block_a_running_kernel_reads_is_not_handed_out`, `a_block_a_running_kernel_writes_is_not_handed_out`, `buffers_freed_and_reallocated_while_dmas_run_keep_every_byte`; `differential.rs`: `a_pinned_cache_that_reuses_busy_blocks_is_caught` (CPU), `pinned_buffers_reallocated_under_running_copies_match_the_host_model` |
//! | the per-thread default stream (one handle, a different stream per thread) and the legacy default stream passed by handle | `Err(UnsupportedStream)` from every call that takes a stream | `boundaries.rs`: `per_thread_and_legacy_default_streams_are_refused` |
//! | a stream capturing a CUDA graph through cudarc (`begin_capture`): the work replayed later, untracked, even after the free | `Err(UnsupportedStream)` for a capturing stream (unless [`Graph::capture`] is recording on it), for a use that would wait on a stream that began capturing after it used the memory, and address 0 to cudarc calls on a capturing stream | `boundaries.rs`: `streams_capturing_a_graph_are_refused` |
//! | a capture begun on a [`Stream`], whose calls do not ask the driver whether their stream is capturing: through cudarc's safe `begin_capture`, through a stream made from its context, or by making it wait for an event of a capturing stream (it would join the capture) | a `Stream` hands out no `CudaStream`, and [`AsStream`]'s method takes a token only cuda-mem can make; its streams live in a second handle of the primary context that cuda-mem keeps to itself (never a context state's, which buffers hand out); [`Graph::capture`] and [`IpcEvent::order_before`](ipc::IpcEvent::order_before) (a wait for another process's event) take cudarc streams only; cuda-mem's own waits refuse an event of a stream that is capturing when they ask, and a `Stream` that joined a capture anyway (another thread began one on the other stream between the question and the event) is caught right after its wait: the operation is refused, and every call asks the driver from then on | `stream.rs`: `the_context_a_streams_buffers_hand_out_is_still_checked_for_captures`; the `compile_fail` example of [`Stream`] |
//! | a [`Graph`] replaying work on a buffer that was dropped, read by the host, or written elsewhere meanwhile | the graph holds `&mut` / `&` of every buffer it records (compile errors), hands them out only as [`Held`] handles (never the `&mut`, which a `mem::swap` could use to free the recorded memory) and only between launches; an operation on memory it does not hold, or a use of a held buffer elsewhere during the capture, is an `Err`; each launch is ordered after and before the buffers' other work; drop waits for the last launch | the `compile_fail` examples of [`Graph`] (drop, `as_slice`, `to_vec`, a handle escaping the closure); `tests/tests/graphs.rs`: `a_captured_copy_fill_and_kernel_replay_with_new_inputs`, `errors_inside_a_capture_end_it_and_leave_the_stream_usable`, `launches_wait_for_other_streams_and_buffers_wait_for_launches`; `order::capture::tests` (CPU) |
//! | replays reading what recording left behind: a fill value read from the caller's stack, a pool allocation recorded as a graph node that the buffer then frees (or uses) outside the graph | fill values that kernels read from memory are copied into pinned memory the graph keeps; `PoolBuffer::new` on a recording stream is an `Err`, and the graph's own allocations ([`Recorder::temporary`], [`Recorder::output`]) cannot leave it, exist for [`Graph::output`] only after a launch, and are never freed if no launch allocated them | `graphs.rs`: `a_captured_copy_fill_and_kernel_replay_with_new_inputs` (a 292-byte fill), `pool_memory_inside_a_graph_temporaries_and_outputs`, `a_graph_dropped_before_any_launch_frees_nothing_it_never_allocated` |
//! | the recording closure ending [`Graph::capture`]'s capture itself (cudarc's safe `end_capture` on the stream it was given) and keeping the recorded work, which holds no buffer, to launch after the buffers are freed; or freeing a pool buffer on the recording stream, which would record the free into the graph | the capture checks, before ending it, that the stream still records the capture sequence it began (its id, `cuStreamGetCaptureInfo`); otherwise the process aborts, since the recorded work cannot be revoked and the buffers are about to be returned; `PoolBuffer::free_on_stream` on a recording stream is an `Err` | `graphs.rs`: `a_capture_ended_through_cudarc_aborts_the_process` (a child process expects the abort), `a_pool_buffer_is_not_freed_on_the_capturing_stream` |
//! | cudarc's `memcpy_dtod` between two contexts with a cuda-mem source: cudarc synchronises `src.stream()`, not the stream that copies | buffers report a stream of their own that cuda-mem never uses; a cudarc call that passes it back gets address 0, and the driver fails it (use `copy_from`, a peer copy ordered on both sides) | `boundaries.rs`: `a_cudarc_copy_between_two_contexts_from_a_cuda_mem_buffer_is_refused` |
//! | NCCL collectives into a receive buffer too short (cudarc's `Comm` checks no length) | `cuda_mem::nccl`'s functions (feature `nccl`) check every length against the communicator's size | `boundaries.rs`: `nccl_collectives_check_the_receive_length` |
//! | NCCL on a stream that is capturing a graph or is the stream buffers report to cudarc (where they give address 0, which NCCL does not check), or with buffers of another device | `cuda_mem::nccl`'s functions return `Err` before NCCL runs | `boundaries.rs`: `nccl_refuses_streams_it_cannot_order` |
//! | dropping pool memory whose latest stream began capturing a graph: the free recorded into the graph, run at every launch | the free never goes to a capturing stream; the memory is leaked instead | `boundaries.rs`: `dropping_pool_memory_whose_last_stream_is_capturing_records_no_free_in_the_graph` |
//! | an IPC handle forged longer (its checksum recomputed): an imported buffer past the exporter's allocation | `open` / `open_in_pool` check the length against the mapping the driver made (`cuMemGetAddressRange`) | `ipc::handle::tests` (CPU): `a_forged_length_passes_the_checksum_but_not_the_mapping`; GPU: `a_device_buffer_crosses_processes_both_ways`, `a_pool_allocation_crosses_processes_with_its_pool_descriptor` |
//! | one exported allocation imported twice: in two contexts of two devices (the driver maps it once per device), or again while an earlier import of it is being closed; two buffers over it, each with its own stream order, so unordered | a handle (the exporter and its driver bytes) is claimed process-wide from the start of an open until its import is closed, and a mapping already open is refused too | `memory::open_imports::tests` (CPU) |
//! | a pool's own descriptor imported back into the exporting process (`MemPool::import_fd`), then a handle with a forged exporter opened from it: a second owner of this process's allocation, freed under it | a pool handle the driver gives back that this process created is refused, and so is a pointer import whose owning pool (`CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE`) was created here; neither is freed | (by reading; the driver's answer for a self-import is not known) |
//! | zero-sized element types: a 10-element `PinnedBuffer<PhantomData<u32>>` had an empty `as_slice` and a `to_vec` of length `usize::MAX` | refused at compile time | the `compile_fail` example of [`Buffer`] |
//! | managed memory on a device without concurrent managed access (the host may not touch it while any kernel runs) | `UnifiedBuffer::new` returns `Err(NotSupported)`, as the allocator did | `context::tests::managed_memory_needs_concurrent_access` |
//! | `to_vec` made a `&mut [T]` over uninitialised memory | zeroes through the raw pointer first | (by reading; Miri does not flag it) |
//! | a safe typed launch through a `#[kernel(crate = "...")]` path whose module supplies its own fingerprint functions (the PTX and the host then agreed on a forged value while the host pushed a `[u64; 2]` where the PTX took a `DeviceSliceMut`); a launch argument's parameter value taken by hand (`LaunchArg::__into_param`: a `DeviceSlice<'static>` over a buffer, read after its free or held twice mutably) | the PTX's fingerprint and parameter table come from cuda-mem's `__kernel_entry!` with the entry point, from the parameter list the entry passes to the kernel (a forwarding module that changes the types, the safety or the name does not compile), and the launch's from the parameter types it pushes in `__kernel_launch!`, which holds every `unsafe` of a launch; the table (kinds, sizes, alignments, safety) is compared word for word, so no chosen source hash can match it; `#[kernel]` hands the crate path no `unsafe` keyword token (a module that put one of its tokens before the generated launch body made a block that `forbid(unsafe_code)` does not lint); `__into_param` and `Launch::param` are `unsafe fn`s; `include_kernels!` takes a plain file name of `OUT_DIR` | `tests/tests/kernels.rs`: `a_forged_crate_path_cannot_forge_the_ptx_fingerprint`, `every_kernel_has_the_hosts_parameter_table` (CPU), `a_kernel_whose_crate_path_forges_the_fingerprint_is_refused`, `a_parameter_table_that_differs_is_refused`; `cuda-mem-derive/tests/kernel_ui/fail/`: `forged_crate_path_borrows_unsafe.rs`, `forged_entry_claims_safe.rs`, `forged_entry_other_params.rs`, `forged_entry_other_name.rs`, `forged_crate_path_launch_needs_unsafe.rs`, `into_param_is_unsafe.rs`, `launch_param_is_unsafe.rs`, `launch_macro_unsafe_kernel_in_safe_fn.rs` |
//! | a safe typed launch ([`#[kernel]`](macro@kernel)) of a PTX that is not what the host declares: stale, built with another struct layout, a kernel missing, another crate's kernel of the same name | each kernel's signature fingerprint (parameter kinds, layouts, safety, source tokens) read from the loaded module at its first launch in a context, cached per name and fingerprint; `Module::new` of arbitrary PTX is `unsafe`; arguments claimed like `kernel_arg`; the device API gives threads disjoint elements (see [`launch`]) | `tests/tests/kernels.rs`: `a_ptx_built_with_another_struct_layout_is_refused`, `a_doctored_fingerprint_is_refused`, `a_missing_kernel_is_refused`; `cuda-mem-derive/tests/kernel_ui/fail/*.rs` |
//! | a stale PTX whose struct swaps or renames two fields of one type: the same size, alignment, offsets and parameter table, so the fingerprint matched and the kernel read one field for the other | a derived struct's layout fingerprint (`__LAYOUT`) hashes each field's name (a raw identifier's `r#` left out) with its offset and fingerprint, in declaration order, so the kernel's signature fingerprint differs: `Err(KernelMismatch)` at the first launch, naming the kernel, the module and the parameter with its type, so the struct (`KernelProblem::Parameter`: the PTX holds each parameter's own fingerprint, `__cuda_mem_params_<kernel>`, beside the kernel's); glam's, mint's and `num_complex`'s impls name their fields as a derived mirror does | `copy::device_copy::tests::layout_fingerprints_cover_field_names_and_order` (CPU); `tests/tests/kernels.rs`: `a_struct_with_two_fields_swapped_changes_the_fingerprint` (CPU, on the built PTX), `a_ptx_whose_struct_swaps_two_fields_is_refused` (GPU) |
//! | `cast::<U>` / `cast_mut::<U>` typed memory as `U` without the element check every buffer makes (`__CHECK`): a derived generic struct whose real layout has padding at `U`'s instantiation became a view (harmless only because every byte path behind it checked again) | the check lives in the one constructor of typed elements, which every buffer, view and cast goes through | `compile_fail` examples of [`Memory::cast`] (a zero-sized `U`) and of the engine's `Elems::cast` (a padded generic `U`) |
//! | `device_printf!` whose format does not match its arguments (`"%d"` with an `f64`), accepted by `cargo check` (the README says `cargo check` type-checks kernel bodies): the check was a constant in a generic function, evaluated only by a real build | the format and the number of arguments are checked in a constant of the call itself, and each argument's kind by trait bounds against the format's conversions as a type (`Conversions<..>`, one code per place), both of which `cargo check` evaluates; the generic constant stays for direct calls of the hidden `PrintfArgs::__print` | `cuda-mem-derive/tests/check_ui/` (trybuild under `cargo check`: a suite without pass cases): `printf_float_for_int.rs`, `printf_more_arguments_than_conversions.rs`, `printf_refused_conversion.rs` |
//! | memory shared with another process through CUDA IPC (an `ImportedBuffer`, or a buffer this process exported) given to a safe `#[kernel]` launch as a slice: the docs accepted that two processes "can race", while a Rust kernel's `DeviceSliceMut` (and `DeviceSlice`'s shared references) assume that nothing else writes the elements while it runs, and no borrow, stream order or [`ipc::IpcEvent`] of this process binds the other one, so a racing write was undefined behaviour here | decided: such memory is never a slice parameter of a `#[kernel]` launch (`DeviceSlice`, `DeviceSliceMut`, `DeviceAtomicSlice`, views included): `Err(InvalidArgument)` naming the ways out (copy into a buffer of this process, or its address to an `unsafe fn` kernel); `export_ipc` takes the buffer `&mut` and waits for its queued work, then marks it shared, so no kernel of this process still runs on it or starts later; fills, copies and NCCL stay (DMA and fixed kernels hand Rust code no reference, and any bytes are valid `DeviceCopy` values); see [`ipc`](ipc#kernels-and-shared-memory) | `memory::raw::tests::imported_and_exported_memory_is_interprocess` (CPU); the `compile_fail` example of `DeviceBuffer::export_ipc` (an export while a claim is held; compiled before); `tests/tests/ipc.rs`: `exported_memory_is_no_slice_parameter_of_a_kernel`, `imported_memory_is_no_slice_parameter_of_a_kernel` (GPU) |
//! | a hidden exported macro used by hand to run unsafe code from a crate that forbids it: `__kernel_entry!`'s `@call true` arm put any caller-chosen path inside `unsafe { }` (it ran `core::ptr::write_bytes::<bool>` and `drop_in_place` from `forbid(unsafe_code)` code) | no exported macro puts a caller's token inside `unsafe`: an `unsafe fn` kernel is called through a type `#[kernel]` marks with an `unsafe impl` of `__UnsafeKernel` (its parameters built outside the `unsafe` block); a launch is a call of the generic `__launch` / `__launch_unsafe`; `shared_array!` and `include_kernels!` name the caller's type, length and file in items outside their `unsafe` blocks; `#[kernel]` refuses `unsafe` in parameter types | `cuda-mem-derive/tests/kernel_ui/fail/`: `hand_entry_unsafe_call.rs` (a hand-written `@call true`: compiled and ran before, E0277 now), `unsafe_in_param_type.rs`, `forged_entry_claims_safe.rs` |
//! | a kernel body compiled in an unsafe context: the kernel fn sat inside the body of the `unsafe extern "ptx-kernel"` entry, so an attribute macro that only moved the fn's tokens into that body made raw-pointer code compile without `unsafe` (in a crate that forbids unsafe code) | the kernel fn is an item of a `const` block beside the entry, which is a safe `extern "ptx-kernel" fn` whose parameter parts only the driver makes (`__Raw`) | `tests/tests/ptx.rs`: `a_hoisted_kernel_body_is_compiled_in_a_safe_context` (the `tests/nvptx-attack` fixture: compiled before, E0133 now) |
//! | an exported macro's caller token expanded twice, differently each time (a proc macro with a counter: safe code, from a crate that forbids unsafe code): `shared_array![u32; changes!(1, 1024)]` declared a 4-byte `.shared` array and indexed it as 1024 elements (a safe `atomic(1023)` wrote 4092 bytes into it); a kernel parameter `DeviceSliceMut<[u32; changes!(64, 1, 4)]>` got a PTX parameter table of 4-byte elements (what a checked launch passes) for an entry point that wrote 256-byte ones | `shared_array!` expands its type and length once, into names its declaration and its array both use; every paste of a kernel's parameter type is tied by a type check to the one its entry point's body takes (`launch::__AddressOf` / `__RestOf` carry the parameter, `__assemble` takes both parts of one), and the PTX's fingerprint and table are computed from that body's signature, not from the tokens (a disagreeing paste is a type error) | `tests/tests/ptx.rs`: `a_shared_array_declares_every_element_its_methods_reach` (the `tests/nvptx-reexpand` fixture), `a_kernels_parameter_table_describes_the_types_its_entry_takes` (`tests/nvptx-reexpand-param`, built for each count of first expansions from 1 to 12: a type error, or a table that covers every store); both failed before |
//! | `include_kernels!` (and `shared_array!`, `dynamic_shared!`, `printing_panic_handler!`, the statics' names of `__kernel_entry!`) calling `::core::…` macros, which resolve in the caller's extern prelude: `extern crate some_macros as core;` made `include_kernels!` skip its name check and embed any text as the PTX (`unsafe { Module::new(..) }`), whose forged fingerprints would pass every launch check | every path in an exported macro is `$crate::__private::core::…` | `cuda-mem-derive/tests/kernel_ui/fail/include_kernels_core_redirected.rs` (compiled before; now the real `env!` and the name check fail) |
//! | a hand-written `DeviceSoA` impl whose `visit_fields` hands a field over as a type of another size: `SoaBuffer::fill` filled `len` elements of that size from the field's region, past its array and the allocation | the fill checks each visited field against the `FIELDS` table (size, alignment, index), as the views already did, and returns `Err(InvalidArgument)` before it writes | `soa::buffer::tests::a_fields_type_must_be_the_tables` (CPU); `tests/tests/soa.rs`: `a_fill_refuses_a_field_of_another_size` (GPU) |
//! | a `DeviceSoA` field table that differs between the host's build and the kernel's (a safe hand-written impl with `cfg!(target_arch)` in its `FIELDS`, from a crate that forbids unsafe code): the host laid a `SoaBuffer` out by one table, the kernel wrote by the other, 16 KiB past a one-struct buffer; the launch's checks did not cover the table | `DeviceSoA` is an `unsafe trait` (its table must be the same in every build); the derive's `unsafe impl` comes from cuda-mem's `__device_soa_impl!` through `$crate`, which reads the table off the struct's own fields (offsets by `offset_of!`, sizes by the type of `&s.field`, no field type pasted again) and const-asserts `check_fields`; the SoA parameter's fingerprint covers the table, for a stale PTX | `cuda-mem-derive/tests/ui/fail/soa_impl_needs_unsafe.rs` (E0200); `tests/tests/soa.rs`: `a_soa_parameters_checks_cover_its_field_table` (CPU); `tests/tests/ptx.rs`: `a_soa_kernel_whose_field_table_differs_from_the_hosts_is_refused` (`tests/nvptx-soa-table`); the `compile_fail` example of `__device_soa_impl!` (fields out of order) |
//! | two `shared_array!` places stamped by one `macro_rules!` call: their names hashed the outermost call's line and column, so they were one array (unsafe `read` / `write` under a per-array contract raced, and arrays of one byte size but different element types aliased as mixed-size atomics) | each expansion's name also hashes a number no other expansion in the crate's compilation gets (`__shared_place!`, a proc macro of cuda-mem's); the shipped PTX changed in those names only (no kernel's shared arrays changed in number or size) | `tests/tests/ptx.rs`: `two_shared_array_places_stamped_by_one_macro_call_are_two_arrays` (`tests/nvptx-shared-sites`) |
//! | a derived `DeviceSoA` struct whose fields differ between the host's build and the kernel's (`#[cfg(target_arch = "nvptx64")]` on fields, from a crate that forbids unsafe code), with field names searched (minutes on two cores) so that the 64-bit layout fingerprints collide: the host laid a one-element `SoaBuffer` out in 8 bytes, the kernel wrote at byte 256, and the launch was accepted | the launch compares the number of fields in the clear (`KernelParam::__FIELDS`, with the struct's size), and a `SoaBuffer` is allocated to `len * size + 256 * fields`, the most any table of that many fields over that size reaches: a table that differs between builds scrambles values (any bits are a `DeviceCopy` value) but stays inside the allocation, its regions disjoint by construction | `tests/tests/soa.rs`: `a_soa_parameters_checks_tell_tables_apart_whose_hashes_collide` (CPU); `tests/tests/ptx.rs`: `a_derived_soa_whose_cfg_fields_hash_alike_is_refused` (`tests/nvptx-soa-collide`); `soa::buffer::tests::regions_start_aligned_and_hold_their_fields` |
//! | two `shared_array!` places written apart whose 64-bit names were searched to collide (a length token `1 + 0 * K` and a line and column that cancel the XOR) | the name is 128 bits, two hash lanes of different kinds over every part, the line, the column and the expansion's number | `tests/tests/ptx.rs`: `two_shared_array_places_whose_hashes_differ_by_a_line_and_column_are_two_arrays` (`tests/nvptx-shared-collide`); the doctest of `__site` |
//! | a future of GPU work dropped or `mem::forget`-ten while its work runs, then its buffer freed or reused (async-cuda-core calls its own API "intentionally unsafe" for this: a leaked future lets the GPU write freed memory) | the futures ([`Completion`], [`Download`], [`Upload`]) borrow nothing and own no ordering: the work is a queued use in the buffers' own stream order, which every free and every later use waits for; each stream callback owns a count of the future's shared state; a download's or upload's pinned block is a private [`PinnedBuffer`], returned to the cache behind an event on drop and never on forget | `tests/tests/awaitable.rs`: `forgotten_futures_then_dropped_buffers_leave_later_memory_alone`, `futures_dropped_halfway_cancel_nothing_and_keep_their_blocks_guarded`, `a_panic_inside_the_runtime_or_the_waker_leaves_the_rest_working` |
//!
//! Limits that remain, because the hole is cudarc's own (it has them with its
//! own `CudaSlice`, `PinnedHostSlice` and `UnifiedSlice` too):
//! - cudarc's `Comm` methods check no lengths: call NCCL through
//!   `cuda_mem::nccl`'s functions (feature `nccl`), and use no NCCL groups with cuda-mem buffers.
//! - A copy cudarc queues through a slice of managed memory on a stream of a
//!   context cuda-mem has never seen (a non-primary context made by cudarc
//!   alone) is not waited for by host access.
//! - A kernel launched through cudarc (`launch_builder`, `unsafe`) with a
//!   [`KernelArg`] must be launched on the stream the argument was taken for,
//!   and not into a graph capture begun after it was taken.
//! - Host memory the driver copies asynchronously, managed memory
//!   ([`UnifiedBuffer`], a `Vec` of [`UnifiedAllocator`]) and write-combined
//!   pinned memory: a copy that cudarc queues through a slice of it is still
//!   running when cudarc returns. A slice taken *after* it waits for it
//!   (host access waits for every context), but one taken before and still
//!   held, and a `UnifiedAllocator` `Vec` (whose derefs cannot wait), see the
//!   copy race with the host. Use cuda-mem's copies for such memory, or
//!   synchronise the stream before touching it. [`PinnedAllocator`] refuses
//!   write-combined memory for this reason, and the allocator's `deallocate`
//!   waits for every context before freeing.
//! - Streams handed to cudarc's capture calls from *inside*
//!   [`Graph::capture`]'s closure or from another thread: a capture ended
//!   with cudarc's `end_capture` aborts the process (see the table), except
//!   when a new capture is then begun and invalidated on the same stream
//!   before the closure returns (the driver gives no id for an invalidated
//!   capture to compare), and a capture begun on another thread between an
//!   operation's check and its enqueue records that operation. Do not share
//!   a capturing stream with other threads, nor call cudarc's capture
//!   functions on the recording stream.
//! - The driver's own: one thread queueing work on a stream while another
//!   ends a capture there can crash the process inside the driver (driver
//!   580, 2026-12-06: a copy, cudarc's safe `memcpy_dtod` included, or only
//!   an event record; `examples/examples/capture_race.rs` in the repository
//!   does it without cuda-mem).
//!   Using memory on one stream that was last used on another records an
//!   event on the other (so the first can wait for it): do not begin or
//!   end cudarc captures on a stream while other threads use memory last
//!   used on it. A [`Stream`] that joins such a capture through that wait
//!   is caught and the operation refused (see the table).
//!
//! # Errors
//!
//! Every fallible call returns [`Result<T>`](Result), with one [`Error`] type
//! whose messages say what was wrong and what to do: the driver not found,
//! no device, out of memory (with the size asked for), length mismatch, out
//! of range, size overflow, not supported on this device, context mismatch,
//! invalid argument, or the driver's own error with the call that failed.
//! Nothing panics on bad input, and without a driver or a GPU every
//! constructor returns `Err` ([`is_available`] says so up front). Errors of
//! cudarc calls convert with `?`.
#![cfg_attr(not(feature = "std"), no_std)]
// On nvptx64 (nightly only): inline assembly, and the shared-memory macros
// (`device::shared`) may expand `global_asm!` in the kernel crate without
// that crate enabling the feature itself.
#![cfg_attr(
    target_arch = "nvptx64",
    feature(asm_experimental_arch, allow_internal_unstable),
    allow(internal_features)
)]
#![deny(missing_docs)]
#![deny(clippy::undocumented_unsafe_blocks)]

extern crate self as cuda_mem;

// The folders, from the bottom layer up (README, "Contributing", has the map;
// `tests/tests/module_graph.rs` holds the layering).
#[cfg(feature = "host")]
pub mod algo;
#[cfg(feature = "host")]
mod buffers;
#[cfg(feature = "build")]
#[allow(clippy::needless_doctest_main)]
#[path = "launch/build/mod.rs"]
pub mod build;
#[cfg(feature = "host")]
mod context;
mod copy;
#[cfg(feature = "host")]
mod current;
pub mod device;
mod engine;
#[cfg(feature = "host")]
mod error;
#[cfg(feature = "host")]
mod graph;
#[cfg(all(feature = "host", target_os = "linux"))]
pub mod ipc;
pub mod launch;
#[cfg(feature = "host")]
mod memory;
#[cfg(feature = "host")]
mod order;
pub mod soa;
#[cfg(feature = "host")]
mod stream;
#[cfg(all(test, feature = "host"))]
mod test_rng;

#[doc(hidden)]
pub use copy::private;
#[doc(hidden)]
pub use copy::private as __private;
#[doc(hidden)]
pub use engine::fill_pattern;

pub use copy::checked::CheckedDeviceCopy;
pub use copy::device_copy::{bytes_of, bytes_of_slice, DeviceCopy, DevicePod};
pub use copy::device_ptr::DevicePtr;
pub use cuda_mem_derive::CheckedDeviceCopy;
/// Checked reads of [`CheckedDeviceCopy`] types: the error a refused bit
/// pattern gives, and conversions of whole slices.
pub mod checked {
    #[cfg(feature = "std")]
    pub use crate::copy::checked::{bits_of_values, values_of_bits};
    pub use crate::copy::checked::{first_invalid, InvalidBitPattern};
}
#[doc(hidden)]
pub use cuda_mem_derive::__shared_place;
pub use cuda_mem_derive::kernel;
pub use cuda_mem_derive::DeviceCopy;
pub use cuda_mem_derive::DeviceSoA;
pub use launch::KernelParam;

#[cfg(feature = "nccl")]
pub use buffers::nccl;

#[cfg(feature = "host")]
pub use {
    buffers::buffer::{
        Buffer, Device, DeviceBuffer, HostAccessible, Imported, MemoryKind, Pinned, PinnedBuffer,
        Pool, PoolBuffer, Unified, UnifiedBuffer,
    },
    buffers::device_vec::{DeviceVec, Pusher},
    buffers::host_access::{Advice, Location},
    buffers::ops::{Memory, MemoryMut},
    context::{context, device_count, is_available},
    cudarc::driver::{CudaContext, CudaStream, LaunchConfig},
    engine::fill::fill_kernels_ptx,
    engine::peer::{can_access_peer, disable_peer_access, enable_peer_access, peer_path, PeerPath},
    engine::{AsView, KernelArg, View, ViewMut},
    error::{Error, KernelProblem, Result},
    graph::{FillParam, Graph, Held, HeldAt, HeldBuffers, Output, Recorded, Recorder},
    launch::{LaunchArg, Module, Occupancy},
    memory::pinned_cache::{PinnedCache, PinnedCacheUsage, DEFAULT_PINNED_RELEASE_THRESHOLD},
    memory::pinned_pages::PinnedFlags,
    memory::pool::{MemPool, PoolUsage},
};

#[cfg(feature = "host")]
pub use {
    buffers::allocators::{
        CudaAllocator, DeviceAlloc, PinnedAllocator, UnifiedAllocator, DEVICE_MAX_ALIGN,
        PINNED_MAX_ALIGN,
    },
    buffers::awaitable::{Download, Upload},
    buffers::checked::{
        Checked, CheckedDeviceBuffer, CheckedPinnedBuffer, CheckedPoolBuffer, CheckedUnifiedBuffer,
        CheckedView, CheckedViewMut,
    },
    buffers::pitched::PitchedBuffer,
    order::completion::Completion,
    order::streams::AsStream,
    stream::Stream,
};

/// The timeline of a staged host copy (feature `test-hooks`): see
/// [`__record_staging`].
#[cfg(all(feature = "host", feature = "test-hooks"))]
#[doc(hidden)]
pub use engine::staging::timeline as __staging_timeline;
#[cfg(all(feature = "host", feature = "test-hooks"))]
pub use engine::{
    fill::{__fill_grid, __set_fill_tuning},
    staging::__set_staging,
    staging::__set_staging_demote,
    staging::timeline::{__record_staging, __take_staging_timelines},
};

/// The traits that carry every buffer operation, for a glob import:
/// `use cuda_mem::prelude::*;` brings [`Memory`] and [`MemoryMut`] (`len`,
/// `fill`, `copy_from`, `to_vec`, ... on every buffer kind, pitched buffer
/// and view), [`AsView`] and [`DeviceCopy`] (the trait and its derive).
///
/// ```no_run
/// use cuda_mem::prelude::*;
/// let ctx = cuda_mem::context(0)?;
/// let mut buf = cuda_mem::DeviceBuffer::<u32>::new(&ctx, 4)?;
/// buf.fill(7)?;
/// assert_eq!(buf.to_vec()?, [7; 4]);
/// # Ok::<(), cuda_mem::Error>(())
/// ```
pub mod prelude {
    pub use crate::DeviceCopy;
    #[cfg(feature = "host")]
    pub use crate::{AsView, Memory, MemoryMut};
}

/// Re-export of the cudarc version cuda-mem is built on, for kernel launches
/// (`cudarc::driver::PushKernelArg`, `LaunchConfig`) and anything else.
#[cfg(feature = "host")]
pub use cudarc;
