//! The outputs besides the printed table: the run and its rows as JSON
//! (`--json`, through serde) and the plot of fill bandwidth against element
//! size (`--plot`).
//!
//! A JSON file says what produced it: the date, the commit, the cuda-mem
//! version, the driver and the CUDA version the bench was built for, the
//! GPU and its clocks, and the command line, beside the rows. The `device`
//! and `rows` fields are those of the files written before (`rows` with the
//! same fields), so their readers read the new files too.

use std::process::Command;
use std::sync::Arc;

use cuda_mem::cudarc::driver::sys;
use cuda_mem::CudaContext;
use serde::{Deserialize, Serialize};

use crate::harness::Row;

/// A bench JSON file.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Report {
    /// The GPU's name (as in the files written before, which had no more
    /// than this and the rows).
    pub device: String,
    #[serde(flatten)]
    pub run: Run,
    #[serde(flatten)]
    pub machine: Machine,
    pub rows: Vec<JsonRow>,
}

/// What a run records before it measures anything (no device needed).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Run {
    /// When the run started, UTC, RFC 3339 (ISO 8601): `2026-12-01T09:13:02Z`.
    pub date: String,
    /// The commit of the code measured, when known (see [`Run::now`]).
    pub commit: Option<String>,
    /// Where `commit` comes from: `--commit`, `git` or `CUDA_MEM_COMMIT`.
    pub commit_from: Option<String>,
    /// With `commit_from: "git"`: whether tracked files differed from that
    /// commit (`git status --porcelain --untracked-files=no`).
    pub worktree_dirty: Option<bool>,
    /// The version of cuda-mem (the bench shares the workspace's version).
    pub cuda_mem_version: String,
    /// The CUDA version of the driver API the bench was built against
    /// (cudarc's bindings), `major.minor`.
    pub cuda_built_for: String,
    /// The command line, program first.
    pub command_line: Vec<String>,
}

impl Run {
    /// The run starting now. Its commit: `commit` (`--commit`), else
    /// `git rev-parse HEAD` in the bench's source folder when git and the
    /// repository are there, else the environment variable
    /// `CUDA_MEM_COMMIT`, else none.
    pub fn now(commit: Option<String>) -> Self {
        let (commit, commit_from, worktree_dirty) = if let Some(c) = commit {
            (Some(c), Some("--commit"), None)
        } else if let Some(head) = git(&["rev-parse", "HEAD"]) {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]);
            (Some(head), Some("git"), dirty.map(|s| !s.is_empty()))
        } else if let Some(c) = std::env::var("CUDA_MEM_COMMIT")
            .ok()
            .filter(|c| !c.trim().is_empty())
        {
            (Some(c.trim().to_owned()), Some("CUDA_MEM_COMMIT"), None)
        } else {
            (None, None, None)
        };
        Self {
            date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
            commit,
            commit_from: commit_from.map(str::to_owned),
            worktree_dirty,
            cuda_mem_version: env!("CARGO_PKG_VERSION").to_owned(),
            cuda_built_for: cuda_version(sys::CUDA_VERSION as i32),
            command_line: std::env::args().collect(),
        }
    }
}

/// The output of `git args` run in the bench's source folder (trimmed), if
/// git ran and succeeded.
fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// A CUDA version as the driver API numbers it (`1000 * major + 10 *
/// minor`) written `major.minor`.
fn cuda_version(v: i32) -> String {
    format!("{}.{}", v / 1000, v % 1000 / 10)
}

/// The driver and the GPU a run measured.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Machine {
    /// The newest CUDA version the driver supports (`cuDriverGetVersion`),
    /// `major.minor`.
    pub driver_cuda_version: Option<String>,
    /// The driver's release (`/proc/driver/nvidia/version` on Linux).
    pub driver_release: Option<String>,
    pub gpu: Gpu,
}

/// The GPU: its name and its clocks as the driver reports them
/// (`cuDeviceGetAttribute`; the rated clocks, not those during the run).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Gpu {
    pub name: String,
    /// `CU_DEVICE_ATTRIBUTE_CLOCK_RATE`, kHz.
    pub clock_rate_khz: Option<i32>,
    /// `CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE`, kHz.
    pub memory_clock_rate_khz: Option<i32>,
}

impl Machine {
    /// The driver and the GPU of `ctx`; what the driver does not say is `None`.
    pub fn of(ctx: &Arc<CudaContext>) -> Self {
        use sys::CUdevice_attribute::*;
        let mut v = 0;
        // SAFETY: the driver is loaded (`ctx` exists); `v` is a valid out
        // pointer.
        let driver = unsafe { sys::cuDriverGetVersion(&mut v) };
        Self {
            driver_cuda_version: (driver == sys::CUresult::CUDA_SUCCESS).then(|| cuda_version(v)),
            driver_release: driver_release(),
            gpu: Gpu {
                name: ctx.name().unwrap_or_else(|e| format!("unknown ({e})")),
                clock_rate_khz: ctx.attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE).ok(),
                memory_clock_rate_khz: ctx.attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE).ok(),
            },
        }
    }
}

