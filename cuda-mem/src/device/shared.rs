//! Shared memory: fast on-chip memory that the threads of one block share.
//!
//! - [`shared_array!`](crate::shared_array)`[T; N]` declares a static
//!   array, one per block for each place the macro is written (CUDA's
//!   `__shared__ T a[N]`), and gives a [`SharedArray<T, N>`].
//! - [`dynamic_shared!`](crate::dynamic_shared)`(T)` views the block's
//!   dynamic shared memory (the size given at launch, CUDA's
//!   `extern __shared__ T a[]`) as a [`SharedSlice<T>`] whose length comes
//!   from `%dynamic_smem_size`, so it never reaches past what the launch
//!   provided.
//!
//! # What is safe
//! Every thread of the block reaches the same memory through its own
//! handle, so every safe access is atomic: [`load`](SharedSlice::load) and
//! [`store`](SharedSlice::store) are *relaxed, block-scope* accesses
//! (`ld.relaxed.cta.shared` / `st.relaxed.cta.shared`, which compile to the
//! very `LDS` / `STS` instructions of a plain access: there is no cost), so
//! two threads that meet on an element never race in the sense of
//! undefined behaviour; [`add`](SharedSlice::add) is a block-scope atomic
//! add in shared memory (`red.shared.add`, which the compiler turns into
//! warp-aggregated `ATOMS.POPC.INC` increments when many lanes add 1), and
//! [`atomic`](SharedSlice::atomic) gives every other atomic operation. What
//! a thread reads after another's store is its business, as in CUDA C++:
//! separate the phases with [`sync_threads`](super::sync_threads) (which
//! orders shared memory within the block) to read what the others wrote.
//! Elements wider than 16 bytes are read and written 4 bytes at a time
//! (a read that meets a store may see parts of both values; the element
//! type is [`DeviceCopy`], so any bytes are a valid value). The plain
//! accesses [`read`](SharedSlice::read) and [`write`](SharedSlice::write)
//! remain, `unsafe`, with the usual contract. Taking a typed view of the
//! dynamic memory is `unsafe`: two views of different types alias the same
//! bytes with accesses of different sizes. The element type is
//! [`DeviceCopy`], so whatever bytes the memory holds (it starts
//! uninitialised) are a valid value.
//!
//! # How it works on `nvptx64`
//! A static array is a module-scope `.shared` variable declared with
//! `global_asm!` in the crate that expands the macro, named after a hash of
//! the macro's place (file, line, column, module, type, length), and its
//! address is taken with `cvta.shared`. So it is one array per *place*,
//! however often the code is inlined, unrolled or called; two kernels of
//! one module that reach the same place each get their own copy per block.
//! The macros must be expanded in the kernel crate itself (the crate whose
//! PTX is built: `global_asm!` of a dependency does not reach it), with a
//! type and length that do not depend on generic parameters. The kernel
//! builder checks that every shared array the PTX uses is declared in it.
//! Dynamic shared memory is the module's `.extern .shared` array
//! `__cuda_mem_dynamic_shared` (16-byte aligned).
//!
//! On other targets the block is one thread: a static array is a zeroed
//! array owned by the handle (on the stack), and there is no dynamic shared
//! memory (its length is 0).

use core::marker::PhantomData;

use super::atomic::{AtomicValue, DeviceAtomic};
use crate::copy::device_copy::DeviceCopy;

/// A block's shared memory viewed as `len` elements of `T`: a slice of a
/// [`SharedArray`] or the dynamic shared memory. `Copy`: every access is
/// `unsafe` or atomic.
///
/// ```
/// let tile = cuda_mem::shared_array![u32; 8];
/// let s = tile.as_slice();
/// // SAFETY: one thread on the host; nothing else accesses the array.
/// unsafe { s.write(3, 5) };
/// assert_eq!(unsafe { s.read(3) }, 5);
/// assert_eq!(s.len(), 8);
/// ```
pub struct SharedSlice<'a, T> {
    /// The generic address of the first element.
    ptr: *mut T,
    /// Its address in the shared window (what `ld.shared` takes).
    #[cfg(target_arch = "nvptx64")]
    shared: u32,
    len: usize,
    _memory: PhantomData<&'a core::cell::UnsafeCell<[T]>>,
}

