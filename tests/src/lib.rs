//! Helpers shared by the integration tests: a seeded random generator (so a
//! failing run can be replayed with `CUDA_MEM_SEED`), the GPU context, counts
//! from the environment, compute-sanitizer detection, error-message checks,
//! re-running one test of the current binary in a child process, the
//! engine of the differential tester ([`differential`]), and a slow kernel
//! for ordering tests ([`spin`]).
//!
//! Environment knobs (all optional):
//! - `CUDA_MEM_SEED`: the seed of every random test (printed by each test).
//! - `CUDA_MEM_DIFF_OPS`: operations per differential run (default 10,000).
//! - `CUDA_MEM_LONG_CYCLES`: alloc/free cycles per kind in `long_runs` (default 100,000).
//! - `CUDA_MEM_SANITIZER`: `1` to say the tests run under compute-sanitizer
//!   (normally detected), `0` to say they do not.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub mod differential;
pub mod spin;

pub use cuda_mem::{CudaContext, CudaStream};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{Rng as _, RngExt as _, SeedableRng as _};

/// The tests' random numbers: `rand`'s Xoshiro256++ seeded through
/// `seed_from_u64`, the generator of cuda-mem's own unit tests too. A named,
/// portable algorithm (unlike `SmallRng`), so a `CUDA_MEM_SEED` replays the
/// same run on every machine; distinct seeds give distinct streams
/// (`seed_from_u64` expands the seed with SplitMix64, a bijection).
pub struct Rng(Xoshiro256PlusPlus);

impl Rng {
    /// A generator seeded from `CUDA_MEM_SEED` or the clock; prints the seed.
    pub fn from_env(test: &str) -> Self {
        Self::new(seed_from_env(test))
    }

    /// A generator with a fixed seed (any value, 0 included).
    pub fn new(seed: u64) -> Self {
        Self(Xoshiro256PlusPlus::seed_from_u64(seed))
    }

    /// `items` in a random order (`rand`'s Fisher-Yates shuffle).
    ///
    /// ```
    /// let mut v = [1, 2, 3, 4];
    /// cuda_mem_tests::Rng::new(5).shuffle(&mut v);
    /// v.sort();
    /// assert_eq!(v, [1, 2, 3, 4]);
    /// ```
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        rand::seq::SliceRandom::shuffle(items, &mut self.0);
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }

    /// Random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut bytes = vec![0; n];
        self.0.fill_bytes(&mut bytes);
        bytes
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

/// A random 1D launch shape for `n` elements: blocks of 32 to 1024
/// threads, and one block, enough blocks for one element a thread, or a
/// few blocks (the kernels' grid-stride loops then cover the rest).
pub fn random_launch_config(rng: &mut Rng, n: usize) -> cuda_mem::LaunchConfig {
    let block = [32u32, 64, 128, 256, 1024][rng.below(5)];
    let grid = match rng.below(3) {
        0 => 1,
        1 => (n as u32).div_ceil(block).clamp(1, 65_535),
        _ => 1 + rng.below(50) as u32,
    };
    cuda_mem::LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The first GPU's primary context; panics (the test fails) without one.
pub fn gpu() -> Arc<CudaContext> {
    cuda_mem::context(0).expect("this test needs a CUDA device")
}

/// What a test makes current on its thread before it queues work on a
/// stream: no context at all, or a context other than the stream's.
#[derive(Clone, Copy)]
pub enum Current<'c> {
    Nothing,
    Other(&'c CudaContext),
}

impl Current<'_> {
    fn handle(self) -> cudarc::driver::sys::CUcontext {
        match self {
            Current::Nothing => std::ptr::null_mut(),
            Current::Other(ctx) => ctx.cu_ctx(),
        }
    }
}

impl std::fmt::Debug for Current<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Current::Nothing => f.write_str("no context current"),
            Current::Other(_) => f.write_str("another context current"),
        }
    }
}

/// The calling thread's current context (null for none).
fn current_context() -> cudarc::driver::sys::CUcontext {
    let mut current = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; the call only reads this thread's state.
    unsafe { cudarc::driver::sys::cuCtxGetCurrent(&mut current) }
        .result()
        .expect("cuCtxGetCurrent");
    current
}

