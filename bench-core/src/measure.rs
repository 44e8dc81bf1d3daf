//! What a suite measures, before any reporting: one [`Point`] per point key (a message size,
//! or named parameters such as an application kernel's class), holding every raw timed sample,
//! and the [`Metric`]s that say, as data, how samples become the figures a suite reports.
//!
//! Keeping raw samples (not only summaries) is what lets every later view — percentiles,
//! histograms, bootstrapped comparisons — be computed from the same data. Metrics are data
//! rather than a closed list so that a new suite brings its own (Mop/s, seconds, messages per
//! second) without a change here; what is closed is the arithmetic, because a sample is always
//! a duration and a metric is either a duration or a rate.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// Which direction of a metric is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// Smaller is better (latency, time).
    Lower,
    /// Larger is better (bandwidth, operations per second).
    Higher,
}

/// How one raw sample (nanoseconds of one timed iteration) becomes a value of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Derivation {
    /// A duration: `ns / divisor / unit_ns` (one-way microseconds from a round trip: divisor
    /// 2, unit_ns 1000). The headline over many samples is their mean.
    Time { divisor: f64, unit_ns: f64 },
    /// A rate: `amount / seconds / unit` (MB/s: amount = bytes moved per sample, unit = 10^6).
    /// The headline is the total amount over the total time, as OSU computes bandwidth.
    Rate { amount: f64, unit: f64 },
}

/// A reported quantity: its name, unit, which way is better, and how samples make it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// "latency", "bandwidth", "time", "mops"
    pub name: String,
    /// "us", "MB/s", "s", "Mop/s"
    pub unit: String,
    pub better: Better,
    pub derive: Derivation,
}

impl Metric {
    /// Latency in microseconds: each sample divided by `divisor` (2 for a round trip reported
    /// one way).
    pub fn latency_us(divisor: f64) -> Metric {
        Metric {
            name: "latency".into(),
            unit: "us".into(),
            better: Better::Lower,
            derive: Derivation::Time {
                divisor,
                unit_ns: 1e3,
            },
        }
    }

    /// Bandwidth in MB/s (10^6 bytes per second, OSU's unit), `bytes_per_sample` bytes moved in
    /// each timed iteration.
    pub fn bandwidth_mbs(bytes_per_sample: f64) -> Metric {
        Metric {
            name: "bandwidth".into(),
            unit: "MB/s".into(),
            better: Better::Higher,
            derive: Derivation::Rate {
                amount: bytes_per_sample,
                unit: 1e6,
            },
        }
    }

    /// Whether the samples are durations reported as such (not rates).
    pub fn is_time(&self) -> bool {
        matches!(self.derive, Derivation::Time { .. })
    }

    /// The metric value of one sample.
    pub fn of_sample(&self, ns: u64) -> f64 {
        match self.derive {
            Derivation::Time { divisor, unit_ns } => ns as f64 / divisor / unit_ns,
            Derivation::Rate { amount, unit } => {
                if ns == 0 {
                    f64::INFINITY
                } else {
                    amount / ns as f64 * (1e9 / unit)
                }
            }
        }
    }

    /// The figure a suite prints for these samples: the mean of a duration, or the total
    /// amount over the total time of a rate. NaN when there are no samples.
    pub fn headline(&self, samples_ns: &[u64]) -> f64 {
        let total: u128 = samples_ns.iter().map(|&s| s as u128).sum();
        let n = samples_ns.len() as f64;
        match self.derive {
            Derivation::Time { divisor, unit_ns } => total as f64 / n / divisor / unit_ns,
            Derivation::Rate { amount, unit } => amount * n / total.max(1) as f64 * (1e9 / unit),
        }
    }

    /// A sample converted to nanoseconds of the quantity reported (a round trip halved), for
    /// histograms of durations; rates keep the sample as measured.
    pub fn sample_duration_ns(&self, ns: u64) -> f64 {
        match self.derive {
            Derivation::Time { divisor, .. } => ns as f64 / divisor,
            Derivation::Rate { .. } => ns as f64,
        }
    }
}

/// What a point is measured at: a message size for point-to-point suites, named parameters
/// for the others (an application kernel's class and problem, say), or both.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PointKey {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