impl<T> Clone for SharedSlice<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for SharedSlice<'_, T> {}

impl<'a, T: DeviceCopy> SharedSlice<'a, T> {
    /// The number of elements.
    ///
    /// ```
    /// assert_eq!(cuda_mem::shared_array![f32; 4].as_slice().len(), 4);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// // SAFETY: the only view of the dynamic shared memory here.
    /// assert!(unsafe { cuda_mem::dynamic_shared!(u8) }.is_empty()); // none on the host
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first element (a generic address of shared
    /// memory on the device).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u8; 2];
    /// assert_eq!(a.as_slice().as_ptr(), a.as_ptr());
    /// ```
    #[inline(always)]
    pub const fn as_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Reads element `index`. Panics (a trap on the device) past the end.
    ///
    /// # Safety
    /// No other thread writes the element concurrently: a write by another
    /// thread and this read are separated by a barrier
    /// ([`sync_threads`](super::sync_threads)) or ordered by a fence and an
    /// atomic flag.
    ///
    /// ```
    /// let a = cuda_mem::shared_array![i64; 3];
    /// // SAFETY: one thread; the array starts zeroed on the host.
    /// assert_eq!(unsafe { a.as_slice().read(2) }, 0);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn read(&self, index: usize) -> T {
        assert!(index < self.len, "shared memory read past the end");
        // SAFETY: in bounds; no concurrent write (the caller); any bytes are
        // a valid `T` (`DeviceCopy`). A plain access, which the compiler may
        // combine and reorder as it likes ([`load`](Self::load) is the
        // atomic one).
        unsafe { self.ptr.add(index).read() }
    }

