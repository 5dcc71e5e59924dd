//! Pitched 2D arrays as kernel parameters, matching the host's
//! `PitchedBuffer`: `height` rows of `width` elements, each row starting
//! `pitch` **bytes** after the previous one (the bytes between are padding
//! and never touched).
//!
//! The ABI of all three types is `#[repr(C)] { ptr: *T, pitch: usize,
//! width: usize, height: usize }`: 32 bytes, 8-byte aligned, `pitch` in
//! bytes, `width` in elements (CUDA C++:
//! `struct { T* ptr; size_t pitch, width, height; }`). The launch
//! guarantees that `ptr` is aligned for `T`, that `pitch` is a multiple of
//! `align_of::<T>()` and at least `width * size_of::<T>()` when
//! `height > 1` (rows do not overlap), that `pitch`, `width` and `height`
//! are at most `u32::MAX` (so cell addresses are 32 by 32 into 64-bit
//! multiply-adds, `mul.wide.u32`, as nvcc's `int` index math), and that the
//! memory is the kernel's for its run (read-only for [`PitchedSlice`],
//! exclusive for the others).
//!
//! - [`PitchedSlice`]: read-only; any thread reads any element.
//! - [`PitchedSliceMut`]: element-disjoint writes. Element `(x, y)` belongs
//!   to the thread with `global_idx().x == x % grid_threads().x` and
//!   [`global_row`]`().0 == y % rows of threads`: a 2D
//!   grid-stride decomposition in which consecutive threads write
//!   consecutive elements of a row (coalesced).
//! - [`PitchedRowsMut`]: row-disjoint writes. Row `y` belongs to the thread
//!   whose [`global_linear_idx`] is
//!   `y % total_threads()`, which gets it as a `&mut [T]`: for row-sequential
//!   work (scans, recursive filters). One thread per row does not coalesce,
//!   so prefer [`PitchedSliceMut`] for element-wise work.
//!
//! As for [`DeviceSliceMut`](super::DeviceSliceMut), the safe methods of
//! the writable forms only reach the calling thread's elements (or rows),
//! and any other access is `unsafe`.

use core::marker::PhantomData;

use super::grid_stride::{grid_stride_2d, GridStride, GridStride2d};
use super::thread::{
    block_dim, block_idx, global_idx, global_linear_idx, global_row, row_parts, thread_idx,
    total_threads,
};

/// A read-only pitched 2D kernel parameter (see the [module docs](self)).
///
/// ```
/// use cuda_mem::device::PitchedSlice;
/// // Two rows of 3 u16, rows 8 bytes apart (2 bytes of padding each).
/// let mem: [u16; 8] = [1, 2, 3, 0, 4, 5, 6, 0];
/// // SAFETY: the layout fits `mem`, which nobody writes meanwhile.
/// let img = unsafe { PitchedSlice::from_raw_parts(mem.as_ptr(), 8, 3, 2) };
/// assert_eq!(img.row(1), Some(&[4, 5, 6][..]));
/// assert_eq!(img.get(2, 0), Some(&3));
/// assert_eq!(img.get(3, 0), None);
/// ```
#[repr(C)]
pub struct PitchedSlice<'a, T> {
    ptr: *const T,
    pitch: usize,
    width: usize,
    height: usize,
    _borrow: PhantomData<&'a [T]>,
}

/// A writable pitched 2D kernel parameter whose threads each own a 2D
/// grid-stride share of the elements (see the [module docs](self)).
///
/// ```
/// use cuda_mem::device::PitchedSliceMut;
/// let mut mem = [0u32; 8];
/// // SAFETY: two rows of 3, 16 bytes apart, inside `mem`, used only here.
/// let mut img = unsafe { PitchedSliceMut::from_raw_parts(mem.as_mut_ptr(), 16, 3, 2) };
/// for (x, y, v) in img.grid_stride_mut() {
///     *v = (10 * y + x) as u32;
/// }
/// # drop(img);
/// assert_eq!(mem, [0, 1, 2, 0, 10, 11, 12, 0]); // padding untouched
/// ```
#[repr(C)]
pub struct PitchedSliceMut<'a, T> {
    ptr: *mut T,
    pitch: usize,
    width: usize,
    height: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

