//! Writable kernel parameters owned block by block, and chunk by chunk:
//! the write partitions besides [`DeviceSliceMut`](super::DeviceSliceMut)'s
//! one element per thread.
//!
//! | parameter | who owns what |
//! | --- | --- |
//! | [`DeviceTilesMut<T, TILE>`] | tile `j` (elements `j * TILE ..`, `TILE` of them) belongs to block `j % grid_blocks()`; inside it, element `k` to the thread of rank `k % block_size()` (striped: a warp writes consecutive elements) |
//! | [`DeviceChunksMut<T, C>`] | chunk `c` (elements `c * C ..`, `C` of them, contiguous) belongs to the thread whose [`global_linear_idx`](super::global_linear_idx) is `c % total_threads()` |
//! | [`PitchedTilesMut<T, W, H>`] | the `W x H` tile `(X, Y)` of a pitched array belongs to the block `(X % Gx, Y % Gy)` (`y` and `z` of the grid folded, as [`global_row`](super::global_row) folds them); inside it, cell `(x, y)` to the thread `(x % Bx, y % By)` of the block (`y` and `z` of the block folded) |
//!
//! # Why they are safe
//!
//! Each rule depends only on the launch (the grid and block sizes, the
//! calling thread's place in them) and on a constant of the parameter's
//! *type* (`TILE`, `C`, `W`, `H`), never on what a thread computes: so
//! every thread of the grid applies the same rule to the same parameter,
//! and the rule gives each element to exactly one thread. (A size chosen at
//! run time could differ from thread to thread, and two rules could give
//! one element to two threads; a size in the type cannot.) The safe methods
//! hand a thread only its own elements, as `&mut` borrows of the parameter
//! (so a thread holds at most one reference to each), and the tiles and
//! chunks a thread holds at once are disjoint. A read of an element that
//! belongs to another thread or block needs a [`DeviceSlice`](super::DeviceSlice)
//! of other memory (or `unsafe`): these parameters only write their own.
//!
//! The partitions need no synchronisation: unlike shared memory, no other
//! thread ever touches a thread's elements during the kernel.
//!
//! ```
//! use cuda_mem::device::DeviceTilesMut;
//! let mut out = [0u32; 6];
//! // SAFETY: `out` outlives the parameter, which is its only user.
//! let mut tiles = unsafe { DeviceTilesMut::<u32, 4>::from_raw_parts(out.as_mut_ptr(), 6) };
//! for mut tile in tiles.tiles_mut() {
//!     let first = tile.start() as u32;
//!     for (k, x) in tile.thread_elements_mut() {
//!         *x = first + k as u32; // every element of the block's tiles
//!     }
//! }
//! # drop(tiles);
//! assert_eq!(out, [0, 1, 2, 3, 4, 5]); // the host model: one block of one thread
//! ```

use core::marker::PhantomData;

use super::grid_stride::Strided;
use super::thread::{
    block_dim, block_idx, block_rank, block_size, block_thread_rank, grid_blocks, grid_dim, linear,
};

