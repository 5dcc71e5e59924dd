//! Type-checked kernel launches: the parameter types a
//! [`#[kernel]`](macro@crate::kernel) fn may take ([`KernelParam`]), the
//! signature fingerprint that the host and the PTX must agree on, and (on host
//! builds) the [`Module`] a kernel is launched from and the host values each
//! parameter accepts ([`LaunchArg`]).
//!
//! This module builds on every target: the kernel crate computes the
//! fingerprint of each kernel when it is compiled for `nvptx64-nvidia-cuda`
//! (and embeds it in the PTX), and the host computes it again, from the same
//! definitions, when it compiles the launcher.
//!
//! # Why a launch of a safe kernel is safe
//!
//! A `#[kernel]` fn that is not `unsafe` gets a safe `launch`. What makes that
//! sound:
//!
//! 0. **The code that runs is the Rust code.** A [`Module`]'s PTX is the one
//!    `cuda_mem::build::KernelCrate` compiled from the kernel crate in this
//!    build ([`include_kernels!`](crate::include_kernels)); making a `Module`
//!    from any other PTX text is `unsafe` ([`Module::new`]), because a
//!    hand-written PTX could claim any signature.
//! 1. **The host passes exactly what the kernel declares.** Each argument must
//!    implement [`LaunchArg<P>`] for its parameter's type `P`, so the types
//!    are checked at compile time (a wrong type, a wrong count, `&` where the
//!    kernel writes, a parameter type that is not a [`KernelParam`]: all
//!    compile errors). The PTX actually loaded is checked too: before a
//!    kernel's first launch in a context, its signature fingerprint in the PTX
//!    (a hash of every parameter's kind and type layout, of the kernel's own
//!    source tokens and of its safety) is compared with the host's, and any
//!    difference (a stale PTX, another version of a struct, a kernel that is
//!    not there) is an `Err` naming the kernel, never a launch.
//! 2. **The memory is the kernel's while it runs.** A
//!    [`DeviceSliceMut`] argument is `&mut` a
//!    buffer or an exclusive view and a
//!    [`DeviceSlice`] argument `&` one, held for
//!    the whole call, so the borrow checker rules out aliasing between the
//!    arguments and any host reference into the memory at the time of the
//!    launch. Each buffer argument is ordered on the launch's stream exactly as
//!    [`kernel_arg`](crate::Memory::kernel_arg) /
//!    [`kernel_arg_mut`](crate::MemoryMut::kernel_arg_mut) are: the kernel runs
//!    after every earlier operation on the allocation, and later operations,
//!    host access (`as_slice`, `as_mut_slice`, `to_vec`) and the free wait for
//!    it. So no other work and no host code touches the memory while the
//!    kernel runs, except other readers of what it only reads.
//! 3. **Safe device code cannot misuse what it gets.** With only the safe API
//!    of [`cuda_mem::device`](crate::device) a kernel cannot write an element
//!    that another thread of the grid writes (each thread only reaches
//!    elements of its own, whatever the grid), cannot index out of bounds (a
//!    failed check traps: the kernel stops, and the stream and the context
//!    report an error), and cannot write through a `DeviceSlice`. Raw device
//!    addresses ([`DevicePtr`](crate::DevicePtr)) can only be dereferenced in
//!    `unsafe` code. A safe kernel body that contains `unsafe` blocks is its
//!    author's promise that they keep these rules, as for any safe Rust fn.
//! 4. **The launch configuration cannot break any of this.** The grid and
//!    block sizes only decide how many threads run and how they are numbered;
//!    the safe device API derives every thread's elements from its own index,
//!    and bounds-checks everything else (shared memory included), so no
//!    configuration makes two threads meet on an element or leave a slice.
//!    The launch refuses a grid of 2^63 threads or more (CUDA allows 2^73),
//!    so that every thread's 64-bit global index is exact and unique. An
//!    impossible configuration (a block of 2048 threads, too much shared
//!    memory) is refused by the driver: an `Err`. The write partitions
//!    ([`DeviceTilesMut`], [`DeviceChunksMut`], [`PitchedTilesMut`]) take
//!    their tile and chunk sizes from the parameter's type, so every thread
//!    of every launch applies the same rule; shared memory is reached only
//!    through relaxed atomic accesses (which never race) or `unsafe`.
//!
//! An `unsafe fn` kernel (raw pointers, unchecked indexing, writes that
//! depend on the grid covering the data exactly once) has preconditions that
//! no type can express, so its `launch` is an `unsafe fn` whose caller
//! promises them; everything else above still holds.
//!
//! What the PTX says of a kernel and what a launch pushes are compared twice:
//! as a 64-bit fingerprint (a hash that also covers struct layouts and the
//! kernel's source, to catch a stale PTX; each parameter's own fingerprint
//! beside it names the parameter, and so the struct, that differs) and,
//! word for word, as a parameter
//! table ([`ParamAbi`]: each parameter's kind, size and alignment and its
//! elements', and the kernel's `unsafe`), which no chosen hash input can
//! match. Both, and the entry point, come from cuda-mem's own
//! [`__kernel_entry!`](crate::__kernel_entry), reached through `$crate`: the
//! PTX's statics come from the very parameter list the entry passes to the
//! kernel, and a launch's from the parameter types it pushes
//! ([`__launch`], generic over them), so a
//! `#[kernel(crate = "...")]` path cannot make them disagree without
//! `unsafe` of its own. A parameter value ([`LaunchArg::__into_param`],
//! `Launch::param`) is made only in `unsafe` code, so no device slice of an
//! unchecked lifetime reaches safe host code.
//!
//! # Exported macros hold no `unsafe` around the caller's tokens
//!
//! `#[macro_export]` puts a macro in every user's reach, hidden or not, and
//! `#![forbid(unsafe_code)]` does not see an `unsafe` block another crate's
//! macro writes. So none of cuda-mem's macros puts a token its caller chose
//! (a path, an expression, a type, a body) inside `unsafe { }` or an
//! `unsafe fn`: the kernel fn that `#[kernel]` emits is an item of a `const`
//! block, compiled in a safe context unless its author wrote `unsafe fn`
//! (whatever attribute macros do with its tokens); the PTX entry point is a
//! safe `extern "ptx-kernel" fn`, whose parameters' parts ([`__Raw`]) only the
//! driver makes; a safe kernel is called safely; an `unsafe fn` kernel is
//! called through a type that `#[kernel]` marks with an `unsafe impl` of
//! [`__UnsafeKernel`], its parameters put together outside the `unsafe`
//! block; a launch is a call of a generic function of cuda-mem's; and
//! `shared_array!` and `include_kernels!` name the caller's type, length or
//! file in items outside their `unsafe` blocks. A hand-written call of any
//! hidden macro makes at most what `#[kernel]` makes.

