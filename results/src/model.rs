//! The result model: a run's manifest and its series of measured points, and the tidy
//! summary record every tabular output is made of. A [`Run`] is the one source every file of
//! a run directory is exported from, and what [`crate::read`] rebuilds from those files.

use std::collections::BTreeMap;

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, Metric, Point, PointKey};
use bench_core::stats::Summary;
use serde::{Deserialize, Serialize};

use crate::hdr;

/// The version of the run-directory layout this crate writes. Runs written before versions
/// existed read as version 0 ([`crate::read::legacy`]).
pub const SCHEMA_VERSION: u32 = 1;

/// A tunable's value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TunableRecord {
    pub value: serde_json::Value,
    pub source: String,
}

impl TunableRecord {
    /// The value as a label shows it: sizes and durations are stored as text already
    /// ("16KiB", "30s"), other values as JSON writes them.
    pub fn text(&self) -> String {
        match &self.value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

/// The tunables whose values differ between `fabrics` (runs of one fabric, as a legend or a
/// report column tells them apart). A tunable one run recorded and another did not (runs of
/// different fabbench versions) differs too: they may not have run with the same setting.
pub fn differing_tunables(fabrics: &[&FabricRun]) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> =
        fabrics.iter().flat_map(|f| f.tunables.keys()).collect();
    names
        .into_iter()
        .filter(|n| {
            let values: std::collections::BTreeSet<Option<String>> = fabrics
                .iter()
                .map(|f| f.tunables.get(*n).map(TunableRecord::text))
                .collect();
            values.len() > 1
        })
        .cloned()
        .collect()
}

/// How a fabric's ranks ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FabricKind {
    /// Real processes moving real bytes over a real medium.
    Native,
    /// Threads in virtual time under a model of hardware that is not present.
    Emulated,
    /// Through an MPI library.
    Mpi,
}

impl FabricKind {
    /// How output names the kind: "native", "emulated, virtual time", "mpi".
    pub fn words(self) -> &'static str {
        match self {
            FabricKind::Native => "native",
            FabricKind::Emulated => "emulated, virtual time",
            FabricKind::Mpi => "mpi",
        }
    }
}

/// One fabric's part of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FabricRun {
    /// What the run calls the fabric: "shm", "tcp@mpi".
    pub fabric: String,
    pub kind: FabricKind,
    pub emulated: bool,
    pub virtual_time: bool,
    pub ranks: usize,
    /// The settings that matter on this fabric, as text output names them
    /// ("eager_limit=4KiB frag_size=32KiB ...", after the MPI library's name on mpi).
    #[serde(default)]
    pub settings_line: String,
    /// Every tunable in force for this fabric, with its source.
    pub tunables: BTreeMap<String, TunableRecord>,
    /// Protocol counters per rank (what was actually used).
    pub counters: Vec<serde_json::Value>,
    /// Facts the fabric reported (single-copy mechanism, ring sizes, model card ...), as
    /// `rankN.name`.
    pub facts: BTreeMap<String, String>,
    /// On an emulated fabric, the host nanoseconds of every compute stretch each rank charged
    /// to virtual time, in order (index: rank); what `run --compute-from` replays. Its own
    /// file (compute.csv), not the manifest: a kernel run charges thousands.
    #[serde(skip)]
    pub compute: Vec<Vec<u64>>,
}

/// The manifest: everything needed to know what was run, where and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub fabbench_version: String,
    pub git_revision: String,
    pub run_id: String,
    pub command_line: Vec<String>,
    pub start_time: String,
    pub end_time: String,
    pub host: HostInfo,
    /// The suites, in the order they ran.
    pub suites: Vec<String>,
    /// Each suite's parameters, as the suite defines them.
    pub params: BTreeMap<String, serde_json::Value>,
    pub fabrics: Vec<FabricRun>,
    /// Present while the run is being written and on a run that ended before its last point:
    /// why, and which series finished (what `fabbench run --resume` keeps whole). A complete
    /// run has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
    /// `fabbench run --quick`: a first look with fewer iterations than the suites' own
    /// rules, not a measurement to compare against full runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quick: bool,
    /// Each time the run was continued (`fabbench run --resume`), oldest first: a run made in
    /// parts says so, and what each earlier part's ranks reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resumed: Vec<Resumption>,
}

