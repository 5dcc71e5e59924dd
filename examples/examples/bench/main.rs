//! The benchmark table: every figure is cuda-mem's next to the raw driver call
//! that does the same work, measured in the same run, and their ratio (the
//! machines are noisy; a ratio survives that).
//!
//!     cargo run --release --example bench -- [--json FILE] [--plot FILE.svg] [--quick]
//!         [--fill-only | --launch-only | --peer-only | --devvec-only | --copies-only
//!          | --graph-only]
//!         [--sweep] [--chunks SHORT,LONG,MEDIUM,LARGE,FLOOR] [--max-gib N]
//!         [--copy-sweep] [--staging LANES,CHUNK_KIB,MIN_KIB[,DEPTH]]
//!
//! `--copies-only` runs just the host-copy rows (pinned, `Vec` copies at
//! 64 MiB-1 GiB against pinned and pageable, cached pinned alloc+free), plus
//! the 4 KiB-1 GiB `Vec` copy sweep with `--copy-sweep` (which the full run
//! also honours). `--staging` sets the staged copies' knobs (0 = default).
//!
//! GPU times use CUDA events around each operation (median of the repetitions);
//! host-side costs use the wall clock over many calls. `main` parses the
//! arguments and runs the sections, one module each, in the table's order.

mod alloc;
mod copies;
mod cxx;
mod device_vec;
mod fill;
mod graph;
mod harness;
mod launch;
mod parity;
mod peer;
mod pitched;
mod report;
mod small;
mod staged;
mod unified;

use harness::{Bench, Row};

/// The command line.
struct Args {
    /// `--quick`: 5 repetitions per measurement instead of 15.
    quick: bool,
    /// `--peer-only`: just the peer-copy rows (for a multi-GPU machine).
    peer_only: bool,
    /// `--fill-only`: just the fill rows (element sizes, the view, pitched).
    fill_only: bool,
    /// `--launch-only`: just the typed-launch row.
    launch_only: bool,
    /// `--graph-only`: just the graph rows.
    graph_only: bool,
    /// `--parity-only`: just the Rust-kernel parity rows (against CUDA C++
    /// twins built with nvcc, and CUB).
    parity_only: bool,
    /// `--devvec-only`: just the `DeviceVec` rows.
    devvec_only: bool,
    /// `--copies-only`: just the host-copy and pinned-cache rows.
    copies_only: bool,
    /// `--copy-sweep`: the `Vec` copy rows from 4 KiB to 1 GiB.
    copy_sweep: bool,
    /// `--staging LANES,CHUNK_KIB,MIN_KIB[,DEPTH]`: the staged copies' knobs.
    staging: Option<String>,
    /// `--max-gib N`: how far the `DeviceVec` growth rows grow (default 16,
    /// 1 with `--quick`).
    max_gib: usize,
    /// `--sweep`: the fill kernels' chunks-per-thread sweep first.
    sweep: bool,
    /// `--chunks SHORT,LONG,MEDIUM,LARGE,FLOOR`: the fill kernels' grid
    /// tuning (chunks per thread for short and long pattern periods, for
    /// values of 257-4013 bytes and for larger ones, and the fewest blocks
    /// per multiprocessor).
    chunks: Option<String>,
    /// `--json FILE`: the rows as JSON.
    json: Option<String>,
    /// `--plot FILE.svg`: the fill rows as a plot.
    plot: Option<String>,
}

impl Args {
    fn parse() -> Self {
        let args: Vec<String> = std::env::args().collect();
        let flag = |name: &str| args.iter().any(|a| a == name);
        let value = |name: &str| {
            args.iter()
                .position(|a| a == name)
                .and_then(|i| args.get(i + 1))
                .cloned()
        };
        Self {
            quick: flag("--quick"),
            peer_only: flag("--peer-only"),
            fill_only: flag("--fill-only"),
            launch_only: flag("--launch-only"),
            graph_only: flag("--graph-only"),
            parity_only: flag("--parity-only"),
            devvec_only: flag("--devvec-only"),
            copies_only: flag("--copies-only"),
            copy_sweep: flag("--copy-sweep"),
            staging: value("--staging"),
            max_gib: value("--max-gib").map_or(if flag("--quick") { 1 } else { 16 }, |v| {
                v.parse().expect("--max-gib takes a whole number of GiB")
            }),
            sweep: flag("--sweep"),
            chunks: value("--chunks"),
            json: value("--json"),
            plot: value("--plot"),
        }
    }
}

fn main() {
    let args = Args::parse();
    let ctx = cuda_mem_examples::gpu_or_exit("bench");
    let mut b = Bench::new(&ctx, args.quick);
    if args.launch_only {
        launch::typed_launch(&mut b, &ctx);
        return;
    }
    if args.graph_only {
        graph::rows(&mut b, &ctx);
        return;
    }
    if args.parity_only {
        parity::rows(&mut b, &ctx);
        if let Some(path) = &args.json {
            report::write_json(path, &b, &ctx.name().unwrap());
            println!("wrote {path}");
        }
        return;
    }
    println!(
        "device: {} (driver API; cuda-mem {})",
        ctx.name().unwrap(),
        env!("CARGO_PKG_VERSION")
    );
    if let Some(spec) = &args.staging {
        staged::set_staging(spec);
    }
    if args.copies_only {
        copies::host_copies(&mut b, &ctx);
        staged::vec_copies(&mut b, &ctx);
        staged::pinned_alloc(&mut b, &ctx);
        if args.copy_sweep {
            staged::sweep(&mut b, &ctx);
        }
        if let Some(path) = &args.json {
            report::write_json(path, &b, &ctx.name().unwrap());
            println!("wrote {path}");
        }
        println!("bench: {} copy rows", b.rows.len());
        return;
    }
    if args.devvec_only {
        device_vec::rows(&mut b, &ctx, args.max_gib, args.quick);
        return;
    }
    fill::tuning(&mut b, &ctx, args.sweep, args.chunks.as_deref());
    if !args.peer_only {
        fill::element_sizes(&mut b, &ctx);
        fill::unaligned_view(&mut b, &ctx);
        fill::view_offsets(&mut b, &ctx);
        fill::small_totals(&mut b, &ctx);
        pitched::fill_and_copy(&mut b, &ctx);
    }
    if args.fill_only {
        return;
    }
    if !args.peer_only {
        small::fills(&mut b, &ctx);
        launch::typed_launch(&mut b, &ctx);
        graph::rows(&mut b, &ctx);
        copies::host_copies(&mut b, &ctx);
        copies::halves_on_two_streams(&mut b, &ctx);
        unified::prefetch(&mut b, &ctx);
        staged::vec_copies(&mut b, &ctx);
        if args.copy_sweep {
            staged::sweep(&mut b, &ctx);
        }
        alloc::alloc_free(&mut b, &ctx);
        staged::pinned_alloc(&mut b, &ctx);
        device_vec::rows(&mut b, &ctx, args.max_gib, args.quick);
    }
    peer::peer_copies(&mut b, &ctx);

    let device = ctx.name().unwrap();
    if let Some(path) = &args.json {
        report::write_json(path, &b, &device);
        println!("wrote {path}");
    }
    if let Some(path) = &args.plot {
        report::plot(path, &device, &b.rows).unwrap();
        println!("wrote {path}");
    }
    if args.peer_only {
        println!("bench: {} peer rows", b.rows.len());
        return;
    }
    let worst = b
        .rows
        .iter()
        .filter(|r| r.group == "fill")
        .map(Row::ratio)
        .fold(f64::INFINITY, f64::min);
    println!("bench: {} rows, worst fill ratio {worst:.3}", b.rows.len());
}