use crate::copy::device_copy::DeviceCopy;
use crate::device::{
    DeviceAtomicSlice, DeviceChunksMut, DeviceSlice, DeviceSliceMut, DeviceTilesMut,
    PitchedRowsMut, PitchedSlice, PitchedSliceMut, PitchedTilesMut,
};

#[cfg(feature = "host")]
mod host;

#[cfg(feature = "host")]
pub use host::{LaunchArg, Module, Occupancy};

#[cfg(feature = "host")]
#[doc(hidden)]
pub use {
    host::{__launch, __launch_unsafe, KernelParams, Launch, LaunchArgs},
    std::sync::Arc as __Arc,
};

/// A type that a [`#[kernel]`](macro@crate::kernel) fn can take as a
/// parameter: every [`DeviceCopy`] type (passed by value: integers, floats,
/// arrays, `#[derive(DeviceCopy)]` structs, [`DevicePtr`](crate::DevicePtr)),
/// [`DeviceSlice<T>`] (elements the kernel reads), [`DeviceSliceMut<T>`]
/// (elements each thread writes), [`DeviceAtomicSlice<T>`] (elements any
/// thread updates atomically), and the pitched 2D forms [`PitchedSlice<T>`],
/// [`PitchedSliceMut<T>`] and [`PitchedRowsMut<T>`].
///
/// # Safety
///
/// The type must have the same size, alignment and field layout on the host
/// and on `nvptx64-nvidia-cuda` (the host pushes its bytes as the kernel
/// parameter), and [`SIGNATURE`](Self::SIGNATURE) must tell apart every two
/// parameter types whose values the host builds differently.
///
/// ```
/// use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
/// use cuda_mem::KernelParam;
/// assert_ne!(<DeviceSlice<'_, f32>>::SIGNATURE, <DeviceSliceMut<'_, f32>>::SIGNATURE);
/// assert_ne!(<DeviceSlice<'_, f32>>::SIGNATURE, <DeviceSlice<'_, f64>>::SIGNATURE);
/// assert_ne!(<u32>::SIGNATURE, <DeviceSlice<'_, u32>>::SIGNATURE);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a kernel parameter",
    label = "not a kernel parameter type",
    note = "kernel parameters are `DeviceCopy` values (integers, floats, arrays, \
            `#[derive(DeviceCopy)]` structs, `cuda_mem::DevicePtr<T>`) and the parameter \
            types of `cuda_mem::device`: `DeviceSlice<T>` (elements the kernel reads), \
            `DeviceSliceMut<T>` (elements each thread writes), `DeviceAtomicSlice<T>`, \
            `PitchedSlice<T>`, `PitchedSliceMut<T>`, `PitchedRowsMut<T>`"
)]
pub unsafe trait KernelParam {
    /// A fingerprint of the parameter's kind (value, read-only slice, written
    /// slice, ...) and of its element type's layout
    /// ([`DeviceCopy`]'s layout fingerprint), the same on the host and the
    /// device.
    const SIGNATURE: u64;

