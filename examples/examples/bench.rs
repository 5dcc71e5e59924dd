//! The benchmark table: every figure is cuda-mem's next to the raw driver call
//! that does the same work, measured in the same run, and their ratio (the
//! machines are noisy; a ratio survives that).
//!
//!     cargo run --release --example bench -- [--json FILE] [--plot FILE.svg] [--quick]
//!         [--fill-only | --launch-only | --peer-only]
//!         [--sweep] [--chunks SHORT,LONG] [--peer-only | --launch-only]
//!
//! GPU times use CUDA events around each operation (median of the repetitions);
//! host-side costs use the wall clock over many calls.

use cuda_mem::prelude::*;
use std::ffi::c_void;
use std::sync::Arc;
use std::time::Instant;

use cuda_mem::cudarc::driver::{result, sys, CudaEvent, CudaStream};
use cuda_mem::{DeviceBuffer, DeviceCopy, PinnedBuffer, PitchedBuffer, PoolBuffer, UnifiedBuffer};

struct Row {
    group: &'static str,
    name: String,
    unit: &'static str,
    ours: f64,
    raw: f64,
    raw_name: &'static str,
    higher_is_better: bool,
    size: Option<usize>,
}

impl Row {
    fn ratio(&self) -> f64 {
        if self.higher_is_better {
            self.ours / self.raw
        } else {
            self.raw / self.ours
        }
    }
}

struct Bench {
    stream: Arc<CudaStream>,
    start: CudaEvent,
    stop: CudaEvent,
    reps: usize,
    rows: Vec<Row>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

impl Bench {
    /// Median GPU milliseconds of `op` (queued on `self.stream`).
    fn gpu_ms(&self, mut op: impl FnMut()) -> f64 {
        op(); // warm-up
        let times = (0..self.reps)
            .map(|_| {
                self.start.record(&self.stream).unwrap();
                op();
                self.stop.record(&self.stream).unwrap();
                self.stop.synchronize().unwrap();
                self.start.elapsed_ms(&self.stop).unwrap() as f64
            })
            .collect();
        median(times)
    }

    /// Median GPU milliseconds of `ours` and of `raw`, measured in three
    /// alternating rounds so that drifting clocks hit both.
    fn gpu_pair_ms(&self, mut ours: impl FnMut(), mut raw: impl FnMut()) -> (f64, f64) {
        let (mut o, mut r) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            o.push(self.gpu_ms(&mut ours));
            r.push(self.gpu_ms(&mut raw));
        }
        (median(o), median(r))
    }

    /// Median host microseconds per call of `op` over batches of `n` calls.
    fn host_us(&self, n: usize, mut op: impl FnMut(), mut after_batch: impl FnMut()) -> f64 {
        op();
        after_batch();
        let times = (0..self.reps.max(5))
            .map(|_| {
                let t = Instant::now();
                for _ in 0..n {
                    op();
                }
                let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
                after_batch();
                us
            })
            .collect();
        median(times)
    }

    /// Median host microseconds per call of `ours` and of `raw`, batches of `n`
    /// calls alternating between the two so that drifting clocks hit both.
    fn host_pair_us(
        &self,
        n: usize,
        mut ours: impl FnMut(),
        mut raw: impl FnMut(),
        mut after_batch: impl FnMut(),
    ) -> (f64, f64) {
        let mut batch = |op: &mut dyn FnMut()| {
            let t = Instant::now();
            for _ in 0..n {
                op();
            }
            let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
            after_batch();
            us
        };
        batch(&mut ours);
        batch(&mut raw);
        let (mut o, mut r) = (Vec::new(), Vec::new());
        for _ in 0..self.reps.max(5) {
            o.push(batch(&mut ours));
            r.push(batch(&mut raw));
        }
        (median(o), median(r))
    }

    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        group: &'static str,
        name: String,
        unit: &'static str,
        ours: f64,
        raw: f64,
        raw_name: &'static str,
        higher_is_better: bool,
        size: Option<usize>,
    ) {
        let row = Row {
            group,
            name,
            unit,
            ours,
            raw,
            raw_name,
            higher_is_better,
            size,
        };
        println!(
            "{:<8} {:<34} ours {:>10.2} {:<5} raw {:>10.2} {:<5} ({}) ratio {:.3}",
            row.group,
            row.name,
            row.ours,
            row.unit,
            row.raw,
            row.unit,
            row.raw_name,
            row.ratio()
        );
        self.rows.push(row);
    }
}

