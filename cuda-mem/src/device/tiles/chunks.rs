//! [`DeviceChunksMut`]: a parameter owned chunk by chunk, each thread its
//! contiguous chunks (a scan's per-thread run), and their grid-stride loop.

use core::marker::PhantomData;

use crate::device::grid_stride::Strided;
use crate::device::thread::linear;

/// A writable kernel parameter owned chunk by chunk: the `C` contiguous
/// elements of chunk `c` belong to the thread whose
/// [`global_linear_idx`](crate::device::global_linear_idx) is `c % total_threads()`
/// (see the [module docs](super)). `#[repr(C)] { ptr, len }`, passed like a
/// [`DeviceSliceMut`](crate::device::DeviceSliceMut). For contiguous per-thread
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
    /// As for [`DeviceSliceMut::from_raw_parts`](crate::device::DeviceSliceMut::from_raw_parts).
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
    /// [`global_linear_idx()`](crate::device::global_linear_idx), or `None` past the
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
