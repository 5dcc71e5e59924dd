//! The benchmark table: every figure is cuda-mem's next to the raw driver call
//! that does the same work, measured in the same run, and their ratio (the
//! machines are noisy; a ratio survives that).
//!
//!     cargo run --release --example bench -- [--json FILE] [--plot FILE.svg] [--quick]
//!         [--fill-only | --launch-only | --host-only | --peer-only | --devvec-only
//!          | --copies-only | --graph-only | --async-only | --parity-only | --algo-only]
//!         [--sweep] [--small-sweep] [--chunks SHORT,LONG,MEDIUM,LARGE,FLOOR] [--max-gib N]
//!         [--copy-sweep] [--staging LANES,CHUNK_KIB,MIN_KIB[,SLOTS[,STREAM_MIB[,DEMOTE]]]] [--commit HASH]
//!         [--algo-rows reductions,scans,histogram,sorts,torch]
//!     cargo run --release --example bench -- --plot-from FILE.json --plot FILE.svg
//!
//! `--help` lists the options; an unknown one is an error. `--copies-only`
//! runs just the host-copy rows (pinned, `Vec` copies at 64 MiB-1 GiB against
//! pinned and pageable, cached pinned alloc+free), plus the 4 KiB-1 GiB `Vec`
//! copy sweep with `--copy-sweep` (which the full run also honours).
//! `--staging` sets the staged copies' knobs (0 = default). `--chunks` sets
//! the fill kernels' grid: chunks per thread for short and long pattern
//! periods, for values of 257-4013 bytes and for larger ones, and the fewest
//! blocks per multiprocessor. `--json` records the run with the rows (date,
//! commit, versions, GPU; see `report`). `--plot-from` draws the plot of a
//! JSON file written before and measures nothing (no GPU needed).
//!
//! GPU times use CUDA events around each operation (median of the repetitions);
//! host-side costs use the wall clock over many calls. `main` parses the
//! arguments, then runs the chosen group's sections, one module each, in the
//! table's order; the device is opened by the first section that measures.

mod algo;
mod alloc;
mod awaited;
mod checked;
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
mod soa;
mod staged;
mod unified;

use std::sync::Arc;

use clap::Parser;
use cuda_mem::CudaContext;

use harness::{Bench, Row};

/// The benchmark table: cuda-mem's figures next to the raw driver calls
/// doing the same work, measured in the same run, and their ratios.
#[derive(Parser, Debug)]
#[command(name = "bench", version)]
struct Args {
    #[command(flatten)]
    only: Only,

    /// 5 repetitions per measurement instead of 15 (and --max-gib 1)
    #[arg(long)]
    quick: bool,
    /// Run the fill kernels' chunks-per-thread sweep first
    #[arg(long)]
    sweep: bool,
    /// The fill kernels' grid tuning (chunks per thread by value; blocks per SM)
    #[arg(long, value_name = "SHORT,LONG,MEDIUM,LARGE,FLOOR", value_parser = parse_chunks)]
    chunks: Option<[u32; 5]>,
    /// Run the 1 MiB and 16 MiB fill rows under several grid tunings first
    #[arg(long)]
    small_sweep: bool,
    /// How far the DeviceVec growth rows grow, in GiB [default: 16, 1 with --quick]
    #[arg(long, value_name = "N")]
    max_gib: Option<usize>,
    /// Add the Vec copy rows from 4 KiB to 1 GiB
    #[arg(long)]
    copy_sweep: bool,
    /// The staged copies' knobs (0 = default)
    #[arg(long, value_name = "LANES,CHUNK_KIB,MIN_KIB[,SLOTS[,STREAM_MIB[,DEMOTE]]]", value_parser = parse_staging)]
    staging: Option<[usize; 6]>,
    /// Write the rows, with the run's date, commit, versions and GPU, as JSON
    #[arg(long, value_name = "FILE")]
    json: Option<String>,
    /// Plot the 1 GiB fill rows (bandwidth against element size) as SVG
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<String>,
    /// With --plot: plot the fill rows of a JSON file the bench wrote
    /// before (such as examples/bench-h100.json), measuring nothing (no GPU)
    #[arg(
        long,
        value_name = "FILE.json",
        requires = "plot",
        conflicts_with = "json"
    )]
    plot_from: Option<String>,
    /// The commit the JSON records [default: `git rev-parse HEAD`, else $CUDA_MEM_COMMIT]
    #[arg(long, value_name = "HASH")]
    commit: Option<String>,
    /// With --algo-only: only these kinds of algo rows [default: all]
    #[arg(
        long,
        value_name = "KIND,...",
        value_delimiter = ',',
        requires = "algo_only"
    )]
    algo_rows: Vec<algo::Kind>,
}

