//! HdrHistograms of each point's samples, in the two formats HdrHistogram tools read:
//! interval logs (`.hlog`, log format 1.3 with V2+Deflate payloads, readable by
//! HistogramLogProcessor and other implementations) and percentile distributions (`.hgrm`,
//! the layout of Java's `outputPercentileDistribution`, readable by the HdrHistogram plotter).
//!
//! Values are nanoseconds: one-way latency for latency suites (the round trip halved), and the
//! duration of each timed iteration (one window) for bandwidth suites. The `.hgrm` files are
//! scaled to microseconds.

use std::path::PathBuf;
use std::time::Duration;

use bench_core::measure::{Derivation, Point, PointKey};
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;

use crate::exporter::Exporter;
use crate::hdr::{java_fixed, mean, stdev};
pub use crate::hdr::{percentile_distribution, PercentileRow};
use crate::model::Run;
use crate::ResultsError;

/// `.hgrm` values are printed in microseconds.
const HGRM_RATIO: f64 = 1e3;

/// The histogram of a point's samples in nanoseconds of the reported quantity (its headline
/// metric's: a round trip halved for one-way latency).
pub fn histogram_of(point: &Point) -> Histogram<u64> {
    crate::hdr::histogram(&point.samples_ns, point.metric())
}

/// What a point's histogram holds, for the log's comment line.
fn quantity(point: &Point) -> String {
    let m = point.metric();
    match m.derive {
        Derivation::Time { divisor: 2.0, .. } => format!("one-way {}", m.name),
        Derivation::Time { .. } => m.name.clone(),
        Derivation::Rate { .. } => "iteration (window) time".into(),
    }
}

/// The file name (without extension) of a point's histograms: its size, then any other key
/// parameters (`8`, `class=A,kernel=cg`).
pub fn key_stem(key: &PointKey) -> String {
    let mut parts: Vec<String> = key.size.iter().map(u64::to_string).collect();
    parts.extend(key.params.iter().map(|(k, v)| format!("{k}={v}")));
    parts.join(",")
}

/// Java's subBucketCount: 2^ceil(log2(2 * 10^sigfig)).
fn sub_bucket_count(sigfig: u8) -> u64 {
    let largest = 2 * 10u64.pow(sigfig as u32);
    largest.next_power_of_two()
}

/// The percentile distribution text, byte for byte as Java's
/// `outputPercentileDistribution(ps, 5, ratio)` prints it: its rows
/// ([`percentile_distribution`]), its `getMean`/`getStdDeviation`, and its `%.Nf` rounding
/// ([`java_fixed`]).
pub fn hgrm(h: &Histogram<u64>, ratio: f64) -> String {
    let sig = h.sigfig() as usize;
    let f = |x: f64, decimals: usize, width: usize| format!("{:>width$}", java_fixed(x, decimals));
    let mut out = format!(
        "{:>12} {:>14} {:>10} {:>14}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for row in percentile_distribution(h, 5) {
        let value = f(row.value as f64 / ratio, sig, 12);
        let q = row.percentile / 100.0;
        let total = row.total;
        // Java picks the closing line's format by the level, not by the row's place.
        if row.percentile != 100.0 {
            let inv = f(1.0 / (1.0 - q), 2, 14);
            out.push_str(&format!("{value} {} {total:10} {inv}\n", f(q, 12, 2)));
        } else {
            out.push_str(&format!("{value} {} {total:10}\n", f(q, 12, 2)));
        }
    }
    out.push_str(&format!(
        "#[Mean    = {}, StdDeviation   = {}]\n",
        f(mean(h) / ratio, sig, 12),
        f(stdev(h) / ratio, sig, 12)
    ));
    out.push_str(&format!(
        "#[Max     = {}, Total count    = {:12}]\n",
        f(h.max() as f64 / ratio, sig, 12),
        h.len()
    ));
    out.push_str(&format!(
        "#[Buckets = {:12}, SubBuckets     = {:12}]\n",
        h.buckets(),
        sub_bucket_count(h.sigfig())
    ));
    out
}

