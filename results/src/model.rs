//! The result model: a run's manifest and its series of measured points, and the tidy
//! summary record every tabular output is made of.

use std::collections::BTreeMap;

use bench_core::machine::HostInfo;
use bench_core::measure::Point;
use serde::{Deserialize, Serialize};

pub use bench_core::measure::Layout;

/// A tunable's value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunableRecord {
    pub value: serde_json::Value,
    pub source: String,
}

/// One fabric's part of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FabricRun {
    pub fabric: String,
    /// "native", "emulated" or "mpi".
    pub kind: String,
    pub emulated: bool,
    pub virtual_time: bool,
    pub ranks: usize,
    /// Every tunable in force for this fabric, with its source.
    pub tunables: BTreeMap<String, TunableRecord>,
    /// Protocol counters per rank (what was actually used).
    pub counters: Vec<serde_json::Value>,
    /// Facts the fabric reported (single-copy mechanism, ring sizes, model card ...).
    pub facts: BTreeMap<String, String>,
}

/// The manifest: everything needed to know what was run, where and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub fabbench_version: String,
    pub git_revision: String,
    pub run_id: String,
    pub command_line: Vec<String>,
    pub start_time: String,
    pub end_time: String,
    pub host: HostInfo,
    pub suites: Vec<String>,
    pub options: serde_json::Value,
    pub fabrics: Vec<FabricRun>,
}

/// One suite on one fabric: the points it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub suite: String,
    pub fabric: String,
    pub emulated: bool,
    pub ranks: usize,
    pub layout: Layout,
    pub points: Vec<Point>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub manifest: Manifest,
    pub series: Vec<Series>,
}

/// One row of summary.csv: a suite, fabric, size and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub suite: String,
    pub fabric: String,
    pub emulated: bool,
    pub ranks: usize,
    pub size: u64,
    pub metric: String,
    pub unit: String,
    /// The figure OSU prints (mean latency; total bytes over total time for bandwidth).
    pub value: f64,
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    pub max: f64,
    pub stddev: f64,
    /// "pass", "fail" or "" when not checked.
    pub validation: String,
}

impl Series {
    pub fn records(&self) -> Vec<Record> {
        self.points
            .iter()
            .filter_map(|p| {
                let s = p.summary()?;
                Some(Record {
                    suite: self.suite.clone(),
                    fabric: self.fabric.clone(),
                    emulated: self.emulated,
                    ranks: self.ranks,
                    size: p.size,
                    metric: p.metric.name().to_string(),
                    unit: p.metric.unit().to_string(),
                    value: p.headline(),
                    count: s.count,
                    min: s.min,
                    mean: s.mean,
                    p50: s.p50,
                    p90: s.p90,
                    p99: s.p99,
                    p99_9: s.p999,
                    max: s.max,
                    stddev: s.stddev,
                    validation: match p.validated {
                        Some(true) => "pass".into(),
                        Some(false) => "fail".into(),
                        None => String::new(),
                    },
                })
            })
            .collect()
    }
}

impl Run {
    pub fn records(&self) -> Vec<Record> {
        self.series.iter().flat_map(Series::records).collect()
    }
}