/// A writable pitched 2D kernel parameter whose threads each own whole rows
/// (see the [module docs](self)).
///
/// ```
/// use cuda_mem::device::PitchedRowsMut;
/// let mut mem = [1u32; 8];
/// // SAFETY: two rows of 3, 16 bytes apart, inside `mem`, used only here.
/// let mut img = unsafe { PitchedRowsMut::from_raw_parts(mem.as_mut_ptr(), 16, 3, 2) };
/// for (_, row) in img.rows_mut() {
///     // A running sum along the row: row-sequential work.
///     for i in 1..row.len() {
///         row[i] += row[i - 1];
///     }
/// }
/// # drop(img);
/// assert_eq!(mem, [1, 2, 3, 1, 1, 2, 3, 1]);
/// ```
#[repr(C)]
pub struct PitchedRowsMut<'a, T> {
    ptr: *mut T,
    pitch: usize,
    width: usize,
    height: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

/// The accessors all three forms share.
macro_rules! common {
    ($ty:ident, $ptr:ty) => {
        impl<'a, T> $ty<'a, T> {
            /// A view of `height` rows of `width` elements, row `y` at byte
            /// `y * pitch` from `ptr`.
            ///
            /// # Safety
            /// `ptr` is aligned for `T`; `pitch` is a multiple of
            /// `align_of::<T>()` and, when `height > 1`, at least
            /// `width * size_of::<T>()`; `pitch`, `width` and `height` are
            /// at most `u32::MAX`; each of the rows is `width`
            /// initialised elements valid for the access this type gives
            /// (reads for `PitchedSlice`, reads and writes otherwise), which
            /// nothing else (but the threads of the kernel receiving it)
            /// writes (for the writable forms: touches) for `'a`.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" // SAFETY: one row of 4 bytes in `m`.\n let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 4, 4, 1) };")]
            /// assert_eq!(v.width(), 4);
            /// ```
            #[inline(always)]
            pub const unsafe fn from_raw_parts(
                ptr: $ptr,
                pitch: usize,
                width: usize,
                height: usize,
            ) -> Self {
                Self {
                    ptr,
                    pitch,
                    width,
                    height,
                    _borrow: PhantomData,
                }
            }

            /// Elements per row.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// assert_eq!(v.width(), 2);
            /// ```
            #[inline(always)]
            pub const fn width(&self) -> usize {
                self.width
            }

            /// The number of rows.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// assert_eq!(v.height(), 2);
            /// ```
            #[inline(always)]
            pub const fn height(&self) -> usize {
                self.height
            }

            /// Bytes from the start of a row to the start of the next.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// assert_eq!(v.pitch(), 2);
            /// ```
            #[inline(always)]
            pub const fn pitch(&self) -> usize {
                self.pitch
            }

            /// The address of row `y`.
            ///
            /// # Safety
            /// `y < height`. (Then the row is inside the array's memory, so
            /// the offset is an in-bounds one, which tells the compiler the
            /// row's address is not null.)
            #[inline(always)]
            unsafe fn row_ptr(&self, y: usize) -> *mut T {
                // SAFETY: row `y < height` of the array (the caller).
                unsafe { row_ptr(self.ptr as *mut T, self.pitch, y) }
            }
        }
    };
}

common!(PitchedSlice, *const T);
common!(PitchedSliceMut, *mut T);
common!(PitchedRowsMut, *mut T);

