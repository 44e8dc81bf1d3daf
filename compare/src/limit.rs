//! How large a change must be before one run a side may call it one. Two runs of the same build
//! on a shared machine differ by more than their samples do (where the kernel and the hypervisor
//! put the ranks, what else ran), so a single run's samples cannot separate a change from
//! run-to-run variation. A [`Limit`] is a change beyond which that variation is no longer a
//! plausible cause: a bound the user sets, or a noise floor [`Floors`] learns from runs of
//! identical settings (a history store's entries, or a side's replicates): the largest ratio seen
//! between two of them.

use std::collections::HashMap;

use serde::Serialize;

/// Where a limit comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitSource {
    /// The user's `--bound`.
    Bound,
    /// The spread of a history store's entries at the same point.
    History,
    /// The spread of one side's own runs (replicates).
    Replicates,
}

/// A change must lie wholly beyond `±fraction` (as a ratio: above `1 + fraction` or below
/// `1 / (1 + fraction)`) to count with one run a side.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Limit {
    pub fraction: f64,
    pub source: LimitSource,
    /// How many runs the floor was learned from (0 for a bound).
    pub runs: usize,
}

impl Limit {
    /// "the bound ±10%", "the noise floor ±7.3% learned from 12 history entries".
    pub fn text(&self) -> String {
        let pct = crate::settings::percent((self.fraction * 1000.0).round() / 1000.0);
        match self.source {
            LimitSource::Bound => format!("the bound ±{pct} (--bound)"),
            LimitSource::History => {
                format!(
                    "the noise floor ±{pct} learned from {} history entries",
                    self.runs
                )
            }
            LimitSource::Replicates => {
                format!(
                    "the noise floor ±{pct} learned from {} replicate runs",
                    self.runs
                )
            }
        }
    }
}

/// Fewer runs than this say too little about their spread to learn a floor from.
pub const MIN_FLOOR_RUNS: usize = 3;

/// The noise floor of values measured with identical settings (each one run's median): the
/// largest ratio between two of them, less one; None with fewer than [`MIN_FLOOR_RUNS`] or a
/// value that is not a positive number.
pub fn floor_of(values: &[f64], source: LimitSource) -> Option<Limit> {
    if values.len() < MIN_FLOOR_RUNS || values.iter().any(|&v| !(v > 0.0 && v.is_finite())) {
        return None;
    }
    let max = values.iter().copied().fold(f64::MIN, f64::max);
    let min = values.iter().copied().fold(f64::MAX, f64::min);
    Some(Limit {
        fraction: max / min - 1.0,
        source,
        runs: values.len(),
    })
}

/// Runs' medians per suite, fabric, rank count, point and metric, from which floors are learned
/// (fed from a history store by the caller, so this crate does not read stores).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Floors {
    values: HashMap<String, Vec<f64>>,
}

impl Floors {
    /// The name a point's metric is filed under.
    pub fn name(suite: &str, fabric: &str, ranks: usize, point: &str, metric: &str) -> String {
        format!("{suite}\0{fabric}\0{ranks}\0{point}\0{metric}")
    }

    /// One run's median of the metric named `name` (see [`Floors::name`]).
    pub fn learn(&mut self, name: String, median: f64) {
        self.values.entry(name).or_default().push(median);
    }

    /// The floor learned for `name`, if enough runs were seen.
    pub fn of(&self, name: &str) -> Option<Limit> {
        floor_of(self.values.get(name)?, LimitSource::History)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_is_the_largest_ratio_between_runs() {
        let f = floor_of(&[10.0, 11.0, 10.5], LimitSource::Replicates).unwrap();
        assert!((f.fraction - 0.1).abs() < 1e-12, "{f:?}");
        assert_eq!(f.runs, 3);
        // Too few runs, or a value that is no time or rate: no floor.
        assert_eq!(floor_of(&[10.0, 11.0], LimitSource::History), None);
        assert_eq!(floor_of(&[10.0, 0.0, 11.0], LimitSource::History), None);
        let mut floors = Floors::default();
        let name = Floors::name("osu_latency", "shm", 2, "8 B", "latency");
        for v in [1.0, 1.2, 1.1] {
            floors.learn(name.clone(), v);
        }
        let f = floors.of(&name).unwrap();
        assert!((f.fraction - 0.2).abs() < 1e-12 && f.source == LimitSource::History);
        assert_eq!(floors.of("other"), None);
        assert_eq!(
            f.text(),
            "the noise floor ±20% learned from 3 history entries"
        );
    }
}
