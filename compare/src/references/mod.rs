//! Reference-file mode, ReFrame style: each metric of one run checked against a value with
//! lower and upper tolerances and a unit. As in ReFrame's reference tuples `(value,
//! lower_thres, upper_thres, unit)`, the tolerances are fractions of the value (`-0.05`, `0.1`)
//! or absent for no bound, and the allowed range is `value + |value| * lower` to `value +
//! |value| * upper`. A unit that differs from the run's, or a metric the point does not have,
//! is an error rather than a verdict (a gate must not pass on a misread file); a reference to a
//! point the run did not measure fails, since a gate must not pass on what was not run.
//!
//! [`file`] reads and writes the TOML file, [`check`](mod@check) holds a run to it, [`render`]
//! prints the outcome in any [`crate::Format`].

pub mod check;
pub mod file;
pub mod render;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use check::{check, Check, Outcome, Verdict};
pub use file::{from_run, load, parse, to_toml};
pub use render::render;

/// One `[[reference]]` table: a point of a series, one of its metrics, and the value expected
/// there with its tolerances.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub suite: String,
    pub fabric: String,
    /// The series' rank count; absent: whatever the run used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<usize>,
    /// The message size of the point, for suites keyed by size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The point's named parameters (`{ class = "S", kernel = "cg" }`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// The metric's name; absent: the point's headline (first) metric.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    pub value: f64,
    /// A fraction in [-1, 0]: the lowest value allowed is `value + |value| * lower`; absent:
    /// no lower bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<f64>,
    /// A fraction >= 0: the highest value allowed is `value + |value| * upper`; absent: no
    /// upper bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<f64>,
    pub unit: String,
}

impl Reference {
    /// The lowest and highest values allowed (None: unbounded on that side).
    pub fn allowed(&self) -> (Option<f64>, Option<f64>) {
        let at = |t: f64| self.value + self.value.abs() * t;
        (self.lower.map(at), self.upper.map(at))
    }

    /// Whether `measured` lies within the allowed range, ends included. NaN never does.
    pub fn admits(&self, measured: f64) -> bool {
        let (lo, hi) = self.allowed();
        !measured.is_nan()
            && lo.is_none_or(|lo| measured >= lo)
            && hi.is_none_or(|hi| measured <= hi)
    }

    /// The point as output names it: "size 1024", "class=S kernel=cg".
    pub fn point(&self) -> String {
        bench_core::measure::PointKey {
            size: self.size,
            params: self.params.clone(),
        }
        .to_string()
    }
}

/// Why a reference file could not be read or held against a run. Every variant names the
/// file; those about one entry name its index (1 for the first `[[reference]]`).
#[derive(Debug, thiserror::Error)]
pub enum ReferenceError {
    #[error("cannot read {file}: {source}")]
    Unreadable {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file} line {line}: {reason} (a reference file is TOML: [[reference]] tables)")]
    Syntax {
        file: String,
        line: usize,
        reason: String,
    },
    #[error("{file}: {reason}")]
    Layout { file: String, reason: String },
    #[error("{file}: reference {index}: {reason}")]
    Invalid {
        file: String,
        index: usize,
        reason: String,
    },
    #[error("{file}: reference {index} ({what}): {problem}")]
    Unjudgeable {
        file: String,
        index: usize,
        /// The reference's series, point and metric: "osu_latency on rapidio, size 8, latency".
        what: String,
        problem: Box<Problem>,
    },
}

/// Why a well-formed reference cannot be held against the run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    #[error("unit \"{given}\" but the run measures {metric} in \"{measured}\"; a unit mismatch is an error, not a pass: give the value in {measured}")]
    UnitMismatch {
        metric: String,
        given: String,
        measured: String,
    },
    #[error("the run has no metric \"{metric}\" at this point; it has {valid}")]
    UnknownMetric { metric: String, valid: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(value: f64, lower: Option<f64>, upper: Option<f64>) -> Reference {
        Reference {
            suite: "osu_latency".into(),
            fabric: "rapidio".into(),
            ranks: None,
            size: Some(8),
            params: BTreeMap::new(),
            metric: None,
            value,
            lower,
            upper,
            unit: "us".into(),
        }
    }

    #[test]
    fn bounds_follow_reframes_reference_tuples() {
        // ReFrame's documented examples: (100, -0.01, 0.02) allows 99..102, a missing
        // threshold is unbounded, and a negative value scales by its magnitude
        assert_eq!(
            reference(100.0, Some(-0.01), Some(0.02)).allowed(),
            (Some(99.0), Some(102.0))
        );
        assert_eq!(
            reference(100.0, Some(-0.01), None).allowed(),
            (Some(99.0), None)
        );
        assert_eq!(
            reference(-100.0, Some(-0.01), Some(0.02)).allowed(),
            (Some(-101.0), Some(-98.0))
        );
        let r = reference(100.0, Some(-0.01), Some(0.02));
        assert!(r.admits(99.0) && r.admits(102.0) && r.admits(100.5));
        assert!(!r.admits(98.99) && !r.admits(102.01) && !r.admits(f64::NAN));
        let open = reference(100.0, None, None);
        assert!(open.admits(1e300) && open.admits(-1e300));
        // a zero tolerance admits exactly the value (the exact gate of an emulated fabric)
        let v = 31.291674999999998;
        let exact = reference(v, Some(0.0), Some(0.0));
        assert!(exact.admits(v));
        assert!(!exact.admits(v.next_up()) && !exact.admits(v.next_down()));
    }

    #[test]
    fn points_print_as_run_output_names_them() {
        let mut r = reference(1.0, None, None);
        assert_eq!(r.point(), "size 8");
        r.size = None;
        r.params.insert("kernel".into(), "cg".into());
        r.params.insert("class".into(), "S".into());
        assert_eq!(r.point(), "class=S kernel=cg");
    }
}
