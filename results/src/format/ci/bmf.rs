//! The Bencher Metric Format: one JSON object mapping each benchmark name to an object that
//! maps measure names or slugs to `{"value", "lower_value", "upper_value"}` (numbers;
//! `value` required, the bounds optional), as Bencher's reference and JSON schema document
//! it. Bencher creates a measure it does not know from its slug; slugs are lowercase ASCII
//! letters and digits joined by single hyphens, at most 64 characters.
//!
//! Benchmarks are points ([`point_name`]: suite, fabric, rank count, point) and measures their
//! metrics, slugged with their unit ("latency-us", "bandwidth-mb-s"), so they never merge with
//! Bencher's built-in `latency` measure, which is in nanoseconds. `value` is the headline
//! summary.csv reports; the bounds are the 2.5th and 97.5th nearest-rank percentiles of the
//! point's per-sample values (the range that holds 95 % of single iterations), widened to take
//! in the value when it lies outside (a headline over the fastest batch, or a rate's total
//! over total time), so `lower_value <= value <= upper_value` always holds.

use bench_core::stats::nearest_rank;
use serde::{Serialize, Serializer};

use super::{point_name, record_name, rows, Export, ExportFile};
use crate::model::Run;
use crate::ResultsError;

/// The file name.
pub const FILE: &str = "bmf.json";

/// The percentiles of the per-sample values the bounds are.
pub const BOUNDS: (f64, f64) = (0.025, 0.975);

/// One measure's metric, as the format documents it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Metric {
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lower_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upper_value: Option<f64>,
}

/// Benchmark name -> measure slug -> metric, in the run's order (points as measured, metrics
/// as summary.csv lists them), which a JSON object keeps when written.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results(pub Vec<(String, Measures)>);

/// A benchmark's measures: slug -> metric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measures(pub Vec<(String, Metric)>);

impl Results {
    /// The benchmark named `name`.
    pub fn get(&self, name: &str) -> Option<&Measures> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, m)| m)
    }
}

impl Measures {
    /// The measure of slug `slug`.
    pub fn get(&self, slug: &str) -> Option<&Metric> {
        self.0.iter().find(|(s, _)| s == slug).map(|(_, m)| m)
    }
}

impl Serialize for Results {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl Serialize for Measures {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// The run as BMF, and the names of rows left out because their value is not finite.
pub fn results(run: &Run) -> (Results, Vec<String>) {
    let mut out = Results::default();
    let mut skipped = Vec::new();
    for row in rows(run) {
        let r = &row.record;
        if !r.value.is_finite() {
            skipped.push(record_name(r));
            continue;
        }
        let (lower_value, upper_value) = match bounds(&row.values, r.value) {
            Some((lo, hi)) => (Some(lo), Some(hi)),
            None => (None, None),
        };
        let name = point_name(r);
        let at = match out.0.iter().position(|(n, _)| *n == name) {
            Some(i) => i,
            None => {
                out.0.push((name, Measures::default()));
                out.0.len() - 1
            }
        };
        let measures = &mut out.0[at].1;
        let slug = unique(measures, slug(&format!("{} {}", r.metric, r.unit)));
        measures.0.push((
            slug,
            Metric {
                value: r.value,
                lower_value,
                upper_value,
            },
        ));
    }
    (out, skipped)
}

/// bmf.json.
pub fn export(run: &Run) -> Result<Export, ResultsError> {
    let (results, skipped) = results(run);
    let mut contents = serde_json::to_vec_pretty(&results)?;
    contents.push(b'\n');
    Ok(Export {
        files: vec![ExportFile {
            name: FILE.into(),
            contents,
        }],
        skipped,
    })
}

/// The [`BOUNDS`] percentiles of the finite `values`, widened to hold `value`; None when no
/// value is finite.
pub fn bounds(values: &[f64], value: f64) -> Option<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let lo = nearest_rank(&sorted, BOUNDS.0).min(value);
    let hi = nearest_rank(&sorted, BOUNDS.1).max(value);
    Some((lo, hi))
}

/// A Bencher slug: lowercase ASCII letters and digits, other runs of characters as one
/// hyphen, none at either end, at most 64 characters. "bandwidth MB/s" -> "bandwidth-mb-s".
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    out.truncate(64);
    let out = out.trim_end_matches('-');
    if out.is_empty() {
        "metric".into()
    } else {
        out.into()
    }
}