impl PointKey {
    pub fn size(size: u64) -> PointKey {
        PointKey {
            size: Some(size),
            params: BTreeMap::new(),
        }
    }

    /// A key of named parameters, e.g. `[("class", "A"), ("kernel", "cg")]`.
    pub fn params<'a>(pairs: impl IntoIterator<Item = (&'a str, String)>) -> PointKey {
        PointKey {
            size: None,
            params: pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        }
    }

    /// The parameters as one `name=value;name=value` token (empty when there are none), the
    /// form they take in CSV columns.
    pub fn params_text(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The inverse of [`PointKey::params_text`].
    pub fn parse_params(text: &str) -> Result<BTreeMap<String, String>, ParamsTextError> {
        text.split(';')
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| ParamsTextError {
                        part: p.to_string(),
                    })
            })
            .collect()
    }
}

/// A part of a point's parameter text (`name=value;...`) that is not `name=value`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{part}' is not name=value")]
pub struct ParamsTextError {
    pub part: String,
}

impl fmt::Display for PointKey {
    /// "size 8", "class=A kernel=cg", "size 8 window=16"
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(s) = self.size {
            parts.push(format!("size {s}"));
        }
        parts.extend(self.params.iter().map(|(k, v)| format!("{k}={v}")));
        f.write_str(&parts.join(" "))
    }
}

/// How a suite's results are printed as text, in the layout its users' tools read. Each suite
/// states its own, so formatters need no list of suites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "snake_case")]
pub enum Layout {
    /// OSU Micro-Benchmarks' table: title, the metric column, and OSU's optional columns.
    Osu {
        /// "OSU MPI Latency Test v7.4"
        title: String,
        /// The metric column's header, e.g. "Avg Latency(us)".
        column: String,
        /// `-z`: P50, P90 and P99 columns.
        #[serde(default)]
        tail: bool,
        /// `-z50,95`: the percentiles of those columns, when not OSU's 50, 90 and 99.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tail_at: Vec<u64>,
        /// `-c`: a Validation column.
        #[serde(default)]
        validation: bool,
    },
    /// mpptest's data layout (`#p0 p1 dist len ave time (us) rate`), its gnuplot script, and
    /// the breakpoints fabbench finds in the curve.
    Mpptest(MpptestLayout),
    /// The NAS Parallel Benchmarks' report, one per kernel run.
    Npb(NpbLayout),
    /// The nbody code's report.
    Nbody(NbodyLayout),
}

/// What NPB's report states about each kernel of a run, beside what was measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpbLayout {
    /// "S", "W", "A", "B", "C"
    pub class: String,
    pub kernels: Vec<NpbKernel>,
}

/// One kernel's fixed facts for the class run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NpbKernel {
    /// The point key's `kernel` value: "cg".
    pub kernel: String,
    /// NPB's name: "CG".
    pub name: String,
    /// NPB's Size field: "1400", "64x 64x 64".
    pub size: String,
    pub iterations: u32,
    /// NPB's Operation type field: "floating point".
    pub operation: String,
}

/// What an nbody run simulated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NbodyLayout {
    pub bodies: u64,
    pub steps: u64,
    /// "allgather" or "ring".
    pub exchange: String,
    pub dt: f64,
    pub softening: f64,
}

/// How an mpptest run prints: what its title and columns say, and the output options given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MpptestLayout {
    /// The test as mpptest's title names it: "blocking", "nonblocking-bisect", "dsum".
    pub protocol: String,
    /// What a size counts, as the axis label says it: "(bytes)", "(doubles)", "(ints)".
    pub units: String,
    /// `-gnuplot`, `-gnuplotps`, `-gnuploteps`: a gnuplot script, with the data in a file of
    /// its own. None: the data table only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnuplot: Option<GnuplotTerminal>,
    /// `-givedy`: average, rate, minimum and maximum time columns.
    #[serde(default)]
    pub givedy: bool,
    /// `-rate`: the plot shows the rate rather than the time.
    #[serde(default)]
    pub rate: bool,
    /// False with `-noinfo`: no header lines, only data.
    pub info: bool,
    /// `-logscale`: log axes.
    #[serde(default)]
    pub logscale: bool,
    /// `-fname`: the file the output is appended to instead of stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fname: Option<String>,
}

