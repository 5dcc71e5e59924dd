//! A service on tokio: many concurrent requests, each of which uploads its
//! particles, runs a typed kernel on them and downloads the result, with
//! `.await` at every GPU step, against the same work done with blocking
//! calls on a thread pool.
//!
//!     cargo run --release --example async_service
//!
//! - Each request: a stream-ordered `PoolBuffer`, `upload(vec, &stream)`
//!   (the `Vec` comes back for reuse when the copy is done),
//!   `particles_step.launch(...)` (the typed launch of
//!   `examples/particles-shared`), `download(&stream)`: every step is
//!   queued on the request's stream and awaited, so a handful of runtime
//!   threads keep many requests in flight while the GPU works.
//! - The blocking side runs the same requests on as many OS threads as the
//!   runtime has workers, with `copy_from_host` and `to_vec`, which block
//!   their thread until the GPU is done.
//! - Every result is checked against the CPU, bit for bit (the same `step`
//!   function, see `particles-shared`). Exits with status 1 on a mismatch.
//!
//! Prints the throughput of both, in requests per second, and their ratio.
#![forbid(unsafe_code)]

use std::error::Error;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use cuda_mem::prelude::*;
use cuda_mem::{CudaContext, CudaStream, LaunchConfig, Module, PoolBuffer};
use cuda_mem_examples::{gpu_or_exit, unit_f32, Checks};
use particles_shared::{particles_step, step, Particle, DT};

/// The kernels of `examples/particles-shared`, compiled to PTX by `examples/build.rs`.
static KERNELS: Module = cuda_mem::include_kernels!("particles-shared");

/// Requests served by each side.
const REQUESTS: usize = 512;
/// Runtime worker threads, and threads of the blocking pool.
const WORKERS: usize = 4;
/// Streams the requests take turns on.
const STREAMS: usize = 16;
/// Steps of the kernel per request.
const STEPS: u32 = 64;

/// Request `r`'s particles: between 20,000 and 60,000 of them, varied.
fn request(r: usize) -> Vec<Particle> {
    let n = 20_000 + (unit_f32(r as u64) * 40_000.0) as usize;
    (0..n)
        .map(|i| {
            let u = |k: u64| unit_f32(((r as u64) << 32) + i as u64 * 8 + k);
            Particle {
                pos: [u(0) * 20.0 - 10.0, u(1) * 10.0, u(2) * 20.0 - 10.0],
                vel: [u(3) * 2.0 - 1.0, u(4) * 4.0 - 2.0, u(5) * 2.0 - 1.0],
                mass: 0.5 + u(6) * 1.5,
            }
        })
        .collect()
}