    /// Writes element `index`. Panics (a trap on the device) past the end.
    ///
    /// # Safety
    /// No other thread reads or writes the element concurrently (accesses of
    /// other threads are separated from this one by a barrier, or ordered by
    /// a fence and an atomic flag).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![i64; 3];
    /// // SAFETY: one thread.
    /// unsafe { a.as_slice().write(0, -4) };
    /// assert_eq!(unsafe { a.read(0) }, -4);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, index: usize, value: T) {
        assert!(index < self.len, "shared memory write past the end");
        // SAFETY: in bounds; no concurrent access (the caller).
        unsafe { self.ptr.add(index).write(value) }
    }

    /// Reads element `index` with a relaxed, block-scope load (one `LDS`,
    /// as a plain load): safe whatever other threads do meanwhile. Panics (a
    /// trap on the device) past the end. To read what other threads
    /// stored, put a [`sync_threads`](super::sync_threads) between their
    /// stores and this load.
    ///
    /// ```
    /// use cuda_mem::device::{block_size, block_thread_rank, sync_threads};
    /// let tile = cuda_mem::shared_array![f32; 256];
    /// let me = block_thread_rank() as usize;
    /// tile.as_slice().store(me, me as f32);
    /// sync_threads();
    /// let neighbour = tile.as_slice().load((me + 1) % block_size() as usize);
    /// assert_eq!(neighbour, 0.0); // one thread on the host
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        assert!(index < self.len, "shared memory read past the end");
        #[cfg(target_arch = "nvptx64")]
        {
            // In bounds, so `index * size_of::<T>()` is inside the block's
            // shared memory (less than 4 GiB).
            let address = self.shared + (index * size_of::<T>()) as u32;
            // SAFETY: `address` is element `index` of this shared array,
            // aligned for `T`; the loads are relaxed atomics, which race
            // with nothing; any bytes are a valid `T` (`DeviceCopy`).
            unsafe { relaxed::load(address) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: in bounds; the one-thread model has no other thread, and
        // no reference to the element is handed out (`atomic` gives an
        // `UnsafeCell`-based one, which allows this access).
        unsafe {
            self.ptr.add(index).read()
        }
    }

    /// Writes element `index` with a relaxed, block-scope store (one `STS`,
    /// as a plain store): safe whatever other threads do meanwhile. Panics
    /// (a trap on the device) past the end.
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u16; 4];
    /// a.as_slice().store(2, 9);
    /// assert_eq!(a.as_slice().load(2), 9);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        assert!(index < self.len, "shared memory write past the end");
        #[cfg(target_arch = "nvptx64")]
        {
            let address = self.shared + (index * size_of::<T>()) as u32;
            // SAFETY: as for `load`: element `index`, relaxed stores.
            unsafe { relaxed::store(address, value) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: as for `load`.
        unsafe {
            self.ptr.add(index).write(value)
        }
    }

    /// Adds `value` to element `index` atomically (relaxed, block scope),
    /// without returning the old value: one `red.shared.add`, which the
    /// compiler turns into warp-aggregated increments (`ATOMS.POPC.INC`)
    /// when lanes add a constant 1 (a histogram's bins). Panics past the
    /// end.
    ///
    /// ```
    /// let bins = cuda_mem::shared_array![u32; 256];
    /// bins.as_slice().add(7, 1);
    /// assert_eq!(bins.as_slice().load(7), 1);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn add(&self, index: usize, value: T)
    where
        T: SharedAdd,
    {
        assert!(index < self.len, "shared memory add past the end");
        #[cfg(target_arch = "nvptx64")]
        {
            let address = self.shared + (index * size_of::<T>()) as u32;
            // SAFETY: element `index` of this shared array, aligned for `T`.
            unsafe { T::__shared_add(address, value) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        if let Some(element) = self.atomic(index) {
            element.fetch_add(value, super::Scope::Block);
        }
    }

    /// Element `index` as an atomic, or `None` past the end. Safe: atomic
    /// operations of any number of threads on one element do not race (a
    /// plain access meanwhile is the `unsafe` side's business). Use
    /// [`Scope::Block`](super::Scope::Block) for shared memory.
    ///
    /// ```
    /// use cuda_mem::device::Scope;
    /// let counts = cuda_mem::shared_array![u32; 4];
    /// counts.as_slice().atomic(1).unwrap().fetch_add(1, Scope::Block);
    /// assert_eq!(unsafe { counts.read(1) }, 1);
    /// ```
    #[inline(always)]
    pub fn atomic(&self, index: usize) -> Option<&'a DeviceAtomic<T>>
    where
        T: AtomicValue,
    {
        if index < self.len {
            // SAFETY: in bounds, aligned for `T`, live for `'a` (the block's
            // shared memory, or the host array borrowed for `'a`); plain
            // accesses are `unsafe` and promise not to overlap atomic ones.
            Some(unsafe { DeviceAtomic::from_ptr(self.ptr.add(index)) })
        } else {
            None
        }
    }

    /// The first `mid` elements and the rest, or `None` when `mid > len`.
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u16; 10];
    /// let (head, tail) = a.as_slice().split_at(4).unwrap();
    /// assert_eq!((head.len(), tail.len()), (4, 6));
    /// assert!(a.as_slice().split_at(11).is_none());
    /// ```
    #[inline(always)]
    pub fn split_at(self, mid: usize) -> Option<(Self, Self)> {
        if mid <= self.len {
            let tail = SharedSlice {
                // SAFETY: `mid <= len`: at most one past the end.
                ptr: unsafe { self.ptr.add(mid) },
                #[cfg(target_arch = "nvptx64")]
                shared: self.shared + (mid * size_of::<T>()) as u32,
                len: self.len - mid,
                _memory: PhantomData,
            };
            Some((SharedSlice { len: mid, ..self }, tail))
        } else {
            None
        }
    }

    /// The dynamic shared memory as `T`s (what `dynamic_shared!` expands to).
    ///
    /// # Safety
    /// The module declares `__cuda_mem_dynamic_shared` (the macro does);
    /// see [`dynamic_shared!`](crate::dynamic_shared) for the rest.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn __dynamic() -> Self {
        const {
            assert!(
                size_of::<T>() > 0,
                "dynamic shared memory of a zero-sized type"
            );
            assert!(
                align_of::<T>() <= 16,
                "dynamic shared memory is 16-byte aligned; this type needs more"
            );
        };
        #[cfg(target_arch = "nvptx64")]
        {
            let (base, shared): (u64, u32);
            // SAFETY: takes the address of the extern shared array, which
            // the caller guarantees the module declares.
            unsafe {
                core::arch::asm!(
                    "mov.u32 {s}, __cuda_mem_dynamic_shared;",
                    "cvta.shared.u64 {p}, __cuda_mem_dynamic_shared;",
                    s = out(reg32) shared,
                    p = out(reg64) base,
                    options(pure, nomem, nostack, preserves_flags)
                );
            }
            let bytes = super::special_register!("%dynamic_smem_size") as usize;
            SharedSlice {
                ptr: base as *mut T,
                shared,
                len: bytes / size_of::<T>(),
                _memory: PhantomData,
            }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            SharedSlice {
                ptr: core::ptr::NonNull::dangling().as_ptr(),
                len: 0,
                _memory: PhantomData,
            }
        }
    }
}

