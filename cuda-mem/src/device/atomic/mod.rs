//! Atomic read-modify-write operations with a [`Scope`]: [`DeviceAtomic<T>`]
//! for `i32`, `u32`, `i64`, `u64` (add, sub, min, max, and, or, xor,
//! exchange, compare-exchange, load, store) and `f32`, `f64` (add, exchange,
//! compare-exchange on the bits, load, store).
//!
//! On `nvptx64` each operation is one `atom.relaxed.<scope>.<op>` (or
//! `ld`/`st.relaxed.<scope>`) instruction on a generic address, so it works
//! on global and shared memory alike. Every operation is *relaxed*, like
//! CUDA's `atomicAdd`: it is indivisible, but orders nothing else; pair it
//! with [`fence`](super::fence) or a barrier to publish other data.
//! Elsewhere the operations are `core::sync::atomic`'s (relaxed), with a
//! compare-exchange loop for float addition.
//!
//! Why not `core::sync::atomic` on the device too: with the pinned nightly,
//! its orderings do not survive on `nvptx64`. A `fetch_add(1, AcqRel)`
//! becomes a plain `atom.global.add.u32` (no ordering, no fence), and a
//! `load(Acquire)` an `ld.acquire.sys` (system scope, where a flag between
//! the blocks of one kernel needs `.gpu`). Code that relies on those
//! orderings in a kernel is not ordered as it reads; here the scope is
//! explicit and the ordering is a [`fence`](super::fence) of that scope.
//!
//! This file holds [`Scope`], the traits and [`DeviceAtomic`]; `ops`
//! implements the operations for the six types (one PTX instruction each on
//! `nvptx64`), and `host` is their `core::sync::atomic` model elsewhere.

#[cfg(not(target_arch = "nvptx64"))]
mod host;
mod ops;

use core::cell::UnsafeCell;

/// Which threads an atomic operation or fence is indivisible for, or orders
/// memory for: PTX's `.cta`, `.gpu` and `.sys` scopes. A narrower scope is
/// cheaper; using it while threads outside it access the same memory is a
/// data race on the value (the result is unspecified, as for any race).
///
/// ```
/// use cuda_mem::device::{DeviceAtomic, Scope};
/// let hits = DeviceAtomic::new(0u32);
/// hits.fetch_add(1, Scope::Device);
/// assert_eq!(hits.load(Scope::Device), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The threads of one block (`.cta`): shared memory, or a global counter
    /// only one block uses.
    Block,
    /// Every thread of the device (`.gpu`): the usual scope for global memory.
    Device,
    /// Every thread of every device and the host (`.sys`): managed or mapped
    /// pinned memory other processors use at the same time.
    System,
}

pub(crate) mod sealed {
    use super::Scope;

