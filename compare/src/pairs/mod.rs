//! Matching two sides, each one run or several runs of the same workload: series by suite,
//! fabric and rank count, points by key, metrics by name (a point's own metrics, then the
//! compute and communication times of a point that splits its time, as summary.csv reports
//! them), each matched pair handed to [`crate::rule`]. The runs of one side that measured the
//! same series are its replicates. What only one side has is an `invalid` entry saying which
//! side lacks it; two sides with nothing at all in common are an error that says what each
//! holds. Each entry carries the statistic its verdict rests on ([`Statistic`]), which the
//! tables print, and with one run a side the limit a change had to pass.

use bench_core::measure::{Metric, Point, PointKey};
use results::model::Series;
use results::Run;

use crate::limit::{floor_of, Floors, Limit, LimitSource, MIN_FLOOR_RUNS};
use crate::model::{Comparison, Entry, RunInfo, Statistic};
use crate::rule::{self, Decision, Rule, MIN_RUNS};
use crate::settings::Settings;
use crate::CompareError;

/// Compares the `candidate` runs with the `baseline` runs, entry by entry (one run a side is
/// the usual case). Errors when a side has no run, the settings are out of range or the sides
/// share no suite, fabric, rank count, point and metric.
pub fn compare(
    baseline: &[Run],
    candidate: &[Run],
    settings: &Settings,
) -> Result<Comparison, CompareError> {
    compare_with(baseline, candidate, settings, &Floors::default())
}

/// [`compare`], with noise floors learned elsewhere (a history store's runs) for the entries a
/// single run a side decides.
pub fn compare_with(
    baseline: &[Run],
    candidate: &[Run],
    settings: &Settings,
    floors: &Floors,
) -> Result<Comparison, CompareError> {
    settings.check()?;
    let (Some(first_baseline), Some(first_candidate)) = (baseline.first(), candidate.first())
    else {
        return Err(CompareError::Setting {
            name: "runs",
            reason: "a comparison needs at least one run a side".into(),
        });
    };
    let (ours, theirs) = (groups(baseline), groups(candidate));
    let mut entries = Vec::new();
    for s in &ours {
        match counterpart(&theirs, s) {
            Some(c) => compare_series(s, c, settings, floors, &mut entries),
            None => missing_series(s.first(), Side::Candidate, &mut entries),
        }
    }
    for c in &theirs {
        if counterpart(&ours, c).is_none() {
            missing_series(c.first(), Side::Baseline, &mut entries);
        }
    }
    let decided = entries
        .iter()
        .filter(|e| e.baseline.is_some() && e.candidate.is_some())
        .count();
    if decided == 0 {
        return Err(CompareError::NothingInCommon {
            baseline_id: first_baseline.manifest.run_id.clone(),
            baseline: holdings(first_baseline),
            candidate_id: first_candidate.manifest.run_id.clone(),
            candidate: holdings(first_candidate),
        });
    }
    Ok(Comparison {
        baseline: RunInfo::of(first_baseline),
        candidate: RunInfo::of(first_candidate),
        baseline_runs: baseline.len(),
        candidate_runs: candidate.len(),
        settings: *settings,
        entries,
    })
}

/// One suite on one fabric at one rank count, as each run of a side that has it measured it.
struct Group<'a> {
    series: Vec<&'a Series>,
}

impl<'a> Group<'a> {
    fn first(&self) -> &'a Series {
        self.series[0]
    }

    fn holds(&self, s: &Series) -> bool {
        let f = self.first();
        f.suite == s.suite && f.fabric == s.fabric && f.ranks == s.ranks
    }

    /// What each run measured at `key`; empty when no run did.
    fn points(&self, key: &PointKey) -> Vec<&'a Point> {
        self.series.iter().filter_map(|s| s.point(key)).collect()
    }
}

