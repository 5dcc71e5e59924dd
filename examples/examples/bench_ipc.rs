//! Benchmarks of sharing across processes, each figure next to its
//! baseline measured in the same run, and their ratio:
//!
//! 1. **IPC copy.** This process exports a 1 GiB `DeviceBuffer`; a child
//!    process imports it (`IpcHandle::open`) and times a device-to-device
//!    copy *from the imported buffer* through cuda-mem (`copy_from_async`)
//!    against the raw `cuMemcpyDtoDAsync` from a buffer of its own of the
//!    same size (CUDA events, median of 3 × 10). Goal: ratio ≥ 0.98.
//! 2. **Multi-process all-reduce.** With 2 or more GPUs: the bus bandwidth
//!    of an all-reduce of 256 MiB of `f32` with one process per GPU (the
//!    `nccl_ranks` machinery) against one process with a thread per GPU (as
//!    the `nccl_allreduce` example does). With one GPU it says it skipped
//!    this and why (NCCL refuses two ranks on one GPU).
//!
//!     cargo run --release --example bench_ipc

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_mem::cudarc::driver::{result, sys, CudaStream};
use cuda_mem::cudarc::nccl::{Comm, Id, ReduceOp};
use cuda_mem::ipc::IpcHandle;
use cuda_mem::prelude::*;
use cuda_mem::DeviceBuffer;
use cuda_mem_examples::gb_per_s;
use cuda_mem_examples::ranks::{self, RankEnv};

/// 1 GiB of `u32`.
const COPY_ELEMS: usize = 256 << 20;
/// 256 MiB of `f32` per all-reduce.
const REDUCE_ELEMS: usize = 64 << 20;
const REDUCE_ITERS: usize = 20;
const HANDLE_VAR: &str = "CUDA_MEM_BENCH_IPC_HANDLE";

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The value element `i` of the exported buffer holds.
fn pattern(i: usize) -> u32 {
    (i as u32).wrapping_mul(2_654_435_761) ^ 0x5bd1_e995
}

/// Median GPU milliseconds of `op` on `stream`: 3 rounds × 10 repetitions.
fn gpu_ms(stream: &Arc<CudaStream>, mut op: impl FnMut()) -> f64 {
    let ctx = stream.context();
    let start = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let stop = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    op(); // warm-up
    let times = (0..10)
        .map(|_| {
            start.record(stream).unwrap();
            op();
            stop.record(stream).unwrap();
            stop.synchronize().unwrap();
            start.elapsed_ms(&stop).unwrap() as f64
        })
        .collect();
    median(times)
}

/// The child of part 1: import, time both copies, check every element.
fn copy_child(handle_hex: &str) {
    let ctx = cuda_mem::context(0).expect("GPU 0");
    let stream = ctx.new_stream().unwrap();
    let imported = IpcHandle::<u32>::from_bytes(&unhex(handle_hex))
        .expect("the handle")
        .open(&ctx)
        .expect("open the IPC handle");
    let bytes = imported.byte_size();
    let mut dst = DeviceBuffer::<u32>::new(&ctx, COPY_ELEMS).unwrap();
    ctx.bind_to_thread().unwrap();
    // The raw side: two cuMemAlloc buffers of this process.
    // SAFETY: plain allocations of `bytes` bytes in the current context,
    // freed below after the stream has finished with them.
    let (raw_src, raw_dst) = unsafe {
        (
            result::malloc_sync(bytes).unwrap(),
            result::malloc_sync(bytes).unwrap(),
        )
    };
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ours.push(gpu_ms(&stream, || {
            dst.copy_from_async(&imported, &stream).unwrap()
        }));
        raw.push(gpu_ms(&stream, || {
            // SAFETY: two live allocations of `bytes` bytes of this context,
            // on its stream.
            unsafe { result::memcpy_dtod_async(raw_dst, raw_src, bytes, stream.cu_stream()) }
                .unwrap()
        }));
    }
    let (ours, raw) = (median(ours), median(raw));
    let (ours_gb, raw_gb) = (gb_per_s(bytes, ours / 1e3), gb_per_s(bytes, raw / 1e3));
    // Every element of the copy from the imported buffer.
    let mut host = vec![0xdead_beef_u32; COPY_ELEMS];
    dst.copy_to_host(&mut host).unwrap();
    let wrong = host
        .iter()
        .enumerate()
        .filter(|&(i, &v)| v != pattern(i))
        .count();
    stream.synchronize().unwrap();
    // SAFETY: the stream is idle (synchronised); nothing uses them anymore.
    unsafe {
        result::free_sync(raw_src).unwrap();
        result::free_sync(raw_dst).unwrap();
    }
    drop(imported);
    println!(
        "ipc copy 1 GiB D2D: ours (from the IPC-imported buffer, copy_from_async) {ours_gb:.1} GB/s, \
         raw cuMemcpyDtoDAsync (own buffer) {raw_gb:.1} GB/s, ratio {:.3} (goal >= 0.98); {wrong} elements wrong",
        ours_gb / raw_gb
    );
    if wrong != 0 {
        std::process::exit(1);
    }
}