    /// The parameter's kind, compared in the clear (not only through
    /// [`SIGNATURE`](Self::SIGNATURE), a hash): 0 for a hand-written impl,
    /// the tag of each of cuda-mem's kinds otherwise.
    #[doc(hidden)]
    const __KIND: u64 = 0;

    /// The size and alignment of the elements it points to (slices), or
    /// `(0, 0)` for a value (whose own size and alignment then count),
    /// compared in the clear.
    #[doc(hidden)]
    const __ELEMENT: (usize, usize) = (0, 0);

    /// The first part of the parameter in the PTX entry point: the address
    /// of a slice's elements (`*const T` or `*mut T`), a pointer parameter,
    /// which the compiler knows points to global memory (so its loads and
    /// stores are `ld.global` / `st.global`, not generic ones); `()` for a
    /// value (a zero-sized part, which the entry point leaves out).
    #[doc(hidden)]
    type __Address;

    /// The second part: what follows the address in the parameter's
    /// `#[repr(C)]` layout (a slice's length, a pitched slice's pitch, width
    /// and height), or the whole value. The host pushes the two parts from
    /// one value, so `size_of::<Self>()` is the sum of theirs.
    #[doc(hidden)]
    type __Rest;

    /// The parameter from its two parts as the entry point received them.
    /// Safe to call: only the driver makes a [`__Raw`], for a launch whose
    /// parameter table the host checked against this very type.
    #[doc(hidden)]
    fn __assemble(address: __Raw<Self::__Address>, rest: __Raw<Self::__Rest>) -> Self;
}

/// The parts of a kernel's parameters that decide what a launch reads and
/// writes, per parameter: its kind, its own size and alignment, and its
/// elements' size and alignment (see [`__param_abi`]). The PTX holds them
/// (`__cuda_mem_abi_<kernel>`) next to the fingerprint, and a launch
/// compares them word for word with what it pushes: a hash alone could be
/// matched by a chosen source hash or struct, which these cannot.
#[doc(hidden)]
pub type ParamAbi = [u64; 5];

/// The first row of a kernel's parameter table: the format, whether the
/// kernel is `unsafe`, and the number of parameters (its fourth word, the
/// declared block shape, is 0 here: see [`__abi_head_block`]).
#[doc(hidden)]
#[must_use]
pub const fn __abi_head(is_unsafe: bool, params: usize) -> ParamAbi {
    __abi_head_block(is_unsafe, params, 0)
}

/// [`__abi_head`] of a kernel declared with `#[kernel(block = [x, y, z])]`:
/// its fourth word is [`__block_word`]`(x, y, z)` (0 for none). The host
/// compares it with the PTX's like every other word, and launches such a
/// kernel only with blocks of that shape, which the entry point then takes
/// as known ([`__assume_block`]).
#[doc(hidden)]
#[must_use]
pub const fn __abi_head_block(is_unsafe: bool, params: usize, block: u64) -> ParamAbi {
    [1, is_unsafe as u64, params as u64, block, 0]
}

