//! [`SharedWindow`]: an address in the block's shared window (what
//! `ld.shared` / `st.shared` take), and the plain accesses through it:
//! [`ld_shared`] / [`st_shared`] of a `u8`, `u16` or `u32`
//! ([`SharedScalar`]) and [`ld_shared_v4`] / [`st_shared_v4`] of 16
//! bytes, one `LDS` / `STS` each with no bounds check.
//!
//! They are for kernels that keep their own addresses in a shared tile (a
//! warp's part of it, a staged value), where a
//! [`SharedSlice`](crate::device::SharedSlice)'s accesses would add a
//! bounds check, and its plain
//! [`read`](crate::device::SharedSlice::read) /
//! [`write`](crate::device::SharedSlice::write) a generic address (`LD` /
//! `ST` rather than `LDS` / `STS`). Every access is `unsafe`: the caller
//! keeps the address inside a live shared allocation, aligned, and free of
//! conflicting accesses by other threads.
//!
//! On other targets a window address is the ordinary address of the
//! memory (a host shared array lives in its handle, see the
//! [module docs](crate::device::shared)), and the accesses are plain reads
//! and writes through it: the examples below run on the host.

use core::marker::PhantomData;
use core::ops::{Add, AddAssign};

/// An address in the block's shared window: on `nvptx64` the 32-bit
/// address that `ld.shared` / `st.shared` take (the shared state space's
/// own addresses, not generic ones), on other targets the ordinary address
/// of the memory. `Copy`, and neither `Send` nor `Sync` on any target (it
/// belongs to a block, as the memory it names). Made by
/// [`SharedSlice::window`](crate::device::SharedSlice::window),
/// [`SharedArray::window`](crate::device::SharedArray::window) or
/// [`from_ptr`](Self::from_ptr), moved by adding a number of bytes
/// (`at + 4 * i`), and read and written by [`ld_shared`], [`st_shared`],
/// [`ld_shared_v4`] and [`st_shared_v4`].
///
/// ```
/// use cuda_mem::device::shared::{ld_shared, st_shared};
/// let tile = cuda_mem::shared_array![u32; 8];
/// let at = tile.window();
/// // SAFETY: element 3 of the tile (4-byte aligned); one thread.
/// unsafe { st_shared(at + 4 * 3, 7u32) };
/// assert_eq!(tile.load(3), 7);
/// assert_eq!(unsafe { ld_shared::<u32>(at + 12) }, 7);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SharedWindow {
    /// The address in the `.shared` state space.
    #[cfg(target_arch = "nvptx64")]
    address: u32,
    /// The host model's address of the memory.
    #[cfg(not(target_arch = "nvptx64"))]
    address: *mut u8,
    /// Neither `Send` nor `Sync`, as on the host.
    _block: PhantomData<*mut u8>,
}

