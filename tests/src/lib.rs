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

/// The `ptxas` to validate PTX with: `$PTXAS`, else the first on `PATH`.
/// `bash .ci/test` installs it (PyPI `nvidia-cuda-nvcc`, no GPU needed).
pub fn ptxas() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("PTXAS") {
        return p.into();
    }
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("ptxas"))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!("ptxas not found: run the tests with `bash .ci/test` (it installs ptxas), or set PTXAS=/path/to/ptxas")
    })
}

/// Assembles `ptx` with ptxas for sm_80 and sm_90; panics with ptxas's
/// message (naming `name`) if either rejects it.
pub fn assemble_ptx(ptx: &str, name: &str) {
    let dir = std::env::temp_dir().join(format!("cuda-mem-ptx-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let out = std::process::Command::new(ptxas())
            .arg(format!("-arch={arch}"))
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("{name}-{arch}.cubin")))
            .output()
            .expect("run ptxas");
        assert!(
            out.status.success(),
            "ptxas -arch={arch} rejected {name}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Bytes of a slice of `DeviceCopy` values.
pub fn bytes<T: cuda_mem::DeviceCopy>(values: &[T]) -> &[u8] {
    cuda_mem::bytes_of_slice(values)
}
