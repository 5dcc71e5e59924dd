//! Pure pattern arithmetic shared by the fill kernels.
//!
//! Nothing here touches the GPU, so the host unit tests of `cuda-mem` include this
//! file (`#[path]`) and check it against a byte-by-byte reference.

/// Number of 32-bit words in [`SmallPattern`]: the value (at most
/// [`SMALL_PATTERN_MAX`] bytes) repeated up to 288 bytes, so that any 16-byte
/// window starting inside the first period can be read without wrapping (a
/// window starting at byte `o < S` reads words `o / 4 ..= o / 4 + 4`).
pub const SMALL_PATTERN_WORDS: usize = 72;

/// Largest element size, in bytes, that the by-parameter fill kernel takes.
pub const SMALL_PATTERN_MAX: usize = 256;

/// The value of a small fill, repeated: byte `i` is `value[i % size]`.
///
/// Passed by value as a kernel parameter and only ever indexed with constants,
/// so it stays in the parameter bank (a runtime index would make the compiler
/// copy all 288 bytes to a per-thread local frame).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct SmallPattern {
    /// The repeated value, as little-endian words.
    pub words: [u32; SMALL_PATTERN_WORDS],
}

/// Selects `words[index]` (or 0 past the end) without indexing memory at run time.
///
/// A chain of selects with constant indices: it keeps `words` in the
/// kernel-parameter bank instead of a per-thread local-memory copy, which a
/// run-time index would force (and which costs about 20% of fill bandwidth).
#[inline(always)]
pub fn select_word(words: &[u32; SMALL_PATTERN_WORDS], index: u32) -> u32 {
    // Written out (not a loop) so that no index is ever a run-time value.
    macro_rules! chain {
        ($($i:literal),*) => {{
            let mut picked = 0;
            $(picked = if index == $i { words[$i] } else { picked };)*
            picked
        }};
    }
    chain!(
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
        25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47,
        48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70,
        71
    )
}

/// Joins `lo` and `hi` and takes the 32 bits starting `shift` bits into `lo`.
#[inline(always)]
pub fn funnel(lo: u32, hi: u32, shift: u32) -> u32 {
    ((((hi as u64) << 32) | lo as u64) >> shift) as u32
}

/// The 16 bytes of a small pattern starting at byte `offset` (`offset < size`),
/// as four little-endian words.
#[inline(always)]
pub fn small_chunk(pattern: &SmallPattern, offset: u32) -> [u32; 4] {
    let word = offset / 4;
    let shift = (offset % 4) * 8;
    let w = [
        select_word(&pattern.words, word),
        select_word(&pattern.words, word + 1),
        select_word(&pattern.words, word + 2),
        select_word(&pattern.words, word + 3),
        select_word(&pattern.words, word + 4),
    ];
    [
        funnel(w[0], w[1], shift),
        funnel(w[1], w[2], shift),
        funnel(w[2], w[3], shift),
        funnel(w[3], w[4], shift),
    ]
}

/// Byte `offset` of a small pattern (`offset < SMALL_PATTERN_WORDS * 4`).
#[inline(always)]
pub fn small_byte(pattern: &SmallPattern, offset: u32) -> u8 {
    (select_word(&pattern.words, offset / 4) >> ((offset % 4) * 8)) as u8
}

/// Alignment of the first chunk of a row. Chunks start at a 128-byte boundary
/// so that each warp's 512-byte store covers whole cache lines: starting at a
/// mere 16-byte boundary leaves lines half-written by two warps, which cost
/// about a third of the bandwidth on an H200.
pub const CHUNK_ALIGN: u64 = 128;

/// How one row of a fill splits into an unaligned head, 16-byte chunks and a tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSplit {
    /// Bytes before the first [`CHUNK_ALIGN`]-aligned address (at most 127).
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
    ((chunk % size) * 16 + head) % size
}