/// The NVIDIA driver's release (`580.159.04`) from the kernel module's
/// `/proc/driver/nvidia/version`, where there is one.
fn driver_release() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    release_in(&text)
}

/// The first word of `text` made of digits and dots, with a dot.
fn release_in(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.contains('.') && w.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_owned)
}

/// One row: the fields of the files written before, in their order.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct JsonRow {
    pub group: String,
    pub name: String,
    pub unit: String,
    pub ours: f64,
    pub raw: f64,
    pub raw_call: String,
    /// Ours against raw: 1.0 is parity, above is better.
    pub ratio: f64,
    /// The element size of a fill row.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub element_size: Option<usize>,
    /// A parity row's details: both sides' GB/s, registers and local memory.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub detail: Option<Detail>,
}

/// The details of a parity row (Rust kernel against its C++ twin or CUB).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
pub struct Detail {
    /// GB/s of the Rust kernel (the bytes the algorithm must move over its time).
    pub ours_gb_s: f64,
    /// GB/s of the other side.
    pub raw_gb_s: f64,
    /// Registers per thread of the Rust kernel (the loaded function's).
    pub ours_registers: i32,
    /// Registers per thread of the C++ twin (none for CUB).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub raw_registers: Option<i32>,
    /// Local memory per thread of the Rust kernel, in bytes.
    pub ours_local_bytes: i32,
    /// Local memory per thread of the C++ twin.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub raw_local_bytes: Option<i32>,
}

/// Four decimals, as the files always had.
fn round4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

impl From<&Row> for JsonRow {
    fn from(r: &Row) -> Self {
        Self {
            group: r.group.to_owned(),
            name: r.name.trim().to_owned(),
            unit: r.unit.to_owned(),
            ours: round4(r.ours),
            raw: round4(r.raw),
            raw_call: r.raw_name.to_owned(),
            ratio: round4(r.ratio()),
            element_size: r.size,
            detail: r.detail,
        }
    }
}

impl Report {
    pub fn new(run: Run, machine: Machine, rows: &[Row]) -> Self {
        Self {
            device: machine.gpu.name.clone(),
            run,
            machine,
            rows: rows.iter().map(JsonRow::from).collect(),
        }
    }

    /// Writes the report to `path`, indented.
    pub fn write(&self, path: &str) -> std::io::Result<()> {
        let mut json = serde_json::to_string_pretty(self)?;
        json.push('\n');
        std::fs::write(path, json)
    }
}

/// One point of the fill plot: a 1 GiB fill's element size, ours and the
/// memset's GB/s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FillPoint {
    pub size: usize,
    pub ours: f64,
    pub memset: f64,
}

impl FillPoint {
    /// The point of a row, if it is one: a row of the `fill` group with an
    /// element size (the 1 GiB fills). Rows of other groups carry sizes
    /// too (the graph's buffer, the bytes a checked or SoA row moves),
    /// which are no element sizes.
    fn of(group: &str, size: Option<usize>, ours: f64, raw: f64) -> Option<Self> {
        let size = size.filter(|_| group == "fill")?;
        Some(Self {
            size,
            ours,
            memset: raw,
        })
    }

    /// The points of a run's rows.
    pub fn of_rows(rows: &[Row]) -> Vec<Self> {
        rows.iter()
            .filter_map(|r| Self::of(r.group, r.size, r.ours, r.raw))
            .collect()
    }

    /// The points of the rows of a JSON file written before.
    pub fn of_json(rows: &[JsonRow]) -> Vec<Self> {
        rows.iter()
            .filter_map(|r| Self::of(&r.group, r.element_size, r.ours, r.raw))
            .collect()
    }
}

/// Reads a JSON file the bench wrote (or one of `examples/bench-*.json`)
/// and returns its device and its fill plot's points.
pub fn fill_points_of_file(
    path: &str,
) -> Result<(String, Vec<FillPoint>), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
    let file: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let device = file["device"]
        .as_str()
        .ok_or_else(|| format!("{path}: no \"device\" string; is it a file the bench wrote?"))?
        .to_owned();
    let rows: Vec<JsonRow> = serde_json::from_value(file["rows"].clone())
        .map_err(|e| format!("{path}: its \"rows\" are not the bench's rows: {e}"))?;
    Ok((device, FillPoint::of_json(&rows)))
}

