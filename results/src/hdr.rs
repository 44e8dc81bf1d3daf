//! HdrHistogram's rules as the Java library (2.1, Debian's libhdrhistogram-java) applies
//! them, so that every file fabbench writes agrees with HdrHistogram's own tools: the
//! histogram of a time metric's samples, `getValueAtPercentile`, the steps of
//! `PercentileIterator`, `getMean`/`getStdDeviation`, and Java's `%.Nf` formatting.
//!
//! A leaf of the crate: `model` (summary.csv's percentiles) and `hist` (the `.hlog` and
//! `.hgrm` files) both use it.

use bench_core::measure::{Derivation, Metric};
use hdrhistogram::Histogram;

/// Significant value digits of every histogram.
pub const SIGFIG: u8 = 3;
/// One hour in nanoseconds: far above any sample, and below i64::MAX as Java readers need.
pub const HIGHEST: u64 = 3_600_000_000_000;

/// The histogram of `metric` over `samples_ns`, in nanoseconds of the reported quantity (a
/// round trip halved for one-way latency, rounded to whole ns); a rate metric's histogram holds
/// the samples as measured (one timed iteration each).
pub fn histogram(samples_ns: &[u64], metric: &Metric) -> Histogram<u64> {
    let mut h = Histogram::<u64>::new_with_bounds(1, HIGHEST, SIGFIG).expect("valid bounds");
    for &s in samples_ns {
        h.saturating_record(metric.sample_duration_ns(s).round() as u64);
    }
    h
}

/// Java's `getValueAtPercentile`: the count wanted is `ceil(nextDown(p) * n / 100)` (at least
/// 1), and the value is the highest one equivalent to the first bucket whose cumulative count
/// reaches it (the lowest, for percentile 0). This is the nearest rank, ⌈p·n/100⌉, at the
/// histogram's resolution; 0 for an empty histogram.
pub fn value_at_percentile(h: &Histogram<u64>, percentile: f64) -> u64 {
    let requested = percentile.next_down().clamp(0.0, 100.0);
    let wanted = ((requested * h.len() as f64) / 100.0).ceil() as u64;
    let wanted = wanted.max(1);
    let mut cumulative = 0u64;
    for v in h.iter_recorded() {
        cumulative += v.count_at_value();
        if cumulative >= wanted {
            let value = v.value_iterated_to();
            return if percentile == 0.0 {
                h.lowest_equivalent(value)
            } else {
                value
            };
        }
    }
    0
}

/// What HdrHistogram reports of a time metric, in the metric's unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeStats {
    /// Java's [`value_at_percentile`] at 50, 90, 99 and 99.9 %.
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    /// Java's `getMaxValue`: the highest value equivalent to the largest sample's bucket.
    pub max: f64,
}

/// What HdrHistogram reports of `metric` over `samples_ns` (its [`histogram`]), in the
/// metric's unit: the values the `.hgrm` rows, their `Max` line and HdrHistogram's own tools
/// give. `None` for rate metrics (whose histogram holds times, not rates) and for no samples.
pub fn time_stats(samples_ns: &[u64], metric: &Metric) -> Option<TimeStats> {
    let Derivation::Time { unit_ns, .. } = metric.derive else {
        return None;
    };
    if samples_ns.is_empty() {
        return None;
    }
    let h = histogram(samples_ns, metric);
    let at = |p: f64| value_at_percentile(&h, p) as f64 / unit_ns;
    Some(TimeStats {
        p50: at(50.0),
        p90: at(90.0),
        p99: at(99.0),
        p999: at(99.9),
        max: h.max() as f64 / unit_ns,
    })
}

/// One row of a percentile distribution.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PercentileRow {
    /// The highest value equivalent to the bucket reached.
    pub value: u64,
    /// The percentile level reached, 0 to 100.
    pub percentile: f64,
    /// Samples at or below `value`.
    pub total: u64,
    /// The closing 100 % row (which has no 1/(1-p)).
    pub last: bool,
}

