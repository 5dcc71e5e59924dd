//! [`DeviceTilesMut`]: a parameter owned tile by tile, each block its own
//! tiles and each thread its striped share of them, with the tile
//! ([`TileMut`]) and element ([`ElementsMut`]) views a thread gets.

use core::marker::PhantomData;

use crate::device::grid_stride::Strided;
use crate::device::thread::{block_rank, block_size, block_thread_rank, grid_blocks};

/// A writable kernel parameter owned tile by tile: the `TILE` elements of
/// tile `j` belong to block `j % grid_blocks()` ([`block_rank`]),
/// and inside a tile element `k` belongs to the thread whose
/// [`block_thread_rank`] is `k % block_size()`
/// (see the [module docs](super) for why that is safe).
///
/// `#[repr(C)] { ptr, len }`, the layout of a
/// [`DeviceSliceMut`](crate::device::DeviceSliceMut): the host passes the same
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
    /// As for [`DeviceSliceMut::from_raw_parts`](crate::device::DeviceSliceMut::from_raw_parts):
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

    /// The calling block's first tile, number [`block_rank()`](crate::device::block_rank),
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