/// The address of row `y` of a pitched array at `ptr`: `y * pitch` bytes
/// on, a 32 by 32 into 64-bit multiply (`mul.wide.u32`, one instruction
/// where 64-bit operands take three), exact because every pitched type
/// keeps `pitch` and `height` at most `u32::MAX` (its constructor's
/// contract, which the launch checks).
///
/// # Safety
/// `y` is a row of the array (`y < height`): the offset stays inside its
/// memory, and `y` and `pitch` fit in 32 bits.
#[inline(always)]
pub(crate) unsafe fn row_ptr<T>(ptr: *mut T, pitch: usize, y: usize) -> *mut T {
    // The truncations are exact (see above); the zero extensions tell the
    // compiler that the product is of two 32-bit numbers.
    let offset = y as u32 as usize * pitch as u32 as usize;
    // SAFETY: row `y` starts `y * pitch` bytes into the array's memory.
    unsafe { (ptr as *mut u8).add(offset).cast::<T>() }
}

/// `a * b`, 32 by 32 bits into 64: one `mul.wide.u32` on `nvptx64`.
///
/// Written as inline PTX there, because the compiler, once it knows from a
/// bounds test that a 64-bit coordinate fits in 32 bits, drops the zero
/// extension that would have told the code generator so, and then emits a
/// full 64 by 64-bit multiply (three instructions for one).
#[inline(always)]
fn wide_mul(a: u32, b: u32) -> usize {
    #[cfg(target_arch = "nvptx64")]
    {
        let product: u64;
        // SAFETY: an arithmetic instruction on registers: no memory, no
        // side effect.
        unsafe {
            core::arch::asm!(
                "mul.wide.u32 {p}, {a}, {b};",
                p = out(reg64) product,
                a = in(reg32) a,
                b = in(reg32) b,
                options(pure, nomem, nostack, preserves_flags)
            );
        }
        product as usize
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a as usize * b as usize
    }
}

/// The address of cell `(x, y)` of a pitched array at `ptr`, in 32 by 32
/// into 64-bit multiply-adds like [`row_ptr`].
///
/// # Safety
/// `(x, y)` is a cell of the array (`x < width`, `y < height`), so `x`
/// fits in 32 bits too (`width <= u32::MAX`).
#[inline(always)]
pub(crate) unsafe fn cell_ptr<T>(ptr: *mut T, pitch: usize, x: usize, y: usize) -> *mut T {
    // SAFETY: a row of the array, and a cell of that row (the caller).
    let cell = unsafe { row_ptr(ptr, pitch, y).add(x as u32 as usize) };
    // SAFETY: the cell is an element of the array, valid memory, so its
    // address is not null (which lets the compiler drop the null tests of
    // the `Option<&T>`s made from it).
    unsafe { core::hint::assert_unchecked(!cell.is_null()) };
    cell
}

/// The calling thread's cell `(global_idx().x, global_row().0)` of a
/// `width x height` array, or `None` outside it. The coordinates are
/// tested in 64 bits and handed on as zero-extended 32-bit numbers (exact:
/// `width` and `height` are at most `u32::MAX`), so the arithmetic that
/// follows is 32-bit, as nvcc's `int` index math.
#[inline(always)]
fn thread_cell(width: usize, height: usize) -> Option<(usize, usize)> {
    let (x, (y, _)) = (global_idx().x, global_row());
    if x < width && y < height {
        let (t, b, n) = (thread_idx(), block_idx(), block_dim());
        let [gy, rows, gz, _] = row_parts();
        // The low words, computed apart in 32 bits: truncating `x` and `y`
        // instead lets the compiler, which knows here that they fit, go on
        // in 64 bits.
        let x32 = b.x.wrapping_mul(n.x).wrapping_add(t.x);
        let y32 = gy.wrapping_add(rows.wrapping_mul(gz));
        Some((x32 as usize, y32 as usize))
    } else {
        None
    }
}

