//! [`KernelParam`]: the types a `#[kernel]` fn may take, the fingerprint of
//! each (and of a kernel's whole signature), the row of each in a kernel's
//! parameter table ([`ParamAbi`]), and how the PTX entry point puts a
//! parameter together from the two parts the driver passes ([`__Raw`]).

use core::ptr::NonNull;

use crate::copy::checked::CheckedDeviceCopy;
use crate::copy::device_copy::DeviceCopy;
use crate::copy::soa::{DeviceSoA, SoaField};
use crate::device::{
    CheckedSlice, CheckedSliceMut, DeviceAtomicSlice, DeviceChunksMut, DeviceSlice, DeviceSliceMut,
    DeviceTilesMut, PitchedRowsMut, PitchedSlice, PitchedSliceMut, PitchedTilesMut, SoaSlice,
    SoaSliceMut,
};

/// A type that a [`#[kernel]`](macro@crate::kernel) fn can take as a
/// parameter: every [`DeviceCopy`] type (passed by value: integers, floats,
/// arrays, `#[derive(DeviceCopy)]` structs, [`DevicePtr`](crate::DevicePtr)),
/// [`DeviceSlice<T>`] (elements the kernel reads), [`DeviceSliceMut<T>`]
/// (elements each thread writes), [`DeviceAtomicSlice<T>`] (elements any
/// thread updates atomically), the pitched 2D forms [`PitchedSlice<T>`],
/// [`PitchedSliceMut<T>`] and [`PitchedRowsMut<T>`], and for
/// [`CheckedDeviceCopy`] types (`bool`, derived enums and structs)
/// [`CheckedSlice<T>`] and [`CheckedSliceMut<T>`], whose reads check.
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
            `PitchedSlice<T>`, `PitchedSliceMut<T>`, `PitchedRowsMut<T>`; and for `bool`s and \
            `#[derive(CheckedDeviceCopy)]` enums and structs `CheckedSlice<T>`, `CheckedSliceMut<T>`; \
            for a `SoaBuffer` of a `#[derive(DeviceSoA)]` struct `SoaSlice<T>`, `SoaSliceMut<T>`"
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

    /// For a structure of arrays, its number of fields (0 otherwise),
    /// compared in the clear (the high half of the row's last word). With
    /// the struct's size, also compared, it bounds where a kernel's arrays
    /// end, whatever its build's field table: a `SoaBuffer` is allocated to
    /// that bound (see `soa::buffer::regions`), so a table that differs
    /// between the host's build and the kernel's (which `DeviceSoA`'s
    /// contract forbids, and whose fingerprint could be made to collide)
    /// still keeps every access inside the allocation.
    #[doc(hidden)]
    const __FIELDS: usize = 0;

    /// The first part of the parameter in the PTX entry point: the address
    /// of a slice's elements (a `NonNull<T>`), a pointer parameter, which
    /// the compiler knows points to global memory (so its loads and stores
    /// are `ld.global` / `st.global`, not generic ones) and is not null (so
    /// the null tests of the `Option<&T>`s made from it go; the host pushes
    /// a dangling, aligned, non-null address for an empty slice); `()` for
    /// a value (a zero-sized part, which the entry point leaves out).
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
        align as u64 | (P::__FIELDS as u64) << 32,
    ]
}

/// A pitched parameter's `[pitch, width, height]` from the 32-bit words the
/// entry point receives (the host's `size_t`s), each the low word of its
/// number: the host pushes none above `u32::MAX`
/// (`launch::host::args::pitched`), so this changes no value, and the
/// compiler then knows that they fit in 32 bits (their products are
/// `mul.wide.u32`s and their compares 32-bit ones, as nvcc's `int` index
/// math).
#[inline(always)]
fn pitched_parts(words: [u32; 6]) -> [usize; 3] {
    let low = usize::from(cfg!(target_endian = "big"));
    [words[low], words[2 + low], words[4 + low]].map(|n| n as usize)
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
    pub(super) const CHECKED: u64 = 0x0043_4845_434b_4544; // "CHECKED"
    pub(super) const CHECKED_MUT: u64 = 0x4348_4543_4b45_444d; // "CHECKEDM"
    pub(super) const SOA: u64 = 0x0053_4f41; // "SOA"
    pub(super) const SOA_MUT: u64 = 0x0000_534f_414d_5554; // "SOAMUT"
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

/// A structure of arrays' layout for its fingerprint: the struct's layout
/// fingerprint, then its field table (each field's offset, size and
/// alignment, in order), which decides where a kernel finds each array.
/// `DeviceSoA`'s contract keeps the table the same in every build; this
/// catches a stale PTX whose table differs.
const fn soa_layout(layout: u64, fields: &[SoaField]) -> u64 {
    let mut hash = mix(layout, fields.len() as u64);
    let mut i = 0;
    while i < fields.len() {
        hash = mix(hash, fields[i].offset as u64);
        hash = mix(hash, fields[i].size as u64);
        hash = mix(hash, fields[i].align as u64);
        i += 1;
    }
    hash
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
    type __Address = NonNull<T>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceSlice::from_raw_parts(address.get().as_ptr().cast_const(), len.get()) }
    }
}