/// A writable kernel parameter owned tile by tile: the `TILE` elements of
/// tile `j` belong to block `j % grid_blocks()` ([`block_rank`]),
/// and inside a tile element `k` belongs to the thread whose
/// [`block_thread_rank`] is `k % block_size()`
/// (see the [module docs](self) for why that is safe).
///
/// `#[repr(C)] { ptr, len }`, the layout of a
/// [`DeviceSliceMut`](super::DeviceSliceMut): the host passes the same
/// arguments (`&mut` a buffer or an exclusive view). `TILE` is at least 1.
/// The block's own output tile of CUB-style kernels (a scan's tile, a
/// block's partial result with `TILE = 1`).
///
/// ```
/// use cuda_mem::device::DeviceTilesMut;
/// let mut sums = [0u64; 3];
/// // SAFETY: `sums` outlives the parameter, which is its only user.
/// let mut out = unsafe { DeviceTilesMut::<u64, 1>::from_raw_parts(sums.as_mut_ptr(), 3) };
/// // Each block writes its own partial result (block 0 on the host).
/// if let Some(mut tile) = out.this_block_tile_mut() {
///     if let Some(x) = tile.thread_element_mut(0) {
///         *x = 42; // written by the block's thread of rank 0
///     }
/// }
/// # drop(out);
/// assert_eq!(sums, [42, 0, 0]);
/// ```
#[repr(C)]
pub struct DeviceTilesMut<'a, T, const TILE: usize> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const TILE: usize> DeviceTilesMut<'a, T, TILE> {
    /// A parameter over `len` elements at `ptr`.
    ///
    /// # Safety
    /// As for [`DeviceSliceMut::from_raw_parts`](super::DeviceSliceMut::from_raw_parts):
    /// `ptr` is aligned and points to `len` initialised elements, valid for
    /// reads and writes, which nothing but this parameter (and the threads
    /// of the kernel that received it) touches for `'a`.
    ///
    /// ```
    /// let mut v = [0u8; 3];
    /// // SAFETY: `v` is live and only used through `t`.
    /// let t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(t.tiles(), 2);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        const { assert!(TILE > 0, "DeviceTilesMut<T, TILE>: TILE must be at least 1") };
        Self {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    ///
    /// ```
    /// # let mut v = [0u8; 3];
    /// # let t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(t.len(), 3);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(core::ptr::null_mut(), 0) };
    /// assert!(t.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of tiles, `len.div_ceil(TILE)` (the last may be short).
    ///
    /// ```
    /// # let mut v = [0u8; 5];
    /// # let t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 5) };
    /// assert_eq!(t.tiles(), 3);
    /// ```
    #[inline(always)]
    pub const fn tiles(&self) -> usize {
        self.len.div_ceil(TILE)
    }

    /// Tile `j` as the calling thread sees it (no check of ownership:
    /// callers pass a tile of the calling block).
    #[inline(always)]
    fn tile<'b>(ptr: *mut T, len: usize, j: usize, rank: u32, threads: u32) -> TileMut<'b, T> {
        let start = j * TILE;
        TileMut {
            // SAFETY: `j < tiles()`, so `start < len`: inside the parameter's
            // memory (an in-bounds offset, so the compiler knows the tile's
            // address is not null).
            ptr: unsafe { ptr.add(start) },
            len: (len - start).min(TILE),
            index: j,
            start,
            rank,
            threads,
            _borrow: PhantomData,
        }
    }

    /// The calling block's first tile, number [`block_rank()`](super::block_rank),
    /// or `None` when there is no such tile: the kernel whose grid has a
    /// block per tile.
    ///
    /// ```
    /// # let mut v = [0u8; 5];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 5) };
    /// let tile = t.this_block_tile_mut().unwrap();
    /// assert_eq!((tile.index(), tile.len()), (0, 2));
    /// ```
    #[inline(always)]
    pub fn this_block_tile_mut(&mut self) -> Option<TileMut<'_, T>> {
        let j = block_rank();
        (j < self.tiles())
            .then(|| Self::tile(self.ptr, self.len, j, block_thread_rank(), block_size()))
    }

    /// The calling block's tiles, `block_rank() + k * grid_blocks()`, in
    /// order: a grid-stride loop over tiles, for any grid.
    ///
    /// ```
    /// # let mut v = [0u8; 5];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 5) };
    /// let lens: Vec<usize> = t.tiles_mut().map(|tile| tile.len()).collect();
    /// assert_eq!(lens, [2, 2, 1]); // one block on the host: all three
    /// ```
    #[inline(always)]
    pub fn tiles_mut(&mut self) -> TilesMut<'_, T, TILE> {
        TilesMut {
            ptr: self.ptr,
            len: self.len,
            indices: Strided::new(block_rank(), self.tiles(), grid_blocks()),
            rank: block_thread_rank(),
            threads: block_size(),
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`DeviceTilesMut::tiles_mut`]: the calling block's
/// tiles, each a [`TileMut`] (disjoint, so several may be held at once).
///
/// ```
/// # let mut v = [0u8; 4];
/// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 4) };
/// let it: cuda_mem::device::TilesMut<'_, u8, 2> = t.tiles_mut();
/// assert_eq!(it.count(), 2);
/// ```
pub struct TilesMut<'b, T, const TILE: usize> {
    ptr: *mut T,
    len: usize,
    indices: Strided,
    rank: u32,
    threads: u32,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T, const TILE: usize> Iterator for TilesMut<'b, T, TILE> {
    type Item = TileMut<'b, T>;

    #[inline(always)]
    fn next(&mut self) -> Option<TileMut<'b, T>> {
        let j = self.indices.next()?;
        // Each tile comes once (the indices increase) and tiles are
        // disjoint, so the tiles yielded may live as long as the borrow of
        // the parameter.
        Some(DeviceTilesMut::<T, TILE>::tile(
            self.ptr,
            self.len,
            j,
            self.rank,
            self.threads,
        ))
    }
}

