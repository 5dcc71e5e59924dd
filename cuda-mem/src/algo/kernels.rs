//! The kernels of the algorithms: the shipped PTX (`algo-kernels/`), the
//! loading of each kernel into a context (once, at its first use, cached
//! in the context's state, with the state memory the streams keep for
//! them), the launches, and the single-pass kernels' look-back states (in
//! memory from `scratch`).

use std::collections::HashMap;
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result, sys, CudaFunction, CudaStream};

use crate::algo::scratch::{KeptStates, Temporary, COUNTER_BYTES};
use crate::context::ContextState;
use crate::error::{DriverResultExt, Error, Result};

/// The PTX of the algorithm kernels (`algo-kernels/`), shipped inside this
/// package so that building cuda-mem needs no nightly toolchain. The `ptx`
/// test of the repository's `tests/` rebuilds it and fails when it differs.
const KERNELS_PTX: &str = include_str!("../../ptx/algo-kernels.ptx");

/// Threads per block of every algorithm kernel (`algo-kernels/`'s `BLOCK`).
pub(crate) const BLOCK: u32 = 256;

/// The PTX that cuda-mem loads for its algorithms (for inspection and
/// tests; [`kernel_names`] lists its entries).
///
/// ```
/// assert!(cuda_mem::algo::kernels_ptx().contains(".entry cuda_mem_scan_sum_f32"));
/// ```
pub fn kernels_ptx() -> &'static str {
    KERNELS_PTX
}

/// The element type names of the kernels, in the order of [`kernel_names`].
const TYPES: [&str; 6] = ["i32", "u32", "i64", "u64", "f32", "f64"];
/// The key types of the radix sort's kernels, and the sample types of the
/// histograms'.
const RADIX_TYPES: [&str; 10] = [
    "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "f32", "f64",
];

/// The PTX cuda-mem loads for the algorithm kernel `name` (one of
/// [`kernel_names`]): the shipped file's header and declarations and that
/// entry alone, so that a context compiles only the kernels it uses; for a
/// few kernels, with a limit on the registers per thread (`.maxnreg`).
///
/// ```
/// let ptx = cuda_mem::algo::kernel_ptx("cuda_mem_reduce_sum_u32").unwrap();
/// assert_eq!(ptx.matches(".entry").count(), 1);
/// assert!(cuda_mem::algo::kernel_ptx("no_such_kernel").is_none());
/// ```
pub fn kernel_ptx(name: &str) -> Option<String> {
    let ptx = entry_module(name)?;
    Some(match register_limit(name) {
        Some(registers) => with_register_limit(&ptx, registers),
        None => ptx,
    })
}

/// Every kernel entry the algorithms launch.
///
/// ```
/// assert!(cuda_mem::algo::kernel_names().any(|k| k == "cuda_mem_argmin_u64"));
/// ```
pub fn kernel_names() -> impl Iterator<Item = String> {
    let radix = RADIX_TYPES.into_iter().flat_map(|t| {
        ["radix_histogram", "radix_onesweep", "radix_onesweep_keys"]
            .into_iter()
            .map(move |k| format!("cuda_mem_{k}_{t}"))
    });
    // The wide passes (4-byte keys) and the narrow ones (keys of up to 4
    // bytes) with values.
    let radix_variants = RADIX_TYPES.into_iter().flat_map(|t| {
        let size = t[1..].parse::<usize>().unwrap_or(64) / 8;
        let wide = (size == 4).then(|| format!("cuda_mem_radix_onesweep_wide_{t}"));
        let narrow = (size <= 4).then(|| format!("cuda_mem_radix_onesweep_narrow_{t}"));
        wide.into_iter().chain(narrow)
    });
    let per_type = TYPES.into_iter().flat_map(|t| {
        [
            "reduce_sum",
            "reduce_min",
            "reduce_max",
            "count",
            "argmin",
            "argmax",
            "scan_sum",
            "scan_min",
            "scan_max",
            "select_flagged",
            "unique",
            "rle_heads",
            "rle_gather",
        ]
        .into_iter()
        .map(move |k| format!("cuda_mem_{k}_{t}"))
    });
    let histograms = RADIX_TYPES.into_iter().flat_map(|t| {
        [
            "histogram_even_u32",
            "histogram_range_u32",
            "histogram_even_u64",
            "histogram_range_u64",
        ]
        .into_iter()
        .map(move |k| format!("cuda_mem_{k}_{t}"))
    });
    per_type
        .chain(radix)
        .chain(radix_variants)
        .chain(histograms)
        .chain(
            [
                "cuda_mem_gather_bytes",
                "cuda_mem_segment_marks",
                "cuda_mem_soa_scatter_words",
                "cuda_mem_soa_gather_words",
                "cuda_mem_soa_scatter_bytes",
                "cuda_mem_soa_gather_bytes",
                "cuda_mem_soa_scatter_warps",
                "cuda_mem_soa_gather_warps",
                "cuda_mem_soa_scatter_bytewords",
                "cuda_mem_soa_gather_bytewords",
            ]
            .map(String::from),
        )
}