/// The groups of rows a run may be limited to (one at most).
#[derive(clap::Args, Debug)]
#[group(multiple = false)]
struct Only {
    /// Just the fill rows (element sizes, views, pitched)
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    fill_only: bool,
    /// Just the typed-launch row
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    launch_only: bool,
    /// Just the host-cost rows: 4 KiB fills, the typed launch, the graph rows, allocation
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    host_only: bool,
    /// Just the peer-copy rows (for a multi-GPU machine)
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    peer_only: bool,
    /// Just the DeviceVec rows
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    devvec_only: bool,
    /// Just the host-copy and pinned-cache rows
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    copies_only: bool,
    /// Just the checked rows: Checked memory of bools and a struct against the same bytes as DeviceCopy
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    checked_only: bool,
    /// Just the structure-of-arrays rows: SoaBuffer's transpositions against a copy of the same bytes
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    soa_only: bool,
    /// Just the graph rows
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    graph_only: bool,
    /// Just the rows of awaited work (Completion against cuStreamSynchronize and raw callbacks)
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    async_only: bool,
    /// Just the parity rows: the Rust kernels of examples/parity-kernels against their CUDA C++ twins (built with nvcc) and CUB
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    parity_only: bool,
    /// Just the algo rows: cuda_mem::algo against CUB and Thrust (built with nvcc) and torch (--algo-rows picks kinds)
    #[arg(
        long,
        help_heading = "One group only (default: all but parity and algo)"
    )]
    algo_only: bool,
}

/// The rows a run measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    All,
    Fill,
    Launch,
    Host,
    Peer,
    DeviceVec,
    Copies,
    Checked,
    Soa,
    Graph,
    Async,
    Parity,
    Algo,
}

impl Args {
    fn group(&self) -> Group {
        let o = &self.only;
        [
            (o.fill_only, Group::Fill),
            (o.launch_only, Group::Launch),
            (o.host_only, Group::Host),
            (o.peer_only, Group::Peer),
            (o.devvec_only, Group::DeviceVec),
            (o.copies_only, Group::Copies),
            (o.checked_only, Group::Checked),
            (o.soa_only, Group::Soa),
            (o.graph_only, Group::Graph),
            (o.async_only, Group::Async),
            (o.parity_only, Group::Parity),
            (o.algo_only, Group::Algo),
        ]
        .into_iter()
        .find_map(|(set, group)| set.then_some(group))
        .unwrap_or(Group::All)
    }

    fn max_gib(&self) -> usize {
        self.max_gib.unwrap_or(if self.quick { 1 } else { 16 })
    }
}

/// `--chunks SHORT,LONG,MEDIUM,LARGE,FLOOR`: five whole numbers.
fn parse_chunks(spec: &str) -> Result<[u32; 5], String> {
    let v = numbers::<u32>(spec)?;
    v.try_into()
        .map_err(|v: Vec<u32>| format!("takes 5 numbers, not {}", v.len()))
}

/// `--staging LANES,CHUNK_KIB,MIN_KIB[,SLOTS[,STREAM_MIB[,DEMOTE]]]`: three
/// to six whole numbers (missing ones are 0, the default).
fn parse_staging(spec: &str) -> Result<[usize; 6], String> {
    let mut v = numbers::<usize>(spec)?;
    if !(3..=6).contains(&v.len()) {
        return Err(format!("takes 3 to 6 numbers, not {}", v.len()));
    }
    v.resize(6, 0);
    Ok([v[0], v[1], v[2], v[3], v[4], v[5]])
}

fn numbers<T: std::str::FromStr>(spec: &str) -> Result<Vec<T>, String> {
    spec.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("{x:?} is not a whole number"))
        })
        .collect()
}

/// The run: its description (taken before anything is measured), and the
/// device and bench, opened by the first section that measures.
struct Session<'a> {
    args: &'a Args,
    run: report::Run,
    open: Option<(Arc<CudaContext>, Bench)>,
}

impl<'a> Session<'a> {
    fn new(args: &'a Args) -> Self {
        Self {
            args,
            run: report::Run::now(args.commit.clone()),
            open: None,
        }
    }

    /// The bench and its device, opened on first use: without a GPU the
    /// bench exits here with status 1 and a one-line reason.
    fn open(&mut self) -> (&mut Bench, &Arc<CudaContext>) {
        let args = self.args;
        let (ctx, b) = self.open.get_or_insert_with(|| {
            let ctx = cuda_mem_examples::gpu_or_exit("bench");
            let b = Bench::new(&ctx, args.quick);
            println!(
                "device: {} (driver API; cuda-mem {})",
                ctx.name().unwrap(),
                env!("CARGO_PKG_VERSION")
            );
            if let Some(staging) = args.staging {
                staged::set_staging(staging);
            }
            (ctx, b)
        });
        (b, ctx)
    }

