//! A Jacobi sweep of the Laplace equation on a 2D grid with fixed boundary
//! values (example `graph`): [`relax`], the update of one point, shared by
//! the CPU check and the kernel [`jacobi_sweep`].
//!
//! Bit for bit on both sides: the four neighbours are summed in one fixed
//! order and the sum is multiplied by 0.25, a power of two (exact), so no
//! product feeds an addition and contraction into a fused multiply-add
//! changes nothing.

use cuda_mem::device::{PitchedSlice, PitchedSliceMut};
use cuda_mem::kernel;

/// The value of point `(x, y)` of a `w` x `h` grid after one sweep over
/// `cur`: boundary points keep their value, interior points become the
/// mean of their four neighbours.
#[inline]
pub fn relax(cur: impl Fn(usize, usize) -> f32, x: usize, y: usize, w: usize, h: usize) -> f32 {
    if x == 0 || y == 0 || x + 1 >= w || y + 1 >= h {
        cur(x, y)
    } else {
        (((cur(x - 1, y) + cur(x + 1, y)) + cur(x, y - 1)) + cur(x, y + 1)) * 0.25
    }
}

/// One Jacobi sweep: `next[x, y] = relax(cur, x, y)` for every point both
/// grids have.
#[kernel]
pub fn jacobi_sweep(mut next: PitchedSliceMut<f32>, cur: PitchedSlice<f32>) {
    let (w, h) = (cur.width(), cur.height());
    for (x, y, slot) in next.grid_stride_mut() {
        if x < w && y < h {
            *slot = relax(|i, j| cur.get(i, j).copied().unwrap_or(0.0), x, y, w, h);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::*;

    #[test]
    fn a_sweep_keeps_the_boundary_and_averages_the_interior() {
        let (w, h) = (4, 3);
        let grid: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
        let at = |x: usize, y: usize| grid[y * w + x];
        assert_eq!(relax(at, 0, 1, w, h), 4.0);
        assert_eq!(relax(at, 3, 2, w, h), 11.0);
        // Interior (1, 1): neighbours 4, 6, 1, 9.
        assert_eq!(relax(at, 1, 1, w, h), 5.0);
    }
}