/// An interior cell of a [`PitchedSlice`] and its four neighbours, as
/// [`PitchedSlice::cross`] read them: `left` and `right` in its row, `up`
/// in the row before (`y - 1`) and `down` in the row after (`y + 1`).
///
/// ```
/// let m = [0u8, 1, 0, 2, 5, 3, 0, 4, 0];
/// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 3, 3, 3) };
/// let c: cuda_mem::device::Cross<u8> = v.cross(1, 1).unwrap();
/// assert_eq!(c.left + c.right + c.up + c.down, 10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cross<T> {
    /// The cell `(x, y)`.
    pub center: T,
    /// `(x - 1, y)`.
    pub left: T,
    /// `(x + 1, y)`.
    pub right: T,
    /// `(x, y - 1)`.
    pub up: T,
    /// `(x, y + 1)`.
    pub down: T,
}

impl<T> Clone for PitchedSlice<'_, T> {
    #[inline(always)]
    fn clone(&self) -> Self {
        *self
    }
}

/// Read-only for everyone: every thread may copy it.
impl<T> Copy for PitchedSlice<'_, T> {}

impl<'a, T> PitchedSlice<'a, T> {
    /// Row `y`, or `None` past the last row.
    ///
    /// ```
    /// let m = [1u8, 2, 3, 4];
    /// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 2, 2, 2) };
    /// assert_eq!(v.row(1), Some(&[3, 4][..]));
    /// ```
    #[inline(always)]
    pub fn row(&self, y: usize) -> Option<&'a [T]> {
        if y < self.height {
            // SAFETY: `y < height`: row `y` is `width` readable elements
            // that nobody writes for `'a` (the constructor's contract).
            Some(unsafe { core::slice::from_raw_parts(self.row_ptr(y), self.width) })
        } else {
            None
        }
    }

    /// Element `x` of row `y`, or `None` outside the array.
    ///
    /// ```
    /// let m = [1u8, 2, 3, 4];
    /// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 2, 2, 2) };
    /// assert_eq!(v.get(0, 1), Some(&3));
    /// ```
    #[inline(always)]
    pub fn get(&self, x: usize, y: usize) -> Option<&'a T> {
        if x < self.width && y < self.height {
            // SAFETY: a cell of the array, which nobody writes for `'a`
            // (the constructor's contract).
            Some(unsafe { &*cell_ptr(self.ptr as *mut T, self.pitch, x, y) })
        } else {
            None
        }
    }

    /// Cell `(x, y)` and its four neighbours, read, when all five are
    /// inside the array (an interior cell: `1 <= x < width - 1`, `1 <= y <
    /// height - 1`), else `None`: a 5-point stencil's reads behind one
    /// bounds test per axis, rather than one per neighbour.
    ///
    /// ```
    /// // 3 x 3, rows 3 elements apart: only (1, 1) is interior.
    /// let m = [0u8, 1, 0, 2, 5, 3, 0, 4, 0];
    /// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 3, 3, 3) };
    /// let c = v.cross(1, 1).unwrap();
    /// assert_eq!((c.center, c.left, c.right, c.up, c.down), (5, 2, 3, 1, 4));
    /// assert!(v.cross(0, 1).is_none() && v.cross(1, 2).is_none());
    /// ```
    #[inline(always)]
    pub fn cross(&self, x: usize, y: usize) -> Option<Cross<T>>
    where
        T: Copy,
    {
        // `x - 1 < width - 2` (wrapping at `x = 0`, saturating for a width
        // below 2, which has no interior) is `1 <= x < width - 1`.
        // In 32 bits, as `n <= u32::MAX` (the constructor's contract); the
        // first test folds away for coordinates a thread's cell gave.
        let inside = |i: usize, n: usize| {
            i <= u32::MAX as usize && (i as u32).wrapping_sub(1) < (n as u32).saturating_sub(2)
        };
        if inside(x, self.width) & inside(y, self.height) {
            // SAFETY: rows `y - 1 ..= y + 1` are rows of the array, and
            // cells `x - 1 ..= x + 1` cells of each (checked above), which
            // nobody writes for `'a` (the constructor's contract).
            unsafe {
                // The row's offset as one `mul.wide.u32` (see `wide_mul`:
                // the result is read by value, so the opaque multiply costs
                // no null test of an `Option<&T>`).
                let offset = wide_mul(y as u32, self.pitch as u32);
                let here = self.ptr.byte_add(offset).add(x as u32 as usize);
                Some(Cross {
                    center: *here,
                    left: *here.sub(1),
                    right: *here.add(1),
                    up: *here.byte_sub(self.pitch),
                    down: *here.byte_add(self.pitch),
                })
            }
        } else {
            None
        }
    }

    /// The rows, top to bottom.
    ///
    /// ```
    /// let m = [1u8, 2, 3, 4];
    /// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 2, 2, 2) };
    /// assert_eq!(v.rows().map(|r| r[0]).collect::<Vec<_>>(), [1, 3]);
    /// ```
    #[inline(always)]
    pub fn rows(&self) -> impl Iterator<Item = &'a [T]> + 'a
    where
        T: 'a,
    {
        let this = *self;
        (0..this.height).filter_map(move |y| this.row(y))
    }

    /// The address of the first element.
    ///
    /// ```
    /// let m = [1u8, 2, 3, 4];
    /// let v = unsafe { cuda_mem::device::PitchedSlice::from_raw_parts(m.as_ptr(), 2, 2, 2) };
    /// assert_eq!(v.as_ptr(), m.as_ptr());
    /// ```
    #[inline(always)]
    pub const fn as_ptr(&self) -> *const T {
        self.ptr
    }
}

