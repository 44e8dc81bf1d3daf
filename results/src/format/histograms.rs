//! HdrHistograms of each point's samples, in the two formats HdrHistogram tools read:
//! interval logs (`.hlog`, log format 1.3 with V2+Deflate payloads, readable by
//! HistogramLogProcessor and other implementations) and percentile distributions (`.hgrm`,
//! the layout of Java's `outputPercentileDistribution`, readable by the HdrHistogram plotter).
//!
//! Values are nanoseconds: one-way latency for latency suites (the round trip halved), and the
//! duration of each timed iteration (one window) for bandwidth suites. The `.hgrm` files are
//! scaled to microseconds.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;

use bench_core::measure::{Derivation, Point, PointKey};
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use crate::format::Exporter;
use crate::hdr::{java_fixed, mean, stdev};
pub use crate::hdr::{percentile_distribution, PercentileRow};
use crate::model::Run;
use crate::ResultsError;

/// `.hgrm` values are printed in microseconds.
const HGRM_RATIO: f64 = 1e3;
/// Java's `HistogramLogWriter` divides an interval's maximum by this unless told otherwise
/// (`outputIntervalHistogram(start, end, histogram)`): nanoseconds print as milliseconds.
const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

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

/// Java's `Date.toString()` of `t` in UTC: `Thu Nov 26 23:59:42 UTC 2026`.
fn java_date(t: SystemTime) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // 2026-11-26T23:59:42Z
    let iso = humantime::format_rfc3339_seconds(t).to_string();
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let month: usize = iso[5..7].parse().unwrap_or(1);
    format!(
        "{} {} {} {} UTC {}",
        DAYS[(secs / 86_400 % 7) as usize],
        MONTHS[month - 1],
        &iso[8..10],
        &iso[11..19],
        &iso[0..4]
    )
}

/// An interval log holding one histogram covering the point's whole measurement, line for line
/// as Java's `HistogramLogWriter` writes one: the comment, the format version, the run's start
/// as `StartTime` (with Java's date) and `BaseTime` when it is known, the legend, and the
/// interval (starting at the BaseTime, `measured` long) with its maximum divided by Java's
/// default `maxValueUnitRatio`, 10^6 (nanoseconds to milliseconds), numbers to 3 decimals
/// rounded as Java rounds them.
pub fn hlog(
    h: &Histogram<u64>,
    comment: &str,
    start: Option<SystemTime>,
    measured: Duration,
) -> Result<Vec<u8>, ResultsError> {
    let mut out = format!("#{comment}\n#[Histogram log format version 1.3]\n");
    if let Some(t) = start {
        let ms = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let secs = java_fixed(ms as f64 / 1000.0, 3);
        out.push_str(&format!(
            "#[StartTime: {secs} (seconds since epoch), {}]\n#[BaseTime: {secs} (seconds since epoch)]\n",
            java_date(t)
        ));
    }
    out.push_str(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    let mut encoded = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut encoded)
        .map_err(ResultsError::Histogram)?;
    out.push_str(&format!(
        "{},{},{},{}\n",
        java_fixed(0.0, 3),
        java_fixed(measured.as_secs_f64(), 3),
        java_fixed(h.max() as f64 / MAX_VALUE_UNIT_RATIO, 3),
        base64::engine::general_purpose::STANDARD.encode(&encoded)
    ));
    Ok(out.into_bytes())
}

/// `histograms/SUITE/FABRIC/KEY.hlog` and `.hgrm` for every point (KEY: [`key_stem`]).
pub struct Histograms;

impl Exporter for Histograms {
    fn export(&self, run: &Run) -> Result<Vec<(PathBuf, Vec<u8>)>, ResultsError> {
        // The run's start as its manifest records it (to the second); none for a manifest
        // whose start is not RFC 3339.
        let start = humantime::parse_rfc3339_weak(&run.manifest.start_time).ok();
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
                    hlog(&h, &comment, start, measured)?,
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
    fn hlog_lines_are_the_ones_javas_writer_writes() {
        // Java's HistogramLogWriter (HdrHistogram 2.1.11, TZ=UTC), given outputComment("c"),
        // outputLogFormatVersion(), outputStartTime(1795737582123), setBaseTime and
        // outputBaseTime of the same, outputLegend() and outputIntervalHistogram(0.0, 1.5, h)
        // for h holding 519000 and 1000 ns, writes these lines, the interval's maximum
        // (519167 ns, the top of 519000's bucket) divided by its default 10^6:
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record(519_000).unwrap();
        h.record(1000).unwrap();
        let start = UNIX_EPOCH + Duration::from_millis(1_795_737_582_123);
        let bytes = hlog(&h, "c", Some(start), Duration::from_millis(1500)).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..5],
            [
                "#c",
                "#[Histogram log format version 1.3]",
                "#[StartTime: 1795737582.123 (seconds since epoch), Thu Nov 26 23:59:42 UTC 2026]",
                "#[BaseTime: 1795737582.123 (seconds since epoch)]",
                "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"",
            ]
        );
        assert!(
            lines[5].starts_with("0.000,1.500,0.519,HISTF"),
            "{}",
            lines[5]
        );
        assert_eq!(lines.len(), 6);
        // The reader takes StartTime and BaseTime as the run's start.
        let entries: Vec<LogEntry> = IntervalLogIterator::new(&bytes)
            .map(|e| e.unwrap())
            .collect();
        let at = Duration::from_millis(1_795_737_582_123);
        assert!(entries
            .iter()
            .any(|e| matches!(e, LogEntry::StartTime(t) if *t == at)));
        assert!(entries
            .iter()
            .any(|e| matches!(e, LogEntry::BaseTime(t) if *t == at)));
        // Without a known start neither line is written.
        let text = String::from_utf8(hlog(&h, "c", None, Duration::ZERO).unwrap()).unwrap();
        assert!(!text.contains("StartTime:") && !text.contains("BaseTime:"));
        // Java's Date.toString of other days and months.
        assert_eq!(java_date(UNIX_EPOCH), "Thu Jan 01 00:00:00 UTC 1970");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(java_date(leap), "Tue Feb 29 00:00:00 UTC 2000");
    }

    #[test]
    fn hlog_round_trips_through_the_reader() {
        let h = histogram_of(&point(vec![1000, 2000, 3000]));
        let bytes = hlog(&h, "test", None, Duration::from_micros(6)).unwrap();
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
        // 1500 ns is 0.0015 ms, 0.002 to 3 decimals (Java rounds half up).
        assert_eq!(intervals[0].max(), 0.002);
    }
}
