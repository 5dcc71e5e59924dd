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