/// A block shape as one word, `x | y << 16 | z << 32` (each at most 1024,
/// so the parts do not overlap); 0 stands for no declared shape.
///
/// ```
/// use cuda_mem::launch::__block_word;
/// assert_eq!(__block_word(32, 8, 1), 32 | 8 << 16 | 1 << 32);
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __block_word(x: u32, y: u32, z: u32) -> u64 {
    x as u64 | (y as u64) << 16 | (z as u64) << 32
}

/// The shape `(x, y, z)` of a [`__block_word`].
///
/// ```
/// use cuda_mem::launch::{__block_shape, __block_word};
/// assert_eq!(__block_shape(__block_word(32, 8, 1)), (32, 8, 1));
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __block_shape(block: u64) -> (u32, u32, u32) {
    (
        block as u32 & 0xffff,
        (block >> 16) as u32 & 0xffff,
        (block >> 32) as u32,
    )
}

/// Tells the compiler that the launch's block is the shape `block` (a
/// [`__block_word`]; nothing for 0): the entry point of a kernel declared
/// with `#[kernel(block = [x, y, z])]` calls it first, so that the
/// kernel's reads of the block size are constants and the checks on them
/// ([`thread_idx_for`](crate::device::thread_idx_for), the block
/// collectives' block size) fold away.
///
/// # Safety
///
/// The launch's block has the shape `block`: the host launches a kernel
/// whose parameter table declares it only with blocks of that shape (the
/// launch compares the table word for word first).
#[doc(hidden)]
#[inline(always)]
pub unsafe fn __assume_block(block: u64) {
    if block != 0 {
        let (x, y, z) = __block_shape(block);
        let (n, t) = (crate::device::block_dim(), crate::device::thread_idx());
        // SAFETY: the caller's promise; and a thread's index lies inside its
        // block (so a 1D block's `y` and `z` indices are 0).
        unsafe {
            core::hint::assert_unchecked(n.x == x && n.y == y && n.z == z);
            core::hint::assert_unchecked(t.x < x && t.y < y && t.z < z);
        }
    }
}

/// The [`ParamAbi`] of the single parameter of the fn pointer type `F`
/// (spelled like [`__param_signature`]'s).
///
/// ```
/// use cuda_mem::device::{DeviceSlice, DeviceSliceMut};
/// use cuda_mem::launch::__param_abi;
/// assert_ne!(__param_abi::<fn(DeviceSlice<u8>), _>(), __param_abi::<fn(DeviceSliceMut<u8>), _>());
/// assert_ne!(__param_abi::<fn(DeviceSliceMut<u8>), _>(), __param_abi::<fn(DeviceSliceMut<u64>), _>());
/// assert_ne!(__param_abi::<fn([u64; 2]), _>(), __param_abi::<fn(DeviceSliceMut<u8>), _>());
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __param_abi<F: Fn(P), P: KernelParam>() -> ParamAbi {
    let (size, align) = match P::__ELEMENT {
        (0, _) => (core::mem::size_of::<P>(), core::mem::align_of::<P>()),
        element => element,
    };
    [
        P::__KIND,
        core::mem::size_of::<P>() as u64,
        core::mem::align_of::<P>() as u64,
        size as u64,
        align as u64,
    ]
}

/// `address`, which the compiler may take to be non-null from here on.
///
/// # Safety
/// `address` is not null: the host pushes a dangling, aligned, non-null
/// address for an empty slice (`launch::host::args::non_null`), and a live
/// allocation's otherwise.
#[inline(always)]
unsafe fn non_null<P: Copy + IsNull>(address: P) -> P {
    // SAFETY: the caller's promise.
    unsafe { core::hint::assert_unchecked(!address.is_null()) };
    address
}

/// Raw pointers of either mutability.
trait IsNull {
    fn is_null(&self) -> bool;
}

impl<T> IsNull for *const T {
    #[inline(always)]
    fn is_null(&self) -> bool {
        <*const T>::is_null(*self)
    }
}

impl<T> IsNull for *mut T {
    #[inline(always)]
    fn is_null(&self) -> bool {
        <*mut T>::is_null(*self)
    }
}

