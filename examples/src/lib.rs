//! Shared helpers of the examples.

pub mod ranks;
pub mod raw;

use std::fmt::Display;

/// Opens device 0, or prints a one-line reason and exits with status 1.
///
/// ```no_run
/// let ctx = cuda_mem_examples::gpu_or_exit("quickstart");
/// ```
pub fn gpu_or_exit(example: &str) -> std::sync::Arc<cuda_mem::CudaContext> {
    match cuda_mem::context(0) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("{example}: needs a CUDA GPU: {e}");
            std::process::exit(1);
        }
    }
}

/// The checks an example makes: each is printed as it is made, and
/// [`finish`](Checks::finish) prints the verdict and exits with status 1 if
/// any failed.
///
/// ```
/// let mut checks = cuda_mem_examples::Checks::new("demo");
/// checks.check(1 + 1 == 2, "arithmetic works");
/// checks.finish(); // prints "demo: all 1 checks passed"
/// ```
#[derive(Debug)]
pub struct Checks {
    example: &'static str,
    total: usize,
    failed: Vec<String>,
}

impl Checks {
    /// No checks yet, for the example called `example`.
    ///
    /// ```
    /// let checks = cuda_mem_examples::Checks::new("pool");
    /// ```
    pub fn new(example: &'static str) -> Self {
        Self {
            example,
            total: 0,
            failed: Vec::new(),
        }
    }

    /// Records and prints one check; returns `ok`.
    ///
    /// ```
    /// # let mut checks = cuda_mem_examples::Checks::new("demo");
    /// let wrong = 0;
    /// checks.check(wrong == 0, format_args!("{wrong} wrong values"));
    /// ```
    pub fn check(&mut self, ok: bool, what: impl Display) -> bool {
        self.total += 1;
        if ok {
            println!("  ok      {what}");
        } else {
            println!("  FAILED  {what}");
            self.failed.push(what.to_string());
        }
        ok
    }

    /// Prints the verdict. Exits the process with status 1 (after listing
    /// the failed checks on stderr) if any check failed.
    ///
    /// ```
    /// cuda_mem_examples::Checks::new("nothing").finish();
    /// ```
    pub fn finish(self) {
        if self.failed.is_empty() {
            println!("{}: all {} checks passed", self.example, self.total);
            return;
        }
        eprintln!(
            "{}: {} of {} checks FAILED:",
            self.example,
            self.failed.len(),
            self.total
        );
        for what in &self.failed {
            eprintln!("  - {what}");
        }
        std::process::exit(1);
    }
}

/// A deterministic pseudo-random number in `[0, 1)` for `seed` (SplitMix64),
/// so that the examples use varied but reproducible data.
///
/// ```
/// use cuda_mem_examples::unit_f32;
/// assert_eq!(unit_f32(7), unit_f32(7));
/// assert_ne!(unit_f32(7), unit_f32(8));
/// assert!((0..1000).map(unit_f32).all(|u| (0.0..1.0).contains(&u)));
/// ```
pub fn unit_f32(seed: u64) -> f32 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    // 24 random bits: exactly representable, and below 1.0.
    (z >> 40) as f32 / (1u32 << 24) as f32
}

/// Gigabytes (10⁹ bytes) per second for `bytes` moved in `seconds`.
///
/// ```
/// assert_eq!(cuda_mem_examples::gb_per_s(2_000_000_000, 0.5), 4.0);
/// ```
pub fn gb_per_s(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}
