//! A comparison made up for the renderers' tests: one entry of each verdict, exact and
//! statistical.

use bench_core::measure::{Better, PointKey};

use crate::model::{Comparison, Entry, RunInfo, Statistic};
use crate::rule::{Decision, Rule, Verdict};
use crate::settings::Settings;

fn info(id: &str) -> RunInfo {
    RunInfo {
        run_id: id.into(),
        git_revision: format!("rev-{id}"),
        fabbench_version: "0.1.0".into(),
        start_time: "2026-11-23T00:00:00Z".into(),
        hostname: "vm".into(),
        partial: None,
    }
}

fn entry(suite: &str, fabric: &str, size: Option<u64>, metric: &str, d: Decision) -> Entry {
    let (unit, better) = if metric == "latency" {
        ("us", Better::Lower)
    } else {
        ("MB/s", Better::Higher)
    };
    Entry {
        suite: suite.into(),
        fabric: fabric.into(),
        ranks: 2,
        emulated: d.rule == Rule::Exact,
        key: size.map(PointKey::size),
        metric: metric.into(),
        unit: unit.into(),
        better,
        statistic: if d.rule == Rule::Exact {
            Statistic::Headline
        } else {
            Statistic::Median
        },
        baseline: Some(31.29),
        candidate: Some(36.29),
        baseline_headline: Some(31.5),
        candidate_headline: Some(36.5),
        decision: d,
    }
}

fn decision(
    verdict: Verdict,
    rule: Rule,
    ratio: f64,
    interval: Option<(f64, f64, f64)>,
) -> Decision {
    Decision {
        verdict,
        rule,
        ratio: Some(ratio),
        low: interval.map(|i| i.0),
        high: interval.map(|i| i.1),
        p: interval.map(|i| i.2),
        limit: None,
        shown: None,
        reason: "why".into(),
    }
}

/// osu_latency on rapidio regressed exactly, osu_bw on shm improved, osu_latency on shm
/// unchanged, osu_bibw on shm missing from the candidate.
pub(crate) fn comparison() -> Comparison {
    let mut missing = entry(
        "osu_bibw",
        "shm",
        None,
        "bandwidth",
        Decision::invalid(Rule::Statistical, "not in candidate"),
    );
    missing.candidate = None;
    Comparison {
        baseline: info("base"),
        candidate: info("cand"),
        baseline_runs: 1,
        candidate_runs: 1,
        settings: Settings::default(),
        entries: vec![
            entry(
                "osu_latency",
                "rapidio",
                Some(8),
                "latency",
                decision(Verdict::Regressed, Rule::Exact, 1.159, None),
            ),
            entry(
                "osu_bw",
                "shm",
                Some(1 << 20),
                "bandwidth",
                decision(
                    Verdict::Improved,
                    Rule::Statistical,
                    1.04,
                    Some((1.03, 1.05, 1e-6)),
                ),
            ),
            entry(
                "osu_latency",
                "shm",
                Some(1),
                "latency",
                decision(
                    Verdict::Unchanged,
                    Rule::Statistical,
                    1.001,
                    Some((0.99, 1.01, 0.4)),
                ),
            ),
            missing,
        ],
    }
}