    /// Writes the JSON and the plot asked for, and the summary line.
    fn finish(self, group: Group) {
        let Some((ctx, b)) = &self.open else {
            return;
        };
        if let Some(path) = &self.args.json {
            let report = report::Report::new(self.run, report::Machine::of(ctx), &b.rows);
            report.write(path).unwrap_or_else(|e| {
                eprintln!("bench: writing {path}: {e}");
                std::process::exit(1);
            });
            println!("wrote {path}");
        }
        if let Some(path) = &self.args.plot {
            write_plot(
                path,
                &ctx.name().unwrap(),
                &report::FillPoint::of_rows(&b.rows),
            );
        }
        let n = b.rows.len();
        match group {
            Group::Copies => println!("bench: {n} copy rows"),
            Group::Peer => println!("bench: {n} peer rows"),
            Group::All | Group::Fill => {
                let worst = b
                    .rows
                    .iter()
                    .filter(|r| r.group == "fill")
                    .map(Row::ratio)
                    .fold(f64::INFINITY, f64::min);
                println!("bench: {n} rows, worst fill ratio {worst:.3}");
            }
            _ => println!("bench: {n} rows"),
        }
    }
}

/// Writes the fill plot to `path`, or says why not.
fn write_plot(path: &str, device: &str, fills: &[report::FillPoint]) {
    if fills.is_empty() {
        println!("bench: no 1 GiB fill rows to plot; {path} not written");
        return;
    }
    report::plot(path, device, fills).unwrap_or_else(|e| {
        eprintln!("bench: writing {path}: {e}");
        std::process::exit(1);
    });
    println!("wrote {path}");
}