/// An interval log holding one histogram covering the point's whole measurement.
pub fn hlog(
    h: &Histogram<u64>,
    comment: &str,
    measured: Duration,
) -> Result<Vec<u8>, ResultsError> {
    let mut out = Vec::new();
    // The Rust writer omits the version and legend lines other readers expect: write them here
    // and let it write only the intervals.
    out.extend_from_slice(format!("#{comment}\n").as_bytes());
    out.extend_from_slice(b"#[Histogram log format version 1.3]\n");
    out.extend_from_slice(b"#[StartTime: 0.000 (seconds since epoch)]\n");
    out.extend_from_slice(
        b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    let mut ser = V2DeflateSerializer::new();
    {
        let mut w = IntervalLogWriterBuilder::new()
            .begin_log_with(&mut out, &mut ser)
            .map_err(|e| ResultsError::Format(e.to_string()))?;
        w.write_histogram(h, Duration::ZERO, measured, None)
            .map_err(|e| ResultsError::Format(format!("{e:?}")))?;
    }
    Ok(out)
}

/// `histograms/SUITE/FABRIC/KEY.hlog` and `.hgrm` for every point (KEY: [`key_stem`]).
pub struct Histograms;

impl Exporter for Histograms {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        let mut files = Vec::new();
        for s in &run.series {
            for p in &s.points {
                let h = histogram_of(p);
                let dir = PathBuf::from("histograms").join(&s.suite).join(&s.fabric);
                let at = match p.key.size {
                    Some(size) if p.key.params.is_empty() => format!("{size} bytes"),
                    _ => p.key.to_string(),
                };
                let comment = format!(
                    "fabbench {} {} on {}, {at}: {} in nanoseconds",
                    run.manifest.fabbench_version,
                    s.suite,
                    s.fabric,
                    quantity(p)
                );
                let stem = key_stem(&p.key);
                let measured = Duration::from_nanos(p.samples_ns.iter().sum());
                files.push((
                    dir.join(format!("{stem}.hlog")),
                    hlog(&h, &comment, measured)?,
                ));
                files.push((
                    dir.join(format!("{stem}.hgrm")),
                    hgrm(&h, HGRM_RATIO).into_bytes(),
                ));
            }
        }
        Ok(files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    use bench_core::measure::Metric;

    fn point(samples: Vec<u64>) -> Point {
        Point {
            warmup: None,
            key: PointKey::size(8),
            metrics: vec![Metric::latency_us(2.0)],
            samples_ns: samples,
            validated: None,
            batches: Vec::new(),
            split: None,
        }
    }

    #[test]
    fn histogram_files_are_named_by_the_point_key() {
        assert_eq!(key_stem(&PointKey::size(8)), "8");
        let k = PointKey::params([("kernel", "cg".to_string()), ("class", "A".to_string())]);
        assert_eq!(key_stem(&k), "class=A,kernel=cg");
        assert_eq!(quantity(&point(vec![1])), "one-way latency");
    }

    #[test]
    fn latency_histograms_hold_one_way_nanoseconds() {
        let h = histogram_of(&point(vec![200, 400, 400, 1_000_000]));
        assert_eq!(h.len(), 4);
        assert_eq!(h.min(), 100);
        assert_eq!(h.value_at_quantile(0.5), 200);
        assert!(h.max() >= 500_000 && h.max() < 500_500);
    }

    #[test]
    fn hgrm_matches_javas_layout() {
        let h = histogram_of(&point((1..=100).map(|i| i * 2000).collect()));
        let text = hgrm(&h, 1e3);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "       1.000 0.000000000000          1           1.00"
        );
        let last_row = lines[lines.len() - 4];
        assert_eq!(last_row, "     100.031 1.000000000000        100");
        assert_eq!(
            lines[lines.len() - 3],
            "#[Mean    =       50.504, StdDeviation   =       28.866]"
        );
        assert_eq!(
            lines[lines.len() - 2],
            "#[Max     =      100.031, Total count    =          100]"
        );
        assert!(lines[lines.len() - 1].ends_with("SubBuckets     =         2048]"));
    }

    #[test]
    fn hgrm_rows_are_the_ones_java_prints() {
        // 20 values, 1..=20 ns. Java's outputPercentileDistribution(ps, 5, 1000.0) prints, at
        // 65 % (13 of 20 exactly), "       0.013 0.650000000000         13           2.86",
        // and closes with "       0.020 1.000000000000         20" (HdrHistogram 2.1.11).
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=20u64 {
            h.record(v).unwrap();
        }
        let text = hgrm(&h, 1e3);
        assert!(
            text.contains("\n       0.013 0.650000000000         13           2.86\n"),
            "{text}"
        );
        assert!(text.contains("\n       0.020 1.000000000000         20\n#[Mean"));
        assert!(text.contains("#[Mean    =        0.011, StdDeviation   =        0.006]"));
        // 10000 values: a level of 99.97802734375 % is printed as Java rounds it (half up of
        // the shortest digits), 0.999780273438, not as Rust's {:.12} does (0.999780273437).
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let text = hgrm(&h, 1e3);
        assert!(text.contains(" 0.999780273438 "), "{text}");
        assert!(!text.contains(" 0.999780273437 "), "{text}");
    }

    #[test]
    fn hlog_round_trips_through_the_reader() {
        let h = histogram_of(&point(vec![1000, 2000, 3000]));
        let bytes = hlog(&h, "test", Duration::from_micros(6)).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.contains("#[Histogram log format version 1.3]"));
        assert!(text.contains("\"StartTimestamp\",\"Interval_Length\""));
        let intervals: Vec<_> = IntervalLogIterator::new(&bytes)
            .filter_map(|e| match e.unwrap() {
                LogEntry::Interval(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(intervals.len(), 1);
        assert!(intervals[0].encoded_histogram().starts_with("HISTF"));
        assert!((intervals[0].max() - 1500.0).abs() < 2.0);
    }
}