/// One tile of a [`DeviceTilesMut`] as the calling thread sees it: it
/// belongs to the calling block, and its elements `k` with `k %
/// block_size() == block_thread_rank()` to the calling thread.
///
/// ```
/// # let mut v = [0u8; 4];
/// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 4>::from_raw_parts(v.as_mut_ptr(), 4) };
/// let mut tile = t.this_block_tile_mut().unwrap();
/// assert_eq!(tile.thread_elements_mut().count(), 4); // a block of one thread owns all
/// ```
pub struct TileMut<'b, T> {
    ptr: *mut T,
    len: usize,
    index: usize,
    start: usize,
    rank: u32,
    threads: u32,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<T> TileMut<'_, T> {
    /// The tile's number.
    ///
    /// ```
    /// # let mut v = [0u8; 4];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 4) };
    /// assert_eq!(t.tiles_mut().map(|tile| tile.index()).collect::<Vec<_>>(), [0, 1]);
    /// ```
    #[inline(always)]
    pub const fn index(&self) -> usize {
        self.index
    }

    /// The index of its first element in the parameter (`index() * TILE`).
    ///
    /// ```
    /// # let mut v = [0u8; 4];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 4) };
    /// assert_eq!(t.tiles_mut().map(|tile| tile.start()).collect::<Vec<_>>(), [0, 2]);
    /// ```
    #[inline(always)]
    pub const fn start(&self) -> usize {
        self.start
    }

    /// The number of elements (`TILE`, or fewer for the last tile).
    ///
    /// ```
    /// # let mut v = [0u8; 3];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(t.tiles_mut().map(|tile| tile.len()).collect::<Vec<_>>(), [2, 1]);
    /// ```
    #[inline(always)]
    #[allow(clippy::len_without_is_empty)] // a tile has at least one element
    pub const fn len(&self) -> usize {
        self.len
    }

    /// The calling thread's `i`-th element of the tile, number `rank + i *
    /// block_size()` (`rank` being [`block_thread_rank`]),
    /// or `None` past the tile's end: for a fixed number of elements per
    /// thread, written from registers in an unrolled loop.
    ///
    /// ```
    /// # let mut v = [0u8; 4];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 4>::from_raw_parts(v.as_mut_ptr(), 4) };
    /// let mut tile = t.this_block_tile_mut().unwrap();
    /// for i in 0..8 {
    ///     if let Some(x) = tile.thread_element_mut(i) {
    ///         *x = i as u8;
    ///     }
    /// }
    /// # drop(tile); drop(t);
    /// assert_eq!(v, [0, 1, 2, 3]);
    /// ```
    #[inline(always)]
    pub fn thread_element_mut(&mut self, i: usize) -> Option<&mut T> {
        let k = (self.rank as usize).checked_add(i.checked_mul(self.threads as usize)?)?;
        if k < self.len {
            // SAFETY: `k < len`, inside the tile; element `k` of a tile of
            // the calling block with `k % block_size() == rank` belongs to
            // this thread (module docs), and `&mut self` keeps it from
            // reaching it twice.
            Some(unsafe { &mut *self.ptr.add(k) })
        } else {
            None
        }
    }

    /// The calling thread's elements of the tile with their place in it:
    /// `(k, &mut element)` for `k = rank, rank + block_size(), ...`.
    ///
    /// ```
    /// # let mut v = [0u8; 3];
    /// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 4>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// let mut tile = t.this_block_tile_mut().unwrap();
    /// assert_eq!(tile.thread_elements_mut().map(|(k, _)| k).collect::<Vec<_>>(), [0, 1, 2]);
    /// ```
    #[inline(always)]
    pub fn thread_elements_mut(&mut self) -> ElementsMut<'_, T> {
        ElementsMut {
            ptr: self.ptr,
            indices: Strided::new(self.rank as usize, self.len, self.threads as usize),
            _borrow: PhantomData,
        }
    }
}