/// Plots the 1 GiB fills (bandwidth against element size) into an SVG file.
pub fn plot(
    path: &str,
    device: &str,
    fills: &[FillPoint],
) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let max = fills
        .iter()
        .map(|r| r.ours.max(r.memset))
        .fold(0.0, f64::max)
        * 1.15;
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
        .build_cartesian_2d((1f64..5000f64).log_scale(), 0f64..max)?;
    chart
        .configure_mesh()
        .x_desc("element size (bytes, log scale)")
        .y_desc("GB/s (1 GiB buffer)")
        .draw()?;
    let pts = |f: fn(&FillPoint) -> f64| {
        fills
            .iter()
            .map(move |r| (r.size as f64, f(r)))
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
        .draw_series(LineSeries::new(pts(|r| r.memset), RED.stroke_width(2)))?
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(group: &'static str, name: &str, size: Option<usize>) -> Row {
        Row {
            group,
            name: name.to_owned(),
            unit: "GB/s",
            ours: 4_479.897_312,
            raw: 4_490.088_7,
            raw_name: "cuMemsetD32Async",
            higher_is_better: true,
            size,
            detail: None,
        }
    }

    /// A report as the bench writes it, with the H200's figures (the driver
    /// and the GPU are made up: no device here).
    fn sample() -> Report {
        let mut run = Run::now(Some("86a9f75".into()));
        run.command_line = ["bench", "--quick", "--json", "bench.json"]
            .map(String::from)
            .to_vec();
        let machine = Machine {
            driver_cuda_version: Some(cuda_version(13000)),
            driver_release: Some("580.159.04".into()),
            gpu: Gpu {
                name: "NVIDIA \"H200\"".into(),
                clock_rate_khz: Some(1_980_000),
                memory_clock_rate_khz: Some(3_201_000),
            },
        };
        let rows = [
            row("fill", "fill   1 B elements, 1 GiB", Some(1)),
            row("copy", "pinned H2D, 256 MiB", None),
        ];
        Report::new(run, machine, &rows)
    }

    #[test]
    fn a_report_records_the_run_and_keeps_the_old_fields() {
        let report = sample();
        let json = serde_json::to_string_pretty(&report).unwrap();
        println!("{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        // The metadata.
        for key in [
            "date",
            "commit",
            "commit_from",
            "cuda_mem_version",
            "cuda_built_for",
            "driver_cuda_version",
            "driver_release",
            "command_line",
        ] {
            assert!(!v[key].is_null(), "{key} missing in {json}");
        }
        assert_eq!(v["commit"], "86a9f75");
        assert_eq!(v["commit_from"], "--commit");
        assert_eq!(v["driver_cuda_version"], "13.0");
        assert_eq!(v["cuda_built_for"], cuda_version(sys::CUDA_VERSION as i32));
        assert_eq!(v["gpu"]["clock_rate_khz"], 1_980_000);
        assert_eq!(v["gpu"]["memory_clock_rate_khz"], 3_201_000);
        assert_eq!(v["command_line"][1], "--quick");
        let date = v["date"].as_str().unwrap();
        assert!(humantime::parse_rfc3339(date).is_ok(), "{date}");
        // Strings are escaped: the quotes in the name survive a round trip.
        assert_eq!(v["device"], "NVIDIA \"H200\"");
        assert_eq!(serde_json::from_str::<Report>(&json).unwrap(), report);
        // The rows: the old fields, four decimals, the element size only
        // on fill rows.
        assert_eq!(v["rows"][0]["ours"], 4479.8973);
        assert_eq!(v["rows"][0]["ratio"], 0.9977);
        assert_eq!(v["rows"][0]["element_size"], 1);
        assert!(v["rows"][1].get("element_size").is_none());
    }

    /// The rows of the files written before (`examples/bench-h200.json`)
    /// have the fields the new ones have, no more, no fewer: their readers
    /// read the new files. (That every committed row reads back as a
    /// `JsonRow` is `every_committed_file_reads_back`.)
    #[test]
    fn rows_have_the_fields_of_the_committed_files() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench-h200.json");
        let old: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let new = serde_json::to_value(sample()).unwrap();
        let keys = |row: &serde_json::Value| {
            let mut k: Vec<String> = row.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        let old_rows = old["rows"].as_array().unwrap();
        for (old_row, new_row) in [
            (&old_rows[0], &new["rows"][0]),
            (
                old_rows
                    .iter()
                    .find(|r| r.get("element_size").is_none())
                    .unwrap(),
                &new["rows"][1],
            ),
        ] {
            assert_eq!(keys(old_row), keys(new_row));
        }
    }

    /// The plot shows the 1 GiB fills only: the sizes other groups' rows
    /// carry (a graph's buffer, the bytes an SoA row moves) are no element
    /// sizes. (Before, every row with a size was a point: the committed
    /// plots had 20 points of the graph, checked and SoA rows, far off
    /// the element-size axis.)
    #[test]
    fn the_plot_has_the_fill_rows_only() {
        let mut graph = row("graph", "graph launch (host)", Some(16384));
        graph.unit = "us";
        let rows = [
            row("fill", "fill  12 B elements, 1 GiB", Some(12)),
            graph,
            row("fill", "fill 100 B elements, 1 MiB", None),
            row("soa", "AoS to SoA 63 MiB", Some(67_108_848)),
            row("fill", "fill 4096 B elements, 1 GiB", Some(4096)),
        ];
        let points = FillPoint::of_rows(&rows);
        assert_eq!(
            points.iter().map(|p| p.size).collect::<Vec<_>>(),
            [12, 4096]
        );
        let path = std::env::temp_dir().join(format!("bench-plot-{}.svg", std::process::id()));
        let path = path.to_str().unwrap();
        plot(path, "a GPU", &points).unwrap();
        let svg = std::fs::read_to_string(path).unwrap();
        std::fs::remove_file(path).unwrap();
        assert_eq!(svg.matches("<circle").count(), 2, "one dot per fill row");
        assert!(svg.contains("a GPU"));
    }

    /// Every committed file's fill rows plot from the file alone
    /// (`--plot-from`), one point per 1 GiB fill row.
    #[test]
    fn committed_files_give_their_fill_points() {
        for name in ["bench-h200.json", "bench-h100.json"] {
            let path = format!("{}/{name}", env!("CARGO_MANIFEST_DIR"));
            let (device, points) = fill_points_of_file(&path).unwrap();
            assert!(device.starts_with("NVIDIA"), "{name}: {device}");
            assert!(points.len() >= 20, "{name}: {} points", points.len());
            assert!(
                points.iter().all(|p| (1..=4096).contains(&p.size)),
                "{name}"
            );
        }
        let err = fill_points_of_file("no-such-file.json").unwrap_err();
        assert!(
            err.to_string().contains("reading no-such-file.json"),
            "{err}"
        );
    }

    /// A row of two zeros (no memory added by either side) is parity, and
    /// its JSON reads back: a NaN ratio was written as `null`, which no
    /// reader of `f64` takes.
    #[test]
    fn a_row_of_two_zeros_is_parity_and_reads_back() {
        for higher_is_better in [false, true] {
            let mut r = row("async", "pending completions: resident memory added", None);
            (r.ours, r.raw, r.higher_is_better) = (0.0, 0.0, higher_is_better);
            assert_eq!(r.ratio(), 1.0);
            let text = serde_json::to_string(&JsonRow::from(&r)).unwrap();
            let back: JsonRow = serde_json::from_str(&text).unwrap();
            assert_eq!(back.ratio, 1.0);
        }
    }

    /// Every committed file (the H200's, the H100's runs of the current
    /// build, the two-GPU one) reads back: a device, and rows of the
    /// fields the bench writes.
    #[test]
    fn every_committed_file_reads_back() {
        for name in ["bench-h200.json", "bench-h100.json", "bench-h200-x2.json"] {
            let path = format!("{}/{name}", env!("CARGO_MANIFEST_DIR"));
            let file: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert!(file["device"].is_string(), "{name}: no device");
            let rows = file["rows"].as_array().unwrap();
            assert!(!rows.is_empty(), "{name}: no rows");
            for r in rows {
                serde_json::from_value::<JsonRow>(r.clone())
                    .unwrap_or_else(|e| panic!("{name}: {r}: {e}"));
            }
        }
    }

    #[test]
    fn versions_and_releases_read_as_written() {
        assert_eq!(cuda_version(12080), "12.8");
        assert_eq!(cuda_version(13000), "13.0");
        assert_eq!(cuda_version(12020), "12.2");
        let proc = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  \
                    Release Build  (dvs-builder@U22-I3-AE18-23-3)  Thu Oct  2 2025\n\
                    GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04.2)";
        assert_eq!(release_in(proc).as_deref(), Some("580.159.04"));
        assert_eq!(release_in("no version here"), None);
    }

    /// Without `--commit`, the commit is the repository's HEAD when git
    /// and the repository are there (a checkout), else `CUDA_MEM_COMMIT`.
    #[test]
    fn the_commit_comes_from_the_flag_else_git() {
        assert_eq!(Run::now(Some("abc".into())).commit.as_deref(), Some("abc"));
        let run = Run::now(None);
        if let Some(head) = git(&["rev-parse", "HEAD"]) {
            assert_eq!(run.commit, Some(head));
            assert_eq!(run.commit_from.as_deref(), Some("git"));
            assert!(run.worktree_dirty.is_some());
        }
    }
}
