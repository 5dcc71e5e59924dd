//! [`SoaTable`]: the parameter of the transposition kernels
//! (`algo-kernels/`'s `cuda_mem_soa_scatter_*` / `cuda_mem_soa_gather_*`),
//! shared by the host, which builds it, and the kernels, which read it. Not
//! part of the public API: it is the layout of those kernels' parameter and
//! may change with them.

use crate::copy::soa::MAX_FIELDS;

/// Bytes of the tile of whole structs a block stages in shared memory:
/// a struct of more cannot be transposed.
pub const SOA_TILE_BYTES: usize = 32 << 10;

/// Threads per block of the transposition kernels.
pub const SOA_BLOCK: usize = 256;

/// Bytes of a warp's part of the tile in the warp-tile kernels: a struct
/// of whole words of at most this many goes through them.
pub const WARP_TILE_BYTES: usize = SOA_TILE_BYTES / (SOA_BLOCK / 32);

/// The largest struct of the byte-word kernels, in bytes: 8 to a warp's
/// tile, so that every tile's bytes of a field start on 4 bytes.
pub const BYTEWORD_MAX: usize = WARP_TILE_BYTES / 8;

/// Structs of `words` 4-byte words in a warp's tile: as many as fit,
/// rounded down to a multiple of 8 where 8 fit, so that every tile starts
/// on a 32-byte sector of the array of structs and of each field's array
/// (no sector is written by two warps). The kernels cut their tiles by it
/// and the host sizes its grid by it.
pub const fn warp_tile_structs(words: usize) -> usize {
    let n = WARP_TILE_BYTES / 4 / words;
    if n >= 8 {
        n / 8 * 8
    } else {
        n
    }
}

/// Which fields a transposition moves, in units of its kernel (4-byte words
/// or bytes): field `f` of element `i` is the `sizes[f]` units at
/// `offsets[f] + i * stride` of the array of structs and at
/// `regions[f] + i * sizes[f]` (an address) of its own array.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SoaTable {
    /// The address of each field's element 0.
    pub regions: [u64; MAX_FIELDS],
    /// Each field's offset in the struct.
    pub offsets: [u32; MAX_FIELDS],
    /// Each field's size.
    pub sizes: [u32; MAX_FIELDS],
    /// The number of fields (at most [`MAX_FIELDS`]).
    pub fields: u32,
    /// The struct's size.
    pub stride: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A warp's structs fill its 4 KiB with a multiple of 8 where 8 fit, and
    /// the largest byte-word struct still has 8.
    #[test]
    fn warp_tiles_hold_whole_sectors_of_structs() {
        assert_eq!(WARP_TILE_BYTES, 4096);
        for (words, structs) in [(1, 1024), (3, 336), (12, 80), (128, 8), (129, 7), (1024, 1)] {
            assert_eq!(warp_tile_structs(words), structs, "{words} words");
        }
        assert_eq!(warp_tile_structs(BYTEWORD_MAX / 4), 8);
    }
}
