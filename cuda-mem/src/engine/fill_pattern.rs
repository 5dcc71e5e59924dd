//! The pattern arithmetic of the fill kernels, shared by the host (which
//! builds the kernel parameters) and the kernels in `kernels/` (which depend on
//! cuda-mem without its host API). Nothing here touches the GPU, so the host
//! unit tests of `fill` check it against a byte-by-byte reference.
//!
//! Not part of the public API: it is the layout of the fill kernels'
//! parameters and may change with them.

/// Threads per block of every fill kernel: the host launches them so, and
/// the kernels assume it (each kernel's `# Safety` requires it).
///
/// ```
/// assert_eq!(cuda_mem::fill_pattern::FILL_BLOCK_THREADS, 256);
/// ```
pub const FILL_BLOCK_THREADS: u32 = 256;

/// Number of 32-bit words in [`SmallPattern`]: the value (at most
/// [`SMALL_PATTERN_MAX`] bytes) repeated up to 288 bytes, so that any 16-byte
/// window starting inside the first period can be read without wrapping (a
/// window starting at byte `o < S` reads words `o / 4 ..= o / 4 + 4`).
pub const SMALL_PATTERN_WORDS: usize = 72;

// The kernels stage the pattern four words per load.
const _: () =
    assert!(SMALL_PATTERN_WORDS.is_multiple_of(4) && MEDIUM_PATTERN_WORDS.is_multiple_of(4));

/// Largest element size, in bytes, that the small by-parameter fill kernel takes.
pub const SMALL_PATTERN_MAX: usize = 256;

/// Number of 32-bit words in [`MediumPattern`]: 4032 bytes, which with the
/// kernel's other parameters (40 bytes, padded to 48) stays inside the 4 KiB
/// that every CUDA device and driver accepts for a kernel's parameters.
pub const MEDIUM_PATTERN_WORDS: usize = 1008;

/// Largest element size, in bytes, that the medium by-parameter fill kernel
/// takes: the largest `size` whose windows (`(size - 1) / 4 + 5` words)
/// fit in [`MEDIUM_PATTERN_WORDS`]. Larger values go through device memory.
pub const MEDIUM_PATTERN_MAX: usize = (MEDIUM_PATTERN_WORDS - 5) * 4 + 1;

/// The words of a pattern of `words` words that a fill with an element of
/// `size` bytes reads (windows start below `size`): `(size - 1) / 4 + 5`,
/// at most `words`.
#[inline(always)]
pub fn pattern_words_read(size: u32, words: u32) -> u32 {
    let read = (size.max(1) - 1) / 4 + 5;
    if read < words {
        read
    } else {
        words
    }
}

/// The value of a by-parameter fill, repeated: byte `i` is
/// `value[i % size]`, for the `W`-word parameter of a fill kernel.
///
/// Passed by value as a kernel parameter. The kernel reads it by address from
/// the parameter space (see `pattern_word` in the kernel crate): indexing the
/// Rust parameter at run time would make the compiler copy it all to a
/// per-thread local frame, and a chain of constant-index selects compiles to
/// jump tables that diverge across a warp's phases.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Pattern<const W: usize> {
    /// The repeated value, as little-endian words.
    pub words: [u32; W],
}

/// The parameter of the small fill kernel (values of at most
/// [`SMALL_PATTERN_MAX`] bytes).
pub type SmallPattern = Pattern<SMALL_PATTERN_WORDS>;

/// The parameter of the medium fill kernel (values of at most
/// [`MEDIUM_PATTERN_MAX`] bytes).
pub type MediumPattern = Pattern<MEDIUM_PATTERN_WORDS>;

impl<const W: usize> Pattern<W> {
    /// `value` (`1 <= value.len()`, with `(len - 1) / 4 + 5 <= W`) repeated
    /// over the words a fill reads; the rest stay zero (8 of 72 words for a
    /// 16-byte value: this runs on every fill's launch path).
    ///
    /// ```
    /// let p = cuda_mem::fill_pattern::SmallPattern::repeating(&[1, 2, 3]);
    /// assert_eq!(p.words[0], u32::from_le_bytes([1, 2, 3, 1]));
    /// ```
    #[inline]
    pub fn repeating(value: &[u8]) -> Self {
        let mut pattern = Self { words: [0; W] };
        pattern.repeat_into(value);
        pattern
    }

    /// [`repeating`](Self::repeating) written into `self`, whose words are
    /// all zero: the launch path builds the kernel's parameter where it is
    /// launched from, rather than moving a returned one (288 bytes, or 4 KiB
    /// for a medium pattern).
    ///
    /// ```
    /// use cuda_mem::fill_pattern::SmallPattern;
    /// let mut p = SmallPattern { words: [0; 72] };
    /// p.repeat_into(&[1, 2, 3]);
    /// assert_eq!(p.words, SmallPattern::repeating(&[1, 2, 3]).words);
    /// ```
    #[inline(always)]
    pub fn repeat_into(&mut self, value: &[u8]) {
        let read = pattern_words_read(value.len() as u32, W as u32) as usize;
        // Whole copies of the value into the words' own bytes, then each
        // word read as little-endian (nothing to do on a little-endian
        // host): not a branch per byte on every fill's launch path (4 KiB of
        // them for a medium pattern), and no second buffer.
        let words = &mut self.words[..read];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(words);
        for piece in bytes.chunks_mut(value.len()) {
            piece.copy_from_slice(&value[..piece.len()]);
        }
        for word in words {
            *word = u32::from_le(*word);
        }
    }
}