// SAFETY: as for `DeviceSlice`; the host builds it from memory borrowed
// exclusively for the launch.
unsafe impl<T: DeviceCopy> KernelParam for DeviceSliceMut<'_, T> {
    const SIGNATURE: u64 = param(tag::SLICE_MUT, T::__LAYOUT);
    const __KIND: u64 = tag::SLICE_MUT;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceSliceMut::from_raw_parts(address.get().as_ptr(), len.get()) }
    }
}

// SAFETY: `#[repr(transparent)]` over a `DeviceSlice` of the bits, whose
// parts it assembles from; its own tag (the host builds it from a `Checked`
// buffer or view). Any bits in the memory are sound: reads check them.
unsafe impl<C: CheckedDeviceCopy> KernelParam for CheckedSlice<'_, C> {
    const SIGNATURE: u64 = param(tag::CHECKED, <C::Bits as DeviceCopy>::__LAYOUT);
    const __KIND: u64 = tag::CHECKED;
    const __ELEMENT: (usize, usize) = element::<C::Bits>();
    type __Address = NonNull<C::Bits>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<C::Bits>>, len: __Raw<usize>) -> Self {
        CheckedSlice::from_bits(DeviceSlice::__assemble(address, len))
    }
}

// SAFETY: `#[repr(transparent)]` over a `DeviceSliceMut` of the bits, as
// `CheckedSlice` over a `DeviceSlice`; the host builds it from memory
// borrowed exclusively for the launch.
unsafe impl<C: CheckedDeviceCopy> KernelParam for CheckedSliceMut<'_, C> {
    const SIGNATURE: u64 = param(tag::CHECKED_MUT, <C::Bits as DeviceCopy>::__LAYOUT);
    const __KIND: u64 = tag::CHECKED_MUT;
    const __ELEMENT: (usize, usize) = element::<C::Bits>();
    type __Address = NonNull<C::Bits>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<C::Bits>>, len: __Raw<usize>) -> Self {
        CheckedSliceMut::from_bits(DeviceSliceMut::__assemble(address, len))
    }
}

// SAFETY: `#[repr(C)] { base, len }`, 16 bytes aligned to 8; the host
// builds it from a `SoaBuffer` (the arrays of `len` `T`s laid out by
// `region_offset`) that nothing writes while the kernel runs. Its own tag,
// over `T`'s layout fingerprint.
unsafe impl<T: DeviceSoA> KernelParam for SoaSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::SOA, soa_layout(T::__LAYOUT, T::FIELDS));
    const __KIND: u64 = tag::SOA;
    const __ELEMENT: (usize, usize) = element::<T>();
    const __FIELDS: usize = T::FIELDS.len();
    type __Address = NonNull<u8>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<u8>>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`): the arrays of `len` `T`s, for the whole launch.
        unsafe { SoaSlice::from_raw_parts(address.get().as_ptr(), len.get()) }
    }
}

// SAFETY: as for `SoaSlice`; the host builds it from a `SoaBuffer`
// borrowed exclusively for the launch.
unsafe impl<T: DeviceSoA> KernelParam for SoaSliceMut<'_, T> {
    const SIGNATURE: u64 = param(tag::SOA_MUT, soa_layout(T::__LAYOUT, T::FIELDS));
    const __KIND: u64 = tag::SOA_MUT;
    const __ELEMENT: (usize, usize) = element::<T>();
    const __FIELDS: usize = T::FIELDS.len();
    type __Address = NonNull<u8>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<u8>>, len: __Raw<usize>) -> Self {
        // SAFETY: as for `SoaSlice`, memory this launch writes alone.
        unsafe { SoaSliceMut::from_raw_parts(address.get().as_ptr(), len.get()) }
    }
}

// SAFETY: `#[repr(C)] { ptr, len }` like `DeviceSliceMut`; the host builds
// it from memory borrowed exclusively for the launch. Its own tag.
unsafe impl<T: DeviceCopy> KernelParam for DeviceAtomicSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::ATOMIC, T::__LAYOUT);
    const __KIND: u64 = tag::ATOMIC;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, len: __Raw<usize>) -> Self {
        // SAFETY: the parts come from the driver (only it makes a `__Raw`),
        // which copied them from a value the host made for this parameter
        // type (`LaunchArg`, which never pushes a null address): memory of
        // `len` elements with the access this
        // type grants, for the whole launch.
        unsafe { DeviceAtomicSlice::from_raw_parts(address.get().as_ptr(), len.get()) }
    }
}

