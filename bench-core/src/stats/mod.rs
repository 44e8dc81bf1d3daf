//! Summary statistics of raw samples, computed exactly from the samples themselves.
//!
//! Percentiles use the nearest-rank definition on the sorted samples (the value below which at
//! least q of the samples fall), the same convention HdrHistogram uses, but without its bucket
//! rounding. The standard deviation is the sample (n - 1) one. [`two_sample`] asks whether two
//! sets of samples differ, and by how much.

pub mod student_t;
pub mod two_sample;

use serde::{Deserialize, Serialize};

/// count, min, mean, p50, p90, p99, p99.9, max and standard deviation of one set of samples.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub stddev: f64,
}

impl Summary {
    /// Summarises `samples`; `None` when there are none.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let n = sorted.len();
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            sorted.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        Some(Summary {
            count: n as u64,
            min: sorted[0],
            mean,
            p50: nearest_rank(&sorted, 0.50),
            p90: nearest_rank(&sorted, 0.90),
            p99: nearest_rank(&sorted, 0.99),
            p999: nearest_rank(&sorted, 0.999),
            max: sorted[n - 1],
            stddev: var.sqrt(),
        })
    }

    /// Applies `f` to every location statistic, for unit changes (ns -> us) that are linear.
    pub fn scaled(&self, factor: f64) -> Summary {
        Summary {
            count: self.count,
            min: self.min * factor,
            mean: self.mean * factor,
            p50: self.p50 * factor,
            p90: self.p90 * factor,
            p99: self.p99 * factor,
            p999: self.p999 * factor,
            max: self.max * factor,
            stddev: self.stddev * factor,
        }
    }
}

/// The nearest-rank q-quantile of an ascending slice (q in 0..=1).
pub fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    let rank = (q * n as f64).ceil() as usize;
    sorted[rank.clamp(1, n) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_one_to_hundred() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        let s = Summary::of(&v).unwrap();
        assert_eq!(s.count, 100);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 100.0);
        assert_eq!(s.mean, 50.5);
        assert_eq!(s.p50, 50.0);
        assert_eq!(s.p90, 90.0);
        assert_eq!(s.p99, 99.0);
        assert_eq!(s.p999, 100.0);
        // sample standard deviation of 1..=100 is sqrt(841.666...)
        assert!((s.stddev - 29.011491975882016).abs() < 1e-9);
    }

    #[test]
    fn summary_of_unsorted_input_and_single_sample() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.min, s.p50, s.max), (1.0, 2.0, 3.0));
        let one = Summary::of(&[7.0]).unwrap();
        assert_eq!((one.p999, one.stddev), (7.0, 0.0));
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn scaling_changes_every_location_statistic() {
        let s = Summary::of(&[1000.0, 3000.0]).unwrap().scaled(1e-3);
        assert_eq!((s.min, s.mean, s.max), (1.0, 2.0, 3.0));
        assert!((s.stddev - 2f64.sqrt()).abs() < 1e-12);
    }
}
