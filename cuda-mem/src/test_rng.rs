//! The random numbers of the crate's own unit tests: `rand`'s Xoshiro256++
//! seeded through `seed_from_u64` (a dev-dependency; the published crate
//! gains none), a fresh seed per run that an environment variable can pin to
//! replay a failure, and [`Property`], the property tests on `proptest`
//! (random cases, and the smallest failing one found by shrinking). The
//! tests crate (`cuda-mem-tests`) draws from the same generator.
//!
//! Xoshiro256++ is a named, portable algorithm (unlike `SmallRng`, which
//! may change between `rand` releases and platforms), so a seed replays the
//! same numbers on every machine. `seed_from_u64` expands the seed with
//! SplitMix64, whose output is a bijection of its input: distinct seeds
//! give distinct states.

use proptest::strategy::Strategy;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng as _, RngExt as _, SeedableRng as _};

/// A deterministic generator: the same seed gives the same numbers.
pub(crate) struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator seeded with `seed` (any value, 0 included).
    pub(crate) fn new(seed: u64) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// The next 64 random bits.
    pub(crate) fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A value in `0..n`, uniform (`n > 0`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }

    /// A value in `0..n`, uniform (`n > 0`), for `u64` arithmetic.
    pub(crate) fn below_u64(&mut self, n: u64) -> u64 {
        self.0.random_range(0..n)
    }
}

/// The seed in the environment variable `var`, to replay a run, or else a
/// fresh one from the clock. Printed as `var=seed` (the test harness shows
/// it when the test fails).
pub(crate) fn seed(var: &str) -> u64 {
    let seed = std::env::var(var)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        });
    eprintln!("{var}={seed}");
    seed
}

/// Property tests on `proptest`: cases drawn from one seeded runner (the
/// seed in the environment variable named at creation, or a fresh one, as
/// [`seed`]), each failure shrunk to the smallest case that still fails and
/// reported with the seed that replays the run. Nothing is saved to the
/// source tree (`proptest`'s failure files are off).
pub(crate) struct Property {
    runner: TestRunner,
    var: &'static str,
    seed: u64,
}

impl Property {
    pub(crate) fn new(var: &'static str) -> Self {
        let seed = seed(var);
        let config = Config {
            rng_seed: RngSeed::Fixed(seed),
            failure_persistence: None,
            ..Config::default()
        };
        Self {
            runner: TestRunner::new(config),
            var,
            seed,
        }
    }

    /// Runs `test` on one case of `strategy`; a panic fails the test with the
    /// smallest failing case.
    pub(crate) fn check<S: Strategy>(&mut self, strategy: &S, test: impl Fn(S::Value)) {
        let case = strategy
            .new_tree(&mut self.runner)
            .unwrap_or_else(|e| panic!("{}={}: no case: {e}", self.var, self.seed));
        let result = self.runner.run_one(case, |value| {
            test(value);
            Ok(())
        });
        if let Err(e) = result {
            panic!("{}={}: {e}", self.var, self.seed);
        }
    }

    /// Runs `test` on `cases` cases of `strategy`.
    pub(crate) fn check_cases<S: Strategy>(
        &mut self,
        cases: usize,
        strategy: &S,
        test: impl Fn(S::Value),
    ) {
        for _ in 0..cases {
            self.check(strategy, &test);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    fn stream(seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        (0..16).map(|_| rng.next()).collect()
    }

    #[test]
    fn neighbouring_seeds_give_different_sequences() {
        for even in (0..1000).map(|k| 2 * k).chain([20_261_204, u64::MAX - 1]) {
            assert_ne!(
                stream(even),
                stream(even + 1),
                "seeds {even} and {}",
                even + 1
            );
        }
        assert_ne!(stream(0), [0; 16], "seed 0 is a valid seed");
        assert_eq!(stream(7), stream(7), "a seed replays its sequence");
    }

    #[test]
    fn below_stays_below_and_reaches_every_value() {
        let mut rng = Rng::new(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = rng.below(7);
            assert!(v < 7);
            seen[v] = true;
            assert!(rng.below_u64(3) < 3);
        }
        assert!(seen.iter().all(|&s| s), "{seen:?}");
    }
}