/// A non-repeating value of `N` bytes (no period 1, 2 or 4).
fn value<const N: usize>() -> [u8; N] {
    std::array::from_fn(|i| (i * 37 + 11) as u8 ^ (i >> 8) as u8)
}

fn fill_row<const N: usize>(b: &mut Bench, ctx: &Arc<cuda_mem::CudaContext>, bytes: usize) {
    let len = bytes / N;
    let mut buf = DeviceBuffer::<[u8; N]>::new(ctx, len).unwrap();
    let gbps = |ms: f64, bytes: usize| bytes as f64 / ms / 1e6;
    let v = value::<N>();
    let stream = b.stream.clone();
    let addr = buf.as_device_ptr().addr();
    let words = len * N / 4;
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

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: cuda_mem::Module = cuda_mem::include_kernels!("particles-shared");

/// The host cost of a typed launch of `scale_f32` (one `&mut` buffer and one
/// `f32`: a lookup of the checked function, the buffer's claim on the
/// stream, the context bind) against `cuLaunchKernel` of the same function
/// with hand-made parameters. Batches of 1000 launches, short enough that
/// the launch queue never fills (then the host would wait for the GPU).
fn launch_row(b: &mut Bench, ctx: &Arc<cuda_mem::CudaContext>) {
    use particles_shared::scale_f32;
    let n = 1000;
    let s = b.stream.clone();
    let sync = || s.synchronize().unwrap();
    let mut data = DeviceBuffer::<f32>::zeroed(ctx, 1024).unwrap();
    let config = cuda_mem::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    scale_f32.check(&KERNELS, ctx).unwrap();
    let module = ctx
        .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(KERNELS.ptx()))
        .unwrap();
    let f = module.load_function(scale_f32::NAME).unwrap();
    let addr = data.as_device_ptr().addr();
    /// `DeviceSliceMut<f32>` as the kernel reads it.
    #[repr(C)]
    struct RawSlice {
        ptr: u64,
        len: usize,
    }
    let (ours, raw) = b.host_pair_us(
        n,
        || {
            scale_f32
                .launch(&KERNELS, &s, config, (&mut data, 1.0))
                .unwrap()
        },
        || {
            let mut slice = RawSlice {
                ptr: addr,
                len: 1024,
            };
            let mut factor = 1.0f32;
            let params: &mut [*mut c_void] = &mut [
                (&mut slice as *mut RawSlice).cast(),
                (&mut factor as *mut f32).cast(),
            ];
            // SAFETY: `scale_f32`'s parameters (the live 1024-float buffer
            // as `{ptr, len}`, a factor), on the stream the typed launches use.
            unsafe {
                result::launch_kernel(
                    f.cu_function(),
                    config.grid_dim,
                    config.block_dim,
                    0,
                    s.cu_stream(),
                    params,
                )
                .unwrap()
            }
        },
        sync,
    );
    assert!(data.to_vec().unwrap().iter().all(|&x| x == 0.0));
    b.push(
        "small",
        "typed launch (#[kernel], buffer + f32)".into(),
        "us",
        ours,
        raw,
        "cuLaunchKernel",
        false,
        None,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let quick = args.iter().any(|a| a == "--quick");
    // `--peer-only`: just the peer-copy rows (for a multi-GPU machine).
    let peer_only = args.iter().any(|a| a == "--peer-only");
    // `--fill-only`: just the fill rows (element sizes, the view, pitched).
    let fill_only = args.iter().any(|a| a == "--fill-only");
    let ctx = cuda_mem_examples::gpu_or_exit("bench");
    let stream = ctx.new_stream().unwrap();
    // `--launch-only`: just the typed-launch row.
    if args.iter().any(|a| a == "--launch-only") {
        let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut b = Bench {
            start: ctx.new_event(timing).unwrap(),
            stop: ctx.new_event(timing).unwrap(),
            stream: stream.clone(),
            reps: if quick { 5 } else { 15 },
            rows: Vec::new(),
        };
        launch_row(&mut b, &ctx);
        return;
    }
    let timing = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut b = Bench {
        start: ctx.new_event(timing).unwrap(),
        stop: ctx.new_event(timing).unwrap(),
        stream: stream.clone(),
        reps: if quick { 5 } else { 15 },
        rows: Vec::new(),
    };
    println!(
        "device: {} (driver API; cuda-mem {})",
        ctx.name().unwrap(),
        env!("CARGO_PKG_VERSION")
    );
    let gib = 1 << 30;

    // --- tuning: chunks per thread for long periods (0: one wave of long-lived blocks) ---
    if args.iter().any(|a| a == "--sweep") {
        for k in [0u32, 4, 8, 16, 32, 64] {
            cuda_mem::__set_fill_chunks_per_thread(8, k);
            print!("sweep long k={k:<3} ");
            fill_row::<100>(&mut b, &ctx, gib);
            print!("sweep long k={k:<3} ");
            fill_row::<256>(&mut b, &ctx, gib);
        }
        b.rows.clear();
        cuda_mem::__set_fill_chunks_per_thread(8, 16);
    }
    // `--chunks SHORT,LONG`: chunks per thread for short and long pattern periods.
    if let Some(spec) = arg("--chunks") {
        let k: Vec<u32> = spec.split(',').filter_map(|k| k.parse().ok()).collect();
        if let [short, long] = k[..] {
            cuda_mem::__set_fill_chunks_per_thread(short, long);
            println!("fill kernels: {short} / {long} chunks per thread (short / long periods)");
        }
    }

    // --- fill, every element size, 1 GiB ---
    macro_rules! fills { ($($n:literal)*) => { $( fill_row::<$n>(&mut b, &ctx, gib); )* } }
    if !peer_only {
        fills!(1 2 3 4 6 8 12 16 20 24 32 48 64 100 128 256);
    }

    // A view whose start is 4 bytes past a 16-byte boundary (12-byte elements from element 3).
    if !peer_only {
        let len = gib / 12;
        let mut buf = DeviceBuffer::<[u8; 12]>::new(&ctx, len).unwrap();
        let addr = buf.as_device_ptr().addr();
        let v = value::<12>();
        let s = stream.clone();
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

    // --- pitched: a 12-byte fill of an odd width, and 2D copies from pinned memory ---
    if !peer_only {
        let (w, h) = (8191, 8192);
        let mut img = PitchedBuffer::<[u8; 12]>::new(&ctx, w, h).unwrap();
        let (addr, pitch) = (img.as_device_ptr().addr(), img.pitch());
        let v = value::<12>();
        let s = stream.clone();
        let bytes = (w * h * 12) as f64;
        let (ours, raw) = b.gpu_pair_ms(
            || img.fill_async(v, &s).unwrap(),
            // SAFETY: the live pitched allocation's rows, on the same stream.
            || unsafe {
                sys::cuMemsetD2D32Async(addr, pitch, 7, w * 3, h, s.cu_stream())
                    .result()
                    .unwrap()
            },
        );
        img.fill_async(v, &s).unwrap();
        assert_eq!(img.row(h - 1).unwrap().to_vec().unwrap()[w - 1], v);
        b.push(
            "fill",
            format!("pitched {w} x {h}, 12 B"),
            "GB/s",
            bytes / ours / 1e6,
            bytes / raw / 1e6,
            "cuMemsetD2D32Async",
            true,
            None,
        );

        let host = PinnedBuffer::<[u8; 12]>::from_slice(&ctx, &vec![v; w * h]).unwrap();
        // The raw call gets the registered (DMA) mapping of the pinned pages,
        // as cuda-mem's copy does: a host slice of a `PinnedBuffer` is an
        // unregistered alias of them, which the driver copies as pageable.
        let host_ptr = host.as_device_ptr().addr() as usize as *const u8;
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: host_ptr.cast(),
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            srcPitch: w * 12,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
            dstHost: std::ptr::null_mut(),
            dstDevice: addr,
            dstArray: std::ptr::null_mut(),
            dstPitch: pitch,
            WidthInBytes: w * 12,
            Height: h,
        };
        let (ours, raw) = b.gpu_pair_ms(
            || img.copy_from_host_async(&host, &s).unwrap(),
            // SAFETY: the pinned source and the pitched destination are live
            // and sized as described; nothing else uses them meanwhile.
            || unsafe {
                sys::cuMemcpy2DAsync_v2(&copy, s.cu_stream())
                    .result()
                    .unwrap()
            },
        );
        b.push(
            "copy",
            format!("2D H2D pinned -> pitched {w} x {h}"),
            "GB/s",
            bytes / ours / 1e6,
            bytes / raw / 1e6,
            "cuMemcpy2DAsync",
            true,
            None,
        );
    }

    if fill_only {
        return;
    }

    // --- small-op cost on the host: a 4 KiB fill against the raw call it dispatches to ---
    if !peer_only {
        let n = 20_000;
        let mut words = DeviceBuffer::<u32>::new(&ctx, 1024).unwrap();
        let addr = words.as_device_ptr().addr();
        let s = stream.clone();
        let sync = || s.synchronize().unwrap();
        let (ours, raw) = b.host_pair_us(
            n,
            || words.fill_async(0x0102_0304, &s).unwrap(),
            // SAFETY: the live 4 KiB allocation, on the same stream.
            || unsafe {
                sys::cuMemsetD32Async(addr, 0x0102_0304, 1024, s.cu_stream())
                    .result()
                    .unwrap()
            },
            sync,
        );
        b.push(
            "small",
            "4 KiB fill (u32, memset path)".into(),
            "us",
            ours,
            raw,
            "cuMemsetD32Async",
            false,
            None,
        );

        let mut structs = DeviceBuffer::<[u8; 16]>::new(&ctx, 256).unwrap();
        let addr = structs.as_device_ptr().addr();
        let v = value::<16>();
        let module = ctx
            .load_module(cuda_mem::cudarc::nvrtc::Ptx::from_src(
                cuda_mem::fill_kernels_ptx(),
            ))
            .unwrap();
        let f = module.load_function("cuda_mem_fill_small").unwrap();
        #[repr(C, align(16))]
        struct Pattern([u32; 72]);
        let pattern = Pattern(std::array::from_fn(|i| {
            u32::from_le_bytes(std::array::from_fn(|j| v[(4 * i + j) % 16]))
        }));
        let (ours, raw) = b.host_pair_us(
            n,
            || structs.fill_async(v, &s).unwrap(),
            || {
                let (mut a, mut p, mut w, mut r, mut sz) = (addr, 4096u64, 4096u64, 1u64, 16u32);
                let mut pat = Pattern(pattern.0);
                let params: &mut [*mut c_void] = &mut [
                    (&mut a as *mut u64).cast(),
                    (&mut p as *mut u64).cast(),
                    (&mut w as *mut u64).cast(),
                    (&mut r as *mut u64).cast(),
                    (&mut sz as *mut u32).cast(),
                    (&mut pat as *mut Pattern).cast(),
                ];
                // SAFETY: the fill kernel's exact signature, over the live 4 KiB buffer.
                unsafe {
                    result::launch_kernel(
                        f.cu_function(),
                        (1, 1, 1),
                        (256, 1, 1),
                        0,
                        s.cu_stream(),
                        params,
                    )
                    .unwrap()
                }
            },
            sync,
        );
        b.push(
            "small",
            "4 KiB fill (16 B, kernel path)".into(),
            "us",
            ours,
            raw,
            "cuLaunchKernel",
            false,
            None,
        );
        assert_eq!(structs.to_vec().unwrap()[255], v);
    }

    // --- a typed launch (`#[kernel]`) against a bare cuLaunchKernel of the same kernel ---
    if !peer_only {
        launch_row(&mut b, &ctx);
    }

    // --- copies ---
    if !peer_only {
        let len = 256 << 20;
        let mut pinned = PinnedBuffer::<u8>::new(&ctx, len).unwrap();
        let mut dev = DeviceBuffer::<u8>::new(&ctx, len).unwrap();
        dev.memset(1).unwrap();
        let (d, h) = (
            dev.as_device_ptr().addr(),
            // The registered (DMA) mapping, as above.
            pinned.as_device_ptr().addr() as usize as *mut c_void,
        );
        let s = stream.clone();
        let gbps = |ms: f64| len as f64 / ms / 1e6;
        let ours = b.gpu_ms(|| dev.copy_from_host_async(&pinned, &s).unwrap());
        // SAFETY: both live, 256 MiB each; nothing else touches them meanwhile.
        let raw = b.gpu_ms(|| unsafe {
            sys::cuMemcpyHtoDAsync_v2(d, h, len, s.cu_stream())
                .result()
                .unwrap()
        });
        b.push(
            "copy",
            "pinned H2D 256 MiB".into(),
            "GB/s",
            gbps(ours),
            gbps(raw),
            "cuMemcpyHtoDAsync",
            true,
            None,
        );
        let ours = b.gpu_ms(|| dev.copy_to_host_async(&mut pinned, &s).unwrap());
        // SAFETY: as above.
        let raw = b.gpu_ms(|| unsafe {
            sys::cuMemcpyDtoHAsync_v2(h, d, len, s.cu_stream())
                .result()
                .unwrap()
        });
        b.push(
            "copy",
            "pinned D2H 256 MiB".into(),
            "GB/s",
            gbps(ours),
            gbps(raw),
            "cuMemcpyDtoHAsync",
            true,
            None,
        );

        let host: Vec<u8> = (0..len).map(|i| i as u8).collect();
        // Pageable copies are noisy: alternate ours and raw, median of each.
        let (ours, raw) = b.host_pair_us(
            1,
            || dev.copy_from_host(&host).unwrap(),
            // SAFETY: live buffers of `len` bytes.
            || unsafe {
                sys::cuMemcpyHtoD_v2(d, host.as_ptr().cast(), len)
                    .result()
                    .unwrap()
            },
            || {},
        );
        let (ours, raw) = (len as f64 / ours / 1e3, len as f64 / raw / 1e3);
        b.push(
            "copy",
            "copy_from_host(Vec) 256 MiB".into(),
            "GB/s",
            ours,
            raw,
            "cuMemcpyHtoD (pageable)",
            true,
            None,
        );
        assert!(dev.to_vec().unwrap() == host, "copy_from_host result wrong");
        let out = std::cell::RefCell::new(vec![0u8; len]);
        let (ours, raw) = b.host_pair_us(
            1,
            || dev.copy_to_host(&mut out.borrow_mut()).unwrap(),
            // SAFETY: live buffers of `len` bytes.
            || unsafe {
                sys::cuMemcpyDtoH_v2(out.borrow_mut().as_mut_ptr().cast(), d, len)
                    .result()
                    .unwrap()
            },
            || {},
        );
        b.push(
            "copy",
            "copy_to_host(Vec) 256 MiB".into(),
            "GB/s",
            len as f64 / ours / 1e3,
            len as f64 / raw / 1e3,
            "cuMemcpyDtoH (pageable)",
            true,
            None,
        );

        let small: Vec<u8> = vec![5; 4096];
        let mut d4 = DeviceBuffer::<u8>::new(&ctx, 4096).unwrap();
        let a4 = d4.as_device_ptr().addr();
        let out = std::cell::RefCell::new(vec![0u8; 4096]);
        let (ours, raw) = b.host_pair_us(
            2000,
            || {
                d4.copy_from_host(&small).unwrap();
                d4.copy_to_host(&mut out.borrow_mut()).unwrap();
            },
            // SAFETY: live 4 KiB buffers.
            || unsafe {
                sys::cuMemcpyHtoD_v2(a4, small.as_ptr().cast(), 4096)
                    .result()
                    .unwrap();
                sys::cuMemcpyDtoH_v2(out.borrow_mut().as_mut_ptr().cast(), a4, 4096)
                    .result()
                    .unwrap();
            },
            || {},
        );
        b.push(
            "copy",
            "4 KiB round trip (overhead)".into(),
            "us",
            ours,
            raw,
            "cuMemcpyHtoD+DtoH",
            false,
            None,
        );
    }

    // --- unified prefetch, 1 GiB ---
    if !peer_only {
        let mut u = UnifiedBuffer::<u8>::new(&ctx, gib).unwrap();
        u.as_mut_slice().unwrap().fill(3);
        let s = stream.clone();
        let addr = u.as_device_ptr().addr();
        let dev_loc = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        };
        let host_loc = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
            id: 0,
        };
        let (mut ours, mut raw) = (Vec::new(), Vec::new());
        for _ in 0..b.reps.min(6) {
            u.prefetch_to_host(&s).unwrap();
            s.synchronize().unwrap();
            ours.push(b.gpu_ms_once(|| u.prefetch_to_device(&s).unwrap()));
            // SAFETY: the live managed allocation.
            unsafe { result::mem_prefetch_async(addr, gib, host_loc, s.cu_stream()).unwrap() };
            s.synchronize().unwrap();
            // SAFETY: as above.
            raw.push(b.gpu_ms_once(|| unsafe {
                result::mem_prefetch_async(addr, gib, dev_loc, s.cu_stream()).unwrap()
            }));
        }
        let gbps = |ms: f64| gib as f64 / ms / 1e6;
        b.push(
            "unified",
            "prefetch 1 GiB to device".into(),
            "GB/s",
            gbps(median(ours)),
            gbps(median(raw)),
            "cuMemPrefetchAsync",
            true,
            None,
        );
    }

    // --- allocation ---
    if !peer_only {
        let s = stream.clone();
        let n = 5000;
        let (ours, raw) = b.host_pair_us(
            n,
            || {
                let p = PoolBuffer::<u8>::new(1 << 20, &s).unwrap();
                p.free_on_stream(&s).unwrap();
            },
            || unsafe {
                // SAFETY: a stream-ordered allocation freed right away on the same stream.
                let p = result::malloc_async(s.cu_stream(), 1 << 20).unwrap();
                result::free_async(p, s.cu_stream()).unwrap();
            },
            || s.synchronize().unwrap(),
        );
        b.push(
            "alloc",
            "PoolBuffer 1 MiB alloc+free".into(),
            "us",
            ours,
            raw,
            "cuMemAllocAsync+FreeAsync",
            false,
            None,
        );
        let (ours, raw_same_pool) = b.host_pair_us(
            2000,
            || {
                let p = PoolBuffer::<u8>::new(1 << 20, &s).unwrap();
                p.free_on_stream(&s).unwrap();
                s.synchronize().unwrap();
            },
            || unsafe {
                // SAFETY: a stream-ordered allocation freed right away on the same stream.
                let p = result::malloc_async(s.cu_stream(), 1 << 20).unwrap();
                result::free_async(p, s.cu_stream()).unwrap();
                s.synchronize().unwrap();
            },
            || {},
        );
        b.push(
            "alloc",
            "PoolBuffer alloc+free+sync".into(),
            "us",
            ours,
            raw_same_pool,
            "same calls, same pool",
            false,
            None,
        );
        // A raw pool as CUDA creates it: release threshold 0.
        // SAFETY: all-zero props plus type and location are valid pool properties.
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.location = sys::CUmemLocation {
            type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: 0,
        };
        // SAFETY: `props` is initialised.
        let raw_pool = unsafe { result::mem_pool::create(&props) }.unwrap();
        let raw_default = b.host_us(
            200,
            || unsafe {
                // SAFETY: a stream-ordered allocation from the raw pool, freed on the same stream.
                let p = result::mem_pool::alloc_async(raw_pool, 1 << 20, s.cu_stream()).unwrap();
                result::free_async(p, s.cu_stream()).unwrap();
                s.synchronize().unwrap();
            },
            || {},
        );
        b.push(
            "alloc",
            "PoolBuffer alloc+free+sync vs CUDA default".into(),
            "us",
            ours,
            raw_default,
            "same, CUDA default threshold 0",
            false,
            None,
        );
        let (ours, raw) = b.host_pair_us(
            500,
            || drop(DeviceBuffer::<u8>::new(&ctx, 1 << 20).unwrap()),
            || unsafe {
                // SAFETY: allocate and free 1 MiB.
                let p = result::malloc_sync(1 << 20).unwrap();
                result::free_sync(p).unwrap();
            },
            || {},
        );
        b.push(
            "alloc",
            "DeviceBuffer 1 MiB alloc+free".into(),
            "us",
            ours,
            raw,
            "cuMemAlloc+cuMemFree",
            false,
            None,
        );
        for (calls, bytes, size) in [(200, 4 << 10, "4 KiB"), (20, 64 << 20, "64 MiB")] {
            let (ours, raw) = b.host_pair_us(
                calls,
                || drop(PinnedBuffer::<u8>::new(&ctx, bytes).unwrap()),
                || unsafe {
                    // SAFETY: allocate and free `bytes` of pinned memory.
                    let p = result::malloc_host(bytes, 0).unwrap();
                    result::free_host(p).unwrap();
                },
                || {},
            );
            b.push(
                "alloc",
                format!("PinnedBuffer {size} alloc+free"),
                "us",
                ours,
                raw,
                "cuMemHostAlloc+FreeHost",
                false,
                None,
            );
        }
    }

    // --- peer copies: device 0 and device 1 (or a second context on device 0) ---
    peer_rows(&mut b, &ctx);

    if let Some(path) = arg("--json") {
        let rows: Vec<String> = b.rows.iter().map(|r| format!(
            "  {{\"group\": \"{}\", \"name\": \"{}\", \"unit\": \"{}\", \"ours\": {:.4}, \"raw\": {:.4}, \"raw_call\": \"{}\", \"ratio\": {:.4}{}}}",
            r.group, r.name.trim(), r.unit, r.ours, r.raw, r.raw_name, r.ratio(),
            r.size.map(|s| format!(", \"element_size\": {s}")).unwrap_or_default()
        )).collect();
        std::fs::write(
            &path,
            format!(
                "{{\"device\": \"{}\", \"rows\": [\n{}\n]}}\n",
                ctx.name().unwrap(),
                rows.join(",\n")
            ),
        )
        .unwrap();
        println!("wrote {path}");
    }
    if let Some(path) = arg("--plot") {
        plot(&path, &ctx.name().unwrap(), &b.rows).unwrap();
        println!("wrote {path}");
    }
    let worst = b
        .rows
        .iter()
        .filter(|r| r.group == "fill")
        .map(Row::ratio)
        .fold(f64::INFINITY, f64::min);
    if peer_only {
        println!("bench: {} peer rows", b.rows.len());
        return;
    }
    println!("bench: {} rows, worst fill ratio {worst:.3}", b.rows.len());
}

