//! The raw driver launches that the benchmarks measure cuda-mem's launches
//! against (the `small` rows of `bench` and `examples/host-cost`): the same
//! kernels with hand-built parameters, through `cuLaunchKernel` alone.

use std::ffi::c_void;

use cuda_mem::cudarc::driver::{result, sys, DriverError};
use cuda_mem::LaunchConfig;

/// The pattern parameter of `cuda_mem_fill_small` (72 words: the value
/// repeated), as the kernel reads it.
///
/// ```
/// let p = cuda_mem_examples::raw::FillPattern::repeating(&[1, 2, 3, 4]);
/// assert_eq!(p.0[0], 0x0403_0201);
/// ```
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct FillPattern(pub [u32; 72]);

impl FillPattern {
    /// `value` repeated byte by byte over all 72 words.
    pub fn repeating(value: &[u8]) -> Self {
        Self(std::array::from_fn(|i| {
            u32::from_le_bytes(std::array::from_fn(|j| value[(4 * i + j) % value.len()]))
        }))
    }
}

/// `cuda_mem_fill_small` over `bytes` bytes at `addr` (one row) with
/// elements of `size` bytes repeated in `pattern`, one block of 256
/// threads, on `stream`.
///
/// # Safety
///
/// `function` is `cuda_mem_fill_small` of cuda-mem's fill PTX, loaded in
/// `stream`'s context; `addr` is `bytes` writable bytes of device memory that
/// nothing else uses until the kernel is done; `pattern` repeats an element
/// of `size` bytes, and `bytes` is a multiple of `size`.
pub unsafe fn fill_small(
    function: sys::CUfunction,
    stream: sys::CUstream,
    addr: u64,
    bytes: u64,
    size: u32,
    pattern: &FillPattern,
) -> Result<(), DriverError> {
    let (mut a, mut pitch, mut row, mut rows, mut sz) = (addr, bytes, bytes, 1u64, size);
    let mut pattern = *pattern;
    let params: &mut [*mut c_void] = &mut [
        (&mut a as *mut u64).cast(),
        (&mut pitch as *mut u64).cast(),
        (&mut row as *mut u64).cast(),
        (&mut rows as *mut u64).cast(),
        (&mut sz as *mut u32).cast(),
        (&mut pattern as *mut FillPattern).cast(),
    ];
    // SAFETY: the fill kernel's exact signature (the caller's promise),
    // parameters that outlive the call.
    unsafe { result::launch_kernel(function, (1, 1, 1), (256, 1, 1), 0, stream, params) }
}

/// A kernel taking `(DeviceSliceMut<f32>, f32)` (`scale_f32` of
/// `particles-shared`) over `len` floats at `ptr`, with `config`, on
/// `stream`.
///
/// # Safety
///
/// `function` has exactly those parameters and is loaded in `stream`'s
/// context; `ptr` is `len` floats of device memory that nothing else uses
/// until the kernel is done.
pub unsafe fn slice_and_scalar(
    function: sys::CUfunction,
    stream: sys::CUstream,
    config: LaunchConfig,
    ptr: u64,
    len: usize,
    factor: f32,
) -> Result<(), DriverError> {
    // A `#[kernel]` entry point takes a slice as two parameters, its
    // address and its length.
    let (mut ptr, mut len, mut factor) = (ptr, len, factor);
    let params: &mut [*mut c_void] = &mut [
        (&mut ptr as *mut u64).cast(),
        (&mut len as *mut usize).cast(),
        (&mut factor as *mut f32).cast(),
    ];
    // SAFETY: the kernel's parameters (the caller's promise), which outlive
    // the call.
    unsafe { launch(function, stream, config, params) }
}

/// `cuLaunchKernel` of a `#[kernel]` fn that takes two slices (`(input,
/// output)`: `kinetic_aos`), each its address and its length.
///
/// # Safety
///
/// `function` has exactly those parameters and is loaded in `stream`'s
/// context; `input` is `len` elements of device memory, and `output` `len`
/// elements that nothing else uses until the kernel is done.
pub unsafe fn two_slices(
    function: sys::CUfunction,
    stream: sys::CUstream,
    config: LaunchConfig,
    input: u64,
    output: u64,
    len: usize,
) -> Result<(), DriverError> {
    let (mut input, mut input_len, mut output, mut output_len) = (input, len, output, len);
    let params: &mut [*mut c_void] = &mut [
        (&mut input as *mut u64).cast(),
        (&mut input_len as *mut usize).cast(),
        (&mut output as *mut u64).cast(),
        (&mut output_len as *mut usize).cast(),
    ];
    // SAFETY: the kernel's parameters (the caller's promise), which outlive
    // the call.
    unsafe { launch(function, stream, config, params) }
}

/// `cuLaunchKernel` of one of cuda-mem's one-launch reductions
/// (`cuda_mem_reduce_sum_f32`, `algo::kernel_ptx`): `(input, len, state,
/// out)`, one block of 256 threads (inputs of one tile).
///
/// # Safety
///
/// `function` is such a kernel, loaded in `stream`'s context; `input` is
/// `len` elements of device memory, at most one tile of the kernel;
/// `state` is 32 bytes of device memory whose first 16 are zero (the
/// kernel leaves them zero), and `out` has room for one element; nothing
/// else uses `state` or `out` until the kernel is done.
pub unsafe fn reduce(
    function: sys::CUfunction,
    stream: sys::CUstream,
    input: u64,
    len: usize,
    (state, out): (u64, u64),
) -> Result<(), DriverError> {
    let (mut input, mut len, mut state, mut out) = (input, len as u64, state, out);
    let params: &mut [*mut c_void] = &mut [
        (&mut input as *mut u64).cast(),
        (&mut len as *mut u64).cast(),
        (&mut state as *mut u64).cast(),
        (&mut out as *mut u64).cast(),
    ];
    let config = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel's parameters (the caller's promise), which outlive
    // the call.
    unsafe { launch(function, stream, config, params) }
}

/// `cuLaunchKernel` of `function` with `config` (no shared memory) and
/// `params`, on `stream`: what the typed launchers above share.
///
/// # Safety
///
/// `params` are `function`'s parameters, of its types and in order, and
/// `function` is loaded in `stream`'s context.
unsafe fn launch(
    function: sys::CUfunction,
    stream: sys::CUstream,
    config: LaunchConfig,
    params: &mut [*mut c_void],
) -> Result<(), DriverError> {
    // SAFETY: the caller's promise.
    unsafe {
        result::launch_kernel(
            function,
            config.grid_dim,
            config.block_dim,
            0,
            stream,
            params,
        )
    }
}