impl SharedWindow {
    /// The window address `address` (of the `.shared` state space).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub(in crate::device::shared) const fn at(address: u32) -> Self {
        SharedWindow {
            address,
            _block: PhantomData,
        }
    }

    /// The host model's window address of the memory at `address`.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(in crate::device::shared) const fn at(address: *mut u8) -> Self {
        SharedWindow {
            address,
            _block: PhantomData,
        }
    }

    /// The window address of `p`, a generic address of shared memory
    /// (`cvta.to.shared`): for a pointer into a shared array, such as
    /// [`SharedArray::as_ptr`](crate::device::SharedArray::as_ptr)'s, or
    /// into it. Safe: it only converts the address; of a pointer that is not
    /// into shared memory the result is meaningless, and every access
    /// through a window address is the caller's `unsafe` promise. Where a
    /// [`SharedSlice`](crate::device::SharedSlice) or array is at hand, its
    /// `window()` needs no conversion.
    ///
    /// ```
    /// use cuda_mem::device::shared::SharedWindow;
    /// let tile = cuda_mem::shared_array![u16; 4];
    /// assert_eq!(SharedWindow::from_ptr(tile.as_ptr()), tile.window());
    /// ```
    #[inline(always)]
    pub fn from_ptr<T>(p: *const T) -> Self {
        #[cfg(target_arch = "nvptx64")]
        {
            let w: u64;
            // SAFETY: converts an address; touches no memory.
            unsafe {
                core::arch::asm!(
                    "cvta.to.shared.u64 {w}, {p};",
                    w = out(reg64) w,
                    p = in(reg64) p as u64,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            SharedWindow::at(w as u32)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            SharedWindow::at(p.cast::<u8>().cast_mut())
        }
    }

    /// The address in its raw form ([`SharedAddr`]: `u32` on the device),
    /// for arithmetic of one's own (a walk over a tile kept in registers)
    /// or an operand of inline assembly. On the host it exposes the
    /// pointer's provenance, so that [`from_addr`](Self::from_addr) may
    /// give it back.
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u16; 8];
    /// let (_, tail) = a.as_slice().split_at(3).unwrap();
    /// assert_eq!(tail.window().addr() - a.window().addr(), 6);
    /// ```
    #[inline(always)]
    pub fn addr(self) -> SharedAddr {
        #[cfg(target_arch = "nvptx64")]
        return self.address;
        #[cfg(not(target_arch = "nvptx64"))]
        return self.address.expose_provenance();
    }

    /// The window address whose raw form is `addr` (the reverse of
    /// [`addr`](Self::addr)). Safe, as [`from_ptr`](Self::from_ptr): an
    /// address that is no shared memory's is meaningless, and the accesses
    /// through it are the caller's `unsafe` promise. On the host `addr`
    /// comes from [`addr`](Self::addr) (whose provenance that exposed).
    ///
    /// ```
    /// use cuda_mem::device::shared::{ld_shared, SharedWindow};
    /// let a = cuda_mem::shared_array![u32; 4];
    /// a.store(2, 11);
    /// let at = SharedWindow::from_addr(a.window().addr() + 8);
    /// // SAFETY: element 2 of `a`; one thread.
    /// assert_eq!(unsafe { ld_shared::<u32>(at) }, 11);
    /// ```
    #[inline(always)]
    pub fn from_addr(addr: SharedAddr) -> Self {
        #[cfg(target_arch = "nvptx64")]
        return SharedWindow::at(addr);
        #[cfg(not(target_arch = "nvptx64"))]
        return SharedWindow::at(core::ptr::with_exposed_provenance_mut(addr));
    }
}

/// The raw form of a [`SharedWindow`] address, for address arithmetic of
/// one's own and for inline assembly: `u32` on `nvptx64` (the `.shared`
/// state space's 32-bit addresses, which `ld.shared`, `cp.async`,
/// `ldmatrix` or `mbarrier` take), `usize` on other targets (the host
/// model's ordinary addresses).
///
/// ```
/// use cuda_mem::device::shared::{SharedAddr, SharedWindow};
/// let a = cuda_mem::shared_array![u32; 4];
/// let raw: SharedAddr = a.window().addr();
/// assert_eq!(SharedWindow::from_addr(raw + 8), a.window() + 8);
/// ```
#[cfg(target_arch = "nvptx64")]
pub type SharedAddr = u32;

/// The raw form of a [`SharedWindow`] address, for address arithmetic of
/// one's own and for inline assembly: `u32` on `nvptx64` (the `.shared`
/// state space's 32-bit addresses, which `ld.shared`, `cp.async`,
/// `ldmatrix` or `mbarrier` take), `usize` on other targets (the host
/// model's ordinary addresses).
///
/// ```
/// use cuda_mem::device::shared::{SharedAddr, SharedWindow};
/// let a = cuda_mem::shared_array![u32; 4];
/// let raw: SharedAddr = a.window().addr();
/// assert_eq!(SharedWindow::from_addr(raw + 8), a.window() + 8);
/// ```
#[cfg(not(target_arch = "nvptx64"))]
pub type SharedAddr = usize;

/// The address `bytes` further on (a `u32` add on `nvptx64`, wrapping as
/// the window's addresses do; no check: the accesses' callers keep their
/// addresses inside their allocations).
///
/// ```
/// let tile = cuda_mem::shared_array![u32; 4];
/// let at = tile.window();
/// let third = cuda_mem::device::shared::SharedWindow::from_ptr(tile.as_ptr().wrapping_add(2));
/// assert_eq!(at + 8, third);
/// ```
impl Add<u32> for SharedWindow {
    type Output = SharedWindow;

    #[inline(always)]
    fn add(self, bytes: u32) -> SharedWindow {
        #[cfg(target_arch = "nvptx64")]
        return SharedWindow::at(self.address.wrapping_add(bytes));
        #[cfg(not(target_arch = "nvptx64"))]
        return SharedWindow::at(self.address.wrapping_add(bytes as usize));
    }
}

