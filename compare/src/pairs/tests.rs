//! The pairing's tests: runs made up of a few points, exact and measured, matched and not.

use bench_core::machine::HostInfo;
use bench_core::measure::{Layout, NpbLayout, Split};
use results::model::FabricKind;
use results::testing::{self, RunBuilder};

use super::*;
use crate::rule::Verdict;
use crate::Statistic;

fn osu(samples: &[u64], size: u64) -> Point {
    testing::point(
        PointKey::size(size),
        vec![Metric::latency_us(2.0)],
        samples.to_vec(),
    )
}

fn series(suite: &str, fabric: &str, emulated: bool, points: Vec<Point>) -> Series {
    let layout = Layout::Npb(NpbLayout {
        class: "S".into(),
        kernels: vec![],
    });
    testing::series(suite, fabric, emulated, 2, layout, points)
}

fn run(id: &str, series: Vec<Series>) -> Run {
    let suites: Vec<&str> = series.iter().map(|s| s.suite.as_str()).collect();
    let mut run = RunBuilder::new(id)
        .version("0.1.0")
        .revision("rev")
        .host(HostInfo {
            os: "os".into(),
            ..testing::host()
        })
        .suites(&suites);
    for s in &series {
        let kind = if s.emulated {
            FabricKind::Emulated
        } else {
            FabricKind::Native
        };
        run = run.fabric(testing::fabric(&s.fabric, kind, s.ranks));
    }
    series.into_iter().fold(run, RunBuilder::series).build()
}

/// n samples around `centre` ns, ±1 % in a fixed pattern.
fn around(centre: u64, n: usize) -> Vec<u64> {
    (0..n as u64)
        .map(|i| centre - centre / 100 + (i * 7919) % (centre / 50 + 1))
        .collect()
}

fn compared(a: &Run, b: &Run) -> Comparison {
    compare(
        std::slice::from_ref(a),
        std::slice::from_ref(b),
        &Settings::default(),
    )
    .unwrap()
}

#[test]
fn emulated_series_are_compared_exactly() {
    let a = run(
        "a",
        vec![series(
            "osu_latency",
            "rapidio",
            true,
            vec![osu(&[100, 102], 1)],
        )],
    );
    let c = compared(&a, &a);
    assert_eq!(c.entries.len(), 1);
    let e = &c.entries[0];
    assert_eq!(
        (e.verdict(), e.decision.rule),
        (Verdict::Unchanged, Rule::Exact)
    );
    assert!(e.emulated);
    // Two samples is enough for exact: no statistics are done.
    let b = run(
        "b",
        vec![series(
            "osu_latency",
            "rapidio",
            true,
            vec![osu(&[100, 104], 1)],
        )],
    );
    let e = &compared(&a, &b).entries[0];
    assert_eq!(
        (e.verdict(), e.decision.rule),
        (Verdict::Regressed, Rule::Exact)
    );
    assert_eq!((e.baseline, e.candidate), (Some(0.0505), Some(0.051)));
    assert_eq!(compared(&b, &a).entries[0].verdict(), Verdict::Improved);
}