/// The calling thread's elements of a tile or a chunk: `(place, &mut
/// element)`, from [`TileMut::thread_elements_mut`].
///
/// ```
/// # let mut v = [0u8; 2];
/// # let mut t = unsafe { cuda_mem::device::DeviceTilesMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 2) };
/// # let mut tile = t.this_block_tile_mut().unwrap();
/// let it: cuda_mem::device::ElementsMut<'_, u8> = tile.thread_elements_mut();
/// assert_eq!(it.len(), 2);
/// ```
pub struct ElementsMut<'b, T> {
    ptr: *mut T,
    indices: Strided,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T> Iterator for ElementsMut<'b, T> {
    type Item = (usize, &'b mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let k = self.indices.next()?;
        // SAFETY: `k` is inside the tile (the indices end at its length) and
        // belongs to this thread (they are its striped share); each comes
        // once, and the tile stays borrowed for `'b`.
        Some((k, unsafe { &mut *self.ptr.add(k) }))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

impl<T> ExactSizeIterator for ElementsMut<'_, T> {}

/// A writable kernel parameter owned chunk by chunk: the `C` contiguous
/// elements of chunk `c` belong to the thread whose
/// [`global_linear_idx`](super::global_linear_idx) is `c % total_threads()`
/// (see the [module docs](self)). `#[repr(C)] { ptr, len }`, passed like a
/// [`DeviceSliceMut`](super::DeviceSliceMut). For contiguous per-thread
/// work (a serial scan of each thread's run, vector stores of `C` elements).
///
/// ```
/// use cuda_mem::device::DeviceChunksMut;
/// let mut v = [0u32; 7];
/// // SAFETY: `v` outlives the parameter, which is its only user.
/// let mut chunks = unsafe { DeviceChunksMut::<u32, 3>::from_raw_parts(v.as_mut_ptr(), 7) };
/// for (c, chunk) in chunks.grid_stride_chunks_mut() {
///     chunk.fill(c as u32);
/// }
/// # drop(chunks);
/// assert_eq!(v, [0, 0, 0, 1, 1, 1, 2]);
/// ```
#[repr(C)]
pub struct DeviceChunksMut<'a, T, const C: usize> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const C: usize> DeviceChunksMut<'a, T, C> {
    /// A parameter over `len` elements at `ptr`.
    ///
    /// # Safety
    /// As for [`DeviceSliceMut::from_raw_parts`](super::DeviceSliceMut::from_raw_parts).
    ///
    /// ```
    /// let mut v = [0u8; 3];
    /// // SAFETY: `v` is live and only used through `c`.
    /// let c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(c.len(), 3);
    /// ```
    #[inline(always)]
    pub const unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        const { assert!(C > 0, "DeviceChunksMut<T, C>: C must be at least 1") };
        Self {
            ptr,
            len,
            _borrow: PhantomData,
        }
    }

    /// The number of elements.
    ///
    /// ```
    /// # let mut v = [0u8; 3];
    /// # let c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 3) };
    /// assert_eq!(c.len(), 3);
    /// ```
    #[inline(always)]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    ///
    /// ```
    /// # let c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(core::ptr::null_mut(), 0) };
    /// assert!(c.is_empty());
    /// ```
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunk `c` of `len` elements at `ptr` (in bounds: `c <
    /// len.div_ceil(C)`).
    #[inline(always)]
    fn chunk(ptr: *mut T, len: usize, c: usize) -> *mut [T] {
        let start = c * C;
        // SAFETY: `c < len.div_ceil(C)`, so `start < len`: in bounds.
        core::ptr::slice_from_raw_parts_mut(unsafe { ptr.add(start) }, (len - start).min(C))
    }

    /// The calling thread's own chunk, number
    /// [`global_linear_idx()`](super::global_linear_idx), or `None` past the
    /// end: `C` contiguous elements per thread (fewer in the last chunk).
    ///
    /// ```
    /// # let mut v = [0u8; 5];
    /// # let mut c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 5) };
    /// c.this_thread_chunk_mut().unwrap().fill(9); // chunk 0 on the host
    /// # drop(c);
    /// assert_eq!(v, [9, 9, 0, 0, 0]);
    /// ```
    #[inline(always)]
    pub fn this_thread_chunk_mut(&mut self) -> Option<&mut [T]> {
        let c = linear().0;
        if c < self.len.div_ceil(C) {
            // SAFETY: chunk `c` is inside the parameter and belongs to this
            // thread (`c` is its global linear index); `&mut self` keeps it
            // from reaching it twice.
            Some(unsafe { &mut *Self::chunk(self.ptr, self.len, c) })
        } else {
            None
        }
    }

    /// The calling thread's chunks with their numbers, `global_linear_idx() +
    /// k * total_threads()`: a grid-stride loop over chunks.
    ///
    /// ```
    /// # let mut v = [0u8; 5];
    /// # let mut c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 5) };
    /// let lens: Vec<usize> = c.grid_stride_chunks_mut().map(|(_, ch)| ch.len()).collect();
    /// assert_eq!(lens, [2, 2, 1]);
    /// ```
    #[inline(always)]
    pub fn grid_stride_chunks_mut(&mut self) -> ChunksMut<'_, T, C> {
        let (index, threads) = linear();
        ChunksMut {
            ptr: self.ptr,
            len: self.len,
            indices: Strided::new(index, self.len.div_ceil(C), threads),
            _borrow: PhantomData,
        }
    }
}