/// The unsafe accessors both writable forms share.
macro_rules! writable {
    ($ty:ident) => {
        impl<'a, T> $ty<'a, T> {
            /// The address of the first element.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// assert_eq!(v.as_mut_ptr(), m.as_mut_ptr());
            /// ```
            #[inline(always)]
            pub const fn as_mut_ptr(&self) -> *mut T {
                self.ptr
            }

            /// The same parameter, borrowed (to pass to a function); same
            /// ownership rule.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let mut v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// assert_eq!(v.reborrow().height(), 2);
            /// ```
            #[inline(always)]
            pub fn reborrow(&mut self) -> $ty<'_, T> {
                $ty {
                    ptr: self.ptr,
                    pitch: self.pitch,
                    width: self.width,
                    height: self.height,
                    _borrow: PhantomData,
                }
            }

            /// Row `y` (which may belong to other threads), or `None` past
            /// the last row.
            ///
            /// # Safety
            /// While the slice lives, no other thread accesses the row's
            /// elements, and this thread reaches them through nothing else.
            ///
            /// ```
            /// let mut m = [0u8; 4];
            #[doc = concat!(" let mut v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// // SAFETY: one thread on the host.
            /// unsafe { v.row_mut(1) }.unwrap()[0] = 7;
            /// # drop(v);
            /// assert_eq!(m, [0, 0, 7, 0]);
            /// ```
            #[inline(always)]
            pub unsafe fn row_mut(&mut self, y: usize) -> Option<&mut [T]> {
                if y < self.height {
                    // SAFETY: `y < height`, a row of `width` elements; no
                    // other access meanwhile (the caller).
                    Some(unsafe { core::slice::from_raw_parts_mut(self.row_ptr(y), self.width) })
                } else {
                    None
                }
            }

            /// Reads element `(x, y)`, which may belong to another thread.
            /// Panics (a trap on the device) outside the array.
            ///
            /// # Safety
            /// No other thread writes the element concurrently (a write of
            /// another thread is separated from this read by a barrier or a
            /// fence), and no `&mut` to it is alive in this thread.
            ///
            /// ```
            /// let mut m = [1u8, 2, 3, 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// // SAFETY: one thread on the host.
            /// assert_eq!(unsafe { v.read(1, 1) }, 4);
            /// ```
            #[inline(always)]
            #[track_caller]
            pub unsafe fn read(&self, x: usize, y: usize) -> T
            where
                T: Copy,
            {
                assert!(x < self.width && y < self.height, "pitched read outside the array");
                // SAFETY: inside the array; no concurrent write (the caller).
                unsafe { cell_ptr(self.ptr as *mut T, self.pitch, x, y).read() }
            }

            /// Writes element `(x, y)`, which may belong to another thread
            /// (without dropping the old value). Panics (a trap on the
            /// device) outside the array.
            ///
            /// # Safety
            /// No other thread reads or writes the element concurrently, and
            /// no reference to it is alive in this thread.
            ///
            /// ```
            /// let mut m = [1u8, 2, 3, 4];
            #[doc = concat!(" let v = unsafe { cuda_mem::device::", stringify!($ty), "::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };")]
            /// // SAFETY: one thread on the host.
            /// unsafe { v.write(0, 1, 9) };
            /// # drop(v);
            /// assert_eq!(m, [1, 2, 9, 4]);
            /// ```
            #[inline(always)]
            #[track_caller]
            pub unsafe fn write(&self, x: usize, y: usize, value: T) {
                assert!(x < self.width && y < self.height, "pitched write outside the array");
                // SAFETY: inside the array; no concurrent access (the caller).
                unsafe { cell_ptr(self.ptr as *mut T, self.pitch, x, y).write(value) }
            }
        }
    };
}

