//! [`PitchedTilesMut`]: a pitched 2D parameter owned `W x H` tile by tile,
//! each block its tiles and each thread its sub-tile of cells, with the
//! tile ([`PitchedTileMut`]) and cell ([`TileCellsMut`]) views.

use core::marker::PhantomData;

use crate::device::grid_stride::Strided;
use crate::device::pitched::cell_ptr as cell;
use crate::device::thread::{block_dim, block_idx, grid_dim, thread_idx};

/// A writable pitched 2D kernel parameter owned tile by tile: the `W x H`
/// tile `(X, Y)` belongs to the block whose index is `(X % Gx, Y % Gy)`
/// (with the grid's `y` and `z` folded, `by + Gy * bz`), and inside a tile
/// the cell `(x, y)` to the thread `(x % Bx, y % By)` of that block (the
/// block's `y` and `z` folded likewise). See the [module docs](super) for
/// why that is safe.
///
/// `#[repr(C)] { ptr, pitch, width, height }`, the layout of a
/// [`PitchedSliceMut`](crate::device::PitchedSliceMut), passed the same way (`&mut`
/// a `PitchedBuffer`). The tiled transpose writes a `32 x 32` tile per
/// block with `32 x 8` threads, four cells each.
///
/// ```
/// use cuda_mem::device::PitchedTilesMut;
/// let mut m = [0u16; 6]; // 2 rows of 3, no padding
/// // SAFETY: `m` outlives the parameter, which is its only user.
/// let mut img = unsafe { PitchedTilesMut::<u16, 2, 2>::from_raw_parts(m.as_mut_ptr(), 6, 3, 2) };
/// for mut tile in img.tiles_mut() {
///     let (x0, y0) = tile.origin();
///     for (x, y, cell) in tile.thread_elements_mut() {
///         *cell = (10 * (y0 + y) + x0 + x) as u16;
///     }
/// }
/// # drop(img);
/// assert_eq!(m, [0, 1, 2, 10, 11, 12]);
/// ```
#[repr(C)]
pub struct PitchedTilesMut<'a, T, const W: usize, const H: usize> {
    ptr: *mut T,
    pitch: usize,
    width: usize,
    height: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

/// The calling thread's place: its block's tile coordinates and count along
/// each axis, and its own place in the block.
#[derive(Clone, Copy)]
struct Place {
    /// The block's index along `x`, and along the folded `y`/`z`.
    block: (usize, usize),
    /// The number of blocks along `x`, and along the folded `y`/`z`.
    blocks: (usize, usize),
    /// The thread's index in its block along `x`, and along the folded `y`/`z`.
    thread: (usize, usize),
    /// The block's threads along `x`, and along the folded `y`/`z`.
    threads: (usize, usize),
}

impl Place {
    #[inline(always)]
    fn here() -> Self {
        let (b, g, t, n) = (block_idx(), grid_dim(), thread_idx(), block_dim());
        // Folding `z` into `y` needs no test of the launch's shape (on a 2D
        // launch `bz = tz = 0` and `Gz = Bz = 1`) and stays in 32 bits:
        // `by + Gy * bz < Gy * Gz <= 65535^2 < 2^32`, `ty + By * tz < 1024`.
        Place {
            block: (b.x as usize, (b.y + g.y * b.z) as usize),
            blocks: (g.x as usize, (g.y * g.z) as usize),
            thread: (t.x as usize, (t.y + n.y * t.z) as usize),
            threads: (n.x as usize, (n.y * n.z) as usize),
        }
    }
}

