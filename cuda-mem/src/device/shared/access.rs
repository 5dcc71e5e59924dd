//! The shared-memory instructions behind the safe accesses: the atomic
//! adds of [`SharedAdd`] and the relaxed block-scope loads and stores.

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::AtomicValue;

/// The element types of [`SharedSlice::add`](crate::device::SharedSlice::add)
/// and [`SharedSlice::fetch_add`](crate::device::SharedSlice::fetch_add):
/// `u32`, `i32`, `u64`, `i64`, `f32`, `f64` (sealed). One
/// `red.relaxed.cta.shared.add` (or `atom.`, which returns the old value)
/// each.
///
/// ```
/// fn bump<T: cuda_mem::device::SharedAdd>(s: cuda_mem::device::SharedSlice<'_, T>, one: T) {
///     s.add(0, one);
/// }
/// let a = cuda_mem::shared_array![f32; 1];
/// bump(a.as_slice(), 1.5);
/// assert_eq!(a.load(0), 1.5);
/// ```
pub trait SharedAdd: DeviceCopy + AtomicValue {
    /// Adds `value` at the shared-window address `address`.
    ///
    /// # Safety
    /// `address` is an element of a shared array, aligned for `Self`.
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    unsafe fn __shared_add(address: u32, value: Self);

    /// Adds `value` at the shared-window address `address`, returning the
    /// value before.
    ///
    /// # Safety
    /// As for `__shared_add`.
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    unsafe fn __shared_fetch_add(address: u32, value: Self) -> Self;
}

macro_rules! shared_add {
    ($($t:ty => $ptx:literal, $reg:ident;)*) => {$(
        impl SharedAdd for $t {
            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn __shared_add(address: u32, value: Self) {
                // SAFETY: the caller's address; an atomic add races with
                // nothing.
                unsafe {
                    core::arch::asm!(
                        concat!("red.relaxed.cta.shared.add.", $ptx, " [{a}], {v};"),
                        a = in(reg32) address,
                        v = in($reg) value,
                        options(nostack, preserves_flags)
                    );
                }
            }

            #[cfg(target_arch = "nvptx64")]
            #[inline(always)]
            unsafe fn __shared_fetch_add(address: u32, value: Self) -> Self {
                let old: Self;
                // SAFETY: as for `__shared_add`.
                unsafe {
                    core::arch::asm!(
                        concat!("atom.relaxed.cta.shared.add.", $ptx, " {o}, [{a}], {v};"),
                        o = out($reg) old,
                        a = in(reg32) address,
                        v = in($reg) value,
                        options(nostack, preserves_flags)
                    );
                }
                old
            }
        }
    )*};
}

shared_add! {
    u32 => "u32", reg32;
    i32 => "s32", reg32;
    u64 => "u64", reg64;
    i64 => "u64", reg64;
    f32 => "f32", reg32;
    f64 => "f64", reg64;
}

/// Relaxed, block-scope loads and stores in the shared window, one
/// instruction per element of 1, 2, 4, 8 or 16 bytes (aligned to its
/// size), 4 bytes (or 1) at a time otherwise.
#[cfg(target_arch = "nvptx64")]
pub(super) mod relaxed {
    use core::mem::{align_of, size_of, MaybeUninit};

    macro_rules! access {
        ($load:ident, $store:ident, $t:ty, $ptx:literal, $reg:ident) => {
            /// # Safety
            /// `address` is in shared memory, aligned.
            #[inline(always)]
            unsafe fn $load(address: u32) -> $t {
                let value: $t;
                // SAFETY: the caller's address; a relaxed load.
                unsafe {
                    core::arch::asm!(
                        concat!("ld.relaxed.cta.shared.", $ptx, " {v}, [{a}];"),
                        v = out($reg) value,
                        a = in(reg32) address,
                        options(nostack, readonly, preserves_flags)
                    );
                }
                value
            }

            /// # Safety
            /// `address` is in shared memory, aligned.
            #[inline(always)]
            unsafe fn $store(address: u32, value: $t) {
                // SAFETY: the caller's address; a relaxed store.
                unsafe {
                    core::arch::asm!(
                        concat!("st.relaxed.cta.shared.", $ptx, " [{a}], {v};"),
                        a = in(reg32) address,
                        v = in($reg) value,
                        options(nostack, preserves_flags)
                    );
                }
            }
        };
    }