    /// The operations, one PTX instruction each; implemented for the six
    /// types below only.
    ///
    /// # Safety (of every method)
    /// `ptr` is aligned and valid for reads and writes, and every concurrent
    /// access to it is atomic.
    pub trait Ops: Copy {
        unsafe fn load(ptr: *mut Self, scope: Scope) -> Self;
        unsafe fn store(ptr: *mut Self, value: Self, scope: Scope);
        unsafe fn swap(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        /// Returns the old value; stores `new` when its bits equal `current`'s.
        unsafe fn cas(ptr: *mut Self, current: Self, new: Self, scope: Scope) -> Self;
        unsafe fn add(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        fn same_bits(a: Self, b: Self) -> bool;
    }

    pub trait IntOps: Ops {
        unsafe fn sub(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        unsafe fn min(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        unsafe fn max(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        unsafe fn and(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        unsafe fn or(ptr: *mut Self, value: Self, scope: Scope) -> Self;
        unsafe fn xor(ptr: *mut Self, value: Self, scope: Scope) -> Self;
    }
}

/// A type [`DeviceAtomic`] works on: `i32`, `u32`, `i64`, `u64`, `f32`,
/// `f64` (sealed).
///
/// ```
/// fn total<T: cuda_mem::device::AtomicValue>(a: &cuda_mem::device::DeviceAtomic<T>) -> T {
///     a.load(cuda_mem::device::Scope::Device)
/// }
/// assert_eq!(total(&cuda_mem::device::DeviceAtomic::new(2.5f64)), 2.5);
/// ```
pub trait AtomicValue: sealed::Ops {}

/// The integer [`AtomicValue`]s, which also have sub, min, max, and, or, xor.
///
/// ```
/// use cuda_mem::device::{AtomicInteger, DeviceAtomic, Scope};
/// fn clear_low_bit<T: AtomicInteger + From<u8> + core::ops::Not<Output = T>>(a: &DeviceAtomic<T>) {
///     a.fetch_and(!T::from(1), Scope::Device);
/// }
/// let a = DeviceAtomic::new(7u32);
/// clear_low_bit(&a);
/// assert_eq!(a.into_inner(), 6);
/// ```
pub trait AtomicInteger: AtomicValue + sealed::IntOps {}

/// A `T` that threads access with atomic operations: the element type of
/// [`DeviceAtomicSlice`](super::DeviceAtomicSlice), and a view of shared
/// memory ([`SharedSlice::atomic`](super::SharedSlice::atomic)) or of any
/// memory ([`from_ptr`](Self::from_ptr)). Same size and alignment as `T`.
///
/// ```
/// use cuda_mem::device::{DeviceAtomic, Scope};
/// let a = DeviceAtomic::new(10i64);
/// assert_eq!(a.fetch_sub(3, Scope::Block), 10);
/// assert_eq!(a.fetch_max(20, Scope::Block), 7);
/// assert_eq!(a.compare_exchange(20, 1, Scope::Block), Ok(20));
/// assert_eq!(a.swap(5, Scope::Block), 1);
/// assert_eq!(a.into_inner(), 5);
/// ```
#[repr(transparent)]
pub struct DeviceAtomic<T> {
    value: UnsafeCell<T>,
}

// SAFETY: every access to the value goes through an atomic operation.
unsafe impl<T: AtomicValue> Sync for DeviceAtomic<T> {}

impl<T: AtomicValue> DeviceAtomic<T> {
    /// A new atomic holding `value`.
    ///
    /// ```
    /// let a = cuda_mem::device::DeviceAtomic::new(1u32);
    /// ```
    #[inline(always)]
    pub const fn new(value: T) -> Self {
        Self {
            value: UnsafeCell::new(value),
        }
    }

    /// The `T` at `ptr`, viewed as an atomic for `'a`.
    ///
    /// # Safety
    /// `ptr` is aligned for `T` and valid for reads and writes for `'a`, and
    /// every access to it during `'a`, by any thread, is atomic.
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let mut count = 0u32;
    /// // SAFETY: `count` is live and only accessed through the atomic meanwhile.
    /// let a = unsafe { DeviceAtomic::from_ptr(&mut count) };
    /// a.fetch_add(2, Scope::Device);
    /// assert_eq!(count, 2);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_ptr<'a>(ptr: *mut T) -> &'a Self {
        // SAFETY: `#[repr(transparent)]` over `UnsafeCell<T>`, itself
        // transparent over `T`; validity for `'a` is the caller's contract.
        unsafe { &*(ptr as *const Self) }
    }

    /// The address of the value.
    ///
    /// ```
    /// let a = cuda_mem::device::DeviceAtomic::new(1u32);
    /// assert!(!a.as_ptr().is_null());
    /// ```
    #[inline(always)]
    pub const fn as_ptr(&self) -> *mut T {
        self.value.get()
    }

    /// The value, consuming the atomic.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::DeviceAtomic::new(3u64).into_inner(), 3);
    /// ```
    #[inline(always)]
    pub fn into_inner(self) -> T {
        self.value.into_inner()
    }

    /// Reads the value (`ld.relaxed.<scope>`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// assert_eq!(DeviceAtomic::new(4u32).load(Scope::System), 4);
    /// ```
    #[inline(always)]
    pub fn load(&self, scope: Scope) -> T {
        // SAFETY: `&self` is a valid, aligned `T` accessed atomically only.
        unsafe { T::load(self.as_ptr(), scope) }
    }

    /// Writes the value (`st.relaxed.<scope>`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(4u32);
    /// a.store(9, Scope::Device);
    /// assert_eq!(a.load(Scope::Device), 9);
    /// ```
    #[inline(always)]
    pub fn store(&self, value: T, scope: Scope) {
        // SAFETY: as for `load`.
        unsafe { T::store(self.as_ptr(), value, scope) }
    }

    /// Writes `value`, returns the old value (`atom.exch`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(1.5f32);
    /// assert_eq!(a.swap(2.5, Scope::Device), 1.5);
    /// ```
    #[inline(always)]
    pub fn swap(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::swap(self.as_ptr(), value, scope) }
    }

    /// Writes `new` if the value is `current` (for floats: has the same bits),
    /// in one indivisible step (`atom.cas`): `Ok(previous)` if it did,
    /// `Err(previous)` if not.
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(5u32);
    /// assert_eq!(a.compare_exchange(4, 8, Scope::Device), Err(5));
    /// assert_eq!(a.compare_exchange(5, 8, Scope::Device), Ok(5));
    /// ```
    #[inline(always)]
    pub fn compare_exchange(&self, current: T, new: T, scope: Scope) -> Result<T, T> {
        // SAFETY: as for `load`.
        let old = unsafe { T::cas(self.as_ptr(), current, new, scope) };
        if T::same_bits(old, current) {
            Ok(old)
        } else {
            Err(old)
        }
    }

    /// Adds `value` (wrapping for integers; IEEE round-to-nearest for
    /// floats), returns the old value (`atom.add`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(u32::MAX);
    /// assert_eq!(a.fetch_add(2, Scope::Device), u32::MAX);
    /// assert_eq!(a.load(Scope::Device), 1);
    /// ```
    #[inline(always)]
    pub fn fetch_add(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::add(self.as_ptr(), value, scope) }
    }
}

impl<T: AtomicInteger> DeviceAtomic<T> {
    /// Subtracts `value` (wrapping), returns the old value (`atom.add` of the
    /// negation: PTX has no `atom.sub`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(0u64);
    /// a.fetch_sub(1, Scope::Device);
    /// assert_eq!(a.into_inner(), u64::MAX);
    /// ```
    #[inline(always)]
    pub fn fetch_sub(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::sub(self.as_ptr(), value, scope) }
    }

    /// Stores the smaller of the value and `value`, returns the old value
    /// (`atom.min`; signed for `i32`/`i64`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(-3i32);
    /// a.fetch_min(-7, Scope::Device);
    /// assert_eq!(a.into_inner(), -7);
    /// ```
    #[inline(always)]
    pub fn fetch_min(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::min(self.as_ptr(), value, scope) }
    }

