//! The JSON and CSV files of a run directory: manifest.json (with the index of every series
//! and point, which with samples.csv is enough to read the run back), summary.csv, samples.csv
//! and results.json.

use std::path::PathBuf;

use bench_core::measure::{Layout, Metric, Point, PointKey, Split};
use serde::{Deserialize, Serialize};

use crate::format::Exporter;
use crate::model::{Manifest, Record, Run, Series};
use crate::ResultsError;

/// A point as manifest.json lists it: everything but the samples, which are in samples.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointIndex {
    pub key: PointKey,
    pub metrics: Vec<Metric>,
    pub validated: Option<bool>,
    /// How many rows of samples.csv the point has.
    pub samples: usize,
    /// How those rows split into timed batches (absent: one batch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<u64>,
    /// Each sample's compute and communication time (application kernels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// Warm-up iterations run before the samples (absent where none were, or in runs
    /// written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u64>,
}

/// A series as manifest.json lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesIndex {
    pub suite: String,
    pub fabric: String,
    pub emulated: bool,
    pub ranks: usize,
    pub layout: Layout,
    pub points: Vec<PointIndex>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// manifest.json: the manifest, and what each series measured (its samples aside).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestFile {
    #[serde(flatten)]
    pub manifest: Manifest,
    pub series: Vec<SeriesIndex>,
}

impl ManifestFile {
    pub fn of(run: &Run) -> ManifestFile {
        ManifestFile {
            manifest: as_written(&run.manifest),
            series: run
                .series
                .iter()
                .map(|s| SeriesIndex {
                    suite: s.suite.clone(),
                    fabric: s.fabric.clone(),
                    emulated: s.emulated,
                    ranks: s.ranks,
                    layout: s.layout.clone(),
                    points: s
                        .points
                        .iter()
                        .map(|p| PointIndex {
                            key: p.key.clone(),
                            metrics: p.metrics.clone(),
                            validated: p.validated,
                            samples: p.samples_ns.len(),
                            batches: p.batches.clone(),
                            split: p.split.clone(),
                            warmup: p.warmup,
                        })
                        .collect(),
                    notes: s.notes.clone(),
                })
                .collect(),
        }
    }
}

/// manifest.json
pub struct ManifestJson;

impl Exporter for ManifestJson {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        Ok(vec![(
            "manifest.json".into(),
            json(&ManifestFile::of(run))?,
        )])
    }
}

/// summary.csv: one tidy row per suite, fabric, point and metric.
pub struct SummaryCsv;

/// summary.csv's columns, written even when there are no rows.
const SUMMARY_COLUMNS: [&str; 19] = [
    "suite",
    "fabric",
    "emulated",
    "ranks",
    "size",
    "params",
    "metric",
    "unit",
    "value",
    "count",
    "min",
    "mean",
    "p50",
    "p90",
    "p99",
    "p99.9",
    "max",
    "stddev",
    "validation",
];

impl Exporter for SummaryCsv {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let records = run.records();
        let bytes = if records.is_empty() {
            format!("{}\n", SUMMARY_COLUMNS.join(",")).into_bytes()
        } else {
            to_csv(&records)?
        };
        Ok(vec![("summary.csv".into(), bytes)])
    }
}

/// One row of samples.csv.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub suite: String,
    pub fabric: String,
    pub size: Option<u64>,
    /// The point key's other parameters, `name=value;...` (empty for message sizes alone).
    pub params: String,
    pub iteration: usize,
    pub ns: u64,
}

/// samples.csv: every raw timed sample, so any statistic can be recomputed later.
pub struct SamplesCsv;

impl Exporter for SamplesCsv {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        // The header even with no rows, so the file still says what its columns are.
        let mut bytes = SAMPLES_HEADER_LINE.as_bytes().to_vec();
        for s in &run.series {
            for p in &s.points {
                sample_rows(&mut bytes, s, p)?;
            }
        }
        Ok(vec![("samples.csv".into(), bytes)])
    }
}

/// samples.csv's header line.
const SAMPLES_HEADER_LINE: &str = "suite,fabric,size,params,iteration,ns\n";

/// A point's rows, as `SampleRow` would serialize them. A run holds millions of samples, and
/// serializing a row struct each (its strings cloned, every field checked for quoting) was
/// most of what the launcher spent on a run; now the four fields a point's rows share are
/// written (and quoted) once by the csv writer, and each row adds two numbers, which never
/// need quoting.
fn sample_rows(out: &mut Vec<u8>, s: &Series, p: &Point) -> Result<(), ResultsError> {
    let mut size = itoa::Buffer::new();
    let size = p.key.size.map_or("", |n| size.format(n));
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record([&s.suite, &s.fabric, size, &p.key.params_text(), ""])?;
    let mut shared = w.into_inner().map_err(ResultsError::csv_flush)?;
    shared.pop(); // the line's end: the row goes on after the shared fields' last comma
    let (mut iteration, mut ns) = (itoa::Buffer::new(), itoa::Buffer::new());
    out.reserve(p.samples_ns.len() * (shared.len() + 16));
    for (i, v) in p.samples_ns.iter().enumerate() {
        out.extend_from_slice(&shared);
        out.extend_from_slice(iteration.format(i).as_bytes());
        out.push(b',');
        out.extend_from_slice(ns.format(*v).as_bytes());
        out.push(b'\n');
    }
    Ok(())
}