/// `slug`, or `slug-2`, `slug-3` ... when a point already has a measure of that slug (two
/// metric names that differ only in characters a slug drops).
fn unique(taken: &Measures, slug: String) -> String {
    if taken.get(&slug).is_none() {
        return slug;
    }
    (2..)
        .map(|n| {
            let tail = format!("-{n}");
            let mut base = slug.clone();
            base.truncate(64 - tail.len());
            format!("{}{tail}", base.trim_end_matches('-'))
        })
        .find(|s| taken.get(s).is_none())
        .expect("an unused suffix")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ci::tests::run;

    #[test]
    fn benchmarks_are_points_and_measures_their_metrics_with_units() {
        let (r, skipped) = results(&run());
        assert!(skipped.is_empty());
        let names: Vec<&str> = r.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "osu_latency/rapidio/2 ranks/size 1",
                "osu_latency/rapidio/2 ranks/size 1024",
                "osu_bw/rapidio/2 ranks/size 1024",
                "npb/rapidio/4 ranks/class=S kernel=cg",
            ]
        );
        let slugs = |name: &str| -> Vec<String> {
            r.get(name)
                .unwrap()
                .0
                .iter()
                .map(|(s, _)| s.clone())
                .collect()
        };
        assert_eq!(
            slugs("npb/rapidio/4 ranks/class=S kernel=cg"),
            ["time-s", "mops-mop-s", "compute-s", "comm-s"]
        );
        assert_eq!(
            slugs("osu_bw/rapidio/2 ranks/size 1024"),
            ["bandwidth-mb-s"]
        );
    }

    #[test]
    fn bounds_are_the_middle_95_percent_of_samples_holding_the_value() {
        let (r, _) = results(&run());
        let lat = r
            .get("osu_latency/rapidio/2 ranks/size 1")
            .unwrap()
            .get("latency-us")
            .unwrap();
        // samples 1.0, 1.1, 1.2, 5.0 us: 2.5th percentile 1.0, 97.5th 5.0; mean 2.075
        assert_eq!(
            (lat.lower_value, lat.value, lat.upper_value),
            (Some(1.0), 2.075, Some(5.0))
        );
        // 40 samples: the 2.5th percentile is the 1st, the 97.5th the 39th
        let values: Vec<f64> = (1..=40).map(f64::from).collect();
        assert_eq!(bounds(&values, 20.5), Some((1.0, 39.0)));
        // a value outside the samples' middle widens the bounds to it
        assert_eq!(bounds(&values, 39.5), Some((1.0, 39.5)));
        assert_eq!(bounds(&values, 0.5), Some((0.5, 39.0)));
        assert_eq!(bounds(&[f64::INFINITY], 1.0), None);
        // a bandwidth point: lower <= value <= upper
        let bw = r
            .get("osu_bw/rapidio/2 ranks/size 1024")
            .unwrap()
            .get("bandwidth-mb-s")
            .unwrap();
        let (lo, hi) = (bw.lower_value.unwrap(), bw.upper_value.unwrap());
        assert!(lo <= bw.value && bw.value <= hi && lo < hi, "{bw:?}");
    }

    #[test]
    fn slugs_are_lowercase_words_joined_by_single_hyphens() {
        assert_eq!(slug("bandwidth MB/s"), "bandwidth-mb-s");
        assert_eq!(slug("latency us"), "latency-us");
        assert_eq!(slug("  --Mop/s--"), "mop-s");
        assert_eq!(slug("µ"), "metric");
        let long = slug(&"ab ".repeat(40));
        assert!(long.len() <= 64 && !long.ends_with('-'), "{long}");
        let m = Metric {
            value: 1.0,
            lower_value: None,
            upper_value: None,
        };
        let mut taken = Measures(vec![("latency-us".to_string(), m)]);
        assert_eq!(unique(&taken, "latency-us".into()), "latency-us-2");
        taken.0.push(("latency-us-2".to_string(), m));
        assert_eq!(unique(&taken, "latency-us".into()), "latency-us-3");
    }

    #[test]
    fn the_file_is_one_object_of_objects_of_metrics() {
        let x = export(&run()).unwrap();
        assert_eq!(x.files.len(), 1);
        assert_eq!(x.files[0].name, "bmf.json");
        let v: serde_json::Value = serde_json::from_slice(&x.files[0].contents).unwrap();
        // written in the run's order
        let text = String::from_utf8_lossy(&x.files[0].contents);
        let first = text.find("size 1\"").unwrap();
        assert!(first < text.find("size 1024").unwrap() && first < text.find("npb/").unwrap());
        let m = &v["osu_latency/rapidio/2 ranks/size 1024"]["latency-us"];
        assert!(m["value"].is_f64() && m["lower_value"].is_f64() && m["upper_value"].is_f64());
    }
}
