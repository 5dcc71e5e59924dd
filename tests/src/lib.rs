//! Helpers shared by the integration tests: a seeded random generator (so a
//! failing run can be replayed with `CUDA_MEM_SEED`) and the GPU context.

use std::sync::Arc;

pub use cuda_mem::{CudaContext, CudaStream};

/// xorshift64*: small, fast, good enough for test data.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `CUDA_MEM_SEED` or the clock; prints the seed.
    pub fn from_env(test: &str) -> Self {
        let seed = std::env::var("CUDA_MEM_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{test}: CUDA_MEM_SEED={seed}");
        Self::new(seed)
    }

    /// A generator with a fixed seed.
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9e37_79b9_7f4a_7c15 | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }

    /// A random value of a `DeviceCopy` type (any bytes are valid).
    pub fn value<T: cuda_mem::DeviceCopy>(&mut self) -> T {
        let bytes = self.bytes(size_of::<T>());
        // SAFETY: `T: DeviceCopy` — every bit pattern is a valid `T`, and
        // `read_unaligned` copes with the Vec's alignment.
        unsafe { bytes.as_ptr().cast::<T>().read_unaligned() }
    }

    /// `n` random values.
    pub fn values<T: cuda_mem::DeviceCopy>(&mut self, n: usize) -> Vec<T> {
        (0..n).map(|_| self.value()).collect()
    }

    /// A length that is often 0, 1 or a prime, otherwise random up to `max`.
    pub fn length(&mut self, max: usize) -> usize {
        const PRIMES: [usize; 10] = [2, 3, 5, 7, 13, 31, 127, 257, 1021, 4099];
        match self.below(6) {
            0 => 0,
            1 => 1,
            2 | 3 => PRIMES[self.below(PRIMES.len())].min(max),
            _ => self.below(max + 1),
        }
    }
}

/// The first GPU's primary context; panics (the test fails) without one.
pub fn gpu() -> Arc<CudaContext> {
    cuda_mem::context(0).expect("this test needs a CUDA device")
}

/// Bytes of a slice of `DeviceCopy` values.
pub fn bytes<T: cuda_mem::DeviceCopy>(values: &[T]) -> &[u8] {
    cuda_mem::bytes_of_slice(values)
}
