//! NCCL across processes, one per GPU: an all-reduce of a buffer of your own
//! struct, checked against the CPU.
//!
//!     cargo run --release --example nccl_ranks -- --ranks 2
//!
//! Two ways to start it:
//! - `--ranks N` starts the N ranks of a one-node job itself (this process
//!   is rank 0, N-1 children run this program); the NCCL unique id goes
//!   through a fresh file, or TCP on 127.0.0.1 with `--tcp PORT`.
//! - Started by a launcher (torchrun, mpirun, srun): each process reads its
//!   rank, the world size and where the id comes from in the environment
//!   (`RANK` / `WORLD_SIZE` / `LOCAL_RANK` with `MASTER_ADDR` /
//!   `MASTER_PORT`, or `CUDA_MEM_NCCL_ID_FILE`; Open MPI's and SLURM's
//!   variables work too: see `cuda_mem_examples::ranks`).
//!
//! Each rank picks GPU `LOCAL_RANK` (modulo the device count), fills
//! per-bin statistics (`Moments`) of its own observations, all-reduces them
//! in place through `cuda_mem::nccl` over the struct's `f64` fields, and
//! compares every bin with the CPU's sum over all ranks. Then it times
//! `--iters` out-of-place all-reduces and prints the bus bandwidth (NCCL's
//! definition: bytes × 2(n-1)/n per second).
//!
//! NCCL refuses two ranks of one communicator on one GPU
//! (`ncclInvalidUsage`, "Duplicate GPU detected"): with more ranks on a
//! node than GPUs this example says so and exits with status 1 instead of
//! starting (`--allow-shared-gpu` lets NCCL answer itself). `--ranks 1`
//! runs the whole machinery (spawn, id exchange, communicator) on one GPU.
//! NVLink multicast stays off (`NCCL_NVLS_ENABLE=0`), as shared GPUs need.

use std::time::{Duration, Instant};

use cuda_mem::cudarc::nccl::ReduceOp;
use cuda_mem::prelude::*;
use cuda_mem::{DeviceBuffer, DeviceCopy};
use cuda_mem_examples::ranks::{self, RankEnv};
use cuda_mem_examples::{gb_per_s, unit_f32, Checks};

/// Statistics of one bin: NCCL sums each field across the ranks.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Moments {
    count: f64,
    sum: f64,
    sum_sq: f64,
}

const ZERO: Moments = Moments {
    count: 0.0,
    sum: 0.0,
    sum_sq: 0.0,
};

/// The statistics rank `rank` gathered: whole numbers, so every sum is
/// exact in any order and the check can be exact too.
fn local_moments(rank: usize, bin: usize, bins: usize) -> Moments {
    let seed = (rank * bins + bin) as u64;
    let count = (unit_f32(seed) * 100.0) as u32 as f64;
    let sum = (unit_f32(seed ^ (1 << 40)) * 2000.0 - 1000.0) as i32 as f64;
    Moments {
        count,
        sum,
        sum_sq: sum * sum + count,
    }
}

struct Options {
    ranks: Option<usize>,
    tcp: Option<u16>,
    bins: usize,
    iters: usize,
    allow_shared_gpu: bool,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        ranks: None,
        tcp: None,
        bins: 4_000_037,
        iters: 20,
        allow_shared_gpu: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| -> Result<usize, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or(format!("{name} needs a number"))
        };
        match a.as_str() {
            "--ranks" => o.ranks = Some(value("--ranks")?),
            "--tcp" => {
                let port = value("--tcp")?;
                o.tcp = Some(u16::try_from(port).map_err(|_| format!("--tcp {port}: not a port"))?)
            }
            "--bins" => o.bins = value("--bins")?.max(1),
            "--iters" => o.iters = value("--iters")?,
            "--allow-shared-gpu" => o.allow_shared_gpu = true,
            "-h" | "--help" => {
                println!(
                    "nccl_ranks [--ranks N [--tcp PORT]] [--bins B] [--iters K] [--allow-shared-gpu]\n\
                     without --ranks: RANK, WORLD_SIZE and CUDA_MEM_NCCL_ID_FILE or MASTER_ADDR/MASTER_PORT from the environment"
                );
                std::process::exit(0);
            }
            _ => return Err(format!("unknown argument {a:?} (try --help)")),
        }
    }
    Ok(o)
}

/// What a rank measured.
struct RankResult {
    wrong: usize,
    bus_gb_s: f64,
}