/// A static shared array of `N` elements of `T`, one per block: made by
/// [`shared_array!`](crate::shared_array). Its methods are those of
/// [`SharedSlice`] (see the module docs for what is safe).
///
/// ```
/// use cuda_mem::device::{sync_threads, thread_idx};
/// let tile = cuda_mem::shared_array![f32; 64];
/// let t = thread_idx().x as usize;
/// // SAFETY: each thread writes its own slot, and the barrier separates the
/// // writes from the reads of other threads' slots.
/// unsafe { tile.write(t, t as f32) };
/// sync_threads();
/// let left = unsafe { tile.read((t + 63) % 64) };
/// assert_eq!(left, 0.0); // one thread on the host: slot 63 was never written
/// ```
pub struct SharedArray<T, const N: usize> {
    #[cfg(target_arch = "nvptx64")]
    ptr: *mut T,
    #[cfg(target_arch = "nvptx64")]
    shared: u32,
    #[cfg(not(target_arch = "nvptx64"))]
    storage: core::cell::UnsafeCell<[T; N]>,
}

impl<T: DeviceCopy, const N: usize> SharedArray<T, N> {
    /// The array declared at a `shared_array!` place (what the macro
    /// expands to on the device).
    ///
    /// # Safety
    /// The module declares `__cuda_mem_shared_<SITE>` as a `.shared` array of
    /// (at least) `N` elements of `T`, aligned for `T` (the macro does).
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn __at<const SITE: u64>() -> Self {
        let (ptr, shared): (u64, u32);
        // SAFETY: takes the address of the `.shared` array that the macro
        // declared under this name (the builder checks it is declared).
        unsafe {
            core::arch::asm!(
                "mov.u32 {s}, __cuda_mem_shared_{site};",
                "cvta.shared.u64 {p}, __cuda_mem_shared_{site};",
                s = out(reg32) shared,
                p = out(reg64) ptr,
                site = const SITE,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        Self {
            ptr: ptr as *mut T,
            shared,
        }
    }

    /// A zeroed array owned by the handle (the one-thread model).
    #[doc(hidden)]
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn __host() -> Self {
        Self {
            // SAFETY: `T: DeviceCopy`: all-zero bytes are a valid `T`.
            storage: core::cell::UnsafeCell::new(unsafe { core::mem::zeroed() }),
        }
    }

    /// The number of elements, `N`.
    ///
    /// ```
    /// assert_eq!(cuda_mem::shared_array![u8; 7].len(), 7);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        N
    }

    /// Whether `N == 0`.
    ///
    /// ```
    /// assert!(!cuda_mem::shared_array![u8; 7].is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        N == 0
    }

