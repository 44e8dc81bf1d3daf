//! What a suite measures, before any reporting: one [`Point`] per message size, holding every
//! raw timed sample, and how to turn samples into the metric the suite reports.
//!
//! Keeping raw samples (not only summaries) is what lets every later view — percentiles,
//! histograms, bootstrapped comparisons — be computed from the same data.

use serde::{Deserialize, Serialize};

use crate::stats::Summary;

/// How a sample (nanoseconds of one timed iteration) becomes the reported metric.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Metric {
    /// Latency in microseconds = sample / `divisor` (2 for a round trip reported one way).
    Latency { divisor: f64 },
    /// Bandwidth in MB/s (10^6 bytes per second, OSU's unit) = `bytes_per_sample` / sample.
    Bandwidth { bytes_per_sample: f64 },
}

impl Metric {
    pub fn name(&self) -> &'static str {
        match self {
            Metric::Latency { .. } => "latency",
            Metric::Bandwidth { .. } => "bandwidth",
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Metric::Latency { .. } => "us",
            Metric::Bandwidth { .. } => "MB/s",
        }
    }

    /// The metric value of one sample.
    pub fn of_sample(&self, ns: u64) -> f64 {
        match *self {
            Metric::Latency { divisor } => ns as f64 / divisor / 1e3,
            Metric::Bandwidth { bytes_per_sample } => {
                if ns == 0 {
                    f64::INFINITY
                } else {
                    bytes_per_sample / ns as f64 * 1e3
                }
            }
        }
    }
}

/// How a suite's results are laid out in OSU's text format: each suite states its own title
/// and metric column, so the formatter needs no list of suites.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Layout {
    /// "OSU MPI Latency Test v7.4"
    pub title: String,
    /// The metric column's header, e.g. "Avg Latency(us)".
    pub column: String,
}

/// One suite at one message size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub size: u64,
    pub metric: Metric,
    /// Raw duration of each timed iteration, in nanoseconds of the rank's clock.
    pub samples_ns: Vec<u64>,
    /// Some(true) when every byte was checked and matched (`-c`); None when not checked.
    pub validated: Option<bool>,
}

impl Point {
    /// The figure OSU prints: mean latency, or total bytes over total time for bandwidth.
    pub fn headline(&self) -> f64 {
        let total: u128 = self.samples_ns.iter().map(|&s| s as u128).sum();
        let n = self.samples_ns.len() as f64;
        match self.metric {
            Metric::Latency { divisor } => total as f64 / n / divisor / 1e3,
            Metric::Bandwidth { bytes_per_sample } => {
                bytes_per_sample * n / total.max(1) as f64 * 1e3
            }
        }
    }

    /// Every sample as the metric.
    pub fn values(&self) -> Vec<f64> {
        self.samples_ns
            .iter()
            .map(|&s| self.metric.of_sample(s))
            .collect()
    }

    /// Distribution of the metric over samples.
    pub fn summary(&self) -> Option<Summary> {
        Summary::of(&self.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_is_half_the_round_trip_in_microseconds() {
        let p = Point {
            size: 8,
            metric: Metric::Latency { divisor: 2.0 },
            samples_ns: vec![200, 400],
            validated: None,
        };
        assert_eq!(p.headline(), 0.15);
        assert_eq!(p.values(), vec![0.1, 0.2]);
        assert_eq!(p.summary().unwrap().max, 0.2);
    }

    #[test]
    fn bandwidth_headline_is_total_bytes_over_total_time() {
        // 64 messages of 1 MB per window: 1 ms and 3 ms windows
        let p = Point {
            size: 1_000_000,
            metric: Metric::Bandwidth {
                bytes_per_sample: 64e6,
            },
            samples_ns: vec![1_000_000, 3_000_000],
            validated: Some(true),
        };
        assert_eq!(p.headline(), 32_000.0); // 128e6 bytes / 4 ms
        assert_eq!(p.values(), vec![64_000.0, 64_000.0 / 3.0]);
        assert_eq!(
            Metric::Bandwidth {
                bytes_per_sample: 1.0
            }
            .unit(),
            "MB/s"
        );
    }
}