impl<'a, T, const W: usize, const H: usize> PitchedTilesMut<'a, T, W, H> {
    /// A parameter over `height` rows of `width` elements, row `y` at byte
    /// `y * pitch` from `ptr`.
    ///
    /// # Safety
    /// As for [`PitchedSliceMut::from_raw_parts`](crate::device::PitchedSliceMut::from_raw_parts).
    ///
    /// ```
    /// let mut m = [0u8; 4];
    /// // SAFETY: one row of 4 bytes in `m`.
    /// let v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 4, 4, 1) };
    /// assert_eq!(v.width(), 4);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(
        ptr: *mut T,
        pitch: usize,
        width: usize,
        height: usize,
    ) -> Self {
        const {
            assert!(
                W > 0 && H > 0,
                "PitchedTilesMut<T, W, H>: W and H must be at least 1"
            )
        };
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
    /// # let mut m = [0u8; 4];
    /// # let v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// assert_eq!(v.width(), 2);
    /// ```
    #[inline(always)]
    pub const fn width(&self) -> usize {
        self.width
    }

    /// The number of rows.
    ///
    /// ```
    /// # let mut m = [0u8; 4];
    /// # let v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// assert_eq!(v.height(), 2);
    /// ```
    #[inline(always)]
    pub const fn height(&self) -> usize {
        self.height
    }

    /// The number of tiles along `x` and along `y` (the last ones may be
    /// cut by the array's edges).
    ///
    /// ```
    /// # let mut m = [0u8; 15];
    /// # let v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 5, 5, 3) };
    /// assert_eq!(v.tiles(), (3, 2));
    /// ```
    #[inline(always)]
    pub const fn tiles(&self) -> (usize, usize) {
        (self.width.div_ceil(W), self.height.div_ceil(H))
    }

    /// The parts `(ptr, pitch, width, height)`.
    #[inline(always)]
    fn parts(&self) -> Parts<T> {
        Parts {
            ptr: self.ptr,
            pitch: self.pitch,
            width: self.width,
            height: self.height,
        }
    }

    /// The calling block's first tile, `(bx, by + Gy * bz)`, or `None` when
    /// the array has no such tile: the kernel whose grid has a block per
    /// tile.
    ///
    /// ```
    /// # let mut m = [0u8; 15];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 5, 5, 3) };
    /// assert_eq!(v.this_block_tile_mut().unwrap().origin(), (0, 0));
    /// ```
    #[inline(always)]
    pub fn this_block_tile_mut(&mut self) -> Option<PitchedTileMut<'_, T>> {
        let place = Place::here();
        // Tile `(bx, by)` exists when its first cell does: `bx * W < width`
        // is `bx < tiles().0`, without the division.
        let x0 = place.block.0.checked_mul(W)?;
        let y0 = place.block.1.checked_mul(H)?;
        (x0 < self.width && y0 < self.height).then(|| self.parts().tile::<W, H>(place.block, place))
    }

    /// The calling block's tiles, row of tiles by row of tiles: a 2D
    /// grid-stride loop over tiles, for any grid.
    ///
    /// ```
    /// # let mut m = [0u8; 15];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 5, 5, 3) };
    /// let origins: Vec<_> = v.tiles_mut().map(|t| t.origin()).collect();
    /// assert_eq!(origins, [(0, 0), (2, 0), (4, 0), (0, 2), (2, 2), (4, 2)]);
    /// ```
    #[inline(always)]
    pub fn tiles_mut(&mut self) -> PitchedTilesIterMut<'_, T, W, H> {
        let place = Place::here();
        let (nx, ny) = self.tiles();
        let columns = Strided::new(place.block.0, nx, place.blocks.0);
        PitchedTilesIterMut {
            parts: self.parts(),
            rows: Strided::new(place.block.1, ny, place.blocks.1),
            row: None,
            first_column: columns.clone(),
            columns,
            place,
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`PitchedTilesMut::tiles_mut`]: the calling block's
/// tiles, each a [`PitchedTileMut`] (disjoint, so several may be held at
/// once).
///
/// ```
/// # let mut m = [0u8; 4];
/// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 1, 1>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
/// let it: cuda_mem::device::PitchedTilesIterMut<'_, u8, 1, 1> = v.tiles_mut();
/// assert_eq!(it.count(), 4);
/// ```
pub struct PitchedTilesIterMut<'b, T, const W: usize, const H: usize> {
    parts: Parts<T>,
    rows: Strided,
    row: Option<usize>,
    first_column: Strided,
    columns: Strided,
    place: Place,
    _borrow: PhantomData<&'b mut [T]>,
}

/// A pitched parameter's parts.
struct Parts<T> {
    ptr: *mut T,
    pitch: usize,
    width: usize,
    height: usize,
}

impl<T> Clone for Parts<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Parts<T> {}

impl<T> Parts<T> {
    /// Tile `(tx, ty)` of `W x H` tiles as a thread at `place` sees it (no
    /// check of ownership: callers pass a tile of the calling block).
    #[inline(always)]
    fn tile<'b, const W: usize, const H: usize>(
        self,
        (tx, ty): (usize, usize),
        place: Place,
    ) -> PitchedTileMut<'b, T> {
        let (x0, y0) = (tx * W, ty * H);
        // Exact in 32 bits: `x0 < width` and `y0 < height` (below), which
        // are at most `u32::MAX` (the pitched types' invariant), and a
        // block has at most 1024 threads. The tile's cell tests are then
        // 32-bit compares (after a block barrier, every warp of the block
        // runs them at once).
        let narrow = |(x, y): (usize, usize)| (x as u32, y as u32);
        let (x0, y0) = narrow((x0, y0));
        let (width, height) = narrow((self.width, self.height));
        let most = |n: usize| n.min(u32::MAX as usize) as u32;
        PitchedTileMut {
            // SAFETY: `ty < tiles().1` and `tx < tiles().0`, so `y0 < height`
            // and `x0 < width`: a cell of the array (an in-bounds offset).
            ptr: unsafe { cell(self.ptr, self.pitch, x0 as usize, y0 as usize) },
            pitch: self.pitch,
            origin: (x0, y0),
            size: ((width - x0).min(most(W)), (height - y0).min(most(H))),
            thread: narrow(place.thread),
            threads: narrow(place.threads),
            _borrow: PhantomData,
        }
    }
}