    /// The address of the first element.
    ///
    /// ```
    /// assert!(!cuda_mem::shared_array![u8; 7].as_ptr().is_null());
    /// ```
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        #[cfg(target_arch = "nvptx64")]
        return self.ptr;
        #[cfg(not(target_arch = "nvptx64"))]
        return self.storage.get().cast();
    }

    /// The array as a [`SharedSlice`].
    ///
    /// ```
    /// assert_eq!(cuda_mem::shared_array![u8; 7].as_slice().len(), 7);
    /// ```
    #[inline(always)]
    pub fn as_slice(&self) -> SharedSlice<'_, T> {
        SharedSlice {
            ptr: self.as_ptr(),
            #[cfg(target_arch = "nvptx64")]
            shared: self.shared,
            len: N,
            _memory: PhantomData,
        }
    }

    /// [`SharedSlice::read`].
    ///
    /// # Safety
    /// As for [`SharedSlice::read`].
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u8; 1];
    /// // SAFETY: one thread.
    /// assert_eq!(unsafe { a.read(0) }, 0);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn read(&self, index: usize) -> T {
        // SAFETY: forwarded.
        unsafe { self.as_slice().read(index) }
    }

    /// [`SharedSlice::write`].
    ///
    /// # Safety
    /// As for [`SharedSlice::write`].
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u8; 1];
    /// // SAFETY: one thread.
    /// unsafe { a.write(0, 1) };
    /// ```
    #[inline(always)]
    #[track_caller]
    pub unsafe fn write(&self, index: usize, value: T) {
        // SAFETY: forwarded.
        unsafe { self.as_slice().write(index, value) }
    }

    /// [`SharedSlice::load`]: a relaxed, block-scope load (safe).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u32; 2];
    /// assert_eq!(a.load(1), 0);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, index: usize) -> T {
        self.as_slice().load(index)
    }

    /// [`SharedSlice::store`]: a relaxed, block-scope store (safe).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u32; 2];
    /// a.store(1, 5);
    /// assert_eq!(a.load(1), 5);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, index: usize, value: T) {
        self.as_slice().store(index, value);
    }

    /// [`SharedSlice::add`]: an atomic add in shared memory (safe).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u32; 2];
    /// a.add(0, 3);
    /// assert_eq!(a.load(0), 3);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn add(&self, index: usize, value: T)
    where
        T: SharedAdd,
    {
        self.as_slice().add(index, value);
    }

    /// [`SharedSlice::atomic`].
    ///
    /// ```
    /// use cuda_mem::device::Scope;
    /// let a = cuda_mem::shared_array![u64; 2];
    /// a.atomic(0).unwrap().fetch_add(3, Scope::Block);
    /// assert_eq!(a.atomic(0).unwrap().load(Scope::Block), 3);
    /// ```
    #[inline(always)]
    pub fn atomic(&self, index: usize) -> Option<&DeviceAtomic<T>>
    where
        T: AtomicValue,
    {
        self.as_slice().atomic(index)
    }
}

