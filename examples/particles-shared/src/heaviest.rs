//! The `heaviest` example's kernel: the first index of the heaviest
//! [`Particle`], a device-wide arg-max over one field of a
//! derived struct, with the device std's building blocks on a user's own
//! type and operator:
//!
//! 1. each block reduces its tiles of particles to a [`Heaviest`] with
//!    [`reduce_slice`] (coalesced loads, many in flight, then a block
//!    reduction through warp shuffles of the 8-byte struct) and the
//!    operator [`HeavierFirst`];
//! 2. thread 0 of each block folds the block's result into one `u64` in
//!    global memory with an atomic maximum of its [`key`].
//!
//! `cuda_mem::algo::max_index` does the same for a plain `f32` buffer; this
//! is how a kernel does it for a field of its own struct.

use cuda_mem::device::ops::Operator;
use cuda_mem::device::wide::reduce_slice;
use cuda_mem::device::{block_thread_rank, DeviceAtomicSlice, DeviceSlice, Scope};
use cuda_mem::{kernel, DeviceCopy};

use crate::Particle;

/// Threads per block of [`heaviest_particle`] (its declared block shape).
pub const BLOCK: usize = 256;

/// A candidate: a particle's mass and its index. 8 bytes, no padding, so
/// the warp shuffles move it as two words.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Heaviest {
    /// The mass (kg).
    pub mass: f32,
    /// The particle's index.
    pub index: u32,
}

/// The heavier candidate; on equal masses, the lower index (associative
/// and commutative, so any order of combination gives the first heaviest).
///
/// ```
/// use cuda_mem::device::ops::Operator;
/// use particles_shared::heaviest::{HeavierFirst, Heaviest};
/// let (a, b) = (Heaviest { mass: 2.0, index: 9 }, Heaviest { mass: 2.0, index: 4 });
/// assert_eq!(HeavierFirst.apply(a, b), b);
/// assert_eq!(HeavierFirst.apply(HeavierFirst.identity(), a), a);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HeavierFirst;

impl Operator<Heaviest> for HeavierFirst {
    #[inline(always)]
    fn identity(self) -> Heaviest {
        Heaviest {
            mass: f32::NEG_INFINITY,
            index: u32::MAX,
        }
    }

    #[inline(always)]
    fn apply(self, a: Heaviest, b: Heaviest) -> Heaviest {
        if a.mass > b.mass || a.mass == b.mass && a.index <= b.index {
            a
        } else {
            b
        }
    }
}

/// An order-preserving `u64` for a candidate of positive mass: the mass's
/// bits (whose order is the order of positive floats) above the index
/// counted down, so the atomic maximum keeps the heaviest, then the first.
///
/// ```
/// use particles_shared::heaviest::{key, Heaviest};
/// assert!(key(Heaviest { mass: 2.0, index: 5 }) > key(Heaviest { mass: 1.5, index: 0 }));
/// assert!(key(Heaviest { mass: 2.0, index: 3 }) > key(Heaviest { mass: 2.0, index: 5 }));
/// ```
#[inline(always)]
pub fn key(h: Heaviest) -> u64 {
    (u64::from(h.mass.to_bits()) << 32) | u64::from(u32::MAX - h.index)
}

/// The index in a [`key`] (`u32::MAX` for a key of 0: no particle).
///
/// ```
/// use particles_shared::heaviest::{index_of, key, Heaviest};
/// assert_eq!(index_of(key(Heaviest { mass: 7.0, index: 12 })), 12);
/// ```
#[inline]
pub fn index_of(key: u64) -> u32 {
    u32::MAX - key as u32
}

/// Folds the first heaviest of `particles` (positive masses, fewer than
/// 2^32) into `best[0]` as a [`key`], with an atomic maximum: start `best`
/// at 0. Any grid: block `b` takes tiles `b`, `b + grid`, ...
#[kernel(block = [256])]
pub fn heaviest_particle(particles: DeviceSlice<Particle>, best: DeviceAtomicSlice<u64>) {
    let scratch = cuda_mem::shared_array![Heaviest; BLOCK / 32];
    let heaviest = reduce_slice::<Particle, Heaviest, _, BLOCK, 8>(
        &particles,
        |i, p| Heaviest {
            mass: p.mass,
            index: i as u32,
        },
        HeavierFirst,
        scratch.as_slice(),
    );
    if let (0, Some(best)) = (block_thread_rank(), best.get(0)) {
        best.fetch_max(key(heaviest), Scope::Device);
    }
}