/// The rows of HdrHistogram's percentile distribution, stepped exactly as Java's
/// `PercentileIterator` steps: levels in percent, `ticks_per_half_distance` steps per halving
/// of the distance to 100 % (Java's `incrementIterationLevel`, in the same double arithmetic),
/// a level reached at the first value whose cumulative count gives `100 * count / total >=
/// level`, one row at the last recorded value and then a closing row at 100 %. Levels are
/// sums of exact binary fractions of 100, so a count that is exactly level x total / 100
/// reaches its level (13 of 20 reach 65 %). The Rust crate's quantile iterator steps in
/// fractions, whose rounding (0.1 added six times exceeds 0.6) misses such levels.
pub fn percentile_distribution(
    h: &Histogram<u64>,
    ticks_per_half_distance: u32,
) -> Vec<PercentileRow> {
    let total = h.len();
    let mut rows = Vec::new();
    if total == 0 {
        return rows;
    }
    let mut level = 0.0f64;
    let mut last_value = 0;
    let mut cumulative = 0u64;
    for v in h.iter_recorded() {
        cumulative += v.count_at_value();
        last_value = v.value_iterated_to();
        let reached = (100.0 * cumulative as f64) / total as f64;
        while reached >= level {
            rows.push(PercentileRow {
                value: v.value_iterated_to(),
                percentile: level,
                total: cumulative,
                last: false,
            });
            // Java's `incrementIterationLevel`, operation for operation.
            let halvings = ((100.0 / (100.0 - level)).ln() / 2f64.ln()) as i64;
            let ticks =
                i64::from(ticks_per_half_distance) * 2f64.powf((halvings + 1) as f64) as i64;
            level += 100.0 / ticks as f64;
            // Java's iterator stops once the count reaches the total: one row there.
            if cumulative == total {
                break;
            }
        }
        if cumulative == total {
            break;
        }
    }
    rows.push(PercentileRow {
        value: last_value,
        percentile: 100.0,
        total,
        last: true,
    });
    rows
}

/// Java's `getMean`: the median equivalent of each bucket times its count, summed, over the
/// total count.
pub fn mean(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let mut sum = 0.0f64;
    for v in h.iter_recorded() {
        sum += h.median_equivalent(v.value_iterated_to()) as f64 * v.count_at_value() as f64;
    }
    sum / h.len() as f64
}

/// Java's `getStdDeviation`: the population deviation of the buckets' median equivalents.
pub fn stdev(h: &Histogram<u64>) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    let mean = mean(h);
    let mut sum = 0.0f64;
    for v in h.iter_recorded() {
        let dev = h.median_equivalent(v.value_iterated_to()) as f64 - mean;
        sum += (dev * dev) * v.count_at_value() as f64;
    }
    (sum / h.len() as f64).sqrt()
}

