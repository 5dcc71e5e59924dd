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
    let (g, t) = (global_idx(), grid_threads());
    // Both fit: gy, Ty < 2^26 and gz, Tz < 2^22 (CUDA's grid and block limits).
    (g.y + t.y * g.z, t.y * t.z)
}

/// The calling thread's global linear index, `gx + Tx * (gy + Ty * gz)`: a
/// different number for every thread of the launch, in `0..total_threads()`.
/// For a 1D launch it is `blockIdx.x * blockDim.x + threadIdx.x`.
///
/// Saturates at `usize::MAX` for a launch of more than 2^64 threads (which
/// CUDA's limits allow in theory), so such threads index nothing.
///
/// ```
/// assert_eq!(cuda_mem::device::global_linear_idx(), 0);
/// ```
#[inline(always)]
pub fn global_linear_idx() -> usize {
    let gx = global_idx().x;
    let tx = grid_threads().x;
    let (row, _) = global_row();
    tx.saturating_mul(row).saturating_add(gx)
}

/// The number of threads of the launch, `Tx * Ty * Tz` (saturating at
/// `usize::MAX`).
///
/// ```
/// assert_eq!(cuda_mem::device::total_threads(), 1);
/// ```
#[inline(always)]
pub fn total_threads() -> usize {
    let t = grid_threads();
    t.x.saturating_mul(t.y * t.z)
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

    macro_rules! dim3_of {
        ($x:literal, $y:literal, $z:literal) => {
            Dim3::new(
                crate::device::special_register!($x),
                crate::device::special_register!($y),
                crate::device::special_register!($z),
            )
        };
    }

    #[inline(always)]
    pub fn thread_idx() -> Dim3 {
        dim3_of!("%tid.x", "%tid.y", "%tid.z")
    }

    #[inline(always)]
    pub fn block_idx() -> Dim3 {
        dim3_of!("%ctaid.x", "%ctaid.y", "%ctaid.z")
    }

    #[inline(always)]
    pub fn block_dim() -> Dim3 {
        dim3_of!("%ntid.x", "%ntid.y", "%ntid.z")
    }

    #[inline(always)]
    pub fn grid_dim() -> Dim3 {
        dim3_of!("%nctaid.x", "%nctaid.y", "%nctaid.z")
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
}
