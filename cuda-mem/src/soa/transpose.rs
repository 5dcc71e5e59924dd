//! The transpositions between an array of structs and a [`SoaBuffer`]'s
//! field arrays, on the GPU: the kernels `cuda_mem_soa_scatter_*` and
//! `cuda_mem_soa_gather_*` of the algorithms' shipped PTX, in 4-byte words
//! when every field is whole words (else bytes), with one [`SoaTable`] of
//! every field. Structs of up to 4 KiB of words go through a tile per warp
//! (`warps`), and so do structs of whole words of up to 512 bytes whose
//! fields are not (`bytewords`: the structs move in words, the fields'
//! arrays 4 bytes at a time); the rest through a tile per block (`words`,
//! `bytes`).
//!
//! [`SoaBuffer`]: crate::soa::SoaBuffer

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::algo::kernels::{kernel, launch};
use crate::copy::soa::{DeviceSoA, MAX_FIELDS};
use crate::engine::soa_table::{
    warp_tile_structs, SoaTable, BYTEWORD_MAX, SOA_BLOCK, SOA_TILE_BYTES, WARP_TILE_BYTES,
};
use crate::engine::Elems;
use crate::error::{Error, Result};

/// Which way a transposition goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Structs into the fields' arrays.
    Scatter,
    /// The fields' arrays into structs.
    Gather,
}

/// Queues the transposition of the structs `aos` into the fields' arrays,
/// the regions of `len` elements at byte offsets `regions` of `soa`, on
/// `stream`.
pub(super) fn scatter<T: DeviceSoA>(
    aos: Elems<'_, T>,
    (soa, regions, len): (Elems<'_, u8>, &[usize], usize),
    stream: &Arc<CudaStream>,
) -> Result<()> {
    transpose::<T>(Way::Scatter, aos, (soa, regions, len), stream)
}

/// Queues the transposition of the fields' arrays into the structs `aos`.
pub(super) fn gather<T: DeviceSoA>(
    aos: Elems<'_, T>,
    (soa, regions, len): (Elems<'_, u8>, &[usize], usize),
    stream: &Arc<CudaStream>,
) -> Result<()> {
    transpose::<T>(Way::Gather, aos, (soa, regions, len), stream)
}

fn transpose<T: DeviceSoA>(
    way: Way,
    aos: Elems<'_, T>,
    (soa, regions, len): (Elems<'_, u8>, &[usize], usize),
    stream: &Arc<CudaStream>,
) -> Result<()> {
    if aos.len() != len {
        return Err(Error::LengthMismatch {
            expected: len,
            actual: aos.len(),
        });
    }
    if !aos.is_contiguous() {
        return Err(Error::InvalidArgument(
            "a view of padded 2D memory is not an array of structs to transpose; copy it into a \
             packed buffer first",
        ));
    }
    if size_of::<T>() > SOA_TILE_BYTES {
        return Err(Error::NotSupported(
            "structs of more than 32 KiB have no structure-of-arrays transposition",
        ));
    }
    if len == 0 {
        return Ok(());
    }
    let state = &soa.mem.state;
    let (aos_addr, soa_addr) = (aos.claim(stream)?.addr(), soa.claim(stream)?.addr());
    let words = size_of::<T>().is_multiple_of(4)
        && aos_addr.is_multiple_of(4)
        && T::FIELDS
            .iter()
            .all(|f| f.offset.is_multiple_of(4) && f.size.is_multiple_of(4));
    let unit = if words { 4 } else { 1 };
    let mut table = SoaTable {
        regions: [0; MAX_FIELDS],
        offsets: [0; MAX_FIELDS],
        sizes: [0; MAX_FIELDS],
        fields: T::FIELDS.len() as u32,
        stride: (size_of::<T>() / unit) as u32,
    };
    for (i, (f, &at)) in T::FIELDS.iter().zip(regions).enumerate() {
        table.regions[i] = soa_addr + at as u64;
        table.offsets[i] = (f.offset / unit) as u32;
        table.sizes[i] = (f.size / unit) as u32;
    }
    let name = if way == Way::Scatter {
        "soa_scatter"
    } else {
        "soa_gather"
    };
    // Words of structs that fit a warp's part of the tile (4 KiB): the
    // warp-tile kernels, whose warps do not wait for each other; structs of
    // whole words (up to `BYTEWORD_MAX`, at 4-byte aligned addresses) with
    // fields of any bytes: the byte-word warp-tile kernels; else the
    // block-tile ones.
    let bytewords = !words
        && size_of::<T>().is_multiple_of(4)
        && size_of::<T>() <= BYTEWORD_MAX
        && aos_addr.is_multiple_of(4)
        && table.regions.iter().all(|r| r.is_multiple_of(4));
    let warp_tiles = (words && size_of::<T>() <= WARP_TILE_BYTES) || bytewords;
    let flavour = match (words, warp_tiles) {
        (true, true) => "warps",
        (true, false) => "words",
        (false, true) => "bytewords",
        (false, false) => "bytes",
    };
    let (function, resident) = kernel(state, &[name], flavour)?;
    let per_tile = if warp_tiles {
        // A warp's structs, as the kernels cut them (the struct is whole
        // words in both warp-tile flavours).
        warp_tile_structs(size_of::<T>() / 4) * (SOA_BLOCK / 32)
    } else {
        SOA_TILE_BYTES / size_of::<T>()
    };
    let grid = len.div_ceil(per_tile).clamp(1, resident.max(1) as usize) as u32;
    let (mut at, mut n) = (aos_addr, len as u64);
    let params: &mut [*mut c_void] = &mut [
        (&mut at as *mut u64).cast(),
        (&mut n as *mut u64).cast(),
        (&mut table as *mut SoaTable).cast(),
    ];
    const { assert!(SOA_BLOCK == crate::algo::kernels::BLOCK as usize) };
    // SAFETY: `(aos, len, table)`: `len` structs at `aos` and the fields'
    // regions of `len` elements each inside `soa` (laid out by `regions`
    // from `T::FIELDS`, which the buffer checked against `T`), both claimed
    // on `stream`; the struct is at most `SOA_TILE_BYTES`; `BLOCK` threads.
    unsafe { launch(stream, &function, grid, params) }
}
