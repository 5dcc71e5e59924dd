//! [`Dim3`] and [`Index3`]: the three components of a thread, block or grid
//! index or size, as `u32` (what the hardware registers hold) and as `usize`
//! (global indices, which can exceed `u32`).

/// Three `u32` components: a thread's index in its block, a block's index in
/// the grid, or the size of a block or of the grid (CUDA's `dim3`).
///
/// ```
/// use cuda_mem::device::Dim3;
/// let d = Dim3::new(32, 4, 2);
/// assert_eq!(d.volume(), 256);
/// assert_eq!(Dim3::new(5, 1, 1), Dim3::x(5));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Dim3 {
    /// The fastest-varying component.
    pub x: u32,
    /// The middle component.
    pub y: u32,
    /// The slowest-varying component.
    pub z: u32,
}

impl Dim3 {
    /// The components `x`, `y`, `z`.
    ///
    /// ```
    /// let d = cuda_mem::device::Dim3::new(1, 2, 3);
    /// assert_eq!((d.x, d.y, d.z), (1, 2, 3));
    /// ```
    #[inline(always)]
    pub const fn new(x: u32, y: u32, z: u32) -> Self {
        Self { x, y, z }
    }

    /// `(x, 1, 1)`.
    ///
    /// ```
    /// assert_eq!(cuda_mem::device::Dim3::x(7).volume(), 7);
    /// ```
    #[inline(always)]
    pub const fn x(x: u32) -> Self {
        Self { x, y: 1, z: 1 }
    }

    /// `x * y * z`, without overflow.
    ///
    /// ```
    /// use cuda_mem::device::Dim3;
    /// assert_eq!(Dim3::new(u32::MAX, 2, 1).volume(), 2 * u32::MAX as u64);
    /// ```
    #[inline(always)]
    pub const fn volume(self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }

    /// The position of `self` in row-major order (`x` fastest) inside a box
    /// of size `size`: `x + size.x * (y + size.y * z)`.
    ///
    /// ```
    /// use cuda_mem::device::Dim3;
    /// assert_eq!(Dim3::new(1, 2, 3).linear_in(Dim3::new(4, 5, 6)), 1 + 4 * (2 + 5 * 3));
    /// ```
    #[inline(always)]
    pub const fn linear_in(self, size: Dim3) -> u64 {
        self.x as u64 + size.x as u64 * (self.y as u64 + size.y as u64 * self.z as u64)
    }
}

/// Three `usize` components: a thread's global index along each axis, or the
/// number of threads of the grid along each axis. A global index can exceed
/// `u32` (up to `2^31 - 1` blocks of 1024 threads along `x`).
///
/// ```
/// use cuda_mem::device::Index3;
/// let i = Index3 { x: 5_000_000_000, y: 0, z: 0 };
/// assert!(i.x > u32::MAX as usize);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Index3 {
    /// Along `x`.
    pub x: usize,
    /// Along `y`.
    pub y: usize,
    /// Along `z`.
    pub z: usize,
}