/// Joins `lo` and `hi` and takes the 32 bits starting `shift` bits into `lo`.
#[inline(always)]
pub fn funnel(lo: u32, hi: u32, shift: u32) -> u32 {
    ((((hi as u64) << 32) | lo as u64) >> shift) as u32
}

/// The 16 bytes starting at byte `offset` (`offset < size`) of a pattern
/// whose 32-bit word `i` is `word(i)`, as four little-endian words. Reads
/// words `offset / 4 ..= offset / 4 + 4`.
#[inline(always)]
pub fn chunk_at(word: impl Fn(u32) -> u32, offset: u32) -> [u32; 4] {
    let first = offset / 4;
    let shift = (offset % 4) * 8;
    let w = [
        word(first),
        word(first + 1),
        word(first + 2),
        word(first + 3),
        word(first + 4),
    ];
    [
        funnel(w[0], w[1], shift),
        funnel(w[1], w[2], shift),
        funnel(w[2], w[3], shift),
        funnel(w[3], w[4], shift),
    ]
}

/// Byte `offset` of a pattern whose 32-bit word `i` is `word(i)`.
#[inline(always)]
pub fn byte_at(word: impl Fn(u32) -> u32, offset: u32) -> u8 {
    (word(offset / 4) >> ((offset % 4) * 8)) as u8
}

/// Alignment of the first chunk of a row. Chunks start at a 256-byte boundary:
/// starting at a mere 16-byte boundary leaves cache lines half-written by two
/// warps, which cost about a third of the bandwidth on an H200, and starting
/// at an odd multiple of 128 bytes still cost 4-9% (1 GiB fills of 8-, 12-
/// and 100-byte views measured at +128 and +384 bytes: 0.90-0.96 of the same
/// fill at +0, +256, +512 or +1024, where the driver's memset is equally fast
/// at every offset). The head before it (at most 255 bytes) is written byte
/// by byte by the row's first threads, of which there are at least 256.
pub const CHUNK_ALIGN: u64 = 256;

/// How one row of a fill splits into an unaligned head, 16-byte chunks and a tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSplit {
    /// Bytes before the first [`CHUNK_ALIGN`]-aligned address (at most 255).
    pub head: u64,
    /// Whole 16-byte chunks after the head.
    pub chunks: u64,
    /// Bytes after the last chunk (at most 15).
    pub tail: u64,
}

/// Splits a row of `row_bytes` bytes starting at address `start`.
#[inline(always)]
pub fn split_row(start: u64, row_bytes: u64) -> RowSplit {
    let to_aligned = (CHUNK_ALIGN - (start % CHUNK_ALIGN)) % CHUNK_ALIGN;
    let head = if to_aligned < row_bytes {
        to_aligned
    } else {
        row_bytes
    };
    let rest = row_bytes - head;
    RowSplit {
        head,
        chunks: rest / 16,
        tail: rest % 16,
    }
}

/// Offset into the value of the first byte of chunk `chunk` of a row whose
/// head is `head` bytes long, for an element of `size` bytes.
#[inline(always)]
pub fn chunk_offset(head: u64, chunk: u64, size: u64) -> u64 {
    // One division (a kernel does it before its first store): `chunk * 16`
    // cannot overflow, a row's chunks being bytes of device memory.
    (chunk * 16 + head) % size
}

/// The value offsets of one thread's chunks along a row when the thread's
/// phase moves from chunk to chunk (the medium kernel, whose grid need not
/// be a multiple of the period): chunk `tid + k * threads` starts at byte
/// `(first + k * step) % size` of the value, with `step = 16 * threads %
/// size`, kept by one addition and one conditional subtraction per chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkCycle {
    first: u32,
    offset: u32,
    step: u32,
    size: u32,
}

impl ChunkCycle {
    /// The cycle of thread `tid` of `threads` along a row whose head is
    /// `head` bytes long, for an element of `size` bytes (`1 <= size <
    /// 2^31`).
    ///
    /// ```
    /// use cuda_mem::fill_pattern::ChunkCycle;
    /// // 3 threads, 10-byte elements: thread 1 writes chunks 1, 4, 7, ...
    /// let mut c = ChunkCycle::new(0, 1, 3, 10);
    /// assert_eq!([c.next_offset(), c.next_offset(), c.next_offset()], [6, 4, 2]);
    /// c.restart();
    /// assert_eq!(c.next_offset(), 6);
    /// // 5 threads write 80 bytes per pass: 8 whole elements.
    /// assert!(!ChunkCycle::new(0, 1, 5, 10).moves());
    /// ```
    #[inline(always)]
    pub fn new(head: u64, tid: u64, threads: u64, size: u64) -> Self {
        let first = chunk_offset(head, tid, size) as u32;
        Self {
            first,
            offset: first,
            step: (threads * 16 % size) as u32,
            size: size as u32,
        }
    }

    /// Whether the phase moves at all: not when the threads along a row
    /// write a whole number of elements per pass (then every chunk of the
    /// thread starts at the same offset).
    #[inline(always)]
    pub fn moves(&self) -> bool {
        self.step != 0
    }

    /// Back to the thread's first chunk (of the next row).
    #[inline(always)]
    pub fn restart(&mut self) {
        self.offset = self.first;
    }

    /// The offset of the thread's next chunk, then one step on.
    #[inline(always)]
    pub fn next_offset(&mut self) -> u32 {
        let offset = self.offset;
        let next = offset + self.step;
        self.offset = if next >= self.size {
            next - self.size
        } else {
            next
        };
        offset
    }
}