impl<'b, T, const W: usize, const H: usize> Iterator for PitchedTilesIterMut<'b, T, W, H> {
    type Item = PitchedTileMut<'b, T>;

    #[inline(always)]
    fn next(&mut self) -> Option<PitchedTileMut<'b, T>> {
        loop {
            if let Some(ty) = self.row {
                if let Some(tx) = self.columns.next() {
                    // Each tile comes once and tiles are disjoint, so the
                    // tiles yielded may live as long as the parameter's borrow.
                    return Some(self.parts.tile::<W, H>((tx, ty), self.place));
                }
            }
            self.row = Some(self.rows.next()?);
            self.columns = self.first_column.clone();
        }
    }
}

/// One tile of a [`PitchedTilesMut`] as the calling thread sees it: the
/// tile belongs to the calling block, and its cells `(x, y)` (relative to
/// the tile's [`origin`](Self::origin)) with `x % Bx == tx` and `y % By ==
/// ty` to the calling thread (`Bx`, `By` the block's sizes, `y` and `z`
/// folded).
///
/// ```
/// # let mut m = [0u8; 4];
/// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
/// let mut tile = v.this_block_tile_mut().unwrap();
/// assert_eq!(tile.size(), (2, 2));
/// assert_eq!(tile.thread_elements_mut().count(), 4); // a block of one thread owns all
/// ```
pub struct PitchedTileMut<'b, T> {
    /// The tile's first cell.
    ptr: *mut T,
    pitch: usize,
    // In 32 bits (exact: see `Parts::tile`), so that the cell tests and
    // addresses are 32-bit compares and `mul.wide.u32`s.
    origin: (u32, u32),
    size: (u32, u32),
    thread: (u32, u32),
    threads: (u32, u32),
    _borrow: PhantomData<&'b mut [T]>,
}