/// Which gnuplot terminal the script selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GnuplotTerminal {
    /// `-gnuplot`: the default (interactive) terminal.
    X11,
    /// `-gnuplotps`
    Postscript,
    /// `-gnuploteps`
    Eps,
}

/// One suite at one point key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub key: PointKey,
    /// What the samples report; the first is the headline a text table prints.
    pub metrics: Vec<Metric>,
    /// Raw duration of each timed iteration, in nanoseconds of the rank's clock.
    pub samples_ns: Vec<u64>,
    /// Some(true) when every byte was checked and matched (`-c`); None when not checked.
    pub validated: Option<bool>,
    /// How `samples_ns` splits into consecutive timed batches, as sample counts (mpptest
    /// times `-n_avg` iterations at a time and keeps the fastest batch's average). Empty: the
    /// samples are one batch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batches: Vec<u64>,
    /// How each sample's time divides between computing and communicating (application
    /// kernels): None when the suite does not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// Untimed warm-up iterations run before the samples (the value in force: OSU's rule
    /// or `-x`); None where the suite has no warm-up or the point predates this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<u64>,
}

/// Each sample's time divided between computing and communicating, as the mean over ranks of
/// each rank's own split: compute is the time inside the suite's compute regions, comm the
/// rest of the timed section (inside communication calls, waiting included).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub compute_ns: Vec<u64>,
    pub comm_ns: Vec<u64>,
}

impl Split {
    /// The share of the time spent communicating, over every sample (0 when there is none).
    pub fn comm_share(&self) -> f64 {
        let comm: u64 = self.comm_ns.iter().sum();
        let compute: u64 = self.compute_ns.iter().sum();
        if comm + compute == 0 {
            0.0
        } else {
            comm as f64 / (comm + compute) as f64
        }
    }

    /// The metrics a split is reported as: compute and communication time, in seconds.
    pub fn metrics() -> [Metric; 2] {
        let seconds = |name: &str| Metric {
            name: name.into(),
            unit: "s".into(),
            better: Better::Lower,
            derive: Derivation::Time {
                divisor: 1.0,
                unit_ns: 1e9,
            },
        };
        [seconds("compute"), seconds("comm")]
    }
}

impl Point {
    /// The compute and communication parts of a point that splits its time, each as a point of
    /// its own (its samples, one metric in seconds); empty for a point without a split.
    pub fn split_parts(&self) -> Vec<(Metric, Point)> {
        let Some(split) = &self.split else {
            return Vec::new();
        };
        let [compute, comm] = Split::metrics();
        [(compute, &split.compute_ns), (comm, &split.comm_ns)]
            .into_iter()
            .map(|(m, ns)| {
                let part = Point {
                    warmup: None,
                    samples_ns: ns.clone(),
                    metrics: vec![m.clone()],
                    split: None,
                    ..self.clone()
                };
                (m, part)
            })
            .collect()
    }

    /// The message size, for size-keyed points (0 otherwise).
    pub fn size(&self) -> u64 {
        self.key.size.unwrap_or(0)
    }

    /// The headline metric (the first).
    pub fn metric(&self) -> &Metric {
        &self.metrics[0]
    }

    /// The figure a text table prints: the headline metric over every sample, or over the
    /// fastest batch when the samples were taken in batches.
    pub fn headline(&self) -> f64 {
        self.headline_of(self.metric())
    }

    /// `metric`'s figure, over every sample or over the fastest batch.
    pub fn headline_of(&self, metric: &Metric) -> f64 {
        metric.headline(self.best_batch())
    }

    /// The samples of each batch, in the order taken (one batch when none were recorded).
    /// Counts that do not add up to the samples are cut to what there is.
    pub fn batches(&self) -> Vec<&[u64]> {
        if self.batches.is_empty() {
            return vec![&self.samples_ns];
        }
        let mut out = Vec::with_capacity(self.batches.len());
        let mut rest = &self.samples_ns[..];
        for &n in &self.batches {
            let (b, r) = rest.split_at((n as usize).min(rest.len()));
            if !b.is_empty() {
                out.push(b);
            }
            rest = r;
        }
        out
    }

