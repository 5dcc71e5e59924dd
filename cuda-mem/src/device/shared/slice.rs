//! [`SharedSlice`]: a block's shared memory as a slice, whose safe accesses
//! are relaxed block-scope loads and stores and atomic adds.

use core::marker::PhantomData;

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::{AtomicValue, DeviceAtomic};
#[cfg(target_arch = "nvptx64")]
use crate::device::shared::access::relaxed;
use crate::device::shared::access::SharedAdd;
use crate::device::shared::window::SharedWindow;

/// A block's shared memory viewed as `len` elements of `T`: a slice of a
/// [`SharedArray`](crate::device::SharedArray) or the dynamic shared memory. `Copy`: every access is
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
    pub(super) ptr: *mut T,
    /// Its address in the shared window (what `ld.shared` takes).
    #[cfg(target_arch = "nvptx64")]
    pub(super) shared: u32,
    pub(super) len: usize,
    pub(super) _memory: PhantomData<&'a core::cell::UnsafeCell<[T]>>,
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

    /// The [`SharedWindow`] address of the first element: what
    /// [`ld_shared`](crate::device::shared::ld_shared) and the other
    /// unchecked accesses of the [shared module](crate::device::shared) take
    /// (on the device the address the slice already holds: no conversion).
    ///
    /// ```
    /// use cuda_mem::device::shared::ld_shared;
    /// let a = cuda_mem::shared_array![u32; 8];
    /// let (_, tail) = a.as_slice().split_at(2).unwrap();
    /// tail.store(1, 6);
    /// assert_eq!(tail.window(), a.window() + 8);
    /// // SAFETY: element 3 of `a`; one thread.
    /// assert_eq!(unsafe { ld_shared::<u32>(tail.window() + 4) }, 6);
    /// ```
    #[inline(always)]
    pub fn window(&self) -> SharedWindow {
        #[cfg(target_arch = "nvptx64")]
        return SharedWindow::at(self.shared);
        #[cfg(not(target_arch = "nvptx64"))]
        return SharedWindow::at(self.ptr.cast());
    }

    /// Reads element `index`. Panics (a trap on the device) past the end.
    ///
    /// # Safety
    /// No other thread writes the element concurrently: a write by another
    /// thread and this read are separated by a barrier
    /// ([`sync_threads`](crate::device::sync_threads)) or ordered by a fence and an
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
    /// stored, put a [`sync_threads`](crate::device::sync_threads) between their
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
            let address = self.address(index);
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

    /// The shared-window address of element `index`, checked to be in
    /// bounds by the caller (so `index * size_of::<T>()` is inside the
    /// block's shared memory, below 4 GiB).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn address(&self, index: usize) -> u32 {
        self.shared + (index * size_of::<T>()) as u32
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
            let address = self.address(index);
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
            let address = self.address(index);
            // SAFETY: element `index` of this shared array, aligned for `T`.
            unsafe { T::__shared_add(address, value) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        if let Some(element) = self.atomic(index) {
            element.fetch_add(value, crate::device::Scope::Block);
        }
    }

    /// Adds `value` to element `index` atomically (relaxed, block scope)
    /// and returns the value before: one `atom.shared.add`. The adds of
    /// one warp to one element take effect in the warp's program order,
    /// which is how a warp hands out places (`fetch_add` of a count by
    /// one lane per group). Panics past the end.
    ///
    /// ```
    /// let next = cuda_mem::shared_array![u32; 4];
    /// let s = next.as_slice();
    /// assert_eq!(s.fetch_add(2, 5), 0);
    /// assert_eq!(s.fetch_add(2, 1), 5);
    /// assert_eq!(s.load(2), 6);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn fetch_add(&self, index: usize, value: T) -> T
    where
        T: SharedAdd,
    {
        assert!(index < self.len, "shared memory add past the end");
        #[cfg(target_arch = "nvptx64")]
        {
            let address = self.address(index);
            // SAFETY: element `index` of this shared array, aligned for `T`.
            unsafe { T::__shared_fetch_add(address, value) }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        match self.atomic(index) {
            Some(element) => element.fetch_add(value, crate::device::Scope::Block),
            None => unreachable!("checked above"),
        }
    }

    /// Element `index` as an atomic, or `None` past the end. Safe: atomic
    /// operations of any number of threads on one element do not race (a
    /// plain access meanwhile is the `unsafe` side's business). Use
    /// [`Scope::Block`](crate::device::Scope::Block) for shared memory.
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
            let bytes = crate::device::special_register!("%dynamic_smem_size") as usize;
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