/// The element types of [`SharedSlice::add`]: `u32`, `i32`, `u64`, `i64`,
/// `f32`, `f64` (sealed). One `red.relaxed.cta.shared.add` each.
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
mod relaxed {
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
    pub(super) unsafe fn load<T>(address: u32) -> T {
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
    pub(super) unsafe fn store<T>(address: u32, value: T) {
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

/// The name of a `shared_array!` place: an FNV-1a hash of its parts.
#[doc(hidden)]
pub const fn __site(parts: &[&str], line: u32, column: u32) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < parts.len() {
        let bytes = parts[i].as_bytes();
        let mut j = 0;
        while j < bytes.len() {
            hash = (hash ^ bytes[j] as u64).wrapping_mul(0x0100_0000_01b3);
            j += 1;
        }
        hash = (hash ^ 0xff).wrapping_mul(0x0100_0000_01b3);
        i += 1;
    }
    hash ^ ((line as u64) << 32 | column as u64)
}

/// The `.align` of a shared array: the element's alignment, at least 4.
#[doc(hidden)]
pub const fn __align<T>() -> usize {
    if align_of::<T>() < 4 {
        4
    } else {
        align_of::<T>()
    }
}

/// Declares a static shared-memory array of `N` elements of `T` (a
/// [`DeviceCopy`] type) and returns its [`SharedArray<T, N>`]: one array per
/// block for each place the macro is written (CUDA's `__shared__ T a[N]`).
///
/// `T` and `N` must not depend on generic parameters, and the macro must be
/// expanded in the kernel crate itself (see the [module docs](crate::device::shared)).
/// On other targets it is a zeroed array on the stack.
///
/// ```
/// use cuda_mem::device::{block_thread_rank, sync_threads};
/// let partial = cuda_mem::shared_array![u32; 256];
/// let me = block_thread_rank() as usize;
/// // SAFETY: thread `me` alone writes slot `me`; the barrier separates the
/// // writes from thread 0's reads.
/// unsafe { partial.write(me, 10) };
/// sync_threads();
/// if me == 0 {
///     let total: u32 = (0..partial.len()).map(|i| unsafe { partial.read(i) }).sum();
///     assert_eq!(total, 10); // one thread on the host
/// }
/// ```
#[macro_export]
#[cfg_attr(
    target_arch = "nvptx64",
    allow_internal_unstable(asm_experimental_arch)
)]
macro_rules! shared_array {
    [$t:ty; $n:expr] => {{
        #[cfg(target_arch = "nvptx64")]
        let array = {
            const SITE: u64 = $crate::device::shared::__site(
                &[module_path!(), file!(), stringify!($t), stringify!($n)],
                line!(),
                column!(),
            );
            ::core::arch::global_asm!(
                ".shared .align {align} .b8 __cuda_mem_shared_{site}[{size}];",
                align = const $crate::device::shared::__align::<$t>(),
                size = const ::core::mem::size_of::<[$t; $n]>(),
                site = const SITE,
            );
            // The type and length by name, so that none of the caller's
            // tokens is inside the `unsafe` block below.
            type Element = $t;
            const LEN: usize = $n;
            // SAFETY: the `global_asm!` above declares the array for this
            // place, with this type and length.
            unsafe { $crate::device::SharedArray::<Element, LEN>::__at::<SITE>() }
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let array = $crate::device::SharedArray::<$t, { $n }>::__host();
        array
    }};
}

/// The block's dynamic shared memory (the bytes given at launch) as a
/// [`SharedSlice<T>`] of `dynamic bytes / size_of::<T>()` elements: CUDA's
/// `extern __shared__ T a[]`, with its length checked against
/// `%dynamic_smem_size`. `T` is a [`DeviceCopy`] type of alignment at most
/// 16. On other targets the slice is empty (the one-thread model launches
/// no dynamic shared memory).
///
/// # Safety
/// Expand it in an `unsafe` block. Every view of the dynamic memory is the
/// same bytes: views of different types must not be used concurrently on
/// overlapping elements (split one view with
/// [`split_at`](SharedSlice::split_at) instead). Like
/// [`shared_array!`](crate::shared_array), it must be expanded in the kernel
/// crate itself.
///
/// ```
/// // SAFETY: the kernel's only view of its dynamic shared memory.
/// let scratch = unsafe { cuda_mem::dynamic_shared!(f32) };
/// assert_eq!(scratch.len(), 0); // the host model has none
/// ```
#[macro_export]
#[cfg_attr(
    target_arch = "nvptx64",
    allow_internal_unstable(asm_experimental_arch)
)]
macro_rules! dynamic_shared {
    ($t:ty) => {{
        #[cfg(target_arch = "nvptx64")]
        ::core::arch::global_asm!(".extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];");
        $crate::device::SharedSlice::<$t>::__dynamic()
    }};
}
