//! Where the calling thread is: its index in its block, its block's index in
//! the grid, the block and grid sizes, and the global indices and counts
//! derived from them.
//!
//! On `nvptx64` each function reads the special registers (`%tid`, `%ctaid`,
//! `%ntid`, `%nctaid`) with `mov.u32`; the reads are pure, so unused
//! components cost nothing. Elsewhere the kernel is a grid of one block of
//! one thread: every index is 0 and every size is 1.
//!
//! Linear orders are row-major with `x` fastest, as CUDA numbers threads (so
//! consecutive [`block_thread_rank`]s form a warp):
//! [`global_linear_idx`] is `gx + Tx * (gy + Ty * gz)` where `g` is
//! [`global_idx`] and `T` is [`grid_threads`]. Every thread of any launch gets
//! a different one, in `0..total_threads()`.

use super::dim::{Dim3, Index3};

/// The calling thread's index in its block (`threadIdx`).
///
/// ```
/// // On the host a kernel is one thread: index (0, 0, 0).
/// assert_eq!(cuda_mem::device::thread_idx(), cuda_mem::device::Dim3::new(0, 0, 0));
/// ```
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    imp::thread_idx()
}

/// The calling thread's block's index in the grid (`blockIdx`).
///
/// ```
/// assert_eq!(cuda_mem::device::block_idx().x, 0);
/// ```
#[inline(always)]
pub fn block_idx() -> Dim3 {
    imp::block_idx()
}

/// The number of threads of a block along each axis (`blockDim`).
///
/// ```
/// assert_eq!(cuda_mem::device::block_dim(), cuda_mem::device::Dim3::new(1, 1, 1));
/// ```
#[inline(always)]
pub fn block_dim() -> Dim3 {
    imp::block_dim()
}

/// The number of blocks of the grid along each axis (`gridDim`).
///
/// ```
/// assert_eq!(cuda_mem::device::grid_dim().volume(), 1);
/// ```
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    imp::grid_dim()
}

/// The calling thread's global index along each axis:
/// `blockIdx * blockDim + threadIdx`, per component.
///
/// ```
/// let g = cuda_mem::device::global_idx();
/// assert_eq!((g.x, g.y, g.z), (0, 0, 0));
/// ```
#[inline(always)]
pub fn global_idx() -> Index3 {
    let (t, b, n) = (thread_idx(), block_idx(), block_dim());
    Index3 {
        x: b.x as usize * n.x as usize + t.x as usize,
        y: b.y as usize * n.y as usize + t.y as usize,
        z: b.z as usize * n.z as usize + t.z as usize,
    }
}

/// The calling thread's index in its block, for a kernel written for blocks
/// of exactly `X x Y x Z` threads: checks the launch's block shape once (a
/// trap, which stops the kernel with an error, if it is another) and then
/// tells the compiler that `x < X`, `y < Y` and `z < Z`. Index arithmetic
/// on the components (a shared tile's `ty * 33 + tx`) is then known to stay
/// in bounds, and the checks that follow from it disappear.
///
/// ```
/// use cuda_mem::device::thread_idx_for;
/// let t = thread_idx_for::<1, 1, 1>(); // the host model's block
/// assert_eq!((t.x, t.y, t.z), (0, 0, 0));
/// ```
#[inline(always)]
#[track_caller]
pub fn thread_idx_for<const X: u32, const Y: u32, const Z: u32>() -> Dim3 {
    assert!(
        block_dim() == Dim3::new(X, Y, Z),
        "thread_idx_for::<X, Y, Z>: the launch's block is not X x Y x Z"
    );
    let t = thread_idx();
    // SAFETY: the block is `X x Y x Z` (checked above), and a thread's
    // index lies inside its block.
    unsafe { core::hint::assert_unchecked(t.x < X && t.y < Y && t.z < Z) };
    t
}

