//! Exports for the CI tools users already have: github-action-benchmark's custom JSON
//! ([`gab`]: one file for metrics where smaller is better, one for bigger) and the Bencher
//! Metric Format ([`bmf`]). Both are built from a [`Run`] alone, from the same rows summary.csv
//! holds (the value is always the headline summary.csv reports), with the raw samples beside
//! each row for the spread the formats can carry. The names given to points here are what
//! those tools match measurements by over time, so they depend only on what was measured
//! (suite, fabric, rank count, point, metric), never on when or where.

pub mod bmf;
pub mod gab;

use bench_core::measure::{Better, Metric, PointKey, Split};

use crate::model::{Record, Run, Series};

/// One file of an export: its name in the output directory and its contents.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportFile {
    pub name: String,
    pub contents: Vec<u8>,
}

/// What an export produced: the files, and the rows left out because their value is not a
/// finite number (a rate over a zero-length sample), which JSON cannot hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub files: Vec<ExportFile>,
    /// The name of each row left out.
    pub skipped: Vec<String>,
}

/// One row of summary.csv with what the exports need beside it: which way is better, and
/// every sample as the row's metric.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub record: Record,
    pub better: Better,
    pub values: Vec<f64>,
}

/// Every row of the run, in summary.csv's order.
pub(crate) fn rows(run: &Run) -> Vec<Row> {
    run.series
        .iter()
        .flat_map(|s| s.records().into_iter().map(move |r| (s, r)))
        .filter_map(|(s, record)| {
            let (metric, samples) = metric_of(s, &record)?;
            Some(Row {
                better: metric.better,
                values: samples.iter().map(|&ns| metric.of_sample(ns)).collect(),
                record,
            })
        })
        .collect()
}

/// The metric and samples a record was made from: one of its point's metrics, or, for the
/// compute and communication rows of a split point, the split's own.
fn metric_of<'a>(s: &'a Series, r: &Record) -> Option<(Metric, &'a [u64])> {
    let key = PointKey {
        size: r.size,
        params: PointKey::parse_params(&r.params).ok()?,
    };
    let p = s.point(&key)?;
    if let Some(m) = p.metrics.iter().find(|m| m.name == r.metric) {
        return Some((m.clone(), &p.samples_ns));
    }
    let split = p.split.as_ref()?;
    let [compute, comm] = Split::metrics();
    if r.metric == compute.name {
        Some((compute, &split.compute_ns))
    } else if r.metric == comm.name {
        Some((comm, &split.comm_ns))
    } else {
        None
    }
}

/// The point a record measures, as the exports name it: "osu_latency/rapidio/2 ranks/size
/// 1024". The rank count is always there, so runs of one suite at several counts (a scaling
/// run's) keep apart when they are tracked together.
pub fn point_name(r: &Record) -> String {
    let key = PointKey {
        size: r.size,
        params: PointKey::parse_params(&r.params).unwrap_or_default(),
    };
    format!("{}/{}/{} ranks/{}", r.suite, r.fabric, r.ranks, key)
}

/// A record's full name, its point's and its metric's: "osu_latency/rapidio/2 ranks/size
/// 1024/latency".
pub fn record_name(r: &Record) -> String {
    format!("{}/{}", point_name(r), r.metric)
}

/// `x` with `digits` significant digits, trailing zeros dropped: 31.2915, 0.000244680 ->
/// "0.00024468". Enough to tell an emulated fabric's nanosecond steps apart in microseconds.
pub fn significant(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    let decimals = (digits - 1 - magnitude).clamp(0, 17) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use bench_core::measure::Point;

    /// A run of osu_latency (sizes 1 and 1024) and osu_bw (size 1024) on rapidio, with an
    /// NPB-like kernel beside them (time, Mop/s and a compute/comm split).
    pub(crate) fn run() -> Run {
        let mut run = crate::testing::npb_run("npb", "rapidio", 4, &[("cg", 0.5)]);
        let npb = run.series[0].clone();
        let osu = |suite: &str, metric: Metric, sizes: &[u64], samples: &[u64]| Series {
            suite: suite.into(),
            fabric: "rapidio".into(),
            ranks: 2,
            points: sizes
                .iter()
                .map(|&size| Point {
                    warmup: None,
                    key: PointKey::size(size),
                    metrics: vec![metric.clone()],
                    samples_ns: samples.iter().map(|s| s * (size + 1)).collect(),
                    validated: None,
                    batches: Vec::new(),
                    split: None,
                })
                .collect(),
            ..npb.clone()
        };
        run.series = vec![
            osu(
                "osu_latency",
                Metric::latency_us(2.0),
                &[1, 1024],
                &[1000, 1200, 1100, 5000],
            ),
            osu(
                "osu_bw",
                Metric::bandwidth_mbs(64.0 * 1024.0),
                &[1024],
                &[100_000, 120_000, 110_000],
            ),
            npb,
        ];
        run
    }

    #[test]
    fn every_summary_row_has_its_direction_and_samples() {
        let rows = rows(&run());
        let names: Vec<String> = rows.iter().map(|r| record_name(&r.record)).collect();
        assert_eq!(
            names,
            [
                "osu_latency/rapidio/2 ranks/size 1/latency",
                "osu_latency/rapidio/2 ranks/size 1024/latency",
                "osu_bw/rapidio/2 ranks/size 1024/bandwidth",
                "npb/rapidio/4 ranks/class=S kernel=cg/time",
                "npb/rapidio/4 ranks/class=S kernel=cg/mops",
                "npb/rapidio/4 ranks/class=S kernel=cg/compute",
                "npb/rapidio/4 ranks/class=S kernel=cg/comm",
            ]
        );
        let better: Vec<Better> = rows.iter().map(|r| r.better).collect();
        use Better::*;
        assert_eq!(better, [Lower, Lower, Higher, Lower, Higher, Lower, Lower]);
        // one-way latency in us: half of 2 * 1000 ns
        assert_eq!(rows[0].values, [1.0, 1.2, 1.1, 5.0]);
        // the split rows carry the split's samples: half of 0.5 s each
        assert_eq!(rows[5].values, [0.25]);
        assert_eq!(rows[6].values, [0.25]);
    }

    #[test]
    fn numbers_keep_six_significant_digits() {
        assert_eq!(significant(31.29167499, 6), "31.2917");
        assert_eq!(significant(0.000244680242, 6), "0.00024468");
        assert_eq!(significant(36801.954, 6), "36802");
        assert_eq!(significant(123456789.0, 6), "123456789");
        assert_eq!(significant(0.0, 6), "0");
        assert_eq!(significant(-2.5, 6), "-2.5");
    }
}
