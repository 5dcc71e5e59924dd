//! NCCL all-reduce of a buffer of your own struct across every GPU of the
//! machine, one thread per GPU, with cuda-mem buffers as NCCL's buffers.
//!
//!     cargo run --release --example nccl_allreduce
//!
//! Each GPU holds per-bin statistics (`Moments`: count, sum, sum of squares)
//! of its own share of the observations. One in-place all-reduce over the
//! struct's `f64` fields (`cast_mut::<f64>()`) leaves the statistics of all
//! observations on every GPU, checked against the CPU bin by bin. Needs
//! libnccl (cuda-mem's `nccl` feature loads it at run time); works on one GPU
//! too. NVLink multicast stays off (`NCCL_NVLS_ENABLE=0`), as shared GPUs need.

use cuda_mem::prelude::*;
use std::time::Instant;

use cuda_mem::cudarc::nccl::{Comm, Id, ReduceOp};
use cuda_mem::{DeviceBuffer, DeviceCopy};
use cuda_mem_examples::{unit_f32, Checks};

/// Statistics of one bin: NCCL sums each field across the GPUs.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
struct Moments {
    count: f64,
    sum: f64,
    sum_sq: f64,
}

/// Bins: odd, and about 100 MB of `Moments` per GPU.
const BINS: usize = 4_000_037;

/// The statistics GPU `rank` gathered: whole numbers, so every sum is exact
/// whatever order NCCL adds in, and the check can be exact too.
fn local_moments(rank: usize) -> Vec<Moments> {
    (0..BINS)
        .map(|bin| {
            let seed = (rank * BINS + bin) as u64;
            let count = (unit_f32(seed) * 100.0) as u32 as f64;
            let sum = (unit_f32(seed ^ (1 << 40)) * 2000.0 - 1000.0) as i32 as f64;
            Moments {
                count,
                sum,
                sum_sq: sum * sum + count,
            }
        })
        .collect()
}

fn main() {
    // NVLink multicast (NVLS) can take a shared host's GPUs out of service.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before any other thread exists (single-threaded here).
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let gpus = match cuda_mem::device_count() {
        Ok(n) if n > 0 => n,
        Ok(_) => exit("no CUDA device"),
        Err(e) => exit(&e.to_string()),
    };
    if !cuda_mem::nccl::is_available() {
        exit("NCCL (libnccl.so) is not loadable: install libnccl2 or add it to LD_LIBRARY_PATH");
    }
    println!(
        "{gpus} GPU(s), {BINS} bins of {} B each",
        size_of::<Moments>()
    );

    // The CPU's answer: every GPU's statistics, summed.
    let shares: Vec<Vec<Moments>> = (0..gpus).map(local_moments).collect();
    let total: Vec<Moments> = (0..BINS)
        .map(|bin| {
            shares.iter().fold(
                Moments {
                    count: 0.0,
                    sum: 0.0,
                    sum_sq: 0.0,
                },
                |t, s| Moments {
                    count: t.count + s[bin].count,
                    sum: t.sum + s[bin].sum,
                    sum_sq: t.sum_sq + s[bin].sum_sq,
                },
            )
        })
        .collect();

    let id = Id::new().expect("ncclGetUniqueId");
    let results: Vec<(usize, f64)> = std::thread::scope(|s| {
        let threads: Vec<_> = shares
            .iter()
            .enumerate()
            .map(|(rank, share)| {
                let total = &total;
                s.spawn(move || -> Result<(usize, f64), cuda_mem::Error> {
                    let ctx = cuda_mem::context(rank)?;
                    ctx.bind_to_thread()?; // NCCL works on the thread's current device
                    let comm = Comm::from_rank(ctx.new_stream()?, rank, gpus, id)
                        .expect("ncclCommInitRank");
                    let mut stats = DeviceBuffer::from_slice(&ctx, share)?;
                    // The struct's fields as f64s: 3 per bin.
                    let t = Instant::now();
                    cuda_mem::nccl::all_reduce_in_place(
                        &comm,
                        &mut stats.cast_mut::<f64>()?,
                        &ReduceOp::Sum,
                    )?;
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    let got = stats.to_vec()?;
                    let wrong = got.iter().zip(total).filter(|(g, t)| g != t).count();
                    if rank == 0 {
                        let bin = BINS / 2;
                        let m = got[bin];
                        let mean = m.sum / m.count;
                        println!(
                            "bin {bin}: {} observations, mean {mean:.3}, variance {:.3}",
                            m.count,
                            m.sum_sq / m.count - mean * mean
                        );
                    }
                    println!("rank {rank}: all-reduce of {BINS} Moments in {ms:.2} ms, {wrong} bins differ from the CPU");
                    Ok((wrong, ms))
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().expect("rank thread").expect("rank failed"))
            .collect()
    });

    let mut checks = Checks::new("nccl_allreduce");
    for (rank, (wrong, _)) in results.iter().enumerate() {
        checks.check(
            *wrong == 0,
            format_args!("rank {rank}: every bin equals the CPU's sum ({wrong} differ)"),
        );
    }
    checks.finish();
}

fn exit(why: &str) -> ! {
    eprintln!("nccl_allreduce: {why}");
    std::process::exit(1);
}
