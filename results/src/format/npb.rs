//! The NAS Parallel Benchmarks' report, so what reads NPB's output reads fabbench's: for each
//! kernel run, NPB's "Benchmark Completed." block with its fields in NPB's layout (name padded
//! to 16, `=`, the value right-aligned in 24), then fabbench's own lines in the same layout:
//! the fabric, how the time divides between computing and communicating, and on an emulated
//! fabric how host compute time was scaled to the emulated node. NPB prints the time to two
//! decimals; fabbench prints four, since class S runs take milliseconds.

use std::path::PathBuf;

use bench_core::measure::{Layout, NpbKernel, NpbLayout, Point};

use crate::format::Exporter;
use crate::model::{Run, Series};
use crate::ResultsError;

/// The NPB specification version the kernels follow.
pub const NPB_VERSION: &str = "3.4";

fn layout(series: &Series) -> Option<&NpbLayout> {
    match &series.layout {
        Layout::Npb(l) => Some(l),
        _ => None,
    }
}

/// One `name = value` line of NPB's report.
fn field(name: &str, value: impl std::fmt::Display) -> String {
    format!(" {name:<16}= {value:>24}\n")
}

/// NPB's Size field: a 3D grid as Fortran's `i4,'x',i4,'x',i4` writes it, else the number.
fn size_field(size: &str) -> String {
    if size.contains('x') {
        size.split('x')
            .map(|d| format!("{:>4}", d.trim()))
            .collect::<Vec<_>>()
            .join("x")
    } else {
        size.to_string()
    }
}

/// The headline of the point's metric called `name`, if it has one.
pub(crate) fn headline(p: &Point, name: &str) -> Option<f64> {
    p.metrics
        .iter()
        .find(|m| m.name == name)
        .map(|m| p.headline_of(m))
}

/// The emulated node's compute scaling, as the run recorded it ("host clock x 10
/// (rapidio.compute_scale)"), for a series on an emulated fabric.
pub fn compute_scaling(run: &Run, series: &Series) -> Option<String> {
    if !series.emulated {
        return None;
    }
    let f = run.fabric(&series.fabric)?;
    let base = series.fabric.split('@').next().unwrap_or(&series.fabric);
    let name = format!("{base}.compute_scale");
    let t = f.tunables.get(&name)?;
    Some(format!("host clock x {} ({name})", t.text()))
}

/// The run directory the series' compute was replayed from (`run --compute-from`), if it was.
pub fn compute_replayed_from<'r>(run: &'r Run, series: &Series) -> Option<&'r str> {
    let f = run.fabric(&series.fabric)?;
    f.facts
        .get(crate::format::compute::COMPUTE_REPLAYED_FROM)
        .map(String::as_str)
}

/// The line a kernel report says how its compute was charged with, on an emulated fabric:
/// scaled host time, timed in this run or replayed from an earlier one.
pub(crate) fn compute_line(run: &Run, series: &Series) -> Option<String> {
    let scale = compute_scaling(run, series)?;
    Some(match compute_replayed_from(run, series) {
        None => format!(
            " Compute on the emulated node = {scale}: the host's compute time scaled to the emulated node's speed, in virtual time\n"
        ),
        Some(dir) => format!(
            " Compute on the emulated node = {scale}: host times replayed from {dir} (not timed in this run), scaled to the emulated node's speed, in virtual time\n"
        ),
    })
}