/// Makes `current` the calling thread's current context, runs `f`, and
/// returns what `f` returned and whether `current` was still current after
/// it (work queued on a stream of its own need not change it).
pub fn with_current<R>(current: Current<'_>, f: impl FnOnce() -> R) -> (R, bool) {
    // SAFETY: a null context (none current) or a live one, `Other`'s borrow.
    unsafe { cudarc::driver::sys::cuCtxSetCurrent(current.handle()) }
        .result()
        .expect("cuCtxSetCurrent");
    let r = f();
    (r, current_context() == current.handle())
}

/// Bytes of a slice of `DeviceCopy` values.
pub fn bytes<T: cuda_mem::DeviceCopy>(values: &[T]) -> &[u8] {
    cuda_mem::bytes_of_slice(values)
}

/// The seed of a random test: `CUDA_MEM_SEED`, else the clock. Printed, so a
/// failing run can be replayed.
pub fn seed_from_env(test: &str) -> u64 {
    let seed = std::env::var("CUDA_MEM_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{test}: CUDA_MEM_SEED={seed}");
    seed
}

/// Begins and ends graph captures on `x` in a loop (cudarc's safe
/// `begin_capture` / `end_capture`, relaxed mode, the graph instantiated
/// and dropped) until `stop` is set; returns how many captures it ended.
/// For stress tests of another thread's work racing those captures.
///
/// With `ends`, each capture ends while this thread holds that lock, so
/// that the other thread can keep its calls that touch `x` apart from the
/// ends (holding the lock around them) and race only the beginnings:
/// driver 580 can crash when work, even an event record, is queued on a
/// stream while another thread ends a capture there
/// (`examples/examples/capture_race.rs`, which passes `None` to show it).
pub fn capture_until(
    x: &Arc<CudaStream>,
    stop: &std::sync::atomic::AtomicBool,
    ends: Option<&std::sync::Mutex<()>>,
) -> usize {
    use cuda_mem::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    let mut captures = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        if x.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .is_ok()
        {
            std::thread::yield_now();
            let _held = ends.map(|m| m.lock().unwrap_or_else(|p| p.into_inner()));
            // A capture that a joined stream left unjoined fails to end;
            // either way it is over.
            let _ = x.end_capture(
                CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH,
            );
            captures += 1;
        }
    }
    captures
}

/// A count from the environment variable `var` (underscores allowed:
/// `10_000`), else `default`. Printed when set.
pub fn env_count(var: &str, default: usize) -> usize {
    match std::env::var(var) {
        Ok(v) => {
            let n = v
                .replace('_', "")
                .trim()
                .parse()
                .unwrap_or_else(|_| panic!("{var}={v:?} is not a count"));
            eprintln!("{var}={n}");
            n
        }
        Err(_) => default,
    }
}

/// Whether the tests run under NVIDIA compute-sanitizer.
///
/// `CUDA_MEM_SANITIZER=1` (or `0`) says so explicitly. Otherwise the
/// sanitizer is recognised by what it puts into the environment of the
/// program it runs. Seen with compute-sanitizer 2025.3.1 (CUDA 13.0, driver
/// 580) in `compute-sanitizer --tool memcheck env`:
/// `NV_SANITIZER_INJECTION_PORT_BASE=49152`,
/// `NV_SANITIZER_INJECTION_TRANSPORT_TYPE=uds` and
/// `NVTX_INJECTION64_PATH=libsanitizer-collection.so` (and no
/// `CUDA_INJECTION64_PATH`). Older versions inject through
/// `CUDA_INJECTION64_PATH` or `LD_PRELOAD`, so a path naming "sanitizer"
/// there counts too.
pub fn under_sanitizer() -> bool {
    sanitizer_in(|var| std::env::var_os(var).map(|v| v.to_string_lossy().into_owned()))
}