// SAFETY: `#[repr(C)] { ptr, pitch, width, height }`, 32 bytes aligned to 8
// on every 64-bit target, built by the host from a `PitchedBuffer` that
// nothing writes while the kernel runs. One tag per form.
unsafe impl<T: DeviceCopy> KernelParam for PitchedSlice<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = [u32; 6];

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, rest: __Raw<[u32; 6]>) -> Self {
        let [pitch, width, height] = pitched_parts(rest.get());
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe {
            PitchedSlice::from_raw_parts(address.get().as_ptr().cast_const(), pitch, width, height)
        }
    }
}

// SAFETY: as for `PitchedSlice`, from a `PitchedBuffer` borrowed exclusively.
unsafe impl<T: DeviceCopy> KernelParam for PitchedSliceMut<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED_MUT, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED_MUT;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = [u32; 6];

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, rest: __Raw<[u32; 6]>) -> Self {
        let [pitch, width, height] = pitched_parts(rest.get());
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe { PitchedSliceMut::from_raw_parts(address.get().as_ptr(), pitch, width, height) }
    }
}

// SAFETY: as for `PitchedSliceMut`.
unsafe impl<T: DeviceCopy> KernelParam for PitchedRowsMut<'_, T> {
    const SIGNATURE: u64 = param(tag::PITCHED_ROWS, T::__LAYOUT);
    const __KIND: u64 = tag::PITCHED_ROWS;
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = [u32; 6];

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, rest: __Raw<[u32; 6]>) -> Self {
        let [pitch, width, height] = pitched_parts(rest.get());
        // SAFETY: as for `DeviceSlice` (the parts come from the driver, from
        // a value the host made for this type): `height` rows of `width`
        // elements, `pitch` bytes apart, with the access this type grants.
        unsafe { PitchedRowsMut::from_raw_parts(address.get().as_ptr(), pitch, width, height) }
    }
}

// SAFETY: `#[repr(C)] { ptr, len }` like `DeviceSliceMut`, built by the
// host from the same arguments (memory borrowed exclusively for the
// launch); the tag and the tile size tell it apart.
unsafe impl<T: DeviceCopy, const TILE: usize> KernelParam for DeviceTilesMut<'_, T, TILE> {
    const SIGNATURE: u64 = mix(param(tag::TILES, T::__LAYOUT), TILE as u64);
    const __KIND: u64 = mix(tag::TILES, TILE as u64);
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, len: __Raw<usize>) -> Self {
        // SAFETY: as for `DeviceSliceMut`: the parts come from the driver,
        // from a value the host made for this parameter type.
        unsafe { DeviceTilesMut::from_raw_parts(address.get().as_ptr(), len.get()) }
    }
}

// SAFETY: as for `DeviceTilesMut`, with its own tag and the chunk size.
unsafe impl<T: DeviceCopy, const C: usize> KernelParam for DeviceChunksMut<'_, T, C> {
    const SIGNATURE: u64 = mix(param(tag::CHUNKS, T::__LAYOUT), C as u64);
    const __KIND: u64 = mix(tag::CHUNKS, C as u64);
    const __ELEMENT: (usize, usize) = element::<T>();
    type __Address = NonNull<T>;
    type __Rest = usize;

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, len: __Raw<usize>) -> Self {
        // SAFETY: as for `DeviceTilesMut`.
        unsafe { DeviceChunksMut::from_raw_parts(address.get().as_ptr(), len.get()) }
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
    type __Address = NonNull<T>;
    type __Rest = [u32; 6];

    #[inline(always)]
    fn __assemble(address: __Raw<NonNull<T>>, rest: __Raw<[u32; 6]>) -> Self {
        let [pitch, width, height] = pitched_parts(rest.get());
        // SAFETY: as for `PitchedSliceMut`.
        unsafe { PitchedTilesMut::from_raw_parts(address.get().as_ptr(), pitch, width, height) }
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