/// The report of one kernel run.
fn report(run: &Run, series: &Series, k: &NpbKernel, class: &str, p: &Point) -> String {
    let time = headline(p, "time").unwrap_or(f64::NAN);
    let mops = headline(p, "mops").unwrap_or(f64::NAN);
    let ranks = series.ranks;
    let verified = match p.validated {
        Some(true) => "SUCCESSFUL",
        Some(false) => "UNSUCCESSFUL",
        None => "NOT PERFORMED",
    };
    let mut out = format!("\n\n {} Benchmark Completed.\n", k.name);
    out.push_str(&field("Class", class));
    out.push_str(&field("Size", size_field(&k.size)));
    out.push_str(&field("Iterations", k.iterations));
    out.push_str(&field("Time in seconds", format!("{time:.4}")));
    out.push_str(&field("Total processes", ranks));
    out.push_str(&field("Active processes", ranks).replacen("processes ", "processes", 1));
    out.push_str(&field("Mop/s total", format!("{mops:.2}")));
    out.push_str(&field(
        "Mop/s/process",
        format!("{:.2}", mops / ranks as f64),
    ));
    out.push_str(&field("Operation type", &k.operation));
    out.push_str(&field("Verification", verified));
    out.push_str(&field("Version", NPB_VERSION));
    out.push_str(&field("Runs", p.samples_ns.len()));
    let kind = run
        .fabric(&series.fabric)
        .map(|f| f.kind.words())
        .unwrap_or("");
    out.push_str(&format!(
        "\n fabbench {}: {} on {} ({kind})\n",
        run.manifest.fabbench_version, series.suite, series.fabric
    ));
    if let Some(split) = &p.split {
        let secs = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len().max(1) as f64 / 1e9;
        let share = split.comm_share();
        out.push_str(&field(
            "Compute time",
            format!(
                "{:.4} ({:.1}%)",
                secs(&split.compute_ns),
                (1.0 - share) * 100.0
            ),
        ));
        out.push_str(&field(
            "Comm time",
            format!("{:.4} ({:.1}%)", secs(&split.comm_ns), share * 100.0),
        ));
    }
    if let Some(line) = compute_line(run, series) {
        out.push_str(&line);
    }
    out
}

/// Every kernel report of an NPB series, then the suite's notes (verification values); empty
/// for a series of another layout.
pub fn text(run: &Run, series: &Series) -> String {
    let Some(l) = layout(series) else {
        return String::new();
    };
    let mut out = String::new();
    for p in &series.points {
        let Some(name) = p.key.params.get("kernel") else {
            continue;
        };
        let Some(k) = l.kernels.iter().find(|k| &k.kernel == name) else {
            continue;
        };
        let class = p.key.params.get("class").unwrap_or(&l.class);
        out.push_str(&report(run, series, k, class, p));
    }
    if !series.notes.is_empty() {
        out.push('\n');
        for n in &series.notes {
            out.push_str(&format!(" {n}\n"));
        }
    }
    out
}

/// One kernel run as the summary lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    pub kernel: String,
    pub class: String,
    pub fabric: String,
    pub ranks: usize,
    pub time_s: f64,
    pub mops: f64,
    /// NPB's verification: Some(passed), None when not performed.
    pub verified: Option<bool>,
    /// The fraction of the time in communication, when the kernel measured it.
    pub comm_share: Option<f64>,
}

/// A row per kernel run of every NPB series of the run, in the order the blocks print.
pub fn summary_rows(run: &Run) -> Vec<SummaryRow> {
    let mut rows = Vec::new();
    for s in &run.series {
        let Some(l) = layout(s) else { continue };
        for p in &s.points {
            let Some(kernel) = p.key.params.get("kernel") else {
                continue;
            };
            rows.push(SummaryRow {
                kernel: kernel.clone(),
                class: p.key.params.get("class").unwrap_or(&l.class).clone(),
                fabric: s.fabric.clone(),
                ranks: s.ranks,
                time_s: headline(p, "time").unwrap_or(f64::NAN),
                mops: headline(p, "mops").unwrap_or(f64::NAN),
                verified: p.validated,
                comm_share: p.split.as_ref().map(|x| x.comm_share()),
            });
        }
    }
    rows
}

fn verified_word(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "not checked",
    }
}

/// The closing table after the kernels' blocks, so a run of several kernels (or counts) reads
/// at a glance; empty without rows.
pub fn summary_text(rows: &[SummaryRow]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut t = crate::format::table::Table::new(vec![
        "kernel",
        "class",
        "fabric",
        "ranks",
        "time (s)",
        "Mop/s",
        "verified",
        "comm share",
    ]);
    for r in rows {
        t.push_row(vec![
            r.kernel.clone(),
            r.class.clone(),
            r.fabric.clone(),
            r.ranks.to_string(),
            format!("{:.4}", r.time_s),
            format!("{:.2}", r.mops),
            verified_word(r.verified).into(),
            r.comm_share
                .map_or("-".into(), |c| format!("{:.1}%", c * 100.0)),
        ]);
    }
    format!("\n# NPB summary\n{}", t.to_text())
}