/// One continuation of a kept partial run: when, on which host and build, why the part
/// before it had ended, what of it was kept, and what its ranks had reported per fabric (the
/// counters and facts, a single-copy verdict among them, that the new part replaces).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resumption {
    pub at: String,
    pub host: String,
    pub fabbench_version: String,
    pub git_revision: String,
    /// The partial reason of the part before.
    pub after: String,
    /// How many points the part before had measured that were kept.
    pub points_kept: usize,
    /// Per fabric, what the part before's ranks reported, where they reported anything.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported: Vec<EarlierPart>,
}

/// What a fabric's ranks had reported in an earlier part of a resumed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlierPart {
    pub fabric: String,
    pub counters: Vec<serde_json::Value>,
    pub facts: BTreeMap<String, String>,
}

/// Why a run is incomplete, and what of it is complete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// One line: "interrupted (SIGINT)", "rank 1 failed during stage ...", "in progress:
    /// launcher pid 4242 on node7" (what a run still going, or a launcher killed outright, says).
    pub reason: String,
    /// The series whose every point was measured, as (suite, fabric).
    #[serde(default)]
    pub finished: Vec<(String, String)>,
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
    /// Lines the suite wrote for the user beside its table (mpptest's `-diagnostics`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// A whole run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub manifest: Manifest,
    pub series: Vec<Series>,
}

impl Run {
    /// Why the run is incomplete, if it is (failed, stopped, or still being written): every
    /// reader marks such a run.
    pub fn partial_reason(&self) -> Option<&str> {
        self.manifest.partial.as_ref().map(|p| p.reason.as_str())
    }
}

/// One row of summary.csv: a suite, fabric, point and metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub suite: String,
    pub fabric: String,
    pub emulated: bool,
    pub ranks: usize,
    /// The message size, for suites whose points are sizes.
    pub size: Option<u64>,
    /// The point's named parameters, `name=value;name=value` (an NPB kernel's
    /// `class=A;kernel=cg`); empty for points that are only a size.
    pub params: String,
    pub metric: String,
    pub unit: String,
    /// The figure the suite prints (mean latency; total bytes over total time for bandwidth;
    /// over the fastest batch when the samples were taken in batches).
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

impl Record {
    fn of(s: &Series, p: &Point, m: &Metric, st: Summary) -> Record {
        Record {
            suite: s.suite.clone(),
            fabric: s.fabric.clone(),
            emulated: s.emulated,
            ranks: s.ranks,
            size: p.key.size,
            params: p.key.params_text(),
            metric: m.name.clone(),
            unit: m.unit.clone(),
            value: p.headline_of(m),
            count: st.count,
            min: st.min,
            mean: st.mean,
            p50: st.p50,
            p90: st.p90,
            p99: st.p99,
            p99_9: st.p999,
            max: st.max,
            stddev: st.stddev,
            validation: match p.validated {
                Some(true) => "pass".into(),
                Some(false) => "fail".into(),
                None => String::new(),
            },
        }
    }
}

/// `metric` over `point`'s samples. Count, min, mean and deviation are exact. Percentiles
/// follow HdrHistogram's rule, the nearest rank ⌈p·n/100⌉: for time metrics they are the
/// values Java's `getValueAtPercentile` gives on the metric's histogram, as the `.hgrm` rows
/// and HdrHistogram's tools report them, and max is the histogram's too (so no percentile
/// exceeds it); for rates they are the ranked samples themselves.
fn summary(point: &Point, metric: &Metric) -> Option<Summary> {
    let mut st = Summary::of(&point.values_of(metric))?;
    if let Some(h) = hdr::time_stats(&point.samples_ns, metric) {
        (st.p50, st.p90, st.p99, st.p999, st.max) = (h.p50, h.p90, h.p99, h.p999, h.max);
    }
    Some(st)
}

impl Series {
    /// One record per point and metric, then, for points that split their time, one for
    /// compute and one for communication time.
    pub fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        for p in &self.points {
            for m in &p.metrics {
                if let Some(st) = summary(p, m) {
                    out.push(Record::of(self, p, m, st));
                }
            }
            for (m, part) in p.split_parts() {
                if let Some(st) = summary(&part, &m) {
                    out.push(Record::of(self, &part, &m, st));
                }
            }
        }
        out
    }

    /// The point measured at `key`.
    pub fn point(&self, key: &PointKey) -> Option<&Point> {
        self.points.iter().find(|p| &p.key == key)
    }
}

impl Run {
    pub fn records(&self) -> Vec<Record> {
        self.series.iter().flat_map(Series::records).collect()
    }