/// The number of threads of the grid along each axis: `gridDim * blockDim`,
/// per component.
///
/// ```
/// let t = cuda_mem::device::grid_threads();
/// assert_eq!((t.x, t.y, t.z), (1, 1, 1));
/// ```
#[inline(always)]
pub fn grid_threads() -> Index3 {
    let (g, n) = (grid_dim(), block_dim());
    Index3 {
        x: g.x as usize * n.x as usize,
        y: g.y as usize * n.y as usize,
        z: g.z as usize * n.z as usize,
    }
}

/// The calling thread's row (its `y` and `z` global indices folded into
/// one, `gy + Ty * gz`) and the number of rows of threads (`Ty * Tz`): the
/// second axis of the 2D decompositions ([`grid_stride_2d`](super::grid_stride_2d),
/// [`PitchedSliceMut`](super::PitchedSliceMut)), which thereby cover every
/// thread of a 3D launch too.
///
/// ```
/// assert_eq!(cuda_mem::device::global_row(), (0, 1));
/// ```
#[inline(always)]
pub fn global_row() -> (usize, usize) {
    let [gy, rows, gz, layers] = row_parts();
    (
        gy as usize + rows as usize * gz as usize,
        rows as usize * layers as usize,
    )
}

/// `[gy, Ty, gz, Tz]`, the parts [`global_row`] folds.
#[inline(always)]
pub(crate) fn row_parts() -> [u32; 4] {
    let (n, g, b, t) = (block_dim(), grid_dim(), block_idx(), thread_idx());
    // In 32 bits, exactly: `gy, Ty < 2^26` and `gz, Tz < 2^22` (CUDA's grid
    // and block limits). No test of the launch's shape: on a 2D launch
    // `gz = 0` and `Tz = 1`, and the folding costs one multiply-add.
    [b.y * n.y + t.y, g.y * n.y, b.z * n.z + t.z, g.z * n.z]
}

/// The calling thread's global linear index, `gx + Tx * (gy + Ty * gz)`: a
/// different number for every thread of the launch, in `0..total_threads()`.
/// For a 1D launch it is `blockIdx.x * blockDim.x + threadIdx.x`.
///
/// A 1D launch (block and grid of size 1 along `y` and `z`) takes a short
/// path that reads only the `x` registers and multiplies once (32 by 32
/// bits into 64, which cannot overflow); other shapes fold `y` and `z` in,
/// exactly, since a launch runs fewer than 2^63 threads (the typed launch
/// refuses larger grids).
///
/// ```
/// assert_eq!(cuda_mem::device::global_linear_idx(), 0);
/// ```
#[inline(always)]
pub fn global_linear_idx() -> usize {
    linear().0
}

/// The number of threads of the launch, `Tx * Ty * Tz` (less than 2^63),
/// with the short path of [`global_linear_idx`] for 1D launches.
///
/// ```
/// assert_eq!(cuda_mem::device::total_threads(), 1);
/// ```
#[inline(always)]
pub fn total_threads() -> usize {
    linear().1
}

/// `(global_linear_idx(), total_threads())`, computed together.
#[inline(always)]
pub(crate) fn linear() -> (usize, usize) {
    let (n, g) = (block_dim(), grid_dim());
    // The `x` part, which every shape needs, before the shape is known: its
    // register reads start at once (32 by 32 bits into 64, no overflow).
    let gx = imp::block_idx_x() as usize * n.x as usize + imp::thread_idx_x() as usize;
    let tx = g.x as usize * n.x as usize;
    // Every size is at least 1, so the OR is 1 exactly when all four are.
    if n.y | n.z | g.y | g.z == 1 {
        (gx, tx)
    } else {
        // Wrapping 64-bit arithmetic, exact: a launch runs fewer than 2^63
        // threads (the typed launch refuses more, see
        // [`launch`](crate::launch); CUDA's limits would allow 2^73), so
        // `Tx * row + gx < Tx * Ty * Tz < 2^63`.
        let (row, rows) = global_row();
        (tx.wrapping_mul(row).wrapping_add(gx), tx.wrapping_mul(rows))
    }
}