fn config(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// One request, awaited at every GPU step.
async fn serve(
    stream: Arc<CudaStream>,
    particles: Vec<Particle>,
) -> cuda_mem::Result<Vec<Particle>> {
    let n = particles.len();
    let mut buf = PoolBuffer::<Particle>::new(n, &stream)?;
    let _reusable = buf.upload(particles, &stream)?.await?;
    particles_step.launch(&KERNELS, &stream, config(n), (&mut buf, DT, STEPS))?;
    buf.download(&stream)?.await
}

/// The same request with blocking calls.
fn serve_blocking(
    stream: &Arc<CudaStream>,
    particles: &[Particle],
) -> cuda_mem::Result<Vec<Particle>> {
    let n = particles.len();
    let mut buf = PoolBuffer::<Particle>::new(n, stream)?;
    buf.copy_from_host(particles)?;
    particles_step.launch(&KERNELS, stream, config(n), (&mut buf, DT, STEPS))?;
    buf.to_vec()
}

/// The bits of every field, for an exact comparison.
fn bits(p: &Particle) -> [u32; 7] {
    let [x, y, z] = p.pos;
    let [u, v, w] = p.vel;
    [x, y, z, u, v, w, p.mass].map(f32::to_bits)
}

/// Whether `got` is request `r` after `STEPS` steps on the CPU.
fn correct(r: &[Particle], got: &[Particle]) -> bool {
    r.len() == got.len()
        && r.iter().zip(got).all(|(p, g)| {
            let mut p = *p;
            for _ in 0..STEPS {
                step(&mut p, DT);
            }
            bits(&p) == bits(g)
        })
}

fn streams(ctx: &Arc<CudaContext>) -> cuda_mem::Result<Vec<Arc<CudaStream>>> {
    (0..STREAMS)
        .map(|_| ctx.new_stream().map_err(cuda_mem::Error::from))
        .collect()
}

fn main() -> Result<(), Box<dyn Error>> {
    let ctx = gpu_or_exit("async_service");
    println!("device: {}", ctx.name()?);
    particles_step.check(&KERNELS, &ctx)?;
    let requests: Arc<Vec<Vec<Particle>>> = Arc::new((0..REQUESTS).map(request).collect());
    let particles: usize = requests.iter().map(Vec::len).sum();
    println!(
        "{REQUESTS} requests, {particles} particles in all ({} bytes each), {STEPS} steps each, \
         {STREAMS} streams, {WORKERS} threads per side",
        size_of::<Particle>()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .build()?;

    // A warm-up round of each (the pool, the pinned cache, the module).
    let warm = streams(&ctx)?;
    runtime.block_on(serve(warm[0].clone(), requests[0].clone()))?;
    serve_blocking(&warm[1], &requests[0])?;

    // Async: every request spawned at once, awaited at each GPU step.
    let async_streams = streams(&ctx)?;
    let begun = Instant::now();
    let served: Vec<cuda_mem::Result<Vec<Particle>>> = runtime.block_on(async {
        let tasks: Vec<_> = (0..REQUESTS)
            .map(|r| {
                let stream = async_streams[r % STREAMS].clone();
                let input = requests[r].clone();
                tokio::spawn(serve(stream, input))
            })
            .collect();
        let mut out = Vec::with_capacity(REQUESTS);
        for t in tasks {
            out.push(t.await.expect("a request task panicked"));
        }
        out
    });
    let async_s = begun.elapsed().as_secs_f64();

    // Blocking: the same requests on WORKERS threads.
    let blocking_streams = streams(&ctx)?;
    let next = AtomicUsize::new(0);
    let begun = Instant::now();
    let mut blocking: Vec<(usize, cuda_mem::Result<Vec<Particle>>)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let r = next.fetch_add(1, Ordering::Relaxed);
                        if r >= REQUESTS {
                            return done;
                        }
                        let stream = &blocking_streams[r % STREAMS];
                        done.push((r, serve_blocking(stream, &requests[r])));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a blocking worker panicked"))
            .collect()
    });
    let blocking_s = begun.elapsed().as_secs_f64();
    blocking.sort_by_key(|(r, _)| *r);

    let rate = |s: f64| REQUESTS as f64 / s;
    println!(
        "async (tokio, {WORKERS} workers, {REQUESTS} requests in flight): {:.1} ms, {:.0} requests/s",
        async_s * 1e3,
        rate(async_s)
    );
    println!(
        "blocking ({WORKERS} threads): {:.1} ms, {:.0} requests/s",
        blocking_s * 1e3,
        rate(blocking_s)
    );
    println!(
        "async_service   requests/s (async vs blocking)  ours {:>9.0}    raw {:>9.0}    ratio {:.3}",
        rate(async_s),
        rate(blocking_s),
        blocking_s / async_s
    );

    let mut checks = Checks::new("async_service");
    let wrong_async = served
        .iter()
        .enumerate()
        .filter(|(r, got)| !got.as_ref().is_ok_and(|g| correct(&requests[*r], g)))
        .count();
    let wrong_blocking = blocking
        .iter()
        .filter(|(r, got)| !got.as_ref().is_ok_and(|g| correct(&requests[*r], g)))
        .count();
    checks.check(
        wrong_async == 0,
        format_args!(
            "every async result equals the CPU's, bit for bit ({wrong_async} of {REQUESTS} differ)"
        ),
    );
    checks.check(
        wrong_blocking == 0 && blocking.len() == REQUESTS,
        format_args!(
            "every blocking result equals the CPU's ({wrong_blocking} of {REQUESTS} differ)"
        ),
    );
    checks.finish();
    Ok(())
}