/// A side's series grouped across its runs, in the order they first appear.
fn groups(runs: &[Run]) -> Vec<Group<'_>> {
    let mut out: Vec<Group> = Vec::new();
    for s in runs.iter().flat_map(|r| &r.series) {
        match out.iter_mut().find(|g| g.holds(s)) {
            Some(g) => g.series.push(s),
            None => out.push(Group { series: vec![s] }),
        }
    }
    out
}

/// The side that lacks something.
#[derive(Debug, Clone, Copy)]
enum Side {
    Baseline,
    Candidate,
}

impl Side {
    fn lacks(self) -> &'static str {
        match self {
            Side::Baseline => "not in baseline",
            Side::Candidate => "not in candidate",
        }
    }
}

fn counterpart<'a, 'b>(groups: &'b [Group<'a>], s: &Group) -> Option<&'b Group<'a>> {
    groups.iter().find(|g| g.holds(s.first()))
}

/// One metric of one point, with what deciding it needs, from each run that measured it.
struct Facet {
    metric: Metric,
    /// The values of each run's samples, one list per run.
    values: Vec<Vec<f64>>,
    /// The headline: one run's, or with several the median of theirs.
    headline: f64,
    /// Some(false) when any run's validation failed.
    validated: Option<bool>,
    /// Some of the point's time was timed on the host's clock (the compute of an application
    /// kernel, scaled into virtual time on an emulated fabric), or the runs disagree: not
    /// exactly reproducible.
    host_timed: bool,
}

/// Every metric the runs report at a point (`points`, one per run, not empty), each metric
/// with the values of every run that has it.
fn facets(points: &[&Point]) -> Vec<Facet> {
    let mut out: Vec<(Facet, Vec<f64>)> = Vec::new();
    for p in points {
        for f in run_facets(p) {
            match out.iter_mut().find(|(g, _)| g.metric.name == f.metric.name) {
                Some((g, headlines)) => {
                    // Replicates of a reproducible run agree exactly; when they do not, the
                    // series is not exact after all.
                    g.host_timed |= f.host_timed || g.headline != f.headline;
                    if f.validated == Some(false) {
                        g.validated = Some(false);
                    }
                    g.values.extend(f.values);
                    headlines.push(f.headline);
                }
                None => {
                    let headline = f.headline;
                    out.push((f, vec![headline]));
                }
            }
        }
    }
    out.into_iter()
        .map(|(mut f, headlines)| {
            f.headline = bench_core::stats::two_sample::median(&headlines);
            f
        })
        .collect()
}

/// Every metric one run's `p` reports: its own, then compute and comm when it splits its time
/// (from the split's samples, as `Series::records` derives them).
fn run_facets(p: &Point) -> Vec<Facet> {
    let host_timed = p
        .split
        .as_ref()
        .is_some_and(|s| s.compute_ns.iter().any(|&ns| ns > 0));
    let facet = |part: &Point, m: &Metric| Facet {
        metric: m.clone(),
        values: vec![part.values_of(m)],
        headline: part.headline_of(m),
        validated: p.validated,
        host_timed,
    };
    let mut out: Vec<Facet> = p.metrics.iter().map(|m| facet(p, m)).collect();
    for (m, part) in p.split_parts() {
        out.push(facet(&part, &m));
    }
    out
}

fn entry(s: &Series, key: Option<&PointKey>, f: &Facet, decision: Decision) -> Entry {
    Entry {
        suite: s.suite.clone(),
        fabric: s.fabric.clone(),
        ranks: s.ranks,
        emulated: s.emulated,
        key: key.cloned(),
        metric: f.metric.name.clone(),
        unit: f.metric.unit.clone(),
        better: f.metric.better,
        statistic: Statistic::Headline,
        baseline: None,
        candidate: None,
        baseline_headline: None,
        candidate_headline: None,
        decision,
    }
}

/// The statistic a facet decided by `rule` is judged on, when the sides hold `runs` runs each.
fn statistic_for(rule: Rule, runs: (usize, usize)) -> Statistic {
    match rule {
        Rule::Exact => Statistic::Headline,
        _ if runs.0 >= MIN_RUNS && runs.1 >= MIN_RUNS => Statistic::MedianOfRuns,
        _ => Statistic::Median,
    }
}