    /// The fabric the run calls `label`.
    pub fn fabric(&self, label: &str) -> Option<&FabricRun> {
        self.manifest.fabrics.iter().find(|f| f.fabric == label)
    }

    /// The series of `suite` on `fabric`.
    pub fn series_of(&self, suite: &str, fabric: &str) -> Option<&Series> {
        self.series
            .iter()
            .find(|s| s.suite == suite && s.fabric == fabric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunables_differ_by_value_or_by_being_recorded_only_once() {
        let fabric = |pairs: &[(&str, &str)]| FabricRun {
            fabric: "rapidio".into(),
            kind: FabricKind::Emulated,
            emulated: true,
            virtual_time: true,
            ranks: 2,
            settings_line: String::new(),
            tunables: pairs
                .iter()
                .map(|(k, v)| {
                    let value = serde_json::Value::String(v.to_string());
                    (
                        k.to_string(),
                        TunableRecord {
                            value,
                            source: "cli".into(),
                        },
                    )
                })
                .collect(),
            counters: vec![],
            facts: Default::default(),
            compute: Vec::new(),
        };
        let a = fabric(&[
            ("eager_limit", "4KiB"),
            ("rx_thread", "off"),
            ("frag_size", "32KiB"),
        ]);
        let b = fabric(&[("eager_limit", "16KiB"), ("rx_thread", "off")]);
        assert_eq!(differing_tunables(&[&a, &b]), ["eager_limit", "frag_size"]);
        assert!(differing_tunables(&[&a]).is_empty());
        assert_eq!(a.tunables["eager_limit"].text(), "4KiB");
    }

    #[test]
    fn a_record_per_point_and_metric() {
        let p = Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0), Metric::bandwidth_mbs(8.0)],
            samples_ns: vec![1000, 3000],
            validated: Some(true),
            batches: Vec::new(),
            split: None,
        };
        let s = Series {
            suite: "x".into(),
            fabric: "shm".into(),
            emulated: false,
            ranks: 2,
            layout: Layout::Osu {
                title: "t".into(),
                column: "c".into(),
                tail: false,
                tail_at: Vec::new(),
                validation: true,
            },
            points: vec![p],
            notes: Vec::new(),
        };
        let r = s.records();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].metric.as_str(), r[0].value), ("latency", 1.0));
        assert_eq!(
            (r[1].metric.as_str(), r[1].unit.as_str()),
            ("bandwidth", "MB/s")
        );
        assert_eq!(r[1].value, 4.0); // 16 bytes in 4 us
        assert_eq!(r[0].validation, "pass");
        assert_eq!(r[0].size, Some(8));
    }

    #[test]
    fn time_percentiles_are_the_ones_hdrhistogram_reports() {
        // Round trips 2 ns .. 40 ns: one-way 1 .. 20 ns, 20 samples. Java's
        // getValueAtPercentile on that histogram gives 10 ns at 50 %, 18 at 90 %, 20 at 99 %
        // and 99.9 % (the .hgrm rows at those levels say the same).
        let mut samples: Vec<u64> = (1..=20).map(|i| 2 * i).collect();
        // Round trips of 4001 and 40001 ns: one-way 2000.5 ns (recorded as 2001, exact
        // below 2048) and 20000.5 ns (recorded as 20001, in the bucket 20000..=20015).
        samples[18] = 4001;
        samples[19] = 40_001;
        let p = Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0), Metric::bandwidth_mbs(8.0)],
            samples_ns: samples,
            validated: None,
            batches: Vec::new(),
            split: None,
        };
        let s = Series {
            suite: "x".into(),
            fabric: "shm".into(),
            emulated: false,
            ranks: 2,
            layout: Layout::Osu {
                title: "t".into(),
                column: "c".into(),
                tail: false,
                tail_at: Vec::new(),
                validation: false,
            },
            points: vec![p],
            notes: Vec::new(),
        };
        let r = s.records();
        let l = &r[0];
        assert_eq!(
            (l.p50, l.p90, l.p99, l.p99_9),
            (0.01, 0.018, 20.015, 20.015)
        );
        // Max is the histogram's (Java's getMaxValue), min stays exact.
        assert_eq!((l.min, l.max), (0.001, 20.015));
        // Rates: the nearest-rank sample itself. 90 % of 20 is the 18th lowest rate: 8 bytes
        // in the third shortest time, 6 ns.
        let b = &r[1];
        assert_eq!(b.p90, 8.0 / 6.0 * (1e9 / 1e6));
        assert_eq!(b.max, 8.0 / 2.0 * (1e9 / 1e6));
    }
}