/// The rows of samples.csv one point adds (with the header first when `header`), as a run's
/// journal appends them when the point is measured: the file then reads as the exporter's.
pub fn samples_of_point(s: &Series, p: &Point, header: bool) -> Result<Vec<u8>, ResultsError> {
    let mut out = Vec::new();
    if header {
        out.extend_from_slice(SAMPLES_HEADER_LINE.as_bytes());
    }
    sample_rows(&mut out, s, p)?;
    Ok(out)
}

/// results.json: the manifest and the summary records in one document.
pub struct ResultsJson;

impl Exporter for ResultsJson {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        #[derive(Serialize)]
        struct Doc<'a> {
            manifest: &'a Manifest,
            records: Vec<Record>,
        }
        let doc = Doc {
            manifest: &as_written(&run.manifest),
            records: run.records(),
        };
        Ok(vec![("results.json".into(), json(&doc)?)])
    }
}

/// The manifest as this version writes it: a run read from an older layout is written in
/// today's.
fn as_written(m: &Manifest) -> Manifest {
    Manifest {
        schema_version: crate::model::SCHEMA_VERSION,
        ..m.clone()
    }
}

fn json<T: Serialize>(value: &T) -> Result<Vec<u8>, ResultsError> {
    let mut bytes = serde_json::to_vec_pretty(value)?;
    bytes.push(b'\n');
    Ok(bytes)
}

fn to_csv<T: Serialize>(rows: &[T]) -> Result<Vec<u8>, ResultsError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    w.into_inner().map_err(ResultsError::csv_flush)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FabricKind;
    use crate::testing::{self, RunBuilder};

    fn run(points: Vec<Point>) -> Run {
        RunBuilder::new("r")
            .suites(&["s"])
            .fabric(testing::fabric("shm", FabricKind::Native, 2))
            .series(testing::series(
                "s",
                "shm",
                false,
                2,
                testing::osu_layout("t", "c"),
                points,
            ))
            .build()
    }

    #[test]
    fn the_csv_headers_are_written_even_without_rows() {
        let empty = run(vec![]);
        let summary = &SummaryCsv.export(&empty).unwrap()[0].1;
        let one = run(vec![Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: vec![100],
            validated: None,
            batches: Vec::new(),
            split: None,
        }]);
        let full = String::from_utf8(SummaryCsv.export(&one).unwrap()[0].1.clone()).unwrap();
        assert_eq!(
            String::from_utf8_lossy(summary).trim_end(),
            full.lines().next().unwrap(),
            "the same header with and without rows"
        );
        let samples = &SamplesCsv.export(&empty).unwrap()[0].1;
        assert_eq!(
            String::from_utf8_lossy(samples).trim_end(),
            "suite,fabric,size,params,iteration,ns"
        );
    }

    #[test]
    fn a_journal_of_points_reads_as_the_exported_file() {
        let point = |size, ns: Vec<u64>| Point {
            warmup: None,
            key: PointKey::size(size),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: ns,
            validated: None,
            batches: Vec::new(),
            split: None,
        };
        let r = run(vec![point(1, vec![5, 6]), point(2, vec![7])]);
        let s = &r.series[0];
        let mut journal = samples_of_point(s, &s.points[0], true).unwrap();
        journal.extend(samples_of_point(s, &s.points[1], false).unwrap());
        assert_eq!(journal, SamplesCsv.export(&r).unwrap()[0].1);
    }

    #[test]
    fn sample_rows_are_what_serializing_sample_row_gives() {
        // No size, parameters that need quoting, a fabric label with an '@', a zero and the
        // largest sample.
        let key = PointKey::params([("class", "S,\"x\"".to_string()), ("n", "4".to_string())]);
        let p = Point {
            warmup: None,
            key,
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: vec![0, 17, u64::MAX],
            validated: None,
            batches: Vec::new(),
            split: None,
        };
        let mut r = run(vec![
            p.clone(),
            Point {
                key: PointKey::size(1 << 20),
                ..p
            },
        ]);
        r.series[0].fabric = "tcp@mpi".into();
        let mut want = csv::Writer::from_writer(Vec::new());
        for p in &r.series[0].points {
            for (i, ns) in p.samples_ns.iter().enumerate() {
                want.serialize(SampleRow {
                    suite: "s".into(),
                    fabric: "tcp@mpi".into(),
                    size: p.key.size,
                    params: p.key.params_text(),
                    iteration: i,
                    ns: *ns,
                })
                .unwrap();
            }
        }
        let want = String::from_utf8(want.into_inner().unwrap()).unwrap();
        let got = String::from_utf8(SamplesCsv.export(&r).unwrap()[0].1.clone()).unwrap();
        assert!(got.contains("\"class=S,\"\"x\"\";n=4\""), "{got}");
        assert_eq!(got, want);
    }
}