/// Kinds of kernel parameters, the first word of their fingerprints.
mod tag {
    pub(super) const VALUE: u64 = 0x0056_414c_5545; // "VALUE"
    pub(super) const SLICE: u64 = 0x0053_4c49_4345; // "SLICE"
    pub(super) const SLICE_MUT: u64 = 0x534c_4943_454d_5554; // "SLICEMUT"
    pub(super) const ATOMIC: u64 = 0x4154_4f4d_4943; // "ATOMIC"
    pub(super) const PITCHED: u64 = 0x0050_4954_4348_4544; // "PITCHED"
    pub(super) const PITCHED_MUT: u64 = 0x5049_5443_4845_444d; // "PITCHEDM"
    pub(super) const PITCHED_ROWS: u64 = 0x5049_5443_4845_4452; // "PITCHEDR"
    pub(super) const KERNEL: u64 = 0x4b45_524e_454c; // "KERNEL"
    pub(super) const TILES: u64 = 0x0054_494c_4553; // "TILES"
    pub(super) const CHUNKS: u64 = 0x4348_554e_4b53; // "CHUNKS"
    pub(super) const PITCHED_TILES: u64 = 0x5049_5443_4854_494c; // "PITCHTIL"
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Mixes `word` into `hash`: FNV-1a over its 8 little-endian bytes.
const fn mix(mut hash: u64, word: u64) -> u64 {
    let bytes = word.to_le_bytes();
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(FNV_PRIME);
        i += 1;
    }
    hash
}

/// The size and alignment of a slice parameter's elements `T` (its
/// [`KernelParam::__ELEMENT`]).
const fn element<T>() -> (usize, usize) {
    (core::mem::size_of::<T>(), core::mem::align_of::<T>())
}

/// The fingerprint of a parameter of kind `tag` over elements with the layout
/// fingerprint `layout`.
const fn param(tag: u64, layout: u64) -> u64 {
    mix(mix(FNV_OFFSET, tag), layout)
}

// SAFETY: a `DeviceCopy` type has a C-compatible layout with no padding and
// no host pointers, the same on the host and the device; its layout
// fingerprint tells sizes and alignments (and, for derived structs, fields)
// apart, and the tag sets values apart from slices.
unsafe impl<T: DeviceCopy> KernelParam for T {
    const SIGNATURE: u64 = param(tag::VALUE, T::__LAYOUT);
    const __KIND: u64 = tag::VALUE;
    type __Address = ();
    type __Rest = T;

    #[inline(always)]
    fn __assemble(_: __Raw<()>, value: __Raw<T>) -> T {
        value.get()
    }
}

// SAFETY: `#[repr(C)] { ptr, len }`, 16 bytes aligned to 8 on every 64-bit
// target; the host builds it from a buffer or view that nothing writes while
// the kernel runs. The tag differs from `DeviceSliceMut`'s.
unsafe impl<T: DeviceCopy> KernelParam for DeviceSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::SLICE, T::__LAYOUT);
    const __KIND: u64 = tag::SLICE;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *const T;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<*const T>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceSlice::from_raw_parts(non_null(address.get()), len.get()) }
    }
}

// SAFETY: as for `DeviceSlice`; the host builds it from memory borrowed
// exclusively for the launch.
unsafe impl<T: DeviceCopy> KernelParam for DeviceSliceMut<'_, T> {
    const SIGNATURE: u64 = param(tag::SLICE_MUT, T::__LAYOUT);
    const __KIND: u64 = tag::SLICE_MUT;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceSliceMut::from_raw_parts(non_null(address.get()), len.get()) }
    }
}

// SAFETY: `#[repr(C)] { ptr, len }` like `DeviceSliceMut`; the host builds
// it from memory borrowed exclusively for the launch. Its own tag.
unsafe impl<T: DeviceCopy> KernelParam for DeviceAtomicSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::ATOMIC, T::__LAYOUT);
    const __KIND: u64 = tag::ATOMIC;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceAtomicSlice::from_raw_parts(non_null(address.get()), len.get()) }
    }
}

// SAFETY: `#[repr(C)] { ptr, pitch, width, height }`, 32 bytes aligned to 8
// on every 64-bit target, built by the host from a `PitchedBuffer` that
// nothing writes while the kernel runs. One tag per form.
unsafe impl<T: DeviceCopy> KernelParam for PitchedSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *const T;
    type __Rest = [usize; 3];

    #[inline(always)]
    fn __assemble(address: __Raw<*const T>, rest: __Raw<[usize; 3]>) -> Self {
        let [pitch, width, height] = rest.get();
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe { PitchedSlice::from_raw_parts(non_null(address.get()), pitch, width, height) }
    }
}