/// A PTX file and where its entries lie: the end of the header and the
/// module's declarations (the `.shared` arrays), which every kernel's module
/// starts with, and each entry's name and bytes, sorted by name. An entry
/// runs from its `.visible .entry` line up to the next entry's `// .globl`
/// comment (or its `.visible .entry` line), or the end: a `}` alone on a
/// line may also close an inline-asm block.
struct EntryIndex<'p> {
    ptx: &'p str,
    header: usize,
    entries: Vec<(&'p str, Range<usize>)>,
}

impl<'p> EntryIndex<'p> {
    /// Indexes `ptx`, whose entries are the lines `.visible .entry
    /// NAME(`. They are found by their `(`, which the compiler's PTX
    /// otherwise writes rarely (168 times in the shipped 10 MB file, once
    /// per entry), with a byte search ([`positions_of`]): 3.3 million host
    /// instructions for the whole file, once per process. Searching the
    /// text for an entry, as each kernel's first load in a context did
    /// before, cost about 2.5 instructions per byte up to the entry: 21.5
    /// million for `cuda_mem_reduce_sum_f32`, 8.4 MB in (`host_cost
    /// reduce` under callgrind).
    fn new(ptx: &'p str) -> Self {
        // Each entry's name, its line, and where its part of the file
        // begins (its `// .globl` comment, if any).
        let mut found: Vec<(&'p str, usize, usize)> = Vec::new();
        let line_at = |end: usize| ptx[..end].rfind('\n').map_or(0, |n| n + 1);
        for paren in positions_of(ptx.as_bytes(), b'(') {
            let line = line_at(paren);
            let Some(name) = ptx[line..paren].strip_prefix(".visible .entry ") else {
                continue;
            };
            // The line above, past blank ones.
            let mut above = line;
            while let Some(end) = above.checked_sub(1) {
                above = line_at(end);
                if !ptx[above..end].trim().is_empty() {
                    break;
                }
            }
            let begins = if ptx[above..line].starts_with("\t// .globl") {
                above
            } else {
                line
            };
            found.push((name, line, begins));
        }
        let ends = found.iter().skip(1).map(|&(_, _, begins)| begins);
        let mut entries: Vec<(&'p str, Range<usize>)> = found
            .iter()
            .zip(ends.chain([ptx.len()]))
            .map(|(&(name, line, _), end)| (name, line..end))
            .collect();
        entries.sort_unstable_by_key(|&(name, _)| name);
        Self {
            ptx,
            header: found.first().map_or(ptx.len(), |&(_, _, begins)| begins),
            entries,
        }
    }

    /// The PTX of one kernel: the header and declarations, then the entry
    /// `name` alone; `None` when there is no such entry.
    fn module(&self, name: &str) -> Option<String> {
        let at = self.entries.binary_search_by_key(&name, |&(n, _)| n).ok()?;
        let entry = &self.ptx[self.entries[at].1.clone()];
        Some(format!("{}{entry}", &self.ptx[..self.header]))
    }
}

/// Where `byte` is in `bytes`, in order: blocks of 128 bytes are tested
/// whole (a loop the compiler makes vector compares of), and only a block
/// that has the byte is looked through.
fn positions_of(bytes: &[u8], byte: u8) -> impl Iterator<Item = usize> + '_ {
    const BLOCK: usize = 128;
    bytes
        .chunks(BLOCK)
        .enumerate()
        .filter(move |(_, block)| match <&[u8; BLOCK]>::try_from(*block) {
            Ok(whole) => whole.iter().fold(false, |has, &b| has | (b == byte)),
            Err(_) => block.contains(&byte),
        })
        .flat_map(move |(n, block)| {
            let at = block.iter().enumerate().filter(move |&(_, &b)| b == byte);
            at.map(move |(i, _)| n * BLOCK + i)
        })
}

/// The PTX of one kernel of the shipped file (see [`EntryIndex`]), or
/// `None` when there is no such entry. A context JIT-compiles only the
/// kernels it uses (the whole file takes over a second), each once; the
/// file is indexed at the first kernel a process loads.
fn entry_module(name: &str) -> Option<String> {
    static INDEX: OnceLock<EntryIndex<'static>> = OnceLock::new();
    INDEX
        .get_or_init(|| EntryIndex::new(KERNELS_PTX))
        .module(name)
}

/// The registers per thread a kernel is compiled to (PTX's `.maxnreg`),
/// where fewer than the compiler's choice measured faster: more blocks on
/// each SM hide the waits of a look-back. (Rust has no launch bounds for
/// kernels, so the limit is set on the entry when it is loaded.) The
/// onesweep passes of keys of up to 4 bytes, at 768 threads per SM each:
/// keys alone (3 blocks of 256, 32 keys a thread) at 80 registers, without
/// spilling; keys with values (2 blocks of 384, 22 a thread) at 80 (the
/// compiler's 95: 1 block per SM), without spilling (a warp's registers
/// are allocated 256 at a time: 84 would take 88, past 65536 for two
/// blocks); the wide passes with values (2 blocks of 384, 23 a thread) at
/// 80 too, spilling one word a thread (stored and loaded once a tile); the
/// narrow ones (256 x 16) likewise, without spilling.
/// H200, one probe when these blocks had 256 threads: `(u32, u32)` pairs
/// at 72 registers 739 µs at 2^24 and 10.54 ms at 2^28, at 80 783 µs and
/// 11.24 ms. The structure-of-arrays
/// byte-word scatter at 48 (the compiler's 53; no spills): 5 blocks per SM
/// instead of 4, its single wave of warps waiting on memory less. H200, two
/// runs each, the bench's 12-byte struct into its fields' arrays: 1721-1726
/// GB/s at 1 GiB against 1612-1615 (0.82 of a copy of the bytes against
/// 0.77). The byte-word gather spills at 48 and ran slower (1571 against
/// 1634), so it keeps the compiler's choice.
fn register_limit(name: &str) -> Option<u32> {
    if name == "cuda_mem_soa_scatter_bytewords" {
        return Some(48);
    }
    let small_keys = ["_u8", "_i8", "_u16", "_i16", "_u32", "_i32", "_f32"]
        .iter()
        .any(|t| name.ends_with(t));
    // Both passes, `radix_onesweep_<K>` and `radix_onesweep_keys_<K>`.
    (small_keys && name.starts_with("cuda_mem_radix_onesweep_")).then_some(80)
}

/// `ptx` (one entry, [`entry_module`]'s) with its entry compiled to at most
/// `registers` registers per thread: `.maxnreg` between the parameters and
/// the body. Unchanged when the entry's shape is not found.
fn with_register_limit(ptx: &str, registers: u32) -> String {
    let Some(entry) = ptx.find(".visible .entry") else {
        return ptx.to_owned();
    };
    let Some(body) = ptx[entry..].find("\n)\n{").map(|at| entry + at) else {
        return ptx.to_owned();
    };
    format!(
        "{}\n)\n.maxnreg {registers}\n{{{}",
        &ptx[..body],
        &ptx[body + "\n)\n{".len()..]
    )
}

/// Loaded kernels by entry name, each with how many of its blocks the
/// device runs at once.
type Loaded = HashMap<Box<[u8]>, (CudaFunction, u32), BuildHasherDefault<NameHasher>>;

/// The algorithm kernels loaded into one context so far, and the
/// reductions' kept state memory.
pub(super) struct AlgoKernels {
    loaded: Mutex<Loaded>,
    /// The reductions' state memory, kept per stream.
    kept: KeptStates,
}

/// The algorithms' part of `state`, set up on first use.
fn algo_state(state: &ContextState) -> Result<&AlgoKernels> {
    state.lazy(&state.algo_kernels, || {
        Ok(AlgoKernels {
            loaded: Mutex::new(HashMap::default()),
            kept: KeptStates::default(),
        })
    })
}

/// The state memory of the one-launch reductions kept per stream in
/// `state`'s context (see `scratch`).
pub(super) fn kept_states(state: &ContextState) -> Result<&KeptStates> {
    Ok(&algo_state(state)?.kept)
}

/// The kernel `cuda_mem_<kind>_<ty>` of `state`'s context and its resident
/// blocks, loading it on first use; `kind` is the name's parts between
/// `cuda_mem` and the type, joined with `_` (`["reduce", "sum"]`).
pub(crate) fn kernel(state: &ContextState, kind: &[&str], ty: &str) -> Result<(CudaFunction, u32)> {
    kernel_shared(state, (kind, ty), 0)
}

/// [`kernel`] for a kernel launched with `dynamic` bytes of dynamic shared
/// memory: when loaded, its limit is raised to them (past the 48 KB a
/// kernel's static and dynamic shared memory may take without it).
pub(crate) fn kernel_shared(
    state: &ContextState,
    (kind, ty): (&[&str], &str),
    dynamic: u32,
) -> Result<(CudaFunction, u32)> {
    let kernels = algo_state(state)?;
    // Every call looks its kernel up, so the name is built on the stack and
    // hashed a word at a time: a `format!`ted `String` and the default
    // SipHash took about half of a small reduction's host instructions.
    let name = EntryName::new(kind, ty).ok_or(NO_SUCH_KERNEL)?;
    let mut loaded = kernels.loaded.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((function, resident)) = loaded.get(name.as_bytes()) {
        return Ok((function.clone(), *resident));
    }
    let name = name.as_str().ok_or(NO_SUCH_KERNEL)?;
    let ptx = kernel_ptx(name).ok_or(NO_SUCH_KERNEL)?;
    let module = state
        .ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .op("cuModuleLoadData (a cuda-mem algorithm kernel)")?;
    let function = module.load_function(name).op("cuModuleGetFunction")?;
    if dynamic > 0 {
        function
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                dynamic as i32,
            )
            .op("cuFuncSetAttribute (an algorithm kernel's dynamic shared memory)")?;
    }
    let per_sm = function
        .occupancy_max_active_blocks_per_multiprocessor(BLOCK, dynamic as usize, None)
        .op("cuOccupancyMaxActiveBlocksPerMultiprocessor")?;
    let resident = state.sm_count.max(1).saturating_mul(per_sm.max(1));
    loaded.insert(name.as_bytes().into(), (function.clone(), resident));
    Ok((function, resident))
}

