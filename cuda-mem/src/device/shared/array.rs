//! [`SharedArray`]: a static shared array, and the macros that declare one
//! ([`shared_array!`](crate::shared_array)) or view the dynamic shared
//! memory ([`dynamic_shared!`](crate::dynamic_shared)).

use core::marker::PhantomData;

use crate::copy::device_copy::DeviceCopy;
use crate::device::atomic::{AtomicValue, DeviceAtomic};
use crate::device::shared::access::SharedAdd;
use crate::device::shared::slice::SharedSlice;
use crate::device::shared::window::SharedWindow;

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
    /// The module declares `__cuda_mem_shared_<SITE>_<LANE>` as a `.shared`
    /// array of (at least) `N` elements of `T`, aligned for `T` (the macro
    /// does).
    #[doc(hidden)]
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub unsafe fn __at<const SITE: u64, const LANE: u64>() -> Self {
        let (ptr, shared): (u64, u32);
        // SAFETY: takes the address of the `.shared` array that the macro
        // declared under this name (the builder checks it is declared).
        unsafe {
            core::arch::asm!(
                "mov.u32 {s}, __cuda_mem_shared_{site}_{lane};",
                "cvta.shared.u64 {p}, __cuda_mem_shared_{site}_{lane};",
                s = out(reg32) shared,
                p = out(reg64) ptr,
                site = const SITE,
                lane = const LANE,
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

    /// [`SharedSlice::window`]: the [`SharedWindow`] address of the first
    /// element.
    ///
    /// ```
    /// use cuda_mem::device::shared::SharedWindow;
    /// let a = cuda_mem::shared_array![u16; 4];
    /// assert_eq!(a.window(), SharedWindow::from_ptr(a.as_ptr()));
    /// ```
    #[inline(always)]
    pub fn window(&self) -> SharedWindow {
        self.as_slice().window()
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

    /// [`SharedSlice::fetch_add`]: an atomic add in shared memory that
    /// returns the value before (safe).
    ///
    /// ```
    /// let a = cuda_mem::shared_array![u32; 2];
    /// assert_eq!(a.fetch_add(1, 3), 0);
    /// assert_eq!(a.fetch_add(1, 3), 3);
    /// ```
    #[inline(always)]
    #[track_caller]
    pub fn fetch_add(&self, index: usize, value: T) -> T
    where
        T: SharedAdd,
    {
        self.as_slice().fetch_add(index, value)
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

/// The name of a `shared_array!` place: 128 bits, two hashes of different
/// kinds (FNV-1a, and a multiply-xorshift) over its parts, its line and
/// column (the outermost macro call's, inside a macro), and `place`, a
/// number no other `shared_array!` expansion of the crate's compilation
/// gets (`__shared_place!`). Two places with one name would be one array
/// (the builder keeps one of two identical declarations), so the name must
/// not be made to collide: 64 bits could be, by a search over the length's
/// tokens (about 2^32 tries); two unrelated 64-bit lanes at once cannot.
///
/// ```
/// use cuda_mem::device::shared::__site;
/// let a = __site(&["m", "f.rs", "u32", "8"], 3, 5, 0);
/// assert_ne!(a, __site(&["m", "f.rs", "u32", "8"], 3, 5, 1));
/// assert_ne!(a, __site(&["m", "f.rs", "u32", "8"], 5, 3, 0));
/// assert_ne!(a, __site(&["m", "f.rs", "u32", "80"], 3, 5, 0));
/// ```
#[doc(hidden)]
pub const fn __site(parts: &[&str], line: u32, column: u32, place: u64) -> [u64; 2] {
    let mut fnv: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mx: u64 = 0x243f_6a88_85a3_08d3;
    let tail = ((line as u64) << 32 | column as u64).to_le_bytes();
    let place = place.to_le_bytes();
    let mut i = 0;
    while i < parts.len() + 2 {
        let bytes: &[u8] = if i < parts.len() {
            parts[i].as_bytes()
        } else if i == parts.len() {
            &tail
        } else {
            &place
        };
        let mut j = 0;
        while j <= bytes.len() {
            // Each part ends with a byte no UTF-8 text has.
            let byte = if j < bytes.len() {
                bytes[j] as u64
            } else {
                0x1ff
            };
            fnv = (fnv ^ byte).wrapping_mul(0x0100_0000_01b3);
            mx = (mx ^ byte).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            mx ^= mx >> 29;
            j += 1;
        }
        i += 1;
    }
    mx = (mx ^ (mx >> 32)).wrapping_mul(0xd6e8_feb8_6659_fd93);
    [fnv, mx ^ (mx >> 32)]
}

/// The `.align` of a shared array: the element's alignment, at least 16,
/// so that 16-byte vector accesses (`ld.shared.v4` / `st.shared.v4`, one
/// `LDS.128` / `STS.128`) of an array of any element type are aligned at its
/// start. With the element's own alignment (4 for `u32`), an array's place
/// in the block's shared memory depended on the arrays declared before it.
///
/// ```
/// assert_eq!(cuda_mem::device::shared::__align::<u8>(), 16);
/// assert_eq!(cuda_mem::device::shared::__align::<[u64; 4]>(), 16);
/// ```
#[doc(hidden)]
pub const fn __align<T>() -> usize {
    if align_of::<T>() < 16 {
        16
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
            // The caller's type and length, each expanded once, here: a
            // token pasted twice may expand differently each time (a proc
            // macro with a counter), so the declaration and the array below
            // both take them by these names. Every macro and item is reached
            // through `$crate`, which the caller cannot shadow or redirect.
            type Element = $t;
            const LEN: usize = $n;
            const SITE: [u64; 2] = $crate::device::shared::__site(
                &[
                    $crate::__private::core::module_path!(),
                    $crate::__private::core::file!(),
                    $crate::__private::core::stringify!($t),
                    $crate::__private::core::stringify!($n),
                ],
                $crate::__private::core::line!(),
                $crate::__private::core::column!(),
                $crate::__shared_place!(),
            );
            $crate::__private::core::arch::global_asm!(
                ".shared .align {align} .b8 __cuda_mem_shared_{site}_{lane}[{size}];",
                align = const $crate::device::shared::__align::<Element>(),
                size = const $crate::__private::core::mem::size_of::<[Element; LEN]>(),
                site = const SITE[0],
                lane = const SITE[1],
            );
            // SAFETY: the `global_asm!` above declares the array for this
            // place, with this type and length.
            unsafe { $crate::device::SharedArray::<Element, LEN>::__at::<{ SITE[0] }, { SITE[1] }>() }
        };
        // One expansion of each on the host too (and generic types work in
        // the host model, where no declaration needs a constant).
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
        $crate::__private::core::arch::global_asm!(
            ".extern .shared .align 16 .b8 __cuda_mem_dynamic_shared[];"
        );
        $crate::device::SharedSlice::<$t>::__dynamic()
    }};
}