/// [`under_sanitizer`] over an arbitrary environment (for testing the rule).
pub fn sanitizer_in(env: impl Fn(&str) -> Option<String>) -> bool {
    if let Some(v) = env("CUDA_MEM_SANITIZER") {
        match v.trim() {
            "1" | "true" | "yes" => return true,
            "0" | "false" | "no" => return false,
            _ => {}
        }
    }
    let names_sanitizer =
        |var: &str| env(var).is_some_and(|v| v.to_ascii_lowercase().contains("sanitizer"));
    [
        "NV_SANITIZER_INJECTION_PORT_BASE",
        "NV_SANITIZER_INJECTION_TRANSPORT_TYPE",
    ]
    .iter()
    .any(|var| env(var).is_some())
        || [
            "CUDA_INJECTION64_PATH",
            "NVTX_INJECTION64_PATH",
            "LD_PRELOAD",
        ]
        .iter()
        .any(|var| names_sanitizer(var))
}

/// For a test that makes the driver fail on purpose (out of memory, invalid
/// values, a faulting kernel): compute-sanitizer counts every failing driver
/// call as an error and fails the run, so under the sanitizer such a part is
/// skipped. Returns `true` (and prints why) when it must be skipped.
///
/// A skipping test still opens device 0: compute-sanitizer also fails a
/// process that ends without a single CUDA call ("terminated before first
/// instrumented API call"), which a binary whose only GPU test is skipped
/// would otherwise be.
pub fn skip_driver_errors_under_sanitizer(test: &str, why: &str) -> bool {
    let skip = under_sanitizer();
    if skip {
        eprintln!("{test}: skipped under compute-sanitizer: {why}");
        gpu();
    }
    skip
}

/// Asserts that `result` is an `Err` whose message contains every one of
/// `needles` (case-insensitive), and returns the error.
#[track_caller]
pub fn expect_err<T: std::fmt::Debug>(
    result: cuda_mem::Result<T>,
    needles: &[&str],
    what: &str,
) -> cuda_mem::Error {
    let err = match result {
        Ok(v) => panic!("{what}: expected an error mentioning {needles:?}, got Ok({v:?})"),
        Err(e) => e,
    };
    let text = err.to_string();
    let lower = text.to_ascii_lowercase();
    for needle in needles {
        assert!(
            lower.contains(&needle.to_ascii_lowercase()),
            "{what}: the message {text:?} does not mention {needle:?}"
        );
    }
    err
}