    /// Stores the larger of the value and `value`, returns the old value
    /// (`atom.max`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(3u32);
    /// a.fetch_max(7, Scope::Device);
    /// assert_eq!(a.into_inner(), 7);
    /// ```
    #[inline(always)]
    pub fn fetch_max(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::max(self.as_ptr(), value, scope) }
    }

    /// Bitwise and with `value`, returns the old value (`atom.and`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(0b1100u32);
    /// a.fetch_and(0b1010, Scope::Device);
    /// assert_eq!(a.into_inner(), 0b1000);
    /// ```
    #[inline(always)]
    pub fn fetch_and(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::and(self.as_ptr(), value, scope) }
    }

    /// Bitwise or with `value`, returns the old value (`atom.or`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(0b1100u32);
    /// a.fetch_or(0b1010, Scope::Device);
    /// assert_eq!(a.into_inner(), 0b1110);
    /// ```
    #[inline(always)]
    pub fn fetch_or(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::or(self.as_ptr(), value, scope) }
    }

    /// Bitwise exclusive or with `value`, returns the old value (`atom.xor`).
    ///
    /// ```
    /// use cuda_mem::device::{DeviceAtomic, Scope};
    /// let a = DeviceAtomic::new(0b1100u32);
    /// a.fetch_xor(0b1010, Scope::Device);
    /// assert_eq!(a.into_inner(), 0b0110);
    /// ```
    #[inline(always)]
    pub fn fetch_xor(&self, value: T, scope: Scope) -> T {
        // SAFETY: as for `load`.
        unsafe { T::xor(self.as_ptr(), value, scope) }
    }
}

impl<T: AtomicValue + core::fmt::Debug> core::fmt::Debug for DeviceAtomic<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.load(Scope::System).fmt(f)
    }
}