writable!(PitchedSliceMut);
writable!(PitchedRowsMut);

impl<T> PitchedSliceMut<'_, T> {
    /// The calling thread's own element `(global_idx().x, global_row().0)`,
    /// or `None` outside the array: the one-element-per-thread 2D kernel.
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// let mut v = unsafe { cuda_mem::device::PitchedSliceMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// *v.this_thread_mut().unwrap() = 5; // thread (0, 0) on the host
    /// # drop(v);
    /// assert_eq!(m, [5, 0, 0, 0]);
    /// ```
    #[inline(always)]
    pub fn this_thread_mut(&mut self) -> Option<&mut T> {
        let (x, y) = thread_cell(self.width, self.height)?;
        // SAFETY: inside the array; `(x, y)` is this thread's element
        // (module docs) and the `&mut self` borrow keeps this thread from
        // reaching it twice.
        Some(unsafe { &mut *cell_ptr(self.ptr, self.pitch, x, y) })
    }

    /// The calling thread's own element with its coordinates, `(x, y, &mut
    /// element)`, the element of [`this_thread_mut`](Self::this_thread_mut):
    /// for kernels that read neighbours (a stencil).
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// let mut v = unsafe { cuda_mem::device::PitchedSliceMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// let (x, y, cell) = v.this_thread_cell().unwrap();
    /// *cell = 1;
    /// assert_eq!((x, y), (0, 0)); // thread (0, 0) on the host
    /// ```
    #[inline(always)]
    pub fn this_thread_cell(&mut self) -> Option<(usize, usize, &mut T)> {
        if let Some((x, y)) = thread_cell(self.width, self.height) {
            // SAFETY: as in `this_thread_mut`: inside the array, this
            // thread's element, borrowed through `&mut self`.
            Some((x, y, unsafe { &mut *cell_ptr(self.ptr, self.pitch, x, y) }))
        } else {
            None
        }
    }

    /// The calling thread's elements `(x, y, &mut element)`, row by row: a 2D
    /// grid-stride loop over the whole array with any launch shape.
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// let mut v = unsafe { cuda_mem::device::PitchedSliceMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// assert_eq!(v.grid_stride_mut().count(), 4);
    /// ```
    #[inline(always)]
    pub fn grid_stride_mut(&mut self) -> PitchedGridStrideMut<'_, T> {
        PitchedGridStrideMut {
            base: self.ptr,
            pitch: self.pitch,
            cells: grid_stride_2d(self.width, self.height),
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`PitchedSliceMut::grid_stride_mut`].
///
/// ```
/// let mut m = [0u8; 2];
/// let mut v = unsafe { cuda_mem::device::PitchedSliceMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 1) };
/// let it: cuda_mem::device::PitchedGridStrideMut<'_, u8> = v.grid_stride_mut();
/// assert_eq!(it.map(|(x, y, _)| (x, y)).collect::<Vec<_>>(), [(0, 0), (1, 0)]);
/// ```
pub struct PitchedGridStrideMut<'b, T> {
    base: *mut T,
    pitch: usize,
    cells: GridStride2d,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T> Iterator for PitchedGridStrideMut<'b, T> {
    type Item = (usize, usize, &'b mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let (x, y) = self.cells.next()?;
        // SAFETY: `x < width`, `y < height` (the cells stay inside), so the
        // offsets are in bounds; `(x, y)` is this thread's element (the
        // cells are its 2D grid-stride share), each cell comes once, and the
        // array stays borrowed for `'b`.
        Some((x, y, unsafe { &mut *cell_ptr(self.base, self.pitch, x, y) }))
    }
}