    access!(load8, store8, u16, "b8", reg16);
    access!(load16, store16, u16, "b16", reg16);
    access!(load32, store32, u32, "b32", reg32);
    access!(load64, store64, u64, "b64", reg64);

    /// # Safety
    /// `address` is in shared memory, 16-byte aligned.
    #[inline(always)]
    unsafe fn load128(address: u32) -> [u32; 4] {
        let (a, b, c, d): (u32, u32, u32, u32);
        // SAFETY: the caller's address; a relaxed vector load.
        unsafe {
            core::arch::asm!(
                "ld.relaxed.cta.shared.v4.b32 {{{a}, {b}, {c}, {d}}}, [{p}];",
                a = out(reg32) a,
                b = out(reg32) b,
                c = out(reg32) c,
                d = out(reg32) d,
                p = in(reg32) address,
                options(nostack, readonly, preserves_flags)
            );
        }
        [a, b, c, d]
    }

    /// # Safety
    /// `address` is in shared memory, 16-byte aligned.
    #[inline(always)]
    unsafe fn store128(address: u32, [a, b, c, d]: [u32; 4]) {
        // SAFETY: the caller's address; a relaxed vector store.
        unsafe {
            core::arch::asm!(
                "st.relaxed.cta.shared.v4.b32 [{p}], {{{a}, {b}, {c}, {d}}};",
                p = in(reg32) address,
                a = in(reg32) a,
                b = in(reg32) b,
                c = in(reg32) c,
                d = in(reg32) d,
                options(nostack, preserves_flags)
            );
        }
    }

    /// Element `T` at `address`.
    ///
    /// # Safety
    /// `address` is an element of a shared array, aligned for `T`, and any
    /// bytes are a valid `T` (`DeviceCopy`).
    #[inline(always)]
    pub(in crate::device::shared) unsafe fn load<T>(address: u32) -> T {
        let mut out = MaybeUninit::<T>::uninit();
        let (size, align) = (size_of::<T>(), align_of::<T>());
        // SAFETY (every arm): the access is inside the element (the caller),
        // aligned (checked by the arm), and writes `out`'s bytes, all of
        // them, before `assume_init`.
        unsafe {
            let p = out.as_mut_ptr().cast::<u8>();
            match (size, align) {
                (1, _) => p.write(load8(address) as u8),
                (2, 2..) => p.cast::<u16>().write(load16(address)),
                (4, 4..) => p.cast::<u32>().write(load32(address)),
                (8, 8..) => p.cast::<u64>().write(load64(address)),
                (16, 16..) => p.cast::<[u32; 4]>().write(load128(address)),
                (_, 4..) => {
                    let mut k = 0;
                    while k < size {
                        p.add(k).cast::<u32>().write(load32(address + k as u32));
                        k += 4;
                    }
                }
                _ => {
                    let mut k = 0;
                    while k < size {
                        p.add(k).write(load8(address + k as u32) as u8);
                        k += 1;
                    }
                }
            }
            out.assume_init()
        }
    }

    /// Stores `value` at `address`.
    ///
    /// # Safety
    /// `address` is an element of a shared array, aligned for `T`.
    #[inline(always)]
    pub(in crate::device::shared) unsafe fn store<T>(address: u32, value: T) {
        let (size, align) = (size_of::<T>(), align_of::<T>());
        let value = MaybeUninit::new(value);
        // SAFETY (every arm): reads `value`'s bytes (a `DeviceCopy` value:
        // no padding, so all initialised), stores inside the element
        // (aligned, checked by the arm).
        unsafe {
            let p = value.as_ptr().cast::<u8>();
            match (size, align) {
                (1, _) => store8(address, p.read() as u16),
                (2, 2..) => store16(address, p.cast::<u16>().read()),
                (4, 4..) => store32(address, p.cast::<u32>().read()),
                (8, 8..) => store64(address, p.cast::<u64>().read()),
                (16, 16..) => store128(address, p.cast::<[u32; 4]>().read()),
                (_, 4..) => {
                    let mut k = 0;
                    while k < size {
                        store32(address + k as u32, p.add(k).cast::<u32>().read());
                        k += 4;
                    }
                }
                _ => {
                    let mut k = 0;
                    while k < size {
                        store8(address + k as u32, p.add(k).read() as u16);
                        k += 1;
                    }
                }
            }
        }
    }
}
