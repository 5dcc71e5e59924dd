//! The fill rows: every element size over 1 GiB (1 B to 4 KiB), views at
//! every start offset 1-15 bytes past a 16-byte boundary, fills of 1 MiB and
//! 16 MiB (where launch and tail costs show), and the fill kernels' tuning
//! knobs (`--sweep`, `--chunks`).

use cuda_mem::prelude::*;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::cudarc::driver::{CudaFunction, CudaStream};
use cuda_mem::{CudaContext, DeviceBuffer};

use crate::harness::{value, Bench};

const GIB: usize = 1 << 30;

const MIB: usize = 1 << 20;

/// The fill kernels' default grid tuning (`--chunks`' five numbers).
const DEFAULT_TUNING: [u32; 5] = [4, 4, 4, 8, 0];

fn fill_row<const N: usize>(b: &mut Bench, ctx: &Arc<CudaContext>, bytes: usize) {
    let len = bytes / N;
    let words = len * N / 4;
    let mut buf = DeviceBuffer::<[u8; N]>::new(ctx, len).unwrap();
    let gbps = |ms: f64, bytes: usize| bytes as f64 / ms / 1e6;
    let v = value::<N>();
    let stream = b.stream.clone();
    let addr = buf.as_device_ptr().addr();
    let (ours, raw) = b.gpu_pair_ms(
        || buf.fill_async(v, &stream).unwrap(),
        // SAFETY: the whole live allocation, on the stream the fills use.
        || unsafe {
            sys::cuMemsetD32Async(addr, 0x1234_5678, words, stream.cu_stream())
                .result()
                .unwrap()
        },
    );
    buf.fill_async(v, &stream).unwrap();
    let check = buf.slice(len - 1..).unwrap().to_vec().unwrap();
    assert_eq!(check[0], v, "fill result wrong for size {N}");
    b.push(
        "fill",
        format!("fill {N:>3} B elements, 1 GiB"),
        "GB/s",
        gbps(ours, len * N),
        gbps(raw, words * 4),
        "cuMemsetD32Async",
        true,
        Some(N),
    );
}

/// The sweeps' rows: [`sized_row`] of each element size `$n` over
/// `$bytes` bytes, `$batch` fills, each printed after `$tag`.
macro_rules! tagged_rows {
    ($b:expr, $ctx:expr, $tag:expr, $bytes:expr, $batch:expr; $($n:literal)*) => {
        $(
            print!("{} ", $tag);
            sized_row::<$n>($b, $ctx, $bytes, $batch);
        )*
    };
}

/// `--sweep`: the 1 GiB, 16 MiB and 1 MiB fill rows of a few element sizes
/// for several grid tunings (chunks per thread for short and long periods,
/// for the medium by-parameter kernel and for the value-in-memory kernel,
/// blocks-per-multiprocessor floor), then back to the defaults; `--chunks
/// SHORT,LONG,MEDIUM,LARGE,FLOOR`: the tuning for the run. The sweep's rows
/// are printed, not kept.
pub fn tuning(b: &mut Bench, ctx: &Arc<CudaContext>, sweep: bool, chunks: Option<[u32; 5]>) {
    if sweep {
        // The launch floor: 100 back-to-back fills of 4 KiB, where the
        // per-launch cost is all there is, against memset's.
        print!("sweep floor ");
        sized_row::<12>(b, ctx, 4096, 100);
        print!("sweep floor ");
        sized_row::<1000>(b, ctx, 4000, 100);
        let configs: [[u32; 5]; 5] = [
            DEFAULT_TUNING,
            [4, 4, 4, 4, 0],
            [4, 4, 4, 6, 0],
            [4, 4, 8, 12, 0],
            [4, 4, 4, 16, 0],
        ];
        for [short, long, medium, large, floor] in configs {
            cuda_mem::__set_fill_tuning(short, long, medium, large, floor);
            let tag = format!("sweep {short}/{long}/{medium}/{large}/{floor}");
            for (bytes, batch) in [(GIB, 1), (16 * MIB, 20)] {
                tagged_rows!(b, ctx, &tag, bytes, batch; 1500 2048 3000 4013 4096 8000);
            }
        }
        b.rows.clear();
        let [short, long, medium, large, floor] = DEFAULT_TUNING;
        cuda_mem::__set_fill_tuning(short, long, medium, large, floor);
    }
    if let Some([short, long, medium, large, floor]) = chunks {
        cuda_mem::__set_fill_tuning(short, long, medium, large, floor);
        println!(
            "fill kernels: {short} / {long} / {medium} / {large} chunks per thread (short / \
             long periods / medium / large values), floor {floor} blocks per SM"
        );
    }
}