impl<T> PitchedTileMut<'_, T> {
    /// The array coordinates `(x, y)` of the tile's first cell.
    ///
    /// ```
    /// # let mut m = [0u8; 4];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 1, 1>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// assert_eq!(v.tiles_mut().last().unwrap().origin(), (1, 1));
    /// ```
    #[inline(always)]
    pub const fn origin(&self) -> (usize, usize) {
        (self.origin.0 as usize, self.origin.1 as usize)
    }

    /// The tile's width and height: `(W, H)`, or less where the array's
    /// edges cut it.
    ///
    /// ```
    /// # let mut m = [0u8; 3];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 3, 3, 1) };
    /// assert_eq!(v.tiles_mut().map(|t| t.size()).collect::<Vec<_>>(), [(2, 1), (1, 1)]);
    /// ```
    #[inline(always)]
    pub const fn size(&self) -> (usize, usize) {
        (self.size.0 as usize, self.size.1 as usize)
    }

    /// Writes `value` to the calling thread's cell `(tx + i * Bx, ty + j *
    /// By)` of the tile ([`thread_element_mut`](Self::thread_element_mut)'s
    /// cell) if the tile has it, and says whether it did: the one-store form
    /// (no reference to test).
    ///
    /// ```
    /// # let mut m = [0u8; 4];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// let mut tile = v.this_block_tile_mut().unwrap();
    /// assert!(tile.set_thread_element(0, 1, 9)); // cell (0, 1)
    /// assert!(!tile.set_thread_element(0, 2, 9)); // outside
    /// # drop(tile); drop(v);
    /// assert_eq!(m, [0, 0, 9, 0]);
    /// ```
    #[inline(always)]
    pub fn set_thread_element(&mut self, i: usize, j: usize, value: T) -> bool {
        let Some((x, y)) = self.thread_cell(i, j) else {
            return false;
        };
        // SAFETY: as in `thread_element_mut`: a cell of the tile, this
        // thread's, reached once through `&mut self`.
        unsafe { self.cell(x as usize, y as usize).write(value) };
        true
    }

    /// The tile coordinates of the calling thread's cell `(tx + i * Bx, ty
    /// + j * By)`, if the tile has it.
    #[inline(always)]
    fn thread_cell(&self, i: usize, j: usize) -> Option<(u32, u32)> {
        let (t, n, size) = (self.thread, self.threads, self.size);
        // In 32 bits, like the tile (an `i` or `j` beyond them is outside).
        let x = t.0.checked_add(u32::try_from(i).ok()?.checked_mul(n.0)?)?;
        let y = t.1.checked_add(u32::try_from(j).ok()?.checked_mul(n.1)?)?;
        (x < size.0 && y < size.1).then_some((x, y))
    }

    /// The calling thread's cell `(tx + i * Bx, ty + j * By)` of the tile,
    /// or `None` outside it: for a fixed number of cells per thread, written
    /// in an unrolled loop (a `32 x 8` block over a `32 x 32` tile: `i = 0`,
    /// `j` in `0..4`).
    ///
    /// ```
    /// # let mut m = [0u8; 4];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// let mut tile = v.this_block_tile_mut().unwrap();
    /// *tile.thread_element_mut(1, 1).unwrap() = 7; // cell (1, 1): the host's block has one thread
    /// assert!(tile.thread_element_mut(2, 0).is_none());
    /// # drop(tile); drop(v);
    /// assert_eq!(m, [0, 0, 0, 7]);
    /// ```
    #[inline(always)]
    pub fn thread_element_mut(&mut self, i: usize, j: usize) -> Option<&mut T> {
        if let Some((x, y)) = self.thread_cell(i, j) {
            // SAFETY: `(x, y)` is inside the tile (so inside the array; the
            // cell's address is known not to be null, see `cell_ptr`), and
            // with `x % Bx == tx`, `y % By == ty` it belongs to this thread
            // (module docs); `&mut self` keeps it from reaching it twice.
            Some(unsafe { &mut *self.cell(x as usize, y as usize) })
        } else {
            None
        }
    }

    /// The address of the tile's cell `(x, y)`.
    ///
    /// # Safety
    /// `(x, y)` is inside the tile.
    #[inline(always)]
    unsafe fn cell(&self, x: usize, y: usize) -> *mut T {
        // SAFETY: a cell of the tile is a cell of the array.
        unsafe { cell(self.ptr, self.pitch, x, y) }
    }

    /// The calling thread's cells of the tile, `(x, y, &mut cell)` relative
    /// to the [`origin`](Self::origin), row by row.
    ///
    /// ```
    /// # let mut m = [0u8; 4];
    /// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 2, 2>::from_raw_parts(m.as_mut_ptr(), 2, 2, 2) };
    /// let mut tile = v.this_block_tile_mut().unwrap();
    /// let cells: Vec<_> = tile.thread_elements_mut().map(|(x, y, _)| (x, y)).collect();
    /// assert_eq!(cells, [(0, 0), (1, 0), (0, 1), (1, 1)]);
    /// ```
    #[inline(always)]
    pub fn thread_elements_mut(&mut self) -> TileCellsMut<'_, T> {
        let (t, n, size) = (self.thread, self.threads, self.size());
        let columns = Strided::new(t.0 as usize, size.0, n.0 as usize);
        TileCellsMut {
            ptr: self.ptr,
            pitch: self.pitch,
            rows: Strided::new(t.1 as usize, size.1, n.1 as usize),
            row: None,
            first_column: columns.clone(),
            columns,
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`PitchedTileMut::thread_elements_mut`].
///
/// ```
/// # let mut m = [0u8; 1];
/// # let mut v = unsafe { cuda_mem::device::PitchedTilesMut::<u8, 1, 1>::from_raw_parts(m.as_mut_ptr(), 1, 1, 1) };
/// # let mut tile = v.this_block_tile_mut().unwrap();
/// let it: cuda_mem::device::TileCellsMut<'_, u8> = tile.thread_elements_mut();
/// assert_eq!(it.count(), 1);
/// ```
pub struct TileCellsMut<'b, T> {
    ptr: *mut T,
    pitch: usize,
    rows: Strided,
    row: Option<usize>,
    first_column: Strided,
    columns: Strided,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T> Iterator for TileCellsMut<'b, T> {
    type Item = (usize, usize, &'b mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(y) = self.row {
                if let Some(x) = self.columns.next() {
                    // SAFETY: `(x, y)` is inside the tile (the indices end at
                    // its size) and belongs to this thread (its block-strided
                    // share); each cell comes once, and the tile stays
                    // borrowed for `'b`.
                    return Some((x, y, unsafe { &mut *cell(self.ptr, self.pitch, x, y) }));
                }
            }
            self.row = Some(self.rows.next()?);
            self.columns = self.first_column.clone();
        }
    }
}
