//! The C++ side of the parity rows: the twins of the Rust kernels
//! (`examples/parity-kernels/cuda/parity.cu`), built with nvcc into a cubin
//! and loaded into the bench's context, and CUB's device-wide algorithms
//! (`cuda/cub.cu`), built into a shared library and loaded with
//! `libloading`. Where nvcc is missing, [`Cxx::build`] says so in one line
//! and the rows are skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use cuda_mem::cudarc::driver::{CudaFunction, CudaModule};
use cuda_mem::cudarc::nvrtc::Ptx;
use cuda_mem::CudaContext;

/// The twins' source.
const TWINS: &str = include_str!("../../parity-kernels/cuda/parity.cu");
/// The CUB wrappers' source.
const CUB: &str = include_str!("../../parity-kernels/cuda/cub.cu");
/// The CUB and Thrust wrappers of the `algo` rows.
const ALGO: &str = include_str!("../../parity-kernels/cuda/algo.cu");

/// nvcc: `$NVCC`, `$CUDA_HOME/bin/nvcc`, the first on `PATH`, or
/// `/usr/local/cuda/bin/nvcc`.
fn nvcc() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("NVCC") {
        return Some(path.into());
    }
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(home) = std::env::var_os("CUDA_HOME") {
        candidates.push(Path::new(&home).join("bin/nvcc"));
    }
    if let Some(paths) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&paths).map(|d| d.join("nvcc")));
    }
    candidates.push("/usr/local/cuda/bin/nvcc".into());
    candidates.into_iter().find(|p| p.is_file())
}

/// What every nvcc build of the bench needs: nvcc, the device's `-arch`
/// flag, a fresh temporary directory named for `what`, and `nvcc
/// --version`'s last line.
struct Nvcc {
    path: PathBuf,
    arch: String,
    dir: PathBuf,
    version: String,
}

impl Nvcc {
    fn find(ctx: &Arc<CudaContext>, what: &str) -> Result<Self, String> {
        let path = nvcc().ok_or("nvcc not found (set NVCC or CUDA_HOME)")?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| format!("compute capability: {e}"))?;
        let dir = std::env::temp_dir().join(format!("cuda-mem-{what}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let version = Command::new(&path)
            .arg("--version")
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default();
        Ok(Self {
            path,
            arch: format!("-arch=sm_{major}{minor}"),
            dir,
            version,
        })
    }

    /// Writes `source` as `name` in the directory and builds it into a
    /// shared library `lib<stem>.so` there (`-O3`, the device's arch).
    fn shared_library(&self, name: &str, source: &str) -> Result<PathBuf, String> {
        let path = self.dir.join(name);
        std::fs::write(&path, source).map_err(|e| e.to_string())?;
        let stem = name.trim_end_matches(".cu");
        let library = self.dir.join(format!("lib{stem}.so"));
        run(Command::new(&self.path)
            .args(["-O3", &self.arch, "-shared", "-Xcompiler", "-fPIC", "-o"])
            .arg(&library)
            .arg(&path))?;
        Ok(library)
    }
}

/// The twins loaded in a context, CUB's library, and what ptxas said.
pub struct Cxx {
    module: Arc<CudaModule>,
    /// CUB's algorithms, if their library built.
    pub cub: Option<Cub>,
    /// `nvcc --version`'s last line.
    pub version: String,
}

impl Cxx {
    /// Builds the twins (and CUB's library) with nvcc for the device's
    /// architecture in a temporary directory and loads them, or says why
    /// not.
    pub fn build(ctx: &Arc<CudaContext>) -> Result<Self, String> {
        let nvcc = Nvcc::find(ctx, "parity")?;
        let (arch, dir) = (&nvcc.arch, &nvcc.dir);
        let source = dir.join("parity.cu");
        std::fs::write(&source, TWINS).map_err(|e| e.to_string())?;
        let cubin = dir.join("parity.cubin");
        run(Command::new(&nvcc.path)
            .args(["-O3", arch, "-cubin", "-o"])
            .arg(&cubin)
            .arg(&source))?;
        let image = std::fs::read(&cubin).map_err(|e| e.to_string())?;
        let module = ctx
            .load_module(Ptx::from_binary(image))
            .map_err(|e| format!("loading the twins' cubin: {e}"))?;
        let cub = Cub::build(&nvcc)
            .map_err(|e| println!("parity: CUB rows skipped: {e}"))
            .ok();
        Ok(Self {
            module,
            cub,
            version: nvcc.version,
        })
    }