// SAFETY: as for `PitchedSlice`, from a `PitchedBuffer` borrowed exclusively.
unsafe impl<T: DeviceCopy> KernelParam for PitchedSliceMut<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED_MUT, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED_MUT;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = [usize; 3];

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, rest: __Raw<[usize; 3]>) -> Self {
        let [pitch, width, height] = rest.get();
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe { PitchedSliceMut::from_raw_parts(non_null(address.get()), pitch, width, height) }
    }
}

// SAFETY: as for `PitchedSliceMut`.
unsafe impl<T: DeviceCopy> KernelParam for PitchedRowsMut<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED_ROWS, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED_ROWS;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = [usize; 3];

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, rest: __Raw<[usize; 3]>) -> Self {
        let [pitch, width, height] = rest.get();
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe { PitchedRowsMut::from_raw_parts(non_null(address.get()), pitch, width, height) }
    }
}

// SAFETY: `#[repr(C)] { ptr, len }` like `DeviceSliceMut`, built by the
// host from the same arguments (memory borrowed exclusively for the
// launch); the tag and the tile size tell it apart.
unsafe impl<T: DeviceCopy, const TILE: usize> KernelParam for DeviceTilesMut<'_, T, TILE> {
    const SIGNATURE: u64 = mix(param(tag::TILES, T::__LAYOUT), TILE as u64);
    const __KIND: u64 = mix(tag::TILES, TILE as u64);
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, len: __Raw<usize>) -> Self {
        // SAFETY: as for `DeviceSliceMut`: the parts come from the driver,
        // from a value the host made for this parameter type.
        unsafe { DeviceTilesMut::from_raw_parts(non_null(address.get()), len.get()) }
    }
}

// SAFETY: as for `DeviceTilesMut`, with its own tag and the chunk size.
unsafe impl<T: DeviceCopy, const C: usize> KernelParam for DeviceChunksMut<'_, T, C> {
    const SIGNATURE: u64 = mix(param(tag::CHUNKS, T::__LAYOUT), C as u64);
    const __KIND: u64 = mix(tag::CHUNKS, C as u64);
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, len: __Raw<usize>) -> Self {
        // SAFETY: as for `DeviceTilesMut`.
        unsafe { DeviceChunksMut::from_raw_parts(non_null(address.get()), len.get()) }
    }
}

// SAFETY: `#[repr(C)] { ptr, pitch, width, height }` like `PitchedSliceMut`,
// built by the host from the same arguments; its own tag and the tile size.
unsafe impl<T: DeviceCopy, const W: usize, const H: usize> KernelParam
    for PitchedTilesMut<'_, T, W, H>
{
    const SIGNATURE: u64 = mix(
        mix(param(tag::PITCHED_TILES, T::__LAYOUT), W as u64),
        H as u64,
    );
    const __KIND: u64 = mix(mix(tag::PITCHED_TILES, W as u64), H as u64);
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = *mut T;
    type __Rest = [usize; 3];

    #[inline(always)]
    fn __assemble(address: __Raw<*mut T>, rest: __Raw<[usize; 3]>) -> Self {
        let [pitch, width, height] = rest.get();
        // SAFETY: as for `PitchedSliceMut`.
        unsafe { PitchedTilesMut::from_raw_parts(non_null(address.get()), pitch, width, height) }
    }
}

/// The fingerprint of the single parameter of the fn pointer type `F`
/// (`fn(DeviceSliceMut<f32>)`): `#[kernel]` spells each parameter type this
/// way so that elided lifetimes need no names.
///
/// ```
/// use cuda_mem::device::DeviceSlice;
/// use cuda_mem::{launch::__param_signature, KernelParam};
/// const S: u64 = __param_signature::<fn(DeviceSlice<u8>), _>();
/// assert_eq!(S, <DeviceSlice<'static, u8>>::SIGNATURE);
/// ```
///
/// A zero-sized parameter type (`PhantomData`, `[T; 0]`) fails the build:
/// rustc leaves such parameters out of the PTX entry point, so the host's
/// parameters would no longer line up with the kernel's.
///
/// ```compile_fail
/// const S: u64 = cuda_mem::launch::__param_signature::<fn(core::marker::PhantomData<u8>), _>();
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __param_signature<F: Fn(P), P: KernelParam>() -> u64 {
    assert!(
        core::mem::size_of::<P>() > 0,
        "a kernel parameter cannot be zero-sized (`PhantomData`, `[T; 0]`): the PTX entry point \
         has no parameter for it, so the host's arguments would not line up; remove it"
    );
    P::SIGNATURE
}