/// Peer-copy bandwidth, 256 MiB each way, against `cuMemcpyPeerAsync` on the
/// same stream: between device 0 and device 1, or (on one GPU) between two
/// contexts of device 0. Then the same with peer access disabled, where both
/// go through the host.
fn peer_rows(b: &mut Bench, ctx: &Arc<cuda_mem::CudaContext>) {
    let devices = cuda_mem::device_count().unwrap();
    let (other, label) = if devices > 1 {
        (cuda_mem::context(1).unwrap(), "GPU0->GPU1")
    } else {
        (
            cuda_mem::CudaContext::new_non_primary(0, 0).unwrap(),
            "ctx0->ctx0' (1 GPU)",
        )
    };
    let len = 256 << 20;
    let mut here = DeviceBuffer::<u8>::new(ctx, len).unwrap();
    here.fill(0x5a).unwrap();
    let mut there = DeviceBuffer::<u8>::zeroed(&other, len).unwrap();
    let (h, t) = (here.as_device_ptr().addr(), there.as_device_ptr().addr());
    let (hc, tc) = (ctx.cu_ctx(), other.cu_ctx());
    let s = b.stream.clone();
    let path = cuda_mem::enable_peer_access(ctx, &other).unwrap();
    for disabled in [false, true] {
        if disabled {
            if devices < 2 {
                break; // one device: nothing to disable
            }
            cuda_mem::disable_peer_access(ctx, &other).unwrap();
        }
        let path = if disabled {
            cuda_mem::peer_path(ctx, &other).unwrap()
        } else {
            path
        };
        for back in [false, true] {
            let (dst, src) = if back {
                ((h, hc), (t, tc))
            } else {
                ((t, tc), (h, hc))
            };
            let (ours, raw) = b.gpu_pair_ms(
                || {
                    if back {
                        here.copy_from_async(&there, &s).unwrap()
                    } else {
                        there.copy_from_async(&here, &s).unwrap()
                    }
                },
                // SAFETY: two live allocations of `len` bytes, on the same stream.
                || unsafe {
                    sys::cuMemcpyPeerAsync(dst.0, dst.1, src.0, src.1, len, s.cu_stream())
                        .result()
                        .unwrap()
                },
            );
            b.push(
                "peer",
                format!(
                    "{label}{} 256 MiB, {path:?}",
                    if back { " back" } else { "" }
                ),
                "GB/s",
                len as f64 / ours / 1e6,
                len as f64 / raw / 1e6,
                "cuMemcpyPeerAsync",
                true,
                None,
            );
        }
    }
    cuda_mem::enable_peer_access(ctx, &other).unwrap();
    assert!(
        there.to_vec().unwrap().iter().all(|&x| x == 0x5a),
        "peer copy result wrong"
    );
}