#[test]
fn measured_series_are_compared_statistically_and_reproducibly() {
    let slow: Vec<u64> = around(1000, 50).iter().map(|x| x * 11 / 10).collect();
    let a = run(
        "a",
        vec![series(
            "osu_latency",
            "shm",
            false,
            vec![osu(&around(1000, 50), 1)],
        )],
    );
    let b = run(
        "b",
        vec![series("osu_latency", "shm", false, vec![osu(&slow, 1)])],
    );
    let c = compared(&a, &b);
    let e = &c.entries[0];
    // 10 % slower by the samples, but one run a side cannot tell that from run-to-run
    // variation: inconclusive, unless the change passes a bound.
    assert_eq!(
        (e.verdict(), e.decision.rule),
        (Verdict::Inconclusive, Rule::Statistical)
    );
    assert!(!e.emulated);
    assert_eq!(c, compared(&a, &b), "the same runs give the same intervals");
    let bound = Settings {
        bound: Some(0.05),
        ..Settings::default()
    };
    let c = compare(std::slice::from_ref(&a), std::slice::from_ref(&b), &bound).unwrap();
    let e = &c.entries[0];
    assert_eq!(e.verdict(), Verdict::Regressed, "{e:?}");
    // The values shown are the medians the ratio is of, not the headlines (means).
    assert_eq!(e.statistic, Statistic::Median);
    let median = |v: &Run| {
        let p = &v.series[0].points[0];
        bench_core::stats::two_sample::median(&p.values_of(&p.metrics[0]))
    };
    assert_eq!(
        (e.baseline, e.candidate),
        (Some(median(&a)), Some(median(&b)))
    );
    assert_eq!(e.decision.ratio, Some(median(&b) / median(&a)));
    assert_ne!(
        e.baseline, e.baseline_headline,
        "the pattern's mean is not its median"
    );
    // An emulated baseline against a measured candidate cannot be exact.
    let mut emulated = a.clone();
    emulated.series[0].emulated = true;
    let e = &compared(&emulated, &b).entries[0];
    assert_eq!(e.decision.rule, Rule::Statistical);
}

#[test]
fn host_timed_compute_is_not_exact_and_its_split_is_compared() {
    let kernel = |compute: u64| Point {
        warmup: None,
        key: PointKey::params([("class", "S".to_string()), ("kernel", "cg".to_string())]),
        metrics: vec![Metric {
            name: "time".into(),
            unit: "s".into(),
            better: bench_core::measure::Better::Lower,
            derive: bench_core::measure::Derivation::Time {
                divisor: 1.0,
                unit_ns: 1e9,
            },
        }],
        samples_ns: vec![1000 + compute],
        validated: Some(true),
        batches: Vec::new(),
        split: Some(Split {
            compute_ns: vec![compute],
            comm_ns: vec![1000],
        }),
    };
    let a = run("a", vec![series("npb", "rapidio", true, vec![kernel(500)])]);
    let c = compared(&a, &a);
    let names: Vec<&str> = c.entries.iter().map(|e| e.metric.as_str()).collect();
    assert_eq!(names, ["time", "compute", "comm"]);
    for e in &c.entries {
        assert_eq!(e.decision.rule, Rule::Statistical, "{e:?}");
        assert_eq!(e.verdict(), Verdict::Invalid, "{e:?}");
        assert!(e.decision.reason.contains("too few samples: 1"), "{e:?}");
    }
    // No host compute at all: exact again.
    let a = run("a", vec![series("npb", "rapidio", true, vec![kernel(0)])]);
    assert!(compared(&a, &a)
        .entries
        .iter()
        .all(|e| e.decision.rule == Rule::Exact));
}