/// A facet's value of `stat`: its headline, the median of its samples pooled, or the median
/// of its runs' values ([`rule::run_value`]).
fn value_of(f: &Facet, stat: Statistic) -> f64 {
    use bench_core::stats::two_sample::median;
    match stat {
        Statistic::Headline => f.headline,
        Statistic::Median => median(&f.values.concat()),
        Statistic::MedianOfRuns => median(&run_values(f)),
    }
}

fn run_values(f: &Facet) -> Vec<f64> {
    f.values.iter().map(|v| rule::run_value(v)).collect()
}

/// The noise floor a side's own runs show, when it holds enough of them; the larger of the two
/// sides'.
fn replicate_floor(a: &Facet, b: &Facet) -> Option<Limit> {
    [a, b]
        .into_iter()
        .filter(|f| f.values.len() >= MIN_FLOOR_RUNS)
        .filter_map(|f| floor_of(&run_values(f), LimitSource::Replicates))
        .max_by(|x, y| x.fraction.total_cmp(&y.fraction))
}

/// The rule that decides (or would decide) a facet of `s` (when a side has several runs, a
/// measured facet is decided over its runs: [`rule::runs`]; that choice is made on the values).
fn rule_for(emulated: bool, host_timed: bool) -> Rule {
    if emulated && !host_timed {
        Rule::Exact
    } else {
        Rule::Statistical
    }
}

/// A series one side lacks: one entry per metric it reports, standing for all its points.
fn missing_series(s: &Series, side: Side, out: &mut Vec<Entry>) {
    let mut seen: Vec<String> = Vec::new();
    for p in &s.points {
        for f in facets(&[p]) {
            if seen.contains(&f.metric.name) {
                continue;
            }
            seen.push(f.metric.name.clone());
            let reason = format!(
                "{} on {} ({} ranks) {}",
                s.suite,
                s.fabric,
                s.ranks,
                side.lacks()
            );
            let d = Decision::invalid(rule_for(s.emulated, f.host_timed), reason);
            out.push(entry(s, None, &f, d));
        }
    }
}

/// Facets of a point one side lacks (or of a point both have, `f` lacking on one side).
fn missing_facet(s: &Series, key: &PointKey, f: &Facet, side: Side) -> Entry {
    let rule = rule_for(s.emulated, f.host_timed);
    let d = Decision::invalid(rule, side.lacks());
    let mut e = entry(s, Some(key), f, d);
    let runs = f.values.len();
    e.statistic = statistic_for(rule, (runs, runs));
    let value = Some(value_of(f, e.statistic));
    match side {
        Side::Candidate => (e.baseline, e.baseline_headline) = (value, Some(f.headline)),
        Side::Baseline => (e.candidate, e.candidate_headline) = (value, Some(f.headline)),
    }
    e
}

/// A series' points, each key once: the first point measured at it, which is the one
/// [`Series::point`] finds (a sampler such as mpptest's bisection can return to a size).
fn first_points(s: &Series) -> Vec<&Point> {
    let mut seen = std::collections::HashSet::new();
    s.points.iter().filter(|p| seen.insert(&p.key)).collect()
}