/// `x` as Java's `String.format(Locale.US, "%.{decimals}f", x)` prints it: Java rounds the
/// shortest decimal that reads back as `x` (its `Double.toString` digits) half up, where
/// Rust's `{:.N}` rounds the exact binary value half to even. They differ when those digits
/// end in a 5 just past the last decimal kept: 0.9997802734375 (99.97802734375 % / 100) is
/// `0.999780273438` in Java and `0.999780273437` in Rust.
pub fn java_fixed(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let sign = if x.is_sign_negative() { "-" } else { "" };
    // The shortest digits d1 d2 ... and the exponent: x = 0.d1d2... * 10^point.
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} has an exponent");
    let mut digits: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let mut point = exponent.parse::<i64>().expect("an integer exponent") + 1;
    let keep = point + decimals as i64;
    if keep < 0 {
        digits.clear();
    } else if (keep as usize) < digits.len() {
        let up = digits[keep as usize] >= 5;
        digits.truncate(keep as usize);
        if up {
            let mut i = digits.len();
            loop {
                if i == 0 {
                    digits.insert(0, 1);
                    point += 1;
                    break;
                }
                i -= 1;
                if digits[i] == 9 {
                    digits[i] = 0;
                } else {
                    digits[i] += 1;
                    break;
                }
            }
        }
    }
    let digit = |i: i64| -> char {
        if i < 0 || i as usize >= digits.len() {
            '0'
        } else {
            char::from(b'0' + digits[i as usize])
        }
    };
    let mut out = String::from(sign);
    if point <= 0 {
        out.push('0');
    } else {
        out.extend((0..point).map(digit));
    }
    if decimals > 0 {
        out.push('.');
        out.extend((0..decimals as i64).map(|j| digit(point + j)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::<u64>::new_with_bounds(1, HIGHEST, SIGFIG).unwrap();
        for v in values {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn java_rounds_the_shortest_digits_half_up() {
        // Facts of Java 17's Formatter: String.format("%.12f", 0.9997802734375) is
        // "0.999780273438", "%.2f" of 0.125 is "0.13", of 2.675 (2.67499999999999982236431605997495353221893310546875)
        // "2.68", of 1.005 "1.01"; "%.3f" of 0.0005 is "0.001", of 0.0004 "0.000", of 999.9996
        // "1000.000"; "%.3f" of -1.5 is "-1.500", of 0.0 "0.000".
        assert_eq!(java_fixed(0.9997802734375, 12), "0.999780273438");
        assert_eq!(java_fixed(0.125, 2), "0.13");
        assert_eq!(java_fixed(2.675, 2), "2.68");
        assert_eq!(java_fixed(1.005, 2), "1.01");
        assert_eq!(java_fixed(0.0005, 3), "0.001");
        assert_eq!(java_fixed(0.0004, 3), "0.000");
        assert_eq!(java_fixed(999.9996, 3), "1000.000");
        assert_eq!(java_fixed(-1.5, 3), "-1.500");
        assert_eq!(java_fixed(0.0, 3), "0.000");
        assert_eq!(java_fixed(4551.111111111111, 2), "4551.11");
        assert_eq!(java_fixed(1e21, 1), "1000000000000000000000.0");
        assert_eq!(java_fixed(123.0, 0), "123");
        // Rust's own rounding differs on the first: it rounds the exact binary value.
        assert_eq!(format!("{:.12}", 0.9997802734375f64), "0.999780273437");
    }

    #[test]
    fn a_level_reached_exactly_is_reported_there_as_java_does() {
        // 20 values, 1..=20 ns: 65 % of 20 is exactly 13, and Java's iterator (levels in
        // percent: 0, 10, ..., 50, 55, 60, 65, ...; reached when 100 * 13 / 20 = 65.0 >= 65.0)
        // reports level 65 at the 13th value, 13 ns, with 13 counted: the row Java's
        // outputPercentileDistribution(ps, 5, 1000.0) prints is
        // "       0.013 0.650000000000         13           2.86".
        let h = of(1..=20);
        let rows = percentile_distribution(&h, 5);
        let at65 = rows.iter().find(|r| r.percentile == 65.0).unwrap();
        assert_eq!((at65.value, at65.total), (13, 13));
        // 200 values: 60 % reached at the 120th.
        let h = of(1..=200);
        let rows = percentile_distribution(&h, 5);
        let at60 = rows.iter().find(|r| r.percentile == 60.0).unwrap();
        assert_eq!((at60.value, at60.total), (120, 120));
        // One row at the last value, then the closing 100 % row.
        let n = rows.len();
        assert_eq!(rows[n - 1].percentile, 100.0);
        assert!(rows[n - 1].last && !rows[n - 2].last);
        assert_eq!(rows[n - 2].total, 200);
        assert!(rows[n - 3].total < 200);
    }

    #[test]
    fn value_at_percentile_is_javas() {
        // Java's getValueAtPercentile on 1..=20 ns: 65 % wants ceil(nextDown(65) * 20 / 100)
        // = 13 values, so 13; 90 % wants 18; 99 % and 99.9 % want 20; 0 % the lowest value.
        let h = of(1..=20);
        assert_eq!(value_at_percentile(&h, 65.0), 13);
        assert_eq!(value_at_percentile(&h, 90.0), 18);
        assert_eq!(value_at_percentile(&h, 99.0), 20);
        assert_eq!(value_at_percentile(&h, 99.9), 20);
        assert_eq!(value_at_percentile(&h, 0.0), 1);
        // 1..=1000 ns: Java's 99.9 % is the 999th value; the crate's own rule asks for the
        // 1000th (0.999 * 1000 = 999.0000000000001).
        let h = of(1..=1000);
        assert_eq!(value_at_percentile(&h, 99.9), 999);
        assert_eq!(h.value_at_percentile(99.9), 1000);
        // Above 2048 ns values share buckets: the highest value of the bucket is reported.
        let h = of([5000, 5001, 5002, 9000]);
        assert_eq!(value_at_percentile(&h, 50.0), 5003);
        assert_eq!(value_at_percentile(&of([]), 50.0), 0);
    }

    #[test]
    fn time_stats_are_in_the_metrics_unit() {
        // Round trips of 231 ns are one-way 115.5 ns, recorded as 116 ns: 0.116 us. A 10 us
        // round trip is 5000 ns one way, in the bucket 5000..=5003.
        let m = Metric::latency_us(2.0);
        let s = time_stats(&[231, 231, 231, 10_000], &m).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.p999), (0.116, 5.003, 5.003, 5.003));
        assert_eq!(s.max, 5.003);
        assert!(time_stats(&[], &m).is_none());
        assert!(time_stats(&[1000], &Metric::bandwidth_mbs(8.0)).is_none());
    }

    #[test]
    fn mean_and_deviation_are_javas() {
        // Java: 3000 is in the bucket 3000..=3001, whose median equivalent is 3001.
        let h = of([1000, 3000]);
        assert_eq!(mean(&h), 2000.5);
        assert_eq!(stdev(&h), 1000.5);
    }
}