fn main() {
    let args = Args::parse();
    if let (Some(from), Some(path)) = (&args.plot_from, &args.plot) {
        let (device, fills) = report::fill_points_of_file(from).unwrap_or_else(|e| {
            eprintln!("bench: {e}");
            std::process::exit(1);
        });
        write_plot(path, &device, &fills);
        return;
    }
    let group = args.group();
    let mut s = Session::new(&args);
    match group {
        Group::Parity => {
            let (b, ctx) = s.open();
            parity::rows(b, ctx);
        }
        Group::Algo => {
            let (b, ctx) = s.open();
            algo::rows(b, ctx, args.quick, &args.algo_rows);
        }
        Group::Launch => {
            let (b, ctx) = s.open();
            launch::typed_launch(b, ctx);
        }
        Group::Host => {
            let (b, ctx) = s.open();
            small::fills(b, ctx);
            launch::typed_launch(b, ctx);
            graph::rows(b, ctx);
            alloc::alloc_free(b, ctx);
        }
        Group::Graph => {
            let (b, ctx) = s.open();
            graph::rows(b, ctx);
        }
        Group::Checked => {
            let (b, ctx) = s.open();
            checked::rows(b, ctx);
        }
        Group::Soa => {
            let (b, ctx) = s.open();
            soa::rows(b, ctx);
        }
        Group::Async => {
            let (b, ctx) = s.open();
            awaited::rows(b, ctx);
        }
        Group::DeviceVec => {
            let (b, ctx) = s.open();
            device_vec::rows(b, ctx, args.max_gib(), args.quick);
        }
        Group::Copies => {
            let (b, ctx) = s.open();
            copies::host_copies(b, ctx);
            staged::vec_copies(b, ctx);
            staged::pinned_alloc(b, ctx);
            if args.copy_sweep {
                staged::sweep(b, ctx);
            }
        }
        Group::All | Group::Fill | Group::Peer => {
            let (b, ctx) = s.open();
            fill::tuning(b, ctx, args.sweep, args.chunks);
            if args.small_sweep {
                fill::small_sweep(b, ctx, args.chunks);
            }
            if group != Group::Peer {
                fill::element_sizes(b, ctx);
                fill::unaligned_view(b, ctx);
                fill::view_offsets(b, ctx);
                fill::small_totals(b, ctx);
                pitched::fill_and_copy(b, ctx);
            }
            if group == Group::All {
                small::fills(b, ctx);
                launch::typed_launch(b, ctx);
                graph::rows(b, ctx);
                awaited::rows(b, ctx);
                copies::host_copies(b, ctx);
                copies::halves_on_two_streams(b, ctx);
                unified::prefetch(b, ctx);
                staged::vec_copies(b, ctx);
                if args.copy_sweep {
                    staged::sweep(b, ctx);
                }
                checked::rows(b, ctx);
                soa::rows(b, ctx);
                alloc::alloc_free(b, ctx);
                staged::pinned_alloc(b, ctx);
                device_vec::rows(b, ctx, args.max_gib(), args.quick);
            }
            if group != Group::Fill {
                peer::peer_copies(b, ctx);
            }
        }
    }
    s.finish(group);
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("bench").chain(args.iter().copied()))
    }

    #[test]
    fn the_command_line_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn every_flag_parses_with_its_old_meaning() {
        let a = parse(&[
            "--json",
            "b.json",
            "--plot",
            "f.svg",
            "--quick",
            "--sweep",
            "--small-sweep",
            "--chunks",
            "4,4,4,8,0",
            "--max-gib",
            "2",
            "--copy-sweep",
            "--staging",
            "2, 1024,4096",
            "--commit",
            "abc",
        ])
        .unwrap();
        assert_eq!(a.json.as_deref(), Some("b.json"));
        assert_eq!(a.plot.as_deref(), Some("f.svg"));
        assert!(a.quick && a.sweep && a.small_sweep && a.copy_sweep);
        assert_eq!(a.chunks, Some([4, 4, 4, 8, 0]));
        assert_eq!(a.max_gib(), 2);
        assert_eq!(a.staging, Some([2, 1024, 4096, 0, 0, 0]));
        assert_eq!(a.commit.as_deref(), Some("abc"));
        assert_eq!(a.group(), Group::All);
        assert_eq!(
            parse(&["--staging", "1,2,3,4"]).unwrap().staging,
            Some([1, 2, 3, 4, 0, 0])
        );
        assert_eq!(
            parse(&["--staging", "1,2,3,4,5,1"]).unwrap().staging,
            Some([1, 2, 3, 4, 5, 1])
        );
        assert_eq!(
            parse(&["--algo-only", "--algo-rows", "sorts,histogram"])
                .unwrap()
                .algo_rows,
            [algo::Kind::Sorts, algo::Kind::Histogram]
        );
        assert!(parse(&["--algo-only"]).unwrap().algo_rows.is_empty());
        assert_eq!(parse(&[]).unwrap().max_gib(), 16);
        assert_eq!(parse(&["--quick"]).unwrap().max_gib(), 1);
        for (flag, group) in [
            ("--fill-only", Group::Fill),
            ("--launch-only", Group::Launch),
            ("--host-only", Group::Host),
            ("--peer-only", Group::Peer),
            ("--devvec-only", Group::DeviceVec),
            ("--copies-only", Group::Copies),
            ("--graph-only", Group::Graph),
            ("--async-only", Group::Async),
            ("--parity-only", Group::Parity),
        ] {
            assert_eq!(parse(&[flag]).unwrap().group(), group, "{flag}");
        }
    }

    /// `--plot-from` needs `--plot` (where to write) and refuses `--json`
    /// (a file of rows needs a run that measures them).
    #[test]
    fn plot_from_takes_a_plot_and_no_json() {
        let a = parse(&["--plot-from", "b.json", "--plot", "f.svg"]).unwrap();
        assert_eq!(a.plot_from.as_deref(), Some("b.json"));
        assert!(parse(&["--plot-from", "b.json"]).is_err());
        let both = [
            "--plot-from",
            "b.json",
            "--plot",
            "f.svg",
            "--json",
            "c.json",
        ];
        assert!(parse(&both).unwrap_err().to_string().contains("--json"));
    }

    #[test]
    fn unknown_flags_and_bad_values_are_errors_that_name_them() {
        for (args, named) in [
            (&["--fill_only"][..], "--fill_only"),
            (&["--quik"], "--quik"),
            (&["fill"], "fill"),
            (&["--chunks", "4,4,4"], "--chunks"),
            (&["--chunks", "4,4,x,8,0"], "--chunks"),
            (&["--staging", "1,2"], "--staging"),
            (&["--staging", "1,2,3,4,5,1,7"], "--staging"),
            (&["--max-gib", "lots"], "--max-gib"),
            (&["--json"], "--json"),
            (&["--fill-only", "--peer-only"], "--peer-only"),
            (&["--algo-only", "--algo-rows", "sort"], "--algo-rows"),
            (&["--algo-rows", "sorts"], "--algo-only"),
        ] {
            let e = parse(args).expect_err(&format!("{args:?} parsed"));
            assert!(e.to_string().contains(named), "{args:?}: {e}");
        }
    }

    #[test]
    fn help_lists_every_option() {
        let help = Args::command().render_long_help().to_string();
        for arg in Args::command().get_arguments() {
            let long = arg.get_long().unwrap();
            assert!(
                help.contains(&format!("--{long}")),
                "--{long} not in\n{help}"
            );
            assert!(arg.get_help().is_some(), "--{long} has no description");
        }
    }
}