/// `--small-sweep`: the 1 MiB and 16 MiB rows (where launch and tail costs
/// show) under several grid tunings, chunks per thread of the by-parameter
/// kernels and a blocks-per-multiprocessor floor, then back to the tuning
/// of the run. The rows are printed, not kept.
pub fn small_sweep(b: &mut Bench, ctx: &Arc<CudaContext>, chunks: Option<[u32; 5]>) {
    let kept = b.rows.len();
    for [per_thread, floor] in [
        [4, 0],
        [1, 0],
        [2, 0],
        [8, 0],
        [4, 1],
        [2, 2],
        [1, 2],
        [4, 4],
        [2, 4],
        [1, 8],
    ] {
        cuda_mem::__set_fill_tuning(per_thread, per_thread, per_thread, 8, floor);
        let tag = format!("small sweep {per_thread} chunks, floor {floor}");
        for (bytes, batch) in [(MIB, 100), (16 * MIB, 20)] {
            tagged_rows!(b, ctx, &tag, bytes, batch; 12 100 256 1000 4013);
        }
    }
    b.rows.truncate(kept);
    let [short, long, medium, large, floor] = chunks.unwrap_or(DEFAULT_TUNING);
    cuda_mem::__set_fill_tuning(short, long, medium, large, floor);
}

/// A 1 GiB fill for every element size from 1 to 256 bytes, and for sizes
/// above 256 bytes (the value-in-memory kernel) up to 4 KiB, odd ones too.
pub fn element_sizes(b: &mut Bench, ctx: &Arc<CudaContext>) {
    macro_rules! fills { ($($n:literal)*) => { $( fill_row::<$n>(b, ctx, GIB); )* } }
    fills!(1 2 3 4 6 8 12 16 20 24 32 48 64 100 128 256);
    fills!(257 300 384 500 512 777 1000 1024 1500 2048 3000 4013 4014 4095 4096);
}

/// Fills of `N`-byte elements over `bytes` bytes (1 MiB, 16 MiB), GPU time
/// of `batch` of them queued while the stream is held (so that the host's
/// cost to queue them does not set the pace; see `Bench::gpu_held_ms`),
/// against `cuMemsetD32Async` of the same bytes.
fn sized_row<const N: usize>(b: &mut Bench, ctx: &Arc<CudaContext>, bytes: usize, batch: usize) {
    let len = bytes / N;
    let words = len * N / 4;
    let mut buf = DeviceBuffer::<[u8; N]>::new(ctx, len).unwrap();
    let v = value::<N>();
    let stream = b.stream.clone();
    let addr = buf.as_device_ptr().addr();
    let (ours, raw) = b.gpu_held_pair_ms(
        || {
            for _ in 0..batch {
                buf.fill_async(v, &stream).unwrap();
            }
        },
        || {
            for _ in 0..batch {
                // SAFETY: the whole live allocation, on the stream the fills use.
                unsafe {
                    sys::cuMemsetD32Async(addr, 0x1234_5678, words, stream.cu_stream())
                        .result()
                        .unwrap()
                }
            }
        },
    );
    buf.fill_async(v, &stream).unwrap();
    let checked = buf.slice(len.saturating_sub(16 * MIB / N)..).unwrap();
    assert!(
        checked.to_vec().unwrap().iter().all(|e| *e == v),
        "fill of {N} B over {bytes} bytes"
    );
    let gbps = |ms: f64| (len * N * batch) as f64 / ms / 1e6;
    b.push(
        "fill",
        if bytes >= MIB {
            format!("fill {N:>3} B elements, {} MiB", bytes / MIB)
        } else {
            format!("fill {N:>3} B elements, {} KiB", bytes / 1024)
        },
        "GB/s",
        gbps(ours),
        gbps(raw),
        "cuMemsetD32Async",
        true,
        None,
    );
}