impl Bench {
    /// GPU milliseconds of one run of `op` (for operations that need a reset in between).
    fn gpu_ms_once(&self, op: impl FnOnce()) -> f64 {
        self.start.record(&self.stream).unwrap();
        op();
        self.stop.record(&self.stream).unwrap();
        self.stop.synchronize().unwrap();
        self.start.elapsed_ms(&self.stop).unwrap() as f64
    }
}

fn plot(path: &str, device: &str, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let fills: Vec<&Row> = rows.iter().filter(|r| r.size.is_some()).collect();
    let max = fills.iter().map(|r| r.ours.max(r.raw)).fold(0.0, f64::max) * 1.15;
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("fill bandwidth vs element size — {device}"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..300f64).log_scale(), 0f64..max)?;
    chart
        .configure_mesh()
        .x_desc("element size (bytes, log scale)")
        .y_desc("GB/s (1 GiB buffer)")
        .draw()?;
    let pts = |f: fn(&Row) -> f64| {
        fills
            .iter()
            .map(move |r| (r.size.unwrap() as f64, f(r)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(pts(|r| r.ours), BLUE.stroke_width(2)))?
        .label("cuda-mem fill")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart.draw_series(
        pts(|r| r.ours)
            .into_iter()
            .map(|p| Circle::new(p, 4, BLUE.filled())),
    )?;
    chart
        .draw_series(LineSeries::new(pts(|r| r.raw), RED.stroke_width(2)))?
        .label("cuMemsetD32Async (same run)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}

#[allow(dead_code)]
fn assert_device_copy<T: DeviceCopy>() {}