/// The calling thread's rank in its block, `tx + bx * (ty + by * tz)`, in
/// `0..block_size()`. Threads `32 * w .. 32 * w + 32` form warp `w`.
///
/// ```
/// assert_eq!(cuda_mem::device::block_thread_rank(), 0);
/// ```
#[inline(always)]
pub fn block_thread_rank() -> u32 {
    let (t, n) = (thread_idx(), block_dim());
    // At most 1024 threads per block: no overflow.
    t.x + n.x * (t.y + n.y * t.z)
}

/// The number of threads of a block (at most 1024).
///
/// ```
/// assert_eq!(cuda_mem::device::block_size(), 1);
/// ```
#[inline(always)]
pub fn block_size() -> u32 {
    let n = block_dim();
    n.x * n.y * n.z
}

/// The calling thread's block's linear index in the grid,
/// `bx + Gx * (by + Gy * bz)`, in `0..grid_blocks()`.
///
/// ```
/// assert_eq!(cuda_mem::device::block_rank(), 0);
/// ```
#[inline(always)]
pub fn block_rank() -> usize {
    block_idx().linear_in(grid_dim()) as usize
}

/// The number of blocks of the grid.
///
/// ```
/// assert_eq!(cuda_mem::device::grid_blocks(), 1);
/// ```
#[inline(always)]
pub fn grid_blocks() -> usize {
    grid_dim().volume() as usize
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::Dim3;

    #[inline(always)]
    pub fn thread_idx() -> Dim3 {
        Dim3::new(thread_idx_x(), thread_idx_y(), thread_idx_z())
    }

    #[inline(always)]
    pub fn thread_idx_y() -> u32 {
        crate::device::special_register!("%tid.y" in 0..=1023)
    }

    #[inline(always)]
    pub fn thread_idx_z() -> u32 {
        crate::device::special_register!("%tid.z" in 0..=63)
    }

    #[inline(always)]
    pub fn block_idx() -> Dim3 {
        Dim3::new(
            block_idx_x(),
            crate::device::special_register!("%ctaid.y" in 0..=65534),
            crate::device::special_register!("%ctaid.z" in 0..=65534),
        )
    }

    #[inline(always)]
    pub fn block_dim() -> Dim3 {
        Dim3::new(
            crate::device::special_register!("%ntid.x" in 1..=1024),
            crate::device::special_register!("%ntid.y" in 1..=1024),
            crate::device::special_register!("%ntid.z" in 1..=64),
        )
    }

    #[inline(always)]
    pub fn grid_dim() -> Dim3 {
        Dim3::new(
            crate::device::special_register!("%nctaid.x" in 1..=2147483647),
            crate::device::special_register!("%nctaid.y" in 1..=65535),
            crate::device::special_register!("%nctaid.z" in 1..=65535),
        )
    }

    #[inline(always)]
    pub fn thread_idx_x() -> u32 {
        crate::device::special_register!("%tid.x" in 0..=1023)
    }

    #[inline(always)]
    pub fn block_idx_x() -> u32 {
        crate::device::special_register!("%ctaid.x" in 0..=2147483646)
    }
}

/// The one-thread model: one block of one thread.
#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::Dim3;

    #[inline(always)]
    pub fn thread_idx() -> Dim3 {
        Dim3::new(0, 0, 0)
    }

    #[inline(always)]
    pub fn block_idx() -> Dim3 {
        Dim3::new(0, 0, 0)
    }

    #[inline(always)]
    pub fn block_dim() -> Dim3 {
        Dim3::new(1, 1, 1)
    }

    #[inline(always)]
    pub fn grid_dim() -> Dim3 {
        Dim3::new(1, 1, 1)
    }

    #[inline(always)]
    pub fn thread_idx_x() -> u32 {
        0
    }

    #[inline(always)]
    pub fn block_idx_x() -> u32 {
        0
    }
}