    /// The twin named `name`.
    pub fn function(&self, name: &str) -> CudaFunction {
        self.module
            .load_function(name)
            .unwrap_or_else(|e| panic!("the C++ twin {name}: {e}"))
    }
}

/// Runs an nvcc command, or returns its output as the error.
fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| format!("running nvcc: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "nvcc failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// `size_t f(int n)`: a CUB algorithm's temporary bytes for `n` items.
type TempBytes = unsafe extern "C" fn(i32) -> usize;
/// `int f(temp, bytes, in, out, n, stream)`.
type Algorithm = unsafe extern "C" fn(
    *mut std::ffi::c_void,
    usize,
    *const std::ffi::c_void,
    *mut std::ffi::c_void,
    i32,
    cuda_mem::cudarc::driver::sys::CUstream,
) -> i32;

/// CUB's sum, histogram and exclusive scan, from the library built from
/// `cub.cu`.
pub struct Cub {
    _library: libloading::Library,
    pub sum_temp: TempBytes,
    pub sum: Algorithm,
    pub histogram_temp: TempBytes,
    pub histogram: Algorithm,
    pub scan_temp: TempBytes,
    pub scan: Algorithm,
}

impl Cub {
    fn build(nvcc: &Nvcc) -> Result<Self, String> {
        let library = nvcc.shared_library("cub.cu", CUB)?;
        // SAFETY: the library just built from `cub.cu`: C functions with the
        // signatures below, no initialisation code of its own beyond the CUDA
        // runtime's.
        let lib = unsafe { libloading::Library::new(&library) }.map_err(|e| e.to_string())?;
        // SAFETY: each symbol is the `extern "C"` function of `cub.cu` with
        // the type it is read as (pointer parameters as `void*`, the same
        // ABI); the library stays loaded as long as `Cub` lives.
        unsafe {
            Ok(Self {
                sum_temp: *lib
                    .get::<TempBytes>(b"parity_cub_sum_temp_bytes")
                    .map_err(|e| e.to_string())?,
                sum: *lib
                    .get::<Algorithm>(b"parity_cub_sum")
                    .map_err(|e| e.to_string())?,
                histogram_temp: *lib
                    .get::<TempBytes>(b"parity_cub_histogram_temp_bytes")
                    .map_err(|e| e.to_string())?,
                histogram: *lib
                    .get::<Algorithm>(b"parity_cub_histogram")
                    .map_err(|e| e.to_string())?,
                scan_temp: *lib
                    .get::<TempBytes>(b"parity_cub_scan_temp_bytes")
                    .map_err(|e| e.to_string())?,
                scan: *lib
                    .get::<Algorithm>(b"parity_cub_scan")
                    .map_err(|e| e.to_string())?,
                _library: lib,
            })
        }
    }
}

/// `size_t f(int which, int n)`: CUB's temporary bytes for algorithm `which`.
type AlgoTempBytes = unsafe extern "C" fn(i32, i32) -> usize;
/// `int f(which, temp, bytes, in, out, n, stream)`.
type AlgoCub = unsafe extern "C" fn(
    i32,
    *mut std::ffi::c_void,
    usize,
    *const std::ffi::c_void,
    *mut std::ffi::c_void,
    i32,
    cuda_mem::cudarc::driver::sys::CUstream,
) -> i32;
/// `int f(which, in, out, n, stream)`.
type AlgoThrust = unsafe extern "C" fn(
    i32,
    *const std::ffi::c_void,
    *mut std::ffi::c_void,
    i32,
    cuda_mem::cudarc::driver::sys::CUstream,
) -> i32;

/// `int f(temp, bytes, keys_in, keys_out, values_in, values_out, n, stream)`.
type AlgoCubSort = unsafe extern "C" fn(
    *mut std::ffi::c_void,
    usize,
    *const u32,
    *mut u32,
    *const u32,
    *mut u32,
    i32,
    cuda_mem::cudarc::driver::sys::CUstream,
) -> i32;
/// `int f(keys, values, n, stream)`.
type AlgoThrustSort =
    unsafe extern "C" fn(*mut u32, *mut u32, i32, cuda_mem::cudarc::driver::sys::CUstream) -> i32;

/// CUB's and Thrust's sum and max reductions, exclusive and inclusive
/// sums (`algo.cu`, whose header numbers them) and radix sorts, for the
/// `algo` rows.
pub struct AlgoLib {
    _library: libloading::Library,
    pub temp_bytes: AlgoTempBytes,
    pub cub: AlgoCub,
    pub thrust: AlgoThrust,
    /// `size_t f(int pairs, int n)`.
    pub sort_temp_bytes: AlgoTempBytes,
    pub cub_sort: AlgoCubSort,
    pub thrust_sort: AlgoThrustSort,
    /// `nvcc --version`'s last line.
    pub version: String,
}

impl AlgoLib {
    /// Builds `algo.cu` with nvcc for the device's architecture and loads
    /// it, or says why not.
    pub fn build(ctx: &Arc<CudaContext>) -> Result<Self, String> {
        let nvcc = Nvcc::find(ctx, "algo")?;
        let library = nvcc.shared_library("algo.cu", ALGO)?;
        let version = nvcc.version;
        // SAFETY: the library just built from `algo.cu`: C functions with
        // the signatures below, no initialisation code of its own beyond the
        // CUDA runtime's.
        let lib = unsafe { libloading::Library::new(&library) }.map_err(|e| e.to_string())?;
        // SAFETY: each symbol is the `extern "C"` function of `algo.cu` with
        // the type it is read as; the library stays loaded as long as
        // `AlgoLib` lives.
        unsafe {
            Ok(Self {
                temp_bytes: *lib
                    .get::<AlgoTempBytes>(b"algo_cub_temp_bytes")
                    .map_err(|e| e.to_string())?,
                cub: *lib.get::<AlgoCub>(b"algo_cub").map_err(|e| e.to_string())?,
                thrust: *lib
                    .get::<AlgoThrust>(b"algo_thrust")
                    .map_err(|e| e.to_string())?,
                sort_temp_bytes: *lib
                    .get::<AlgoTempBytes>(b"algo_cub_sort_temp_bytes")
                    .map_err(|e| e.to_string())?,
                cub_sort: *lib
                    .get::<AlgoCubSort>(b"algo_cub_sort")
                    .map_err(|e| e.to_string())?,
                thrust_sort: *lib
                    .get::<AlgoThrustSort>(b"algo_thrust_sort")
                    .map_err(|e| e.to_string())?,
                _library: lib,
                version,
            })
        }
    }
}