/// Moves the address `bytes` on: `at = at + bytes`.
///
/// ```
/// let tile = cuda_mem::shared_array![u8; 4];
/// let mut at = tile.window();
/// at += 3;
/// assert_eq!(at, tile.window() + 3);
/// ```
impl AddAssign<u32> for SharedWindow {
    #[inline(always)]
    fn add_assign(&mut self, bytes: u32) {
        *self = *self + bytes;
    }
}

mod sealed {
    pub trait Sealed {}
}

/// The types of [`ld_shared`] and [`st_shared`]: `u8`, `u16` and `u32`
/// (sealed), one `ld.shared` / `st.shared` of their size each (a byte
/// travels in a 16-bit register: PTX has no 8-bit ones).
///
/// ```
/// use cuda_mem::device::shared::{ld_shared, SharedScalar, SharedWindow};
/// /// Element `i` of a shared array of `T`s at `at`.
/// ///
/// /// # Safety
/// /// As for `ld_shared`, for element `i`.
/// unsafe fn element<T: SharedScalar>(at: SharedWindow, i: u32) -> T {
///     // SAFETY: the caller's.
///     unsafe { ld_shared(at + i * size_of::<T>() as u32) }
/// }
/// let a = cuda_mem::shared_array![u16; 4];
/// a.store(2, 9);
/// // SAFETY: element 2 of `a`; one thread.
/// assert_eq!(unsafe { element::<u16>(a.window(), 2) }, 9);
/// ```
pub trait SharedScalar: Copy + sealed::Sealed {
    /// `ld.shared` of `Self` at `at`.
    ///
    /// # Safety
    /// As for [`ld_shared`].
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    unsafe fn __ld_shared(at: SharedWindow) -> Self;

    /// `st.shared` of `value` at `at`.
    ///
    /// # Safety
    /// As for [`st_shared`].
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    unsafe fn __st_shared(at: SharedWindow, value: Self);
}

/// `SharedScalar` for `$t`, by the instructions `$ld` and `$st` through a
/// register of `$h` (of class `$r`).
macro_rules! shared_scalar {
    ($($t:ty, $h:ty, $r:ident, $ld:literal, $st:literal;)*) => {$(
        impl sealed::Sealed for $t {}

        impl SharedScalar for $t {
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn __ld_shared(at: SharedWindow) -> Self {
                let v: $h;
                // SAFETY: the caller's address (`ld_shared`'s contract); the
                // asm only reads it.
                unsafe {
                    core::arch::asm!(
                        $ld,
                        v = out($r) v,
                        at = in(reg32) at.address,
                        options(nostack, readonly, preserves_flags)
                    );
                }
                v as $t
            }

            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn __st_shared(at: SharedWindow, value: Self) {
                // SAFETY: the caller's address (`st_shared`'s contract); the
                // asm only writes it.
                unsafe {
                    core::arch::asm!(
                        $st,
                        at = in(reg32) at.address,
                        v = in($r) value as $h,
                        options(nostack, preserves_flags)
                    );
                }
            }
        }
    )*};
}

shared_scalar! {
    u32, u32, reg32, "ld.shared.b32 {v}, [{at}];", "st.shared.b32 [{at}], {v};";
    u16, u16, reg16, "ld.shared.u16 {v}, [{at}];", "st.shared.u16 [{at}], {v};";
    u8, u16, reg16, "ld.shared.u8 {v}, [{at}];", "st.shared.u8 [{at}], {v};";
}