/// 1 MiB and 16 MiB fills of 12-, 100-, 256- and 1000-byte elements, and
/// the launch floor under the 1 MiB ones.
pub fn small_totals(b: &mut Bench, ctx: &Arc<CudaContext>) {
    for (bytes, batch) in [(MIB, 100), (16 * MIB, 20)] {
        sized_row::<12>(b, ctx, bytes, batch);
        sized_row::<100>(b, ctx, bytes, batch);
        sized_row::<256>(b, ctx, bytes, batch);
        sized_row::<1000>(b, ctx, bytes, batch);
    }
    // The grids of 1 MiB fills of 12- and 1000-byte elements (66 and 125
    // blocks on an H200: 4 chunks of 16 bytes per thread, rounded up to
    // whole pattern periods of 3 and 125 chunks), as the fill computes them.
    let (small, _) = cuda_mem::__fill_grid(ctx, &[0; 12], MIB as u64).unwrap();
    let (medium, _) = cuda_mem::__fill_grid(ctx, &[0; 1000], MIB as u64).unwrap();
    launch_floor(b, ctx, small, medium, 100);
}

/// The kernels of the floor under a small fill: empty ones whose parameters
/// are the small fill kernel's (`cuda_mem_fill_small`: four `u64`, a
/// `u32`, the 288-byte pattern), the medium one's (a 4032-byte pattern)
/// and a 1056-byte pattern's (what a KiB value needs), an empty one with
/// none, and the least kernel that writes the bytes (a grid-stride loop of
/// 16-byte stores of one word, two parameters).
const FLOOR_PTX: &str = ".version 7.0
.target sm_70
.address_size 64
.visible .entry empty_fill_params(
	.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3,
	.param .u32 p4, .param .align 16 .b8 p5[288]
)
{
	ret;
}
.visible .entry empty_medium_params(
	.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3,
	.param .u32 p4, .param .align 16 .b8 p5[4032]
)
{
	ret;
}
.visible .entry empty_kib_params(
	.param .u64 p0, .param .u64 p1, .param .u64 p2, .param .u64 p3,
	.param .u32 p4, .param .align 16 .b8 p5[1056]
)
{
	ret;
}
.visible .entry empty_no_params()
{
	ret;
}
.visible .entry store_quads(.param .u64 dst, .param .u64 quads)
{
	.reg .pred %p;
	.reg .b32 %r<8>;
	.reg .b64 %rd<8>;
	ld.param.u64 %rd1, [dst];
	ld.param.u64 %rd2, [quads];
	cvta.to.global.u64 %rd1, %rd1;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.u32 %r4, %r1, %r2, %r3;
	mov.u32 %r5, %nctaid.x;
	mul.lo.u32 %r6, %r5, %r2;
	cvt.u64.u32 %rd3, %r4;
	cvt.u64.u32 %rd4, %r6;
	mov.u32 %r7, 305419896;
LOOP:
	setp.ge.u64 %p, %rd3, %rd2;
	@%p bra DONE;
	shl.b64 %rd5, %rd3, 4;
	add.u64 %rd6, %rd1, %rd5;
	st.global.v4.u32 [%rd6], {%r7, %r7, %r7, %r7};
	add.u64 %rd3, %rd3, %rd4;
	bra LOOP;
DONE:
	ret;
}
";