/// `ptxas` (no GPU needed): `$PTXAS`, else the first on `PATH`; panics with
/// how to get it (`bash .ci/test` installs it from PyPI `nvidia-cuda-nvcc`).
pub fn ptxas() -> PathBuf {
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

/// The text of the kernel `name` in `ptx`, from its `.entry` to the next one
/// (or the end); panics if the PTX has no such kernel.
pub fn ptx_kernel<'p>(ptx: &'p str, name: &str) -> &'p str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name} in the PTX"));
    let rest = &ptx[start..];
    let end = rest[1..].find(".entry ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// The signature fingerprint that `#[kernel]` embedded in `ptx` for the
/// kernel `name` (the 8-byte global `__cuda_mem_sig_<name>`, as the compiler
/// writes it: `.visible .global .align 8 .b8 __cuda_mem_sig_k[8] = {…};`), or
/// `None` if it is missing or not 8 initialised bytes.
///
/// ```
/// let ptx = ".visible .global .align 8 .b8 __cuda_mem_sig_k[8] = {1, 2, 0, 0, 0, 0, 0, 0};";
/// assert_eq!(cuda_mem_tests::ptx_fingerprint(ptx, "k"), Some(0x0201));
/// assert_eq!(cuda_mem_tests::ptx_fingerprint(ptx, "j"), None);
/// ```
pub fn ptx_fingerprint(ptx: &str, name: &str) -> Option<u64> {
    let bytes = ptx_global_bytes(ptx, &format!("__cuda_mem_sig_{name}"))?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// The bytes of the visible, 8-aligned `.b8` global `symbol` of `ptx`, as
/// declared: the initializer's bytes, and zeros for the ones it leaves out
/// (PTX may drop trailing zero bytes of an initializer).
pub fn ptx_global_bytes(ptx: &str, symbol: &str) -> Option<Vec<u8>> {
    let declaration = global_declaration(symbol);
    let start = ptx.find(&declaration)? + declaration.len();
    let rest = &ptx[start..];
    let size: usize = rest.split(']').next()?.parse().ok()?;
    let body = rest.split('{').nth(1)?.split('}').next()?;
    let mut bytes: Vec<u8> = body
        .split(',')
        .map(|b| b.trim().parse().ok())
        .collect::<Option<_>>()?;
    if bytes.len() > size {
        return None;
    }
    bytes.resize(size, 0);
    Some(bytes)
}

/// `ptx` with the initializer of the visible, 8-aligned `.b8` global
/// `symbol` replaced by `bytes` (all of its declared size), or `None` when
/// there is no such global or `bytes` is not its size: how the tests doctor
/// a kernel's statics.
///
/// ```
/// let ptx = ".visible .global .align 8 .b8 g[4] = {1, 2};\n.visible .entry k()";
/// let edited = cuda_mem_tests::ptx_with_global_bytes(ptx, "g", &[9, 8, 7, 6]).unwrap();
/// assert_eq!(cuda_mem_tests::ptx_global_bytes(&edited, "g"), Some(vec![9, 8, 7, 6]));
/// assert!(edited.ends_with("};\n.visible .entry k()"));
/// assert_eq!(cuda_mem_tests::ptx_with_global_bytes(ptx, "g", &[1]), None);
/// assert_eq!(cuda_mem_tests::ptx_with_global_bytes(ptx, "h", &[1]), None);
/// ```
pub fn ptx_with_global_bytes(ptx: &str, symbol: &str, bytes: &[u8]) -> Option<String> {
    if ptx_global_bytes(ptx, symbol)?.len() != bytes.len() {
        return None;
    }
    let start = ptx.find(&global_declaration(symbol))?;
    let open = start + ptx[start..].find('{')? + 1;
    let close = open + ptx[open..].find('}')?;
    let list: Vec<String> = bytes.iter().map(u8::to_string).collect();
    Some(format!(
        "{}{}{}",
        &ptx[..open],
        list.join(", "),
        &ptx[close..]
    ))
}

/// How the compiler declares a kernel's statics: a visible, 8-aligned
/// `.b8` array (its size and initializer follow).
fn global_declaration(symbol: &str) -> String {
    format!(".visible .global .align 8 .b8 {symbol}[")
}

/// The parameter table `#[kernel]` wrote for `name` into `ptx` (the
/// `__cuda_mem_abi_<name>` global: rows of five little-endian `u64`s), if
/// there is one.
pub fn ptx_param_table(ptx: &str, name: &str) -> Option<Vec<[u64; 5]>> {
    let bytes = ptx_global_bytes(ptx, &format!("__cuda_mem_abi_{name}"))?;
    if bytes.len() % 40 != 0 {
        return None;
    }
    Some(
        bytes
            .chunks(40)
            .map(|row| {
                std::array::from_fn(|i| {
                    u64::from_le_bytes(row[8 * i..8 * i + 8].try_into().unwrap())
                })
            })
            .collect(),
    )
}

/// Assembles `ptx` with [`ptxas`] for sm_80 and sm_90; panics with ptxas's
/// message if it is rejected.
pub fn assemble_ptx(ptx: &str, name: &str) {
    let dir = std::env::temp_dir().join(format!("cuda-mem-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.ptx"));
    std::fs::write(&file, ptx).unwrap();
    for arch in ["sm_80", "sm_90"] {
        let out = Command::new(ptxas())
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
}

/// Runs `$body` once for a buffer of each 1D kind holding a copy of `$data`
/// (a `&[T]`; empty for zero-length buffers): `DeviceBuffer::from_slice`,
/// `PinnedBuffer::from_slice`, `UnifiedBuffer::from_slice`,
/// `PoolBuffer::new(len, $stream)` and `PoolBuffer::from_pool($pool, ..)`
/// (both filled with `copy_from_host`), with `$b` bound to the buffer
/// (mutable) and `$name` to the kind's name.
///
/// ```ignore
/// for_each_kind!(&ctx, &stream, &pool, &data, |buf, name| {
///     assert_eq!(buf.to_vec().unwrap(), data, "{name}");
/// });
/// ```
#[macro_export]
macro_rules! for_each_kind {
    ($ctx:expr, $stream:expr, $pool:expr, $data:expr, |$b:ident, $name:ident| $body:block) => {{
        let (ctx, stream, pool, data) = ($ctx, $stream, $pool, $data);
        {
            #[allow(unused_mut)]
            let mut $b = ::cuda_mem::DeviceBuffer::from_slice(ctx, data).expect("device buffer");
            let $name = "device";
            $body
        }
        {
            #[allow(unused_mut)]
            let mut $b = ::cuda_mem::PinnedBuffer::from_slice(ctx, data).expect("pinned buffer");
            let $name = "pinned";
            $body
        }
        {
            #[allow(unused_mut)]
            let mut $b = ::cuda_mem::UnifiedBuffer::from_slice(ctx, data).expect("unified buffer");
            let $name = "unified";
            $body
        }
        {
            let mut $b = ::cuda_mem::PoolBuffer::new(data.len(), stream).expect("pool buffer");
            $b.copy_from_host(data).expect("copy_from_host");
            let $name = "pool";
            $body
        }
        {
            let mut $b = ::cuda_mem::PoolBuffer::from_pool(pool, data.len(), stream)
                .expect("MemPool buffer");
            $b.copy_from_host(data).expect("copy_from_host");
            let $name = "MemPool";
            $body
        }
    }};
}

/// What a child process printed and how it ended.
#[derive(Debug)]
pub struct ChildRun {
    /// The exit status (`None`: killed after the time limit).
    pub status: Option<std::process::ExitStatus>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl ChildRun {
    /// Both streams, for messages.
    pub fn output(&self) -> String {
        format!("--- stdout\n{}--- stderr\n{}", self.stdout, self.stderr)
    }
}

/// The command that runs this test binary's test `test` (`--exact`, ignored
/// tests included, output not captured, one thread) in a child process,
/// with `env` added to its environment; stdout and stderr are piped, and the
/// caller sets stdin.
///
/// ```no_run
/// let mut cmd = cuda_mem_tests::child_test_command("child_role", &[("ROLE", "child")]);
/// let child = cmd.stdin(std::process::Stdio::piped()).spawn()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn child_test_command<K: AsRef<std::ffi::OsStr>, V: AsRef<std::ffi::OsStr>>(
    test: &str,
    env: &[(K, V)],
) -> Command {
    let exe = std::env::current_exe().expect("the path of the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        test,
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs the test `test` (its full path inside the binary, e.g.
/// `child_faulting_kernel`) of the current test binary alone in a child
/// process, with `env` added to the environment, and kills it after
/// `limit`. The child is run with `--exact --include-ignored --nocapture
/// --test-threads=1`, so a child test marked `#[ignore]` (which does nothing
/// unless its environment variable is set) runs as well as a plain one.
pub fn run_test_in_child(test: &str, env: &[(&str, &str)], limit: Duration) -> ChildRun {
    let mut cmd = child_test_command(test, env);
    cmd.stdin(Stdio::null());
    let mut child = cmd.spawn().expect("start the child test process");
    // Drain both pipes on threads so a chatty child cannot block on a full pipe.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    ChildRun {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    }
}

/// `cuda_mem_launch_kernels::churned(x, rounds)` (the slow test kernel
/// `churn`'s function) in O(log rounds): the LCG step is the affine map
/// `x ↦ a·x + c` (mod 2³²), and `rounds` steps are its `rounds`-th power,
/// by squaring.
pub fn churned_fast(x: u32, mut rounds: u32) -> u32 {
    let (mut a, mut c) = (1_664_525u32, 1_013_904_223u32); // the map applied 2^k times
    let (mut acc_a, mut acc_c) = (1u32, 0u32); // the maps applied so far
    while rounds > 0 {
        if rounds & 1 == 1 {
            // acc ∘ = (a, c) after acc: x ↦ a·(acc_a·x + acc_c) + c
            acc_c = a.wrapping_mul(acc_c).wrapping_add(c);
            acc_a = a.wrapping_mul(acc_a);
        }
        c = a.wrapping_mul(c).wrapping_add(c);
        a = a.wrapping_mul(a);
        rounds >>= 1;
    }
    acc_a.wrapping_mul(x).wrapping_add(acc_c)
}

#[cfg(test)]
mod tests {
    use super::{run_test_in_child, sanitizer_in, Rng};
    use std::time::Duration;

    /// The first 16 values of the generator seeded with `seed`.
    fn stream(seed: u64) -> Vec<u64> {
        let mut rng = Rng::new(seed);
        (0..16).map(|_| rng.next_u64()).collect()
    }

    /// Distinct seeds give distinct streams, the neighbours `2k` and `2k + 1`
    /// included (the xorshift generator before `rand` mapped both to one
    /// state: `CUDA_MEM_SEED=20261204` and `20261205` replayed the same
    /// differential run).
    #[test]
    fn seeds_2k_and_2k_plus_1_give_different_sequences() {
        let mut seeds = vec![0, 20_261_204, u64::MAX - 1];
        seeds.extend((0..1000).map(|k| 2 * k));
        seeds.extend((1..1000u64).map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15) & !1));
        for even in seeds {
            assert_eq!(even % 2, 0, "{even}");
            assert_ne!(
                stream(even),
                stream(even + 1),
                "seeds {even} and {} give the same sequence",
                even + 1
            );
        }
        // The same seed replays the same sequence.
        assert_eq!(stream(20_261_205), stream(20_261_205));
    }

    /// Does what `CUDA_MEM_TEST_CHILD` says; nothing when it is unset.
    #[test]
    #[ignore = "a child of run_test_in_child_runs_one_test_with_a_time_limit"]
    fn child_for_the_helper_test() {
        match std::env::var("CUDA_MEM_TEST_CHILD").as_deref() {
            Ok("print") => println!("child says hello"),
            Ok("fail") => panic!("child fails"),
            Ok("hang") => std::thread::sleep(Duration::from_secs(600)),
            _ => {}
        }
    }

    #[test]
    fn run_test_in_child_runs_one_test_with_a_time_limit() {
        let name = "tests::child_for_the_helper_test";
        let limit = Duration::from_secs(60);
        let ok = run_test_in_child(name, &[("CUDA_MEM_TEST_CHILD", "print")], limit);
        assert!(ok.status.unwrap().success(), "{}", ok.output());
        assert!(ok.stdout.contains("child says hello"), "{}", ok.output());
        assert!(ok.stdout.contains("1 passed"), "{}", ok.output());
        let failed = run_test_in_child(name, &[("CUDA_MEM_TEST_CHILD", "fail")], limit);
        assert!(!failed.status.unwrap().success());
        assert!(
            failed.output().contains("child fails"),
            "{}",
            failed.output()
        );
        let start = std::time::Instant::now();
        let hung = run_test_in_child(
            name,
            &[("CUDA_MEM_TEST_CHILD", "hang")],
            Duration::from_secs(2),
        );
        assert!(hung.status.is_none(), "a hung child is killed");
        assert!(start.elapsed() < Duration::from_secs(30));
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn compute_sanitizer_is_recognised_by_its_environment() {
        // What compute-sanitizer 2025.3.1 sets (seen on an H200, CUDA 13.0).
        let seen = [
            ("NV_SANITIZER_INJECTION_PORT_BASE", "49152"),
            ("NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "uds"),
            ("NVTX_INJECTION64_PATH", "libsanitizer-collection.so"),
            (
                "LD_LIBRARY_PATH",
                "/usr/local/cuda-13.0/compute-sanitizer:/usr/lib",
            ),
        ];
        assert!(sanitizer_in(env(&seen)));
        assert!(sanitizer_in(env(&[(
            "NVTX_INJECTION64_PATH",
            "libsanitizer-collection.so"
        )])));
        assert!(sanitizer_in(env(&[(
            "CUDA_INJECTION64_PATH",
            "/opt/cuda/compute-sanitizer/libsanitizer-public.so"
        )])));
        assert!(sanitizer_in(env(&[(
            "LD_PRELOAD",
            "/x/libSanitizerInjection.so"
        )])));
        // Not a sanitizer: nothing, or another injection tool (Nsight Systems).
        assert!(!sanitizer_in(env(&[])));
        assert!(!sanitizer_in(env(&[(
            "CUDA_INJECTION64_PATH",
            "/opt/nsys/libToolsInjection64.so"
        )])));
        // The explicit override wins both ways.
        assert!(sanitizer_in(env(&[("CUDA_MEM_SANITIZER", "1")])));
        assert!(!sanitizer_in(env(&[
            ("CUDA_MEM_SANITIZER", "0"),
            ("NV_SANITIZER_INJECTION_PORT_BASE", "1")
        ])));
    }
}