/// The iterator of [`DeviceChunksMut::grid_stride_chunks_mut`]:
/// `(chunk number, &mut chunk)`.
///
/// ```
/// # let mut v = [0u8; 4];
/// # let mut c = unsafe { cuda_mem::device::DeviceChunksMut::<u8, 2>::from_raw_parts(v.as_mut_ptr(), 4) };
/// let it: cuda_mem::device::ChunksMut<'_, u8, 2> = c.grid_stride_chunks_mut();
/// assert_eq!(it.count(), 2);
/// ```
pub struct ChunksMut<'b, T, const C: usize> {
    ptr: *mut T,
    len: usize,
    indices: Strided,
    _borrow: PhantomData<&'b mut [T]>,
}

impl<'b, T, const C: usize> Iterator for ChunksMut<'b, T, C> {
    type Item = (usize, &'b mut [T]);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let c = self.indices.next()?;
        // SAFETY: chunk `c` is inside the parameter (the indices end at the
        // number of chunks) and belongs to this thread (they are its
        // grid-stride share); chunks are disjoint and each comes once, and
        // the parameter stays borrowed for `'b`.
        Some((c, unsafe {
            &mut *DeviceChunksMut::<T, C>::chunk(self.ptr, self.len, c)
        }))
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.indices.size_hint()
    }
}

/// A writable pitched 2D kernel parameter owned tile by tile: the `W x H`
/// tile `(X, Y)` belongs to the block whose index is `(X % Gx, Y % Gy)`
/// (with the grid's `y` and `z` folded, `by + Gy * bz`), and inside a tile
/// the cell `(x, y)` to the thread `(x % Bx, y % By)` of that block (the
/// block's `y` and `z` folded likewise). See the [module docs](self) for
/// why that is safe.
///
/// `#[repr(C)] { ptr, pitch, width, height }`, the layout of a
/// [`PitchedSliceMut`](super::PitchedSliceMut), passed the same way (`&mut`
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
        let (b, g, t, n) = (block_idx(), grid_dim(), super::thread_idx(), block_dim());
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
    /// As for [`PitchedSliceMut::from_raw_parts`](super::PitchedSliceMut::from_raw_parts).
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
        PitchedTileMut {
            // SAFETY: `ty < tiles().1` and `tx < tiles().0`, so `y0 < height`
            // and `x0 < width`: a cell of the array (an in-bounds offset).
            ptr: unsafe { cell(self.ptr, self.pitch, x0, y0) },
            pitch: self.pitch,
            origin: (x0, y0),
            size: ((self.width - x0).min(W), (self.height - y0).min(H)),
            thread: place.thread,
            threads: place.threads,
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
    origin: (usize, usize),
    size: (usize, usize),
    thread: (usize, usize),
    threads: (usize, usize),
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
        self.origin
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
        self.size
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
        let x = self.thread.0.checked_add(i.checked_mul(self.threads.0)?)?;
        let y = self.thread.1.checked_add(j.checked_mul(self.threads.1)?)?;
        if x < self.size.0 && y < self.size.1 {
            // SAFETY: `(x, y)` is inside the tile (so inside the array, at a
            // non-null address), and with `x % Bx == tx`, `y % By == ty` it
            // belongs to this thread (module docs); `&mut self` keeps it
            // from reaching it twice.
            Some(unsafe {
                let cell = self.cell(x, y);
                core::hint::assert_unchecked(!cell.is_null());
                &mut *cell
            })
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
        let columns = Strided::new(self.thread.0, self.size.0, self.threads.0);
        TileCellsMut {
            ptr: self.ptr,
            pitch: self.pitch,
            rows: Strided::new(self.thread.1, self.size.1, self.threads.1),
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

/// The address of cell `(x, y)` of the array at `ptr` with `pitch`.
///
/// # Safety
/// `(x, y)` is a cell of the array: the offset stays inside its memory.
#[inline(always)]
unsafe fn cell<T>(ptr: *mut T, pitch: usize, x: usize, y: usize) -> *mut T {
    // SAFETY: the caller's cell, inside the array's memory.
    unsafe { (ptr as *mut u8).add(y * pitch).cast::<T>().add(x) }
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