/// Part 1, the exporter.
fn bench_copy() -> bool {
    let ctx = cuda_mem::context(0).expect("GPU 0");
    let data: Vec<u32> = (0..COPY_ELEMS).map(pattern).collect();
    let mut buf = DeviceBuffer::from_slice(&ctx, &data).unwrap();
    drop(data);
    buf.synchronize().unwrap();
    let handle = buf.export_ipc().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .env(HANDLE_VAR, hex(&handle.to_bytes()))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the importing process");
    let out = child.stdout.take().unwrap();
    for line in BufReader::new(out).lines().map_while(Result::ok) {
        println!("{line}");
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    // `buf` outlives the child's import.
    drop(buf);
    ok
}

/// Bus bandwidth (GB/s) of `REDUCE_ITERS` all-reduces on `comm`.
fn allreduce_bus_gb_s(comm: &Comm, ctx: &Arc<cuda_mem::CudaContext>) -> f64 {
    let send = DeviceBuffer::from_slice(&ctx.clone(), &vec![1.0f32; REDUCE_ELEMS]).unwrap();
    let mut recv = DeviceBuffer::<f32>::new(ctx, REDUCE_ELEMS).unwrap();
    cuda_mem::nccl::all_reduce(comm, &send, &mut recv, &ReduceOp::Sum).unwrap(); // warm-up
    let t = Instant::now();
    for _ in 0..REDUCE_ITERS {
        cuda_mem::nccl::all_reduce(comm, &send, &mut recv, &ReduceOp::Sum).unwrap();
    }
    let seconds = t.elapsed().as_secs_f64() / REDUCE_ITERS as f64;
    let n = comm.world_size() as f64;
    let got = recv.to_vec().unwrap();
    assert!(
        got.iter().all(|&v| v == n as f32),
        "the all-reduce is wrong"
    );
    gb_per_s(send.byte_size(), seconds) * 2.0 * (n - 1.0) / n
}

/// A rank of part 2's multi-process run (a child, or rank 0 here).
fn allreduce_rank(env: &RankEnv) -> Result<f64, String> {
    let ordinal = ranks::gpu_of(env, false)?;
    let id = env.exchange_id()?;
    let (ctx, comm) = ranks::communicator(env, ordinal, id)?;
    Ok(allreduce_bus_gb_s(&comm, &ctx))
}

/// Part 2.
fn bench_allreduce() -> bool {
    let gpus = cuda_mem::device_count().unwrap_or(0);
    if gpus < 2 {
        println!(
            "multi-process all-reduce: skipped: {gpus} GPU(s); it needs 2 or more, since NCCL \
             refuses two ranks of one communicator on one GPU (\"Duplicate GPU detected\")"
        );
        return true;
    }
    if !cuda_mem::nccl::is_available() {
        println!("multi-process all-reduce: skipped: NCCL (libnccl.so) is not loadable");
        return true;
    }
    // One process per GPU.
    let (env, children) = match ranks::spawn_ranks(gpus, &["--allreduce-rank"], None) {
        Ok(r) => r,
        Err(e) => {
            println!("multi-process all-reduce: {e}");
            return false;
        }
    };
    let multi = allreduce_rank(&env);
    let waited = ranks::wait_all(children, Duration::from_secs(600));
    ranks::clean_up(&env);
    let multi = match (multi, waited) {
        (Ok(bw), Ok(())) => bw,
        (m, w) => {
            println!(
                "multi-process all-reduce failed: {:?} {:?}",
                m.err(),
                w.err()
            );
            return false;
        }
    };
    // One process, a thread per GPU.
    let id = Id::new().expect("ncclGetUniqueId");
    let threaded: Vec<f64> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..gpus)
            .map(|rank| {
                s.spawn(move || {
                    let ctx = cuda_mem::context(rank).unwrap();
                    ctx.bind_to_thread().unwrap();
                    let comm = Comm::from_rank(ctx.new_stream().unwrap(), rank, gpus, id)
                        .expect("ncclCommInitRank");
                    allreduce_bus_gb_s(&comm, &ctx)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let threaded = threaded[0];
    println!(
        "all-reduce 256 MiB f32 on {gpus} GPUs, bus bandwidth: ours (one process per GPU) \
         {multi:.1} GB/s, threads in one process {threaded:.1} GB/s, ratio {:.3}",
        multi / threaded
    );
    true
}

fn main() {
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before any other thread exists (single-threaded here).
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    if let Ok(handle) = std::env::var(HANDLE_VAR) {
        copy_child(&handle);
        return;
    }
    if std::env::args().any(|a| a == "--allreduce-rank") {
        let env = match RankEnv::from_env() {
            Ok(Some(env)) => env,
            Ok(None) => exit("--allreduce-rank is for the ranks bench_ipc starts itself"),
            Err(e) => exit(&e),
        };
        if let Err(e) = allreduce_rank(&env) {
            exit(&format!("rank {}: {e}", env.rank));
        }
        return;
    }
    if let Err(e) = cuda_mem::context(0) {
        exit(&format!("needs a CUDA GPU: {e}"));
    }
    let copy_ok = bench_copy();
    let reduce_ok = bench_allreduce();
    if !(copy_ok && reduce_ok) {
        exit("a part failed (see above)");
    }
}

fn exit(why: &str) -> ! {
    eprintln!("bench_ipc: {why}");
    std::process::exit(1);
}