fn run_rank(env: &RankEnv, o: &Options) -> Result<RankResult, String> {
    let ordinal = ranks::gpu_of(env, o.allow_shared_gpu)?;
    let id = env.exchange_id()?;
    let (ctx, comm) = ranks::communicator(env, ordinal, id)?;
    let e = |e: cuda_mem::Error| e.to_string();
    let mine: Vec<Moments> = (0..o.bins)
        .map(|b| local_moments(env.rank, b, o.bins))
        .collect();
    let mut stats = DeviceBuffer::from_slice(&ctx, &mine).map_err(e)?;
    cuda_mem::nccl::all_reduce_in_place(
        &comm,
        &mut stats.cast_mut::<f64>().map_err(e)?,
        &ReduceOp::Sum,
    )
    .map_err(e)?;
    // Every rank can compute every rank's share: the CPU's answer.
    let mut got = vec![
        Moments {
            count: f64::NAN,
            sum: f64::NAN,
            sum_sq: f64::NAN
        };
        o.bins
    ];
    stats.copy_to_host(&mut got).map_err(e)?;
    let wrong = (0..o.bins)
        .filter(|&b| {
            let total = (0..env.world).fold(ZERO, |t, r| {
                let m = local_moments(r, b, o.bins);
                Moments {
                    count: t.count + m.count,
                    sum: t.sum + m.sum,
                    sum_sq: t.sum_sq + m.sum_sq,
                }
            });
            got[b] != total
        })
        .count();
    // Timed: out of place, so the input stays the same.
    let send = DeviceBuffer::from_slice(&ctx, &mine).map_err(e)?;
    let mut recv = DeviceBuffer::<Moments>::new(&ctx, o.bins).map_err(e)?;
    let bytes = send.byte_size();
    let mut step = || {
        cuda_mem::nccl::all_reduce(
            &comm,
            &send.cast::<f64>().map_err(e)?,
            &mut recv.cast_mut::<f64>().map_err(e)?,
            &ReduceOp::Sum,
        )
        .map_err(e)
    };
    step()?; // warm-up
    let t = Instant::now();
    for _ in 0..o.iters {
        step()?;
    }
    let seconds = t.elapsed().as_secs_f64() / o.iters.max(1) as f64;
    let n = env.world as f64;
    let bus_gb_s = gb_per_s(bytes, seconds) * 2.0 * (n - 1.0) / n;
    println!(
        "rank {}/{} on GPU {ordinal}: {} bins all-reduced, {wrong} differ from the CPU; {:.3} ms per all-reduce of {:.1} MB, bus bandwidth {bus_gb_s:.1} GB/s",
        env.rank,
        env.world,
        o.bins,
        seconds * 1e3,
        bytes as f64 / 1e6
    );
    Ok(RankResult { wrong, bus_gb_s })
}

fn main() {
    // NVLink multicast (NVLS) can take a shared host's GPUs out of service.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before any other thread exists (single-threaded here).
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let o = options().unwrap_or_else(|e| exit(&e));
    if !cuda_mem::nccl::is_available() {
        exit("NCCL (libnccl.so) is not loadable: install libnccl2 or add it to LD_LIBRARY_PATH");
    }
    let (env, children) = match (o.ranks, RankEnv::from_env()) {
        (Some(n), _) => {
            let gpus = cuda_mem::device_count().unwrap_or_else(|e| exit(&e.to_string()));
            if n > gpus && !o.allow_shared_gpu {
                exit(&format!(
                    "--ranks {n}: {}",
                    ranks::shared_gpu_message(n, gpus)
                ));
            }
            let args: Vec<String> = std::env::args()
                .skip(1)
                .scan(false, |skip, a| {
                    // The children are ranks, not launchers: drop --ranks N and --tcp P.
                    let drop_it = *skip || a == "--ranks" || a == "--tcp";
                    *skip = a == "--ranks" || a == "--tcp";
                    Some((!drop_it).then_some(a))
                })
                .flatten()
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (env, children) = ranks::spawn_ranks(n, &args, o.tcp).unwrap_or_else(|e| exit(&e));
            println!(
                "nccl_ranks: started {n} rank(s) on this node, NCCL id through {}",
                env.id_source
            );
            (env, children)
        }
        (None, Ok(Some(env))) => (env, Vec::new()),
        (None, Ok(None)) => exit(
            "not started by a launcher (no RANK / OMPI_COMM_WORLD_RANK / SLURM_PROCID): pass \
             --ranks N to start N ranks on this node",
        ),
        (None, Err(e)) => exit(&e),
    };
    let launcher = !children.is_empty() || o.ranks.is_some();
    let result = run_rank(&env, &o);
    if let Err(e) = &result {
        eprintln!("nccl_ranks: rank {}: {e}", env.rank);
    }
    let mut checks = Checks::new("nccl_ranks");
    if launcher {
        let mut children = children;
        let waited = if result.is_ok() {
            ranks::wait_all(children, Duration::from_secs(600))
        } else {
            ranks::kill_all(&mut children);
            Err("rank 0 failed, so the other ranks were stopped".into())
        };
        ranks::clean_up(&env);
        checks.check(
            waited.is_ok(),
            format_args!(
                "every other rank finished and passed its checks{}",
                waited.err().map(|e| format!(": {e}")).unwrap_or_default()
            ),
        );
    } else {
        ranks::clean_up(&env);
    }
    match result {
        Ok(r) => {
            checks.check(
                r.wrong == 0,
                format_args!(
                    "rank {}: every bin equals the CPU's sum over {} rank(s) ({} differ)",
                    env.rank, env.world, r.wrong
                ),
            );
            if env.rank == 0 {
                println!(
                    "nccl_ranks: {} rank(s), bus bandwidth {:.1} GB/s (rank 0)",
                    env.world, r.bus_gb_s
                );
            }
        }
        Err(e) => {
            checks.check(false, format_args!("rank {}: {e}", env.rank));
        }
    }
    checks.finish();
}

fn exit(why: &str) -> ! {
    eprintln!("nccl_ranks: {why}");
    std::process::exit(1);
}