/// A kernel's signature fingerprint: its parameters' fingerprints in order,
/// whether it is `unsafe`, and `source`, a hash of its tokens.
///
/// ```
/// use cuda_mem::launch::__kernel_signature;
/// let a = __kernel_signature(false, 1, &[2, 3]);
/// assert_ne!(a, __kernel_signature(false, 1, &[3, 2]));
/// assert_ne!(a, __kernel_signature(true, 1, &[2, 3]));
/// assert_ne!(a, __kernel_signature(false, 0, &[2, 3]));
/// assert_ne!(a, __kernel_signature(false, 1, &[2]));
/// ```
#[doc(hidden)]
#[must_use]
pub const fn __kernel_signature(is_unsafe: bool, source: u64, params: &[u64]) -> u64 {
    let mut hash = mix(mix(FNV_OFFSET, tag::KERNEL), params.len() as u64);
    let mut i = 0;
    while i < params.len() {
        hash = mix(hash, params[i]);
        i += 1;
    }
    mix(mix(hash, is_unsafe as u64), source)
}

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
/// [`ParamAbi`]), from its safety and parameter types: the head row, then a
/// row per parameter.
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

/// A part of a kernel parameter as the PTX entry point of a
/// [`#[kernel]`](macro@crate::kernel) fn receives it (see
/// [`KernelParam::__Address`]). Nothing makes one but the GPU driver, which
/// fills the entry point's parameters at a launch: the field is private and
/// there is no constructor, so [`KernelParam::__assemble`] is safe to call.
/// `#[repr(transparent)]`: the PTX parameter is the part itself (a pointer
/// parameter for an address, which the compiler then knows is global memory).
#[doc(hidden)]
#[repr(transparent)]
pub struct __Raw<T>(T);

impl<T> __Raw<T> {
    /// The part.
    #[inline(always)]
    pub(crate) fn get(self) -> T {
        self.0
    }
}