#[test]
fn what_one_side_lacks_is_invalid_and_says_so() {
    let lat = |sizes: &[u64]| {
        series(
            "osu_latency",
            "rapidio",
            true,
            sizes.iter().map(|&s| osu(&[100], s)).collect(),
        )
    };
    let bw = series("osu_bw", "rapidio", true, vec![osu(&[100], 1)]);
    let bibw = series("osu_bibw", "rapidio", true, vec![osu(&[100], 1)]);
    let a = run("a", vec![lat(&[1, 2]), bw]);
    let b = run("b", vec![lat(&[1, 4]), bibw]);
    let c = compared(&a, &b);
    let rows: Vec<(String, String, Verdict)> = c
        .entries
        .iter()
        .map(|e| {
            (
                format!("{} {:?}", e.suite, e.key.as_ref().and_then(|k| k.size)),
                e.decision.reason.clone(),
                e.verdict(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (
                "osu_latency Some(1)".into(),
                "exact: identical".into(),
                Verdict::Unchanged
            ),
            (
                "osu_latency Some(2)".into(),
                "not in candidate".into(),
                Verdict::Invalid
            ),
            (
                "osu_latency Some(4)".into(),
                "not in baseline".into(),
                Verdict::Invalid
            ),
            (
                "osu_bw None".into(),
                "osu_bw on rapidio (2 ranks) not in candidate".into(),
                Verdict::Invalid
            ),
            (
                "osu_bibw None".into(),
                "osu_bibw on rapidio (2 ranks) not in baseline".into(),
                Verdict::Invalid
            ),
        ]
    );
    assert_eq!(c.entries[1].baseline, Some(0.05));
    assert_eq!(c.entries[1].candidate, None);
    // A size measured twice is compared once, as its first measurement.
    let mut twice = lat(&[1, 1]);
    twice.points[1].samples_ns = vec![999];
    let a = run("a", vec![twice]);
    let c = compared(&a, &a);
    assert_eq!(c.entries.len(), 1);
    assert_eq!(c.entries[0].baseline, Some(0.05));
}

#[test]
fn units_and_validation_make_a_pair_invalid() {
    let a = run(
        "a",
        vec![series(
            "osu_latency",
            "shm",
            false,
            vec![osu(&around(1000, 9), 1)],
        )],
    );
    let mut b = a.clone();
    b.series[0].points[0].metrics[0].unit = "ms".into();
    let e = &compared(&a, &b).entries[0];
    assert_eq!(e.verdict(), Verdict::Invalid);
    assert_eq!(
        e.decision.reason,
        "units differ: us in the baseline, ms in the candidate"
    );
    let mut b = a.clone();
    b.series[0].points[0].validated = Some(false);
    let e = &compared(&a, &b).entries[0];
    assert_eq!(e.decision.reason, "validation failed in the candidate");
}

#[test]
fn nothing_in_common_is_an_error_saying_what_each_holds() {
    let a = run(
        "a",
        vec![series("osu_latency", "rapidio", true, vec![osu(&[1], 1)])],
    );
    let b = run(
        "b",
        vec![series(
            "osu_latency",
            "shm",
            false,
            vec![osu(&[1], 1), osu(&[1], 2)],
        )],
    );
    let e = compare(
        std::slice::from_ref(&a),
        std::slice::from_ref(&b),
        &Settings::default(),
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        e,
        "nothing to compare: the baseline a holds osu_latency on rapidio (2 ranks, 1 point); \
         the candidate b holds osu_latency on shm (2 ranks, 2 points); compare runs of the \
         same suites on the same fabrics and rank counts"
    );
    // One series on both sides, but no point in common: nothing to compare either.
    let b = run(
        "b",
        vec![series("osu_latency", "rapidio", true, vec![osu(&[1], 2)])],
    );
    let e = compare(
        std::slice::from_ref(&a),
        std::slice::from_ref(&b),
        &Settings::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("nothing to compare"), "{e}");
    let bad = Settings {
        confidence: 2.0,
        ..Settings::default()
    };
    assert!(compare(std::slice::from_ref(&a), std::slice::from_ref(&a), &bad).is_err());
}

#[test]
fn several_runs_a_side_are_replicates_decided_over_runs() {
    let shm = |id: &str, centre: u64| {
        run(
            id,
            vec![series(
                "osu_latency",
                "shm",
                false,
                vec![osu(&around(centre, 50), 8)],
            )],
        )
    };
    let base: Vec<Run> = (0..5).map(|i| shm("a", 1000 + i)).collect();
    let slower: Vec<Run> = (0..5).map(|i| shm("b", 1200 + i)).collect();
    let c = compare(&base, &slower, &Settings::default()).unwrap();
    assert_eq!((c.baseline_runs, c.candidate_runs), (5, 5));
    assert_eq!(c.entries.len(), 1, "the runs' series are one series");
    let d = &c.entries[0].decision;
    assert_eq!(
        (d.rule, d.verdict),
        (Rule::Runs, Verdict::Regressed),
        "{d:?}"
    );
    // One run a side is decided on the samples, as before.
    let one = compare(&base[..1], &slower[..1], &Settings::default()).unwrap();
    assert_eq!(one.entries[0].decision.rule, Rule::Statistical);
}

#[test]
fn emulated_replicates_stay_exact_unless_they_disagree() {
    let rio = |centre: u64| {
        run(
            "r",
            vec![series(
                "osu_latency",
                "rapidio",
                true,
                vec![osu(&[centre; 20], 8)],
            )],
        )
    };
    let same = [rio(1000), rio(1000)];
    let c = compare(&same, &same, &Settings::default()).unwrap();
    let d = &c.entries[0].decision;
    assert_eq!(
        (d.rule, d.verdict),
        (Rule::Exact, Verdict::Unchanged),
        "{d:?}"
    );
    // Replicates that differ were not reproducible: compared statistically, not exactly (two
    // runs a side are too few to decide over runs, so their samples are pooled).
    let differ = [rio(1000), rio(1001)];
    let c = compare(&differ, &same, &Settings::default()).unwrap();
    assert_eq!(c.entries[0].decision.rule, Rule::Statistical);
    let c = compare(
        &[rio(1000), rio(1001), rio(1000), rio(1000)],
        &[rio(1000), rio(1000), rio(1000), rio(1000)],
        &Settings::default(),
    )
    .unwrap();
    assert_eq!(c.entries[0].decision.rule, Rule::Runs);
    assert_eq!(c.entries[0].statistic, Statistic::MedianOfRuns);
}

fn shm_at(centre: u64) -> Run {
    run(
        "s",
        vec![series(
            "osu_latency",
            "shm",
            false,
            vec![osu(&around(centre, 50), 8)],
        )],
    )
}

#[test]
fn one_run_against_replicates_is_judged_against_their_spread() {
    // Three baseline runs spread by 4 %: a candidate 10 % slower passes that floor, one 3 %
    // slower (a clear change by the pooled samples) does not.
    let base = [shm_at(1000), shm_at(1040), shm_at(1020)];
    let decide = |centre| {
        let c = compare(&base, &[shm_at(centre)], &Settings::default()).unwrap();
        c.entries[0].decision.clone()
    };
    let d = decide(1130);
    assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
    let limit = d.limit.unwrap();
    assert_eq!((limit.source, limit.runs), (LimitSource::Replicates, 3));
    assert!((limit.fraction - 0.04).abs() < 0.002, "{limit:?}");
    let d = decide(1050);
    assert_eq!(d.verdict, Verdict::Inconclusive, "{d:?}");
    assert!(
        d.reason.contains("within the noise floor ±"),
        "{}",
        d.reason
    );
}

#[test]
fn one_run_a_side_is_judged_against_a_floor_from_history() {
    let (a, b) = (shm_at(1000), shm_at(1100));
    let name = Floors::name("osu_latency", "shm", 2, "size 8", "latency");
    assert_eq!(
        name,
        Floors::name(
            "osu_latency",
            "shm",
            2,
            &PointKey::size(8).to_string(),
            "latency"
        )
    );
    let with = |spread: &[f64]| {
        let mut floors = Floors::default();
        for v in spread {
            floors.learn(name.clone(), *v);
        }
        let c = compare_with(
            std::slice::from_ref(&a),
            std::slice::from_ref(&b),
            &Settings::default(),
            &floors,
        )
        .unwrap();
        c.entries[0].decision.clone()
    };
    // History spread 3 %: 10 % is beyond it.
    let d = with(&[1.0, 1.03, 1.01]);
    assert_eq!(d.verdict, Verdict::Regressed, "{d:?}");
    assert_eq!(d.limit.unwrap().source, LimitSource::History);
    // Spread 20 %: within it.
    assert_eq!(with(&[1.0, 1.2, 1.1]).verdict, Verdict::Inconclusive);
    // Too few entries to learn from: no floor.
    let d = with(&[1.0, 1.01]);
    assert_eq!((d.verdict, d.limit), (Verdict::Inconclusive, None));
}