/// Loads the `T` at window address `at`: one `ld.shared` (`LDS`, `LDS.U16`,
/// `LDS.U8`), a plain load with no bounds check.
///
/// # Safety
/// `at` is inside a live shared allocation (a [`shared_array!`](crate::shared_array)
/// or the launch's dynamic shared memory) for `size_of::<T>()` bytes, and
/// aligned to them; no other thread writes those bytes concurrently (the
/// writes are separated from this load by a barrier such as
/// [`sync_threads`](crate::device::sync_threads) or
/// [`sync_warp`](crate::device::warp::sync_warp), or ordered by a fence
/// and an atomic flag).
///
/// ```
/// use cuda_mem::device::shared::ld_shared;
/// let a = cuda_mem::shared_array![u8; 4];
/// a.store(1, 0xab);
/// // SAFETY: byte 1 of `a`; one thread.
/// assert_eq!(unsafe { ld_shared::<u8>(a.window() + 1) }, 0xab);
/// ```
#[inline(always)]
pub unsafe fn ld_shared<T: SharedScalar>(at: SharedWindow) -> T {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: forwarded from the caller.
    unsafe {
        T::__ld_shared(at)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: readable and aligned for `T`, no
    // concurrent write.
    unsafe {
        at.address.cast::<T>().read()
    }
}

/// Stores `value` at window address `at`: one `st.shared` (`STS`,
/// `STS.U16`, `STS.U8`), a plain store with no bounds check.
///
/// # Safety
/// `at` is inside a live shared allocation for `size_of::<T>()` bytes,
/// and aligned to them; no other thread reads or writes those bytes
/// concurrently (its accesses are separated from this store by a barrier,
/// or ordered by a fence and an atomic flag).
///
/// ```
/// use cuda_mem::device::shared::st_shared;
/// let a = cuda_mem::shared_array![u16; 4];
/// // SAFETY: element 3 of `a` (2-byte aligned); one thread.
/// unsafe { st_shared(a.window() + 6, 0xbeefu16) };
/// assert_eq!(a.load(3), 0xbeef);
/// ```
#[inline(always)]
pub unsafe fn st_shared<T: SharedScalar>(at: SharedWindow, value: T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: forwarded from the caller.
    unsafe {
        T::__st_shared(at, value)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: writable and aligned for `T`, no
    // concurrent access.
    unsafe {
        at.address.cast::<T>().write(value)
    }
}

/// Loads the 16 bytes at window address `at`, the lowest word into `[0]`:
/// one `ld.shared.v4.b32` (`LDS.128`), with no bounds check.
///
/// # Safety
/// As for [`ld_shared`], for 16 bytes: `at` is 16-byte aligned (a
/// [`shared_array!`](crate::shared_array) and the dynamic shared memory
/// start on 16 bytes).
///
/// ```
/// use cuda_mem::device::shared::ld_shared_v4;
/// let a = cuda_mem::shared_array![u32; 8];
/// for i in 0..8 {
///     a.store(i, i as u32);
/// }
/// // SAFETY: elements 4..8 of `a`, 16 bytes in (on the device a shared
/// // array starts on 16 bytes); one thread.
/// assert_eq!(unsafe { ld_shared_v4(a.window() + 16) }, [4, 5, 6, 7]);
/// ```
#[inline(always)]
pub unsafe fn ld_shared_v4(at: SharedWindow) -> [u32; 4] {
    #[cfg(target_arch = "nvptx64")]
    {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's address; the asm only reads it.
        unsafe {
            core::arch::asm!(
                "ld.shared.v4.b32 {{{a}, {b}, {c}, {d}}}, [{at}];",
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                at = in(reg32) at.address,
                options(nostack, readonly, preserves_flags)
            );
        }
        [a, b, c, d]
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: 16 readable, aligned bytes, no
    // concurrent write.
    unsafe {
        at.address.cast::<[u32; 4]>().read()
    }
}

/// Stores 16 bytes at window address `at`, `value[0]` at the lowest
/// address: one `st.shared.v4.b32` (`STS.128`), with no bounds check.
///
/// # Safety
/// As for [`st_shared`], for 16 bytes: `at` is 16-byte aligned.
///
/// ```
/// use cuda_mem::device::shared::{ld_shared, st_shared_v4};
/// let a = cuda_mem::shared_array![u32; 8];
/// // SAFETY: elements 4..8 of `a`, 16 bytes in (on the device a shared
/// // array starts on 16 bytes); one thread.
/// unsafe { st_shared_v4(a.window() + 16, [1, 2, 3, 4]) };
/// assert_eq!((a.load(4), a.load(7)), (1, 4));
/// assert_eq!(unsafe { ld_shared::<u32>(a.window() + 20) }, 2);
/// ```
#[inline(always)]
pub unsafe fn st_shared_v4(at: SharedWindow, [a, b, c, d]: [u32; 4]) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: the caller's address; the asm only writes it.
    unsafe {
        core::arch::asm!(
            "st.shared.v4.b32 [{at}], {{{a}, {b}, {c}, {d}}};",
            at = in(reg32) at.address,
            a = in(reg32) a,
            b = in(reg32) b,
            c = in(reg32) c,
            d = in(reg32) d,
            options(nostack, preserves_flags)
        );
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: the caller's contract: 16 writable, aligned bytes, no
    // concurrent access.
    unsafe {
        at.address.cast::<[u32; 4]>().write([a, b, c, d])
    }
}

#[cfg(test)]
mod tests {
    use super::{ld_shared, ld_shared_v4, st_shared, st_shared_v4, SharedWindow};

    #[test]
    fn windows_of_arrays_slices_and_pointers_agree() {
        let a = crate::shared_array![u32; 16];
        let s = a.as_slice();
        assert_eq!(a.window(), s.window());
        assert_eq!(a.window(), SharedWindow::from_ptr(a.as_ptr()));
        for mid in 0..=16 {
            let (head, tail) = s.split_at(mid).unwrap();
            assert_eq!(head.window(), a.window());
            assert_eq!(tail.window(), a.window() + 4 * mid as u32);
            assert_eq!(
                tail.window(),
                SharedWindow::from_ptr(a.as_ptr().wrapping_add(mid))
            );
        }
        let mut at = a.window();
        at += 12;
        at += 0;
        assert_eq!(at, a.window() + 12);
        assert_ne!(at, a.window());
    }

    #[test]
    fn raw_addresses_come_back_as_the_same_window() {
        let a = crate::shared_array![u16; 8];
        let raw = a.window().addr();
        for i in 0..8 {
            let at = SharedWindow::from_addr(raw + 2 * i);
            assert_eq!(at, a.window() + 2 * i as u32);
            assert_eq!(at.addr(), raw + 2 * i);
            // SAFETY: element `i`, aligned; one thread.
            unsafe { st_shared(at, i as u16 + 1) };
            assert_eq!(a.load(i), i as u16 + 1);
        }
    }

    #[test]
    fn scalar_accesses_reach_the_elements_the_slice_sees() {
        let words = crate::shared_array![u32; 8];
        for i in 0..8u32 {
            // SAFETY: element `i`, aligned; one thread.
            unsafe { st_shared(words.window() + 4 * i, 0x0101_0101 * i) };
        }
        for i in 0..8 {
            assert_eq!(words.load(i), 0x0101_0101 * i as u32);
            let at = words.window() + 4 * i as u32;
            // SAFETY: as above.
            let word = unsafe { ld_shared::<u32>(at) };
            assert_eq!(word, words.load(i));
        }

        let halves = crate::shared_array![u16; 5];
        halves.store(4, 0xffff);
        // SAFETY: elements 3 and 4, aligned; one thread.
        unsafe { st_shared(halves.window() + 6, 0x1234u16) };
        assert_eq!((halves.load(3), halves.load(4)), (0x1234, 0xffff));
        // SAFETY: as above.
        assert_eq!(unsafe { ld_shared::<u16>(halves.window() + 8) }, 0xffff);

        let bytes = crate::shared_array![u8; 7];
        for i in 0..7u8 {
            // SAFETY: byte `i`; one thread.
            unsafe { st_shared(bytes.window() + i as u32, 200 + i) };
        }
        for i in 0..7 {
            assert_eq!(bytes.load(i), 200 + i as u8);
            // SAFETY: as above.
            let byte = unsafe { ld_shared::<u8>(bytes.window() + i as u32) };
            assert_eq!(byte, 200 + i as u8);
        }
    }

    #[test]
    fn vector_accesses_move_four_words_lowest_first() {
        let tile = crate::shared_array![u128; 3];
        let at = tile.window();
        // SAFETY: element 1 of the tile, 16-byte aligned (`u128`); one
        // thread.
        unsafe { st_shared_v4(at + 16, [1, 2, 3, 4]) };
        assert_eq!(tile.load(0), 0);
        assert_eq!(tile.load(2), 0);
        let expected: Vec<u8> = [1u32, 2, 3, 4]
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect();
        assert_eq!(tile.load(1).to_ne_bytes()[..], expected[..]);
        // SAFETY: as above; words 5 and 6 of the tile.
        assert_eq!(unsafe { ld_shared::<u32>(at + 20) }, 2);
        // SAFETY: as above.
        assert_eq!(unsafe { ld_shared_v4(at + 16) }, [1, 2, 3, 4]);
        // SAFETY: as above: element 2, then element 0.
        unsafe { st_shared_v4(at + 32, ld_shared_v4(at + 16)) };
        assert_eq!(tile.load(2), tile.load(1));
        // SAFETY: as above.
        assert_eq!(unsafe { ld_shared_v4(at) }, [0; 4]);
    }
}