/// npb-summary.csv: the summary's rows, numbers in full (comm_share a fraction, empty when
/// not measured; verified true, false or empty when not performed).
pub fn summary_csv(rows: &[SummaryRow]) -> Result<Vec<u8>, ResultsError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "kernel",
        "class",
        "fabric",
        "ranks",
        "time_s",
        "mops",
        "verified",
        "comm_share",
    ])?;
    for r in rows {
        w.write_record([
            r.kernel.clone(),
            r.class.clone(),
            r.fabric.clone(),
            r.ranks.to_string(),
            r.time_s.to_string(),
            r.mops.to_string(),
            r.verified.map(|v| v.to_string()).unwrap_or_default(),
            r.comm_share.map(|c| c.to_string()).unwrap_or_default(),
        ])?;
    }
    w.into_inner().map_err(ResultsError::csv_flush)
}

/// npb.txt (what the run printed for its NPB series, the summary last) and npb-summary.csv.
pub struct NpbText;

impl Exporter for NpbText {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        if !run.series.iter().any(|s| layout(s).is_some()) {
            return Ok(Vec::new());
        }
        let rows = summary_rows(run);
        let mut txt: String = run.series.iter().map(|s| text(run, s)).collect();
        txt.push_str(&summary_text(&rows));
        Ok(vec![
            ("npb.txt".into(), txt.into_bytes()),
            ("npb-summary.csv".into(), summary_csv(&rows)?),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::npb_run;

    #[test]
    fn a_report_in_npbs_layout() {
        let mut run = npb_run("npb", "shm", 2, &[("cg", 0.5)]);
        run.series[0].layout = Layout::Npb(NpbLayout {
            class: "S".into(),
            kernels: vec![NpbKernel {
                kernel: "cg".into(),
                name: "CG".into(),
                size: "1400".into(),
                iterations: 15,
                operation: "floating point".into(),
            }],
        });
        run.series[0].notes = vec!["CG: Zeta is 0.8597177507865E+01".into()];
        let t = text(&run, &run.series[0]);
        // NPB's own lines, byte for byte where NPB's values are the same.
        for line in [
            " CG Benchmark Completed.\n",
            " Class           =                        S\n",
            " Size            =                     1400\n",
            " Iterations      =                       15\n",
            " Time in seconds =                   0.5000\n",
            " Total processes =                        2\n",
            " Active processes=                        2\n",
            " Mop/s total     =                  2000.00\n",
            " Mop/s/process   =                  1000.00\n",
            " Operation type  =           floating point\n",
            " Verification    =               SUCCESSFUL\n",
            " Compute time    =           0.2500 (50.0%)\n",
            " CG: Zeta is 0.8597177507865E+01\n",
        ] {
            assert!(t.contains(line), "missing {line:?} in\n{t}");
        }
        let rows = summary_rows(&run);
        assert_eq!(rows.len(), 1);
        let table = summary_text(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[1], "# NPB summary", "{table}");
        assert!(
            lines[2].starts_with("kernel") && lines[2].contains("comm share"),
            "{table}"
        );
        let row = lines.last().unwrap();
        for cell in ["cg", "S", "shm", "2", "0.5000", "2000.00", "yes", "50.0%"] {
            assert!(row.split_whitespace().any(|c| c == cell), "{cell} in {row}");
        }
        let files = NpbText.export(&run).unwrap();
        let csv = String::from_utf8(files[1].1.clone()).unwrap();
        assert_eq!(files[1].0.to_str(), Some("npb-summary.csv"));
        assert_eq!(
            csv.lines().nth(1),
            Some("cg,S,shm,2,0.5,2000,true,0.5"),
            "{csv}"
        );
        assert_eq!(size_field("64x 64x64"), "  64x  64x  64");
        assert_eq!(
            field("Size", size_field("32x32x32")),
            " Size            =             32x  32x  32\n"
        );
    }
}