/// A [`#[kernel]`](macro@crate::kernel) fn's PTX entry point and the
/// statics the host checks before its first launch in a context: the
/// signature fingerprint (`__cuda_mem_sig_<kernel>`, a hash that also covers
/// the struct layouts and the source), each parameter's own fingerprint
/// (`__cuda_mem_params_<kernel>`, read when the kernel's differs, to name
/// the parameter and its type in [`KernelProblem::Parameter`](crate::KernelProblem::Parameter))
/// and the parameter table
/// (`__cuda_mem_abi_<kernel>`, see [`ParamAbi`]). Emitted by `#[kernel]`
/// through the crate path, next to the kernel fn itself.
///
/// The entry point, `extern "ptx-kernel" fn` exported as `symbol`, takes
/// each parameter in two parts (its [`KernelParam::__Address`], a pointer
/// parameter for slices, so that the compiler emits global loads and stores,
/// and the rest), puts them together with [`KernelParam::__assemble`] and
/// calls `callee` with the parameters: a *safe* call, so the PTX's statics
/// describe the parameters of a safe fn that takes exactly these types, and
/// an `unsafe fn` kernel reaches the entry only through a safe wrapper that
/// `#[kernel]` writes itself (with `unsafe_kernel true`, so that its launch
/// is `unsafe`). Nothing here puts a token of the caller inside `unsafe`: a
/// hand-written call makes at most what `#[kernel]` makes (a safe fn's entry
/// point), a forwarding `crate = "..."` module that changes the types does
/// not compile, and one that claims `unsafe_kernel true` for a safe kernel
/// only makes its launch `unsafe`. On host builds it checks the same call
/// (there `callee` is the kernel's `on_host`, or its safe wrapper).
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
            #[unsafe(export_name = $symbol)]
            #[allow(improper_ctypes_definitions)]
            pub extern "ptx-kernel" fn __cuda_mem_entry<$($lifetime),*>(
                $(
                    $address: $crate::launch::__Raw<<$ty as $crate::KernelParam>::__Address>,
                    $rest: $crate::launch::__Raw<<$ty as $crate::KernelParam>::__Rest>,
                )*
            ) {
                // SAFETY: the block word is this entry's own parameter table's
                // (below, in the PTX); a launch compares that table word for
                // word with its own and launches a kernel that declares a
                // block only with blocks of that shape (`launch_checked`).
                unsafe { $crate::launch::__assume_block(__CUDA_MEM_ABI[0][3]) };
                $crate::__kernel_entry!(
                    @call $is_unsafe,
                    $callee,
                    [$($ty),*],
                    ($(<$ty as $crate::KernelParam>::__assemble($address, $rest)),*)
                )
            }

            /// The kernel's signature fingerprint, read by the host before
            /// the first launch in a context.
            #[unsafe(export_name = ::core::concat!("__cuda_mem_sig_", $symbol))]
            #[used]
            static __CUDA_MEM_SIGNATURE: u64 = $crate::__kernel_signature!(
                unsafe_kernel $is_unsafe,
                source $source,
                lifetimes [$($lifetime),*],
                params [$($ty),*]
            );

            /// Each parameter's fingerprint, read by the host when the
            /// kernel's differs, to name the parameter (and struct) that
            /// differs.
            #[unsafe(export_name = ::core::concat!("__cuda_mem_params_", $symbol))]
            #[used]
            static __CUDA_MEM_PARAMS: [u64; $crate::__kernel_abi!(@count $($ty),*)] =
                $crate::__kernel_signature!(@each [$($lifetime),*] [$($ty),*]);

            /// The kernel's parameter table, compared word for word by the
            /// host before the first launch in a context.
            #[unsafe(export_name = ::core::concat!("__cuda_mem_abi_", $symbol))]
            #[used]
            static __CUDA_MEM_ABI: [$crate::launch::ParamAbi; 1 + $crate::__kernel_abi!(@count $($ty),*)] =
                $crate::__kernel_abi!(
                    unsafe_kernel $is_unsafe,
                    block $crate::__kernel_abi!(@block $([$bx, $by, $bz])?),
                    lifetimes [$($lifetime),*],
                    params [$($ty),*]
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
    (@call false, $callee:path, [$($ty:ty),*], ($($param:expr),*)) => {
        $callee($($param),*)
    };
    // An `unsafe fn` kernel: `callee` is a type that `#[kernel]` made for
    // it, marked with an `unsafe impl` of `__UnsafeKernel`, whose
    // `__cuda_mem_run` (an `unsafe fn`, which only code that writes `unsafe`
    // can declare) runs the kernel. The parameters are put together outside
    // the `unsafe` block, which holds nothing of the caller's.
    (@call true, $callee:path, [$($ty:ty),*], ($($param:expr),*)) => {{
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
/// call of [`__launch`](host::__launch) (or, for an `unsafe fn` kernel,
/// [`__launch_unsafe`](host::__launch_unsafe), which compiles only where the
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_kinds_and_element_layouts_are_told_apart() {
        let all = [
            <u32>::SIGNATURE,
            <u64>::SIGNATURE,
            <[u32; 2]>::SIGNATURE,
            <DeviceSlice<'_, u32>>::SIGNATURE,
            <DeviceSliceMut<'_, u32>>::SIGNATURE,
            <DeviceSlice<'_, u64>>::SIGNATURE,
            <DeviceSliceMut<'_, u64>>::SIGNATURE,
            <DeviceAtomicSlice<'_, u32>>::SIGNATURE,
            <PitchedSlice<'_, u32>>::SIGNATURE,
            <PitchedSliceMut<'_, u32>>::SIGNATURE,
            <PitchedRowsMut<'_, u32>>::SIGNATURE,
            <DeviceTilesMut<'_, u32, 1>>::SIGNATURE,
            <DeviceTilesMut<'_, u32, 2>>::SIGNATURE,
            <DeviceChunksMut<'_, u32, 1>>::SIGNATURE,
            <DeviceChunksMut<'_, u32, 2>>::SIGNATURE,
            <PitchedTilesMut<'_, u32, 2, 1>>::SIGNATURE,
            <PitchedTilesMut<'_, u32, 1, 2>>::SIGNATURE,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn a_parameter_signature_ignores_lifetimes() {
        const ELIDED: u64 = __param_signature::<fn(DeviceSliceMut<f32>), _>();
        assert_eq!(ELIDED, <DeviceSliceMut<'static, f32>>::SIGNATURE);
    }
}
