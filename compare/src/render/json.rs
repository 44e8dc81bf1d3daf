//! The tools' view: the two runs' identities, the settings, the counts and one object per
//! entry with every number the verdict was decided on (null where there is none), through
//! serde.

use bench_core::measure::Better;
use serde::Serialize;

use super::Renderer;
use crate::limit::LimitSource;
use crate::model::{Comparison, Entry, RunInfo, Statistic, Summary};
use crate::rule::{Rule, Verdict};
use crate::CompareError;

pub struct Json;

#[derive(Serialize)]
struct Document<'a> {
    baseline: &'a RunInfo,
    candidate: &'a RunInfo,
    /// How many runs each side holds; the identities above are of each side's first.
    baseline_runs: usize,
    candidate_runs: usize,
    noise: f64,
    confidence: f64,
    resamples: usize,
    min_samples: usize,
    /// The user's bound for one run a side; null when none.
    bound: Option<f64>,
    summary: Summary,
    verdicts: Vec<Row<'a>>,
}

#[derive(Serialize)]
struct Row<'a> {
    suite: &'a str,
    fabric: &'a str,
    ranks: usize,
    emulated: bool,
    /// null for points of parameters alone, and for a row standing for a whole series.
    size: Option<u64>,
    /// `name=value;name=value`, as in summary.csv; empty when none.
    params: String,
    metric: &'a str,
    unit: &'a str,
    better: Better,
    /// What baseline and candidate are: the statistic the verdict is decided on.
    statistic: Statistic,
    baseline: Option<f64>,
    candidate: Option<f64>,
    /// The suites' headline figures (mean latency, total bytes over total time ...).
    baseline_headline: Option<f64>,
    candidate_headline: Option<f64>,
    ratio: Option<f64>,
    low: Option<f64>,
    high: Option<f64>,
    p: Option<f64>,
    /// One run a side: the limit a change had to pass, and where it came from.
    limit: Option<f64>,
    limit_from: Option<LimitSource>,
    rule: Rule,
    verdict: Verdict,
    reason: &'a str,
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

impl<'a> Row<'a> {
    fn of(e: &'a Entry) -> Row<'a> {
        let d = &e.decision;
        Row {
            suite: &e.suite,
            fabric: &e.fabric,
            ranks: e.ranks,
            emulated: e.emulated,
            size: e.key.as_ref().and_then(|k| k.size),
            params: e.key.as_ref().map(|k| k.params_text()).unwrap_or_default(),
            metric: &e.metric,
            unit: &e.unit,
            better: e.better,
            statistic: e.statistic,
            baseline: finite(e.baseline),
            candidate: finite(e.candidate),
            baseline_headline: finite(e.baseline_headline),
            candidate_headline: finite(e.candidate_headline),
            ratio: finite(d.ratio),
            low: finite(d.low),
            high: finite(d.high),
            p: finite(d.p),
            limit: d.limit.map(|l| l.fraction),
            limit_from: d.limit.map(|l| l.source),
            rule: d.rule,
            verdict: d.verdict,
            reason: &d.reason,
        }
    }
}

impl Renderer for Json {
    fn render(&self, c: &Comparison) -> Result<String, CompareError> {
        let doc = Document {
            baseline: &c.baseline,
            candidate: &c.candidate,
            baseline_runs: c.baseline_runs,
            candidate_runs: c.candidate_runs,
            noise: c.settings.noise,
            confidence: c.settings.confidence,
            resamples: c.settings.resamples,
            min_samples: c.settings.min_samples,
            bound: c.settings.bound,
            summary: c.summary(),
            verdicts: c.entries.iter().map(Row::of).collect(),
        };
        let text = serde_json::to_string_pretty(&doc)?;
        Ok(text + "\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::testing::comparison;

    #[test]
    fn every_entry_with_its_numbers() {
        let text = Json.render(&comparison()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["baseline"]["run_id"], "base");
        assert_eq!(v["candidate"]["git_revision"], "rev-cand");
        assert_eq!(
            (v["noise"].as_f64(), v["confidence"].as_f64()),
            (Some(0.02), Some(0.95))
        );
        assert_eq!(v["summary"]["compared"], 4);
        assert_eq!(v["summary"]["regressed"], 1);
        let rows = v["verdicts"].as_array().unwrap();
        assert_eq!(rows.len(), 4);
        let first = &rows[0];
        assert_eq!(first["suite"], "osu_latency");
        assert_eq!(first["size"], 8);
        assert_eq!(first["params"], "");
        assert_eq!(first["better"], "lower");
        assert_eq!(first["rule"], "exact");
        assert_eq!(first["verdict"], "regressed");
        assert_eq!(first["ratio"], 1.159);
        assert!(first["low"].is_null() && first["p"].is_null());
        assert_eq!(rows[1]["better"], "higher");
        assert_eq!(rows[1]["low"], 1.03);
        assert_eq!(rows[1]["rule"], "statistical");
        let missing = &rows[3];
        assert_eq!(missing["verdict"], "invalid");
        assert_eq!(missing["reason"], "not in candidate");
        assert!(missing["size"].is_null() && missing["candidate"].is_null());
    }
}
