//! What a comparison produces: one [`Entry`] per suite, fabric, point and metric, each with its
//! [`Decision`], and what identifies the two runs. Renderers and the exit status read this and
//! nothing else.

use bench_core::measure::{Better, PointKey};
use results::Run;
use serde::Serialize;

use crate::rule::{Decision, Verdict};
use crate::settings::Settings;

/// What names a run in the output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    pub run_id: String,
    pub git_revision: String,
    pub fabbench_version: String,
    pub start_time: String,
    pub hostname: String,
    /// Why the run is incomplete, when it ended before its last point.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<String>,
}

impl RunInfo {
    pub fn of(run: &Run) -> RunInfo {
        let m = &run.manifest;
        RunInfo {
            run_id: m.run_id.clone(),
            git_revision: m.git_revision.clone(),
            fabbench_version: m.fabbench_version.clone(),
            start_time: m.start_time.clone(),
            hostname: m.host.hostname.clone(),
            partial: run.partial_reason().map(String::from),
        }
    }
}

/// One suite, fabric, point and metric, and its verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub suite: String,
    pub fabric: String,
    pub ranks: usize,
    /// Whether the fabric was emulated (on every side that has it).
    pub emulated: bool,
    /// The point; None for a row standing for a whole series that one side lacks.
    pub key: Option<PointKey>,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// What `baseline` and `candidate` are: the statistic the verdict is decided on.
    pub statistic: Statistic,
    /// Each side's value of `statistic`; None where the side lacks it.
    pub baseline: Option<f64>,
    pub candidate: Option<f64>,
    /// The headline each side reports (mean latency, total bytes over total time ...), for
    /// readers who know the suites' own figures; None where the side lacks it.
    pub baseline_headline: Option<f64>,
    pub candidate_headline: Option<f64>,
    pub decision: Decision,
}

/// The per-side number a verdict is decided on, which the tables print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The suite's headline figure (exact rule: virtual time, the same every run).
    Headline,
    /// The median of the raw samples (of the runs pooled, when a side has too few to decide
    /// over runs).
    Median,
    /// The median over the runs of each run's value, the interquartile mean of its samples
    /// (several runs a side; see [`crate::rule::run_value`]).
    MedianOfRuns,
}

impl Statistic {
    pub fn word(self) -> &'static str {
        match self {
            Statistic::Headline => "headline",
            Statistic::Median => "median",
            Statistic::MedianOfRuns => "median of runs",
        }
    }
}

impl Entry {
    pub fn verdict(&self) -> Verdict {
        self.decision.verdict
    }
}

/// How many entries got each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub compared: usize,
    pub regressed: usize,
    pub improved: usize,
    pub unchanged: usize,
    /// One run a side: moved by more than the samples' spread, not beyond a limit.
    pub inconclusive: usize,
    pub invalid: usize,
}

/// Two sides compared, each one run or several.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub baseline: RunInfo,
    pub candidate: RunInfo,
    /// How many runs each side holds (the first one's identity is above): several runs of one
    /// side are replicates of the same measurement.
    pub baseline_runs: usize,
    pub candidate_runs: usize,
    pub settings: Settings,
    /// In the baseline's order of series, points and metrics; what only the candidate has
    /// follows.
    pub entries: Vec<Entry>,
}

impl Comparison {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            compared: self.entries.len(),
            ..Summary::default()
        };
        for e in &self.entries {
            match e.verdict() {
                Verdict::Regressed => s.regressed += 1,
                Verdict::Improved => s.improved += 1,
                Verdict::Unchanged => s.unchanged += 1,
                Verdict::Inconclusive => s.inconclusive += 1,
                Verdict::Invalid => s.invalid += 1,
            }
        }
        s
    }

    /// Whether anything regressed.
    pub fn regressed(&self) -> bool {
        self.summary().regressed > 0
    }

    /// Whether anything regressed or improved.
    pub fn changed(&self) -> bool {
        let s = self.summary();
        s.regressed + s.improved > 0
    }
}
