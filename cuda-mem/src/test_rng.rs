//! The random numbers of the crate's own unit tests: a small xorshift
//! generator (the tests need no crate) and a fresh seed per run that an
//! environment variable can pin to replay a failure.

/// A deterministic xorshift64 generator; its state must not be 0.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// A value in `0..n` (`n > 0`), for `u64` arithmetic.
    pub(crate) fn below_u64(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The seed in the environment variable `var`, to replay a run, or else a
/// fresh one (never 0).
pub(crate) fn seed(var: &str) -> u64 {
    if let Some(seed) = std::env::var(var).ok().and_then(|s| s.parse().ok()) {
        return seed;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        | 1
}