    /// The batch with the smallest mean duration: the minimum of averages, which resists the
    /// perturbations (daemons, interrupts) that only ever make an average slower.
    pub fn best_batch(&self) -> &[u64] {
        let mean = |b: &[u64]| b.iter().map(|&s| s as f64).sum::<f64>() / b.len().max(1) as f64;
        self.batches()
            .into_iter()
            .min_by(|a, b| mean(a).total_cmp(&mean(b)))
            .unwrap_or(&[])
    }

    /// Every sample as the headline metric.
    pub fn values(&self) -> Vec<f64> {
        self.values_of(self.metric())
    }

    /// Every sample as `metric`.
    pub fn values_of(&self, metric: &Metric) -> Vec<f64> {
        self.samples_ns
            .iter()
            .map(|&s| metric.of_sample(s))
            .collect()
    }

    /// Distribution of the headline metric over samples.
    pub fn summary(&self) -> Option<Summary> {
        Summary::of(&self.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(metric: Metric, samples_ns: Vec<u64>) -> Point {
        Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![metric],
            samples_ns,
            validated: None,
            batches: Vec::new(),
            split: None,
        }
    }

    #[test]
    fn latency_is_half_the_round_trip_in_microseconds() {
        let p = point(Metric::latency_us(2.0), vec![200, 400]);
        assert_eq!(p.headline(), 0.15);
        assert_eq!(p.values(), vec![0.1, 0.2]);
        assert_eq!(p.summary().unwrap().max, 0.2);
        assert_eq!(p.metric().better, Better::Lower);
    }

    #[test]
    fn bandwidth_headline_is_total_bytes_over_total_time() {
        // 64 messages of 1 MB per window: 1 ms and 3 ms windows
        let p = point(Metric::bandwidth_mbs(64e6), vec![1_000_000, 3_000_000]);
        assert_eq!(p.headline(), 32_000.0); // 128e6 bytes / 4 ms
        assert_eq!(p.values(), vec![64_000.0, 64_000.0 / 3.0]);
        assert_eq!(p.metric().unit, "MB/s");
        assert_eq!(p.metric().better, Better::Higher);
    }

    #[test]
    fn a_metric_of_seconds_and_one_of_millions_per_second() {
        let time = Metric {
            name: "time".into(),
            unit: "s".into(),
            better: Better::Lower,
            derive: Derivation::Time {
                divisor: 1.0,
                unit_ns: 1e9,
            },
        };
        let mops = Metric {
            name: "mops".into(),
            unit: "Mop/s".into(),
            better: Better::Higher,
            derive: Derivation::Rate {
                amount: 3e9,
                unit: 1e6,
            },
        };
        assert_eq!(time.headline(&[1_500_000_000]), 1.5);
        assert_eq!(mops.headline(&[1_500_000_000]), 2000.0);
    }

    #[test]
    fn batched_points_report_their_fastest_batch() {
        let mut p = point(Metric::latency_us(2.0), vec![400, 600, 200, 200, 1000]);
        assert_eq!(p.headline(), 0.24); // every sample: 2400 ns / 5 / 2
        p.batches = vec![2, 2, 1];
        assert_eq!(p.batches(), vec![&[400, 600][..], &[200, 200], &[1000]]);
        assert_eq!(p.best_batch(), &[200, 200]);
        assert_eq!(p.headline(), 0.1);
        let bw = Metric::bandwidth_mbs(100.0);
        assert_eq!(p.headline_of(&bw), 500.0); // 100 bytes per 200 ns
                                               // counts beyond the samples are cut, never a panic
        p.batches = vec![4, 9];
        assert_eq!(p.batches().len(), 2);
    }

    #[test]
    fn keys_print_and_their_params_round_trip() {
        assert_eq!(PointKey::size(8).to_string(), "size 8");
        let k = PointKey::params([("kernel", "cg".to_string()), ("class", "A".to_string())]);
        assert_eq!(k.to_string(), "class=A kernel=cg");
        assert_eq!(k.params_text(), "class=A;kernel=cg");
        assert_eq!(PointKey::parse_params(&k.params_text()).unwrap(), k.params);
        assert_eq!(
            PointKey::parse_params("x"),
            Err(ParamsTextError { part: "x".into() })
        );
        assert!(PointKey::size(1) < PointKey::size(2));
        let json = serde_json::to_string(&PointKey::size(4)).unwrap();
        assert_eq!(json, r#"{"size":4}"#);
    }
}