/// The error of a kernel name that the shipped PTX does not have.
const NO_SUCH_KERNEL: Error = Error::InvalidArgument(
    "no such algorithm kernel (a cuda-mem bug: the host and algo-kernels/ differ)",
);

/// An algorithm kernel's entry name, `cuda_mem_<kind parts>_<ty>` joined
/// with `_`, built in place (the longest shipped name has 34 bytes).
struct EntryName {
    bytes: [u8; 64],
    len: usize,
}

impl EntryName {
    /// The name, or `None` when it would pass 64 bytes (no shipped kernel's
    /// does).
    fn new(kind: &[&str], ty: &str) -> Option<EntryName> {
        let mut name = EntryName {
            bytes: [0; 64],
            len: 0,
        };
        name.push("cuda_mem")?;
        for part in kind.iter().copied().chain([ty]) {
            name.push("_")?;
            name.push(part)?;
        }
        Some(name)
    }

    fn push(&mut self, part: &str) -> Option<()> {
        let end = self
            .len
            .checked_add(part.len())
            .filter(|&end| end <= self.bytes.len())?;
        self.bytes[self.len..end].copy_from_slice(part.as_bytes());
        self.len = end;
        Some(())
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    /// The name as text (always `Some`: whole `str`s were copied in).
    fn as_str(&self) -> Option<&str> {
        std::str::from_utf8(self.as_bytes()).ok()
    }
}

/// FNV-1a's steps over eight bytes at a time (then the bytes left): the
/// loaded kernels' map is keyed by names cuda-mem chooses, so it needs no
/// protection from chosen collisions, only speed.
pub(super) struct NameHasher(u64);

impl Default for NameHasher {
    fn default() -> Self {
        NameHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        const PRIME: u64 = 0x0100_0000_01b3;
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let word = <[u8; 8]>::try_from(word).map_or(0, u64::from_le_bytes);
            self.0 = (self.0 ^ word).wrapping_mul(PRIME);
        }
        for &byte in words.remainder() {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(PRIME);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A grid of one block per tile of `items` elements per thread (of
/// [`BLOCK`] threads) over `len` elements, at least one block and at most
/// what the device runs at once (`resident`): the first pass of a
/// reduction, and every kernel that strides over its input.
pub(super) fn grid(len: usize, items: usize, resident: u32) -> u32 {
    let tiles = len.div_ceil(BLOCK as usize * items);
    tiles.clamp(1, resident.max(1) as usize) as u32
}

/// Queues `function` on `stream` with `grid` blocks of [`BLOCK`] threads.
///
/// # Safety
/// `params` point to the kernel's parameters, of its types and in order,
/// living until the call returns (the driver copies them); the memory
/// they name is ordered on `stream` as the kernel's contract asks.
pub(crate) unsafe fn launch(
    stream: &CudaStream,
    function: &CudaFunction,
    grid: u32,
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { launch_blocks(stream, function, (grid, BLOCK), params) }
}

/// Queues `function` on `stream` with `grid` blocks of `block` threads
/// (the kernel's own block size, where it is not [`BLOCK`]).
///
/// # Safety
/// As for [`launch`], and `block` is the size the kernel was built for.
pub(super) unsafe fn launch_blocks(
    stream: &CudaStream,
    function: &CudaFunction,
    (grid, block): (u32, u32),
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { launch_shared(stream, function, (grid, block, 0), params) }
}

/// [`launch_blocks`] with `shared` bytes of dynamic shared memory.
///
/// # Safety
/// As for [`launch_blocks`], and the kernel may take `shared` bytes (its
/// limit raised first where they pass 48 KB with its static ones).
pub(super) unsafe fn launch_shared(
    stream: &CudaStream,
    function: &CudaFunction,
    (grid, block, shared): (u32, u32, u32),
    params: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: the caller's contract; the function belongs to the stream's
    // context (loaded through the memory's context state, which
    // `check_stream` matched to the stream).
    unsafe {
        result::launch_kernel(
            function.cu_function(),
            (grid, 1, 1),
            (block, 1, 1),
            shared,
            stream.cu_stream(),
            params,
        )
    }
    .op("cuLaunchKernel (cuda-mem algorithm)")
}

/// Runs `launch` with the address of the zeroed state of a single-pass
/// kernel over `tiles` tiles whose look-back carries `T`s (the tile
/// counter, then the `TileStatus`): memory of the stream's kept block
/// past the reductions' counter (see `scratch`), zeroed on `stream` just
/// before, or of a temporary.
///
/// # Safety
/// `launch` queues on `stream` work that uses the state only while it
/// runs (one single-pass kernel); `stream` passed `check_stream`.
pub(super) unsafe fn with_lookback_state<T: crate::copy::device_copy::DeviceCopy, R>(
    state: &ContextState,
    stream: &Arc<CudaStream>,
    tiles: usize,
    launch: impl FnOnce(u64) -> Result<R>,
) -> Result<R> {
    let bytes = COUNTER_BYTES + crate::device::wide::TileStatus::<T>::bytes(tiles);
    let run = |block: u64| {
        // After the reductions' counter, which stays 0 (16-aligned).
        let at = block + COUNTER_BYTES as u64;
        // SAFETY: `bytes` bytes of the block past its counter, ordered on
        // `stream` (the block's lock is held).
        unsafe { Temporary::zero_at(at, bytes, stream) }?;
        launch(at)
    };
    // SAFETY: the caller's contract; the work leaves the first
    // `COUNTER_BYTES` untouched.
    unsafe { kept_states(state)?.with(state, stream, COUNTER_BYTES + bytes, run) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names the lookup builds are the shipped kernels' (every name
    /// the host lists, split as its callers pass it), parts join with `_`,
    /// and a name past 64 bytes is refused, never cut short.
    #[test]
    fn entry_names_are_the_kernels_names() {
        for name in kernel_names() {
            let rest = name.strip_prefix("cuda_mem_").unwrap();
            let (kind, ty) = rest.rsplit_once('_').unwrap();
            let built = EntryName::new(&[kind], ty).unwrap();
            assert_eq!(built.as_str(), Some(name.as_str()));
            assert!(kernel_ptx(built.as_str().unwrap()).is_some(), "{name}");
        }
        let scan = EntryName::new(&["scan", "sum"], "f32").unwrap();
        assert_eq!(scan.as_str(), Some("cuda_mem_scan_sum_f32"));
        let histogram = EntryName::new(&["histogram_range", "u64"], "f64").unwrap();
        assert_eq!(histogram.as_bytes(), b"cuda_mem_histogram_range_u64_f64");
        let long = "k".repeat(64 - "cuda_mem__u8".len());
        assert_eq!(EntryName::new(&[&long], "u8").unwrap().as_bytes().len(), 64);
        assert!(EntryName::new(&[&format!("{long}k")], "u8").is_none());
        assert!(EntryName::new(&["x"; 40], "u8").is_none());
    }

    /// Names that differ in any byte, or only in length, hash apart here
    /// (the map would still be right if they collided, only slower).
    #[test]
    fn name_hashes_differ() {
        use std::hash::BuildHasher;
        let hash = |name: &[u8]| BuildHasherDefault::<NameHasher>::default().hash_one(name);
        let names: Vec<String> = kernel_names().collect();
        let mut hashes: Vec<u64> = names.iter().map(|n| hash(n.as_bytes())).collect();
        hashes.sort_unstable();
        hashes.dedup();
        assert_eq!(hashes.len(), names.len());
        assert_ne!(hash(b"cuda_mem_a"), hash(b"cuda_mem_a\0"));
    }

    #[test]
    fn lookback_states_hold_the_counter_and_every_tile() {
        use crate::device::wide::TileStatus;
        assert_eq!(COUNTER_BYTES + TileStatus::<u32>::bytes(3), 16 + 24);
        assert_eq!(COUNTER_BYTES + TileStatus::<f64>::bytes(3), 16 + 16 + 48);
    }

    /// Every kernel the host launches can be cut out of the shipped PTX,
    /// with the module's declarations and no other entry.
    #[test]
    fn every_kernel_is_a_module_of_its_own() {
        for name in kernel_names() {
            let ptx = entry_module(&name).unwrap_or_else(|| panic!("{name}"));
            assert!(ptx.starts_with(&KERNELS_PTX[..KERNELS_PTX.find(".shared").unwrap()]));
            assert_eq!(ptx.matches(".visible .entry").count(), 1, "{name}");
            assert!(ptx.contains(&format!(".visible .entry {name}(")));
            assert!(ptx.trim_end().ends_with("\n}"), "{name}");
            assert_eq!(ptx.matches('{').count(), ptx.matches('}').count(), "{name}");
        }
        assert!(entry_module("cuda_mem_scan_sum").is_none());
    }

    /// The index cuts every entry of the shipped file as searching the
    /// text for it does (the lookup this index replaced), and knows no
    /// other names.
    #[test]
    fn the_index_cuts_entries_as_a_text_search_does() {
        let searched = |name: &str| -> Option<String> {
            let first = KERNELS_PTX.find("\t// .globl")?;
            let start = KERNELS_PTX.find(&format!(".visible .entry {name}("))?;
            let end = KERNELS_PTX[start..]
                .find("\t// .globl")
                .map_or(KERNELS_PTX.len(), |n| start + n);
            Some(format!(
                "{}{}",
                &KERNELS_PTX[..first],
                &KERNELS_PTX[start..end]
            ))
        };
        let index = EntryIndex::new(KERNELS_PTX);
        assert_eq!(
            index.entries.len(),
            KERNELS_PTX.matches(".visible .entry").count()
        );
        for (name, _) in &index.entries {
            assert_eq!(index.module(name), searched(name), "{name}");
        }
        for name in kernel_names() {
            assert!(index.entries.iter().any(|(n, _)| *n == name), "{name}");
        }
    }

    /// The byte search finds every position of its byte, in order, at any
    /// length (whole blocks, a short last one, none) and density.
    #[test]
    fn positions_of_finds_every_byte() {
        use proptest::collection::vec;
        use proptest::prelude::*;
        let bytes = (0u8..=255).prop_flat_map(|top| (vec(0..=top, 0..700), 0..=top));
        let mut property = crate::test_rng::Property::new("ENTRY_INDEX_SEED");
        property.check_cases(300, &bytes, |(bytes, byte)| {
            let every: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == byte).collect();
            assert_eq!(positions_of(&bytes, byte).collect::<Vec<_>>(), every);
        });
    }

    /// Entries with and without `// .globl` comments (one a blank line
    /// above its entry), the last one running to the end of the file; a
    /// name is matched whole.
    #[test]
    fn the_index_reads_entries_with_or_without_comments() {
        let ptx =
            ".version 8.0\n.shared .b8 s[4];\n\t// .globl\tb\n\n.visible .entry b(\n)\n{\n}\n\
                   .visible .entry a(\n.param .u32 x\n)\n{\n}\n\t// .globl\tab\n\
                   .visible .entry ab(\n)\n{\n}";
        let index = EntryIndex::new(ptx);
        let header = ".version 8.0\n.shared .b8 s[4];\n";
        let module = |name| index.module(name);
        assert_eq!(
            module("b").unwrap(),
            format!("{header}.visible .entry b(\n)\n{{\n}}\n")
        );
        assert_eq!(
            module("a").unwrap(),
            format!("{header}.visible .entry a(\n.param .u32 x\n)\n{{\n}}\n")
        );
        assert_eq!(
            module("ab").unwrap(),
            format!("{header}.visible .entry ab(\n)\n{{\n}}")
        );
        assert_eq!(module(""), None);
        assert_eq!(module("c"), None);
        assert_eq!(EntryIndex::new("// nothing\n").entries.len(), 0);
    }

    /// The limited kernels get `.maxnreg` between their parameters and
    /// their body, the others nothing.
    #[test]
    fn register_limits_go_on_their_entries_alone() {
        for (name, limit) in [
            ("cuda_mem_radix_onesweep_u32", Some(80)),
            ("cuda_mem_radix_onesweep_i32", Some(80)),
            ("cuda_mem_radix_onesweep_f32", Some(80)),
            ("cuda_mem_radix_onesweep_u16", Some(80)),
            ("cuda_mem_radix_onesweep_i8", Some(80)),
            ("cuda_mem_radix_onesweep_u64", None),
            ("cuda_mem_radix_onesweep_f64", None),
            ("cuda_mem_radix_onesweep_keys_u32", Some(80)),
            ("cuda_mem_radix_onesweep_keys_i8", Some(80)),
            ("cuda_mem_radix_onesweep_keys_u64", None),
            ("cuda_mem_radix_onesweep_wide_u32", Some(80)),
            ("cuda_mem_radix_onesweep_wide_f32", Some(80)),
            ("cuda_mem_radix_onesweep_narrow_i8", Some(80)),
            ("cuda_mem_radix_onesweep_narrow_u32", Some(80)),
            ("cuda_mem_scan_sum_u32", None),
            ("cuda_mem_reduce_sum_u32", None),
            ("cuda_mem_soa_scatter_bytewords", Some(48)),
            ("cuda_mem_soa_gather_bytewords", None),
            ("cuda_mem_soa_scatter_warps", None),
        ] {
            let ptx = kernel_ptx(name).unwrap();
            assert_eq!(ptx.contains(".maxnreg"), limit.is_some(), "{name}");
            if let Some(registers) = limit {
                let line = format!("\n.maxnreg {registers}");
                assert!(ptx.contains(&format!("\n){line}\n{{\n")), "{name}");
                assert_eq!(ptx.replace(&line, ""), entry_module(name).unwrap());
            }
        }
        let odd = "// no entry here\n";
        assert_eq!(with_register_limit(odd, 32), odd);
    }
}