fn compare_series(
    sg: &Group,
    cg: &Group,
    settings: &Settings,
    floors: &Floors,
    out: &mut Vec<Entry>,
) {
    let (s, c) = (sg.first(), cg.first());
    let emulated = sg.series.iter().chain(&cg.series).all(|x| x.emulated);
    for p in first_points(s) {
        let (ps, qs) = (sg.points(&p.key), cg.points(&p.key));
        if qs.is_empty() {
            for f in facets(&ps) {
                out.push(missing_facet(s, &p.key, &f, Side::Candidate));
            }
            continue;
        }
        let ours = facets(&ps);
        let theirs = facets(&qs);
        for f in &ours {
            match theirs.iter().find(|g| g.metric.name == f.metric.name) {
                Some(g) => out.push(compare_facet(s, emulated, &p.key, f, g, settings, floors)),
                None => out.push(missing_facet(s, &p.key, f, Side::Candidate)),
            }
        }
        for g in &theirs {
            if !ours.iter().any(|f| f.metric.name == g.metric.name) {
                out.push(missing_facet(c, &p.key, g, Side::Baseline));
            }
        }
    }
    for q in first_points(c)
        .into_iter()
        .filter(|q| sg.points(&q.key).is_empty())
    {
        for g in facets(&cg.points(&q.key)) {
            out.push(missing_facet(c, &q.key, &g, Side::Baseline));
        }
    }
}

fn compare_facet(
    s: &Series,
    emulated: bool,
    key: &PointKey,
    a: &Facet,
    b: &Facet,
    settings: &Settings,
    floors: &Floors,
) -> Entry {
    let rule = rule_for(emulated, a.host_timed || b.host_timed);
    let better = a.metric.better;
    let decision = if a.metric.unit != b.metric.unit {
        Decision::invalid(
            rule,
            format!(
                "units differ: {} in the baseline, {} in the candidate",
                a.metric.unit, b.metric.unit
            ),
        )
    } else if better != b.metric.better {
        Decision::invalid(rule, "the runs disagree on which way is better")
    } else if a.validated == Some(false) || b.validated == Some(false) {
        let which = match (a.validated, b.validated) {
            (Some(false), Some(false)) => "both runs",
            (Some(false), _) => "the baseline",
            _ => "the candidate",
        };
        Decision::invalid(rule, format!("validation failed in {which}"))
    } else {
        match rule {
            Rule::Exact => rule::exact(a.headline, b.headline, better),
            Rule::Statistical | Rule::Runs => {
                let name = format!(
                    "{}\0{}\0{}\0{}\0{}",
                    s.suite, s.fabric, s.ranks, key, a.metric.name
                );
                let seed = rule::seed_of(&name);
                let (ours, theirs) = (a.values.as_slice(), b.values.as_slice());
                if ours.len() >= MIN_RUNS && theirs.len() >= MIN_RUNS {
                    rule::runs(ours, theirs, better, settings)
                } else {
                    // One run a side, or too few to decide over runs: the samples pooled, and
                    // a change must pass a floor from the replicates there are, or history.
                    let floor = replicate_floor(a, b).or_else(|| {
                        floors.of(&Floors::name(
                            &s.suite,
                            &s.fabric,
                            s.ranks,
                            &key.to_string(),
                            &a.metric.name,
                        ))
                    });
                    let (x, y) = (ours.concat(), theirs.concat());
                    rule::statistical(&x, &y, better, settings, seed, floor)
                }
            }
        }
    };
    let mut e = entry(s, Some(key), a, decision);
    e.emulated = emulated;
    e.statistic = statistic_for(rule, (a.values.len(), b.values.len()));
    // A rule that decided on some runs only (one placement) says which values it used.
    (e.baseline, e.candidate) = match e.decision.shown {
        Some((x, y)) => (Some(x), Some(y)),
        None => (
            Some(value_of(a, e.statistic)),
            Some(value_of(b, e.statistic)),
        ),
    };
    e.baseline_headline = Some(a.headline);
    e.candidate_headline = Some(b.headline);
    e
}

/// What a run holds, for the error that finds nothing in common:
/// "osu_latency on rapidio (2 ranks, 11 points), osu_bw on rapidio (2 ranks, 11 points)".
fn holdings(run: &Run) -> String {
    if run.series.is_empty() {
        return "no series".into();
    }
    run.series
        .iter()
        .map(|s| {
            format!(
                "{} on {} ({} ranks, {} point{})",
                s.suite,
                s.fabric,
                s.ranks,
                s.points.len(),
                if s.points.len() == 1 { "" } else { "s" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests;