/// `cuLaunchKernel` of `f` with `blocks` blocks of 256 threads on `stream`.
///
/// # Safety
/// `params` match `f`'s parameters and live across the call; the memory
/// the kernel touches is live and ordered on `stream`.
unsafe fn launch_raw(
    f: &CudaFunction,
    blocks: u32,
    stream: &CudaStream,
    params: &mut [*mut std::ffi::c_void],
) {
    // SAFETY: the caller's contract.
    unsafe {
        sys::cuLaunchKernel(
            f.cu_function(),
            blocks,
            1,
            1,
            256,
            1,
            1,
            0,
            stream.cu_stream(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
        .result()
        .unwrap()
    }
}

/// The launch floor of a small fill: the GPU time per launch of `batch`
/// back-to-back launches of [`FLOOR_PTX`]'s kernels with the grid of a
/// 1 MiB fill (`small` blocks of 256 threads for 12-byte elements,
/// `medium` for 1000-byte ones), against as many `cuMemsetD32Async` of
/// 1 MiB: the empty kernels with the fills' parameters, the empty kernel
/// with none (what the parameters cost), and the least kernel that writes
/// the 1 MiB (what a fill could reach).
fn launch_floor(b: &mut Bench, ctx: &Arc<CudaContext>, small: u32, medium: u32, batch: usize) {
    #[repr(C, align(16))]
    struct Pattern<const N: usize>([u8; N]);
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(FLOOR_PTX))
        .unwrap();
    let mut words = DeviceBuffer::<u32>::new(ctx, MIB / 4).unwrap();
    let addr = words.as_device_ptr().addr();
    let stream = b.stream.clone();
    let (mut a, mut p, mut w, mut h, mut size) = (addr, MIB as u64, MIB as u64, 1u64, 12u32);
    let mut small_pattern = Pattern([7u8; 288]);
    let mut kib_pattern = Pattern([7u8; 1056]);
    let mut medium_pattern = Pattern([7u8; 4032]);
    let mut fill_params = |pattern: *mut std::ffi::c_void| -> [*mut std::ffi::c_void; 6] {
        [
            (&raw mut a).cast(),
            (&raw mut p).cast(),
            (&raw mut w).cast(),
            (&raw mut h).cast(),
            (&raw mut size).cast(),
            pattern,
        ]
    };
    let mut small_params = fill_params((&raw mut small_pattern).cast());
    let mut kib_params = fill_params((&raw mut kib_pattern).cast());
    let mut medium_params = fill_params((&raw mut medium_pattern).cast());
    let mut quads = (MIB / 16) as u64;
    let mut dst = addr;
    let store_params: &mut [*mut std::ffi::c_void] =
        &mut [(&raw mut dst).cast(), (&raw mut quads).cast()];
    let rows: [(&str, &str, u32, &mut [*mut std::ffi::c_void]); 5] = [
        (
            "empty_fill_params",
            "empty kernel, the small fill's parameters",
            small,
            &mut small_params,
        ),
        (
            "empty_kib_params",
            "empty kernel, a 1056-byte pattern's parameters",
            medium,
            &mut kib_params,
        ),
        (
            "empty_medium_params",
            "empty kernel, the medium fill's parameters",
            medium,
            &mut medium_params,
        ),
        (
            "empty_no_params",
            "empty kernel, no parameters",
            small,
            &mut [],
        ),
        (
            "store_quads",
            "least kernel writing 1 MiB in 16-byte stores, 2 parameters",
            small,
            &mut *store_params,
        ),
    ];
    for (name, what, blocks, params) in rows {
        let f = module.load_function(name).unwrap();
        let (floor, memset) = b.gpu_held_pair_ms(
            || {
                for _ in 0..batch {
                    // SAFETY: `params` match the kernel's declaration and
                    // live across the call; the store kernel writes the
                    // `quads` 16-byte quads of the live 1 MiB at `dst`, on
                    // the bench's stream, as the memsets do.
                    unsafe { launch_raw(&f, blocks, &stream, params) };
                }
            },
            || {
                for _ in 0..batch {
                    // SAFETY: the whole live 1 MiB allocation, on the bench's stream.
                    unsafe {
                        sys::cuMemsetD32Async(addr, 0x1234_5678, MIB / 4, stream.cu_stream())
                            .result()
                            .unwrap()
                    }
                }
            },
        );
        let per_call_us = |ms: f64| ms * 1e3 / batch as f64;
        b.push(
            "fill",
            format!("launch floor: {what}, {blocks} blocks"),
            "us",
            per_call_us(floor),
            per_call_us(memset),
            "cuMemsetD32Async 1 MiB",
            false,
            None,
        );
    }
    // The store kernel wrote every word (the memsets too): check it, so
    // that its row is a kernel that did the work.
    let store = module.load_function("store_quads").unwrap();
    // Zeroed on the bench's stream, which the launch and the wait below
    // use too (the launch is not in the buffer's ledger).
    words.memset_async(0, &stream).unwrap();
    // SAFETY: as above, the live 1 MiB at `dst`.
    unsafe { launch_raw(&store, small, &stream, store_params) };
    stream.synchronize().unwrap();
    assert!(
        words.to_vec().unwrap().iter().all(|&x| x == 0x1234_5678),
        "the floor's store kernel left words unwritten"
    );
}

/// A 1 GiB fill of a view of `N`-byte elements that starts `offset` bytes
/// past a 16-byte boundary (a byte buffer's view, cast), against
/// `cuMemsetD32Async` of as many bytes.
fn offset_row<const N: usize>(b: &mut Bench, bytes: &mut DeviceBuffer<u8>, offset: usize) {
    let len = GIB / N;
    let addr = bytes.as_device_ptr().addr();
    assert_eq!(addr % 16, 0);
    let v = value::<N>();
    let s = b.stream.clone();
    let mut view = bytes.slice_mut(offset..offset + len * N).unwrap();
    let mut view = view.cast_mut::<[u8; N]>().unwrap();
    let words = len * N / 4;
    let (ours, raw) = b.gpu_pair_ms(
        || view.fill_async(v, &s).unwrap(),
        // SAFETY: inside the live allocation, on the same stream.
        || unsafe {
            sys::cuMemsetD32Async(addr, 7, words, s.cu_stream())
                .result()
                .unwrap()
        },
    );
    view.fill_async(v, &s).unwrap();
    let last = view.slice(len - 1..).unwrap().to_vec().unwrap();
    assert_eq!(last[0], v, "view fill wrong for {N} B at offset {offset}");
    b.push(
        "fill",
        format!("view at byte offset {offset:>2}, {N} B"),
        "GB/s",
        (len * N) as f64 / ours / 1e6,
        (words * 4) as f64 / raw / 1e6,
        "cuMemsetD32Async",
        true,
        None,
    );
}

/// Views of 12- and 100-byte elements at every start offset 1-15.
pub fn view_offsets(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let mut bytes = DeviceBuffer::<u8>::new(ctx, GIB + 16).unwrap();
    for offset in 1..16 {
        offset_row::<12>(b, &mut bytes, offset);
    }
    for offset in 1..16 {
        offset_row::<100>(b, &mut bytes, offset);
    }
}

/// A view whose start is 4 bytes past a 16-byte boundary (12-byte elements from element 3).
pub fn unaligned_view(b: &mut Bench, ctx: &Arc<CudaContext>) {
    let len = GIB / 12;
    let mut buf = DeviceBuffer::<[u8; 12]>::new(ctx, len).unwrap();
    let addr = buf.as_device_ptr().addr();
    let v = value::<12>();
    let s = b.stream.clone();
    let (ours, raw) = b.gpu_pair_ms(
        || buf.slice_mut(3..len).unwrap().fill_async(v, &s).unwrap(),
        // SAFETY: inside the live allocation, on the same stream.
        || unsafe {
            sys::cuMemsetD32Async(addr + 36, 7, (len - 3) * 3, s.cu_stream())
                .result()
                .unwrap()
        },
    );
    let bytes = (len - 3) * 12;
    b.push(
        "fill",
        "view at byte offset 4, 12 B".into(),
        "GB/s",
        bytes as f64 / ours / 1e6,
        bytes as f64 / raw / 1e6,
        "cuMemsetD32Async",
        true,
        None,
    );
}