impl<T> PitchedRowsMut<'_, T> {
    /// The calling thread's own row, number `global_linear_idx()`, or `None`
    /// past the last row.
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// let mut v = unsafe { cuda_mem::device::PitchedRowsMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// v.this_thread_row_mut().unwrap().fill(3); // row 0 on the host
    /// # drop(v);
    /// assert_eq!(m, [3, 3, 0, 0]);
    /// ```
    #[inline(always)]
    pub fn this_thread_row_mut(&mut self) -> Option<&mut [T]> {
        let y = global_linear_idx();
        if y < self.height {
            // SAFETY: `y < height`; row `y` belongs to this thread (module
            // docs) and `&mut self` keeps this thread from reaching it twice.
            Some(unsafe { core::slice::from_raw_parts_mut(self.row_ptr(y), self.width) })
        } else {
            None
        }
    }

    /// The calling thread's rows `(y, &mut row)`:
    /// `global_linear_idx() + k * total_threads()`.
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// let mut v = unsafe { cuda_mem::device::PitchedRowsMut::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// assert_eq!(v.rows_mut().count(), 2);
    /// ```
    #[inline(always)]
    pub fn rows_mut(&mut self) -> PitchedRowsIterMut<'_, T> {
        PitchedRowsIterMut {
            base: self.ptr,
            pitch: self.pitch,
            width: self.width,
            rows: GridStride::new(global_linear_idx(), self.height, total_threads()),
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`PitchedRowsMut::rows_mut`].
///
/// ```
/// let mut m = [0u8; 2];
/// let mut v = unsafe { cuda_mem::device::PitchedRowsMut::from_raw_parts(m.as_mut_ptr(), 1, 1, 2) };
/// let it: cuda_mem::device::PitchedRowsIterMut<'_, u8> = v.rows_mut();
/// assert_eq!(it.map(|(y, _)| y).collect::<Vec<_>>(), [0, 1]);
/// ```
pub struct PitchedRowsIterMut<'b, T> {
    base: *mut T,
    pitch: usize,
    width: usize,
    rows: GridStride,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T> Iterator for PitchedRowsIterMut<'b, T> {
    type Item = (usize, &'b mut [T]);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let y = self.rows.next()?;
        // SAFETY: `y < height`: an in-bounds offset.
        let row = unsafe { row_ptr(self.base, self.pitch, y) };
        // SAFETY: `y < height`; row `y` belongs to this thread (its rows are
        // `global_linear_idx() + k * total_threads()`), each comes once, rows
        // do not overlap (the layout contract), and the array stays borrowed
        // for `'b`.
        Some((y, unsafe {
            core::slice::from_raw_parts_mut(row, self.width)
        }))
    }
}
