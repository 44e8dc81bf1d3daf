//! One run a side on a measured fabric, through the real binary: a slowdown its samples show
//! clearly is still inconclusive (exit 0), since one run cannot separate a change from
//! run-to-run variation, until it passes a bound the user sets or a noise floor learned from a
//! history store; the tables print the medians the verdicts are decided on, so no row reads
//! opposite to its verdict.

use super::verdicts::{compare, num, osu_run, path, shm_runs, verdicts};
use crate::common::*;

#[test]
fn one_run_a_side_is_inconclusive_unless_the_change_passes_a_bound() {
    let base = shm_runs("cmp-one-base", 1, &[]);
    // A quarter of a microsecond more a message: 1.8 to 4 times the latency (0.08 to 0.3 us
    // here, by the host's mode), clear in any run's samples and within the widest bound
    // compare takes (under 1000 %), which the test sets past the change below.
    let slow = shm_runs("cmp-one-slow", 1, &["--set", "inject_delay_ns=250"]);
    let (code, v) = verdicts(&base, &slow, &[]);
    assert_eq!(code, 0, "inconclusive fails nothing: {v:?}");
    assert_eq!(v[0]["verdict"], "inconclusive", "{v:?}");
    assert!(num(&v[0], "low") > 1.5 && v[0]["limit"].is_null(), "{v:?}");
    let reason = v[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("one run a side cannot separate a change from run-to-run variation"),
        "{reason}"
    );
    let t = compare(&[path(&base), path(&slow)]);
    assert_eq!(t.code, 0);
    assert!(t.stdout.contains(" 1 inconclusive, "), "{}", t.stdout);
    assert!(
        t.stdout.contains("Rows marked inconclusive"),
        "{}",
        t.stdout
    );
    // Beyond the user's bound: a regression, exit 1, the bound said beside the verdict.
    let (code, v) = verdicts(&base, &slow, &["--bound", "20%"]);
    assert_eq!(
        (code, v[0]["verdict"].as_str()),
        (1, Some("regressed")),
        "{v:?}"
    );
    assert_eq!(
        (num(&v[0], "limit"), &v[0]["limit_from"]),
        (0.2, &"bound".into())
    );
    let t = compare(&[path(&base), path(&slow), "--bound", "20%"]);
    assert!(t.stdout.contains("regressed (beyond ±20%)"), "{}", t.stdout);
    // A bound wider than the change: inconclusive again.
    let wider = format!("{:.0}%", (num(&v[0], "high") - 1.0) * 120.0);
    let (code, v) = verdicts(&base, &slow, &["--bound", &wider]);
    assert_eq!(
        (code, v[0]["verdict"].as_str()),
        (0, Some("inconclusive")),
        "{v:?}"
    );
    // A bound that is no percentage: one line, status 2.
    for bad in ["0%", "abc", "1000%"] {
        let t = compare(&[path(&base), path(&slow), "--bound", bad]);
        assert_eq!(t.code, 2, "{bad}: {}", t.stderr);
        assert_eq!(t.stderr.trim().lines().count(), 1, "{}", t.stderr);
        assert!(
            t.stderr.contains("--bound") && t.stderr.contains("such as 10%"),
            "{}",
            t.stderr
        );
        assert!(t.stdout.is_empty());
    }
}

#[test]
fn a_history_store_gives_each_point_its_noise_floor() {
    let runs = shm_runs("cmp-one-history-runs", 3, &[]);
    let store = scratch("cmp-one-history-store");
    let _ = std::fs::remove_dir_all(&store);
    let out = raw(&[
        "history",
        "add",
        path(&runs),
        "--store",
        path(&store),
        "--revision",
        "r1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = shm_runs("cmp-one-history-base", 1, &[]);
    let slow = shm_runs(
        "cmp-one-history-slow",
        1,
        &["--set", "inject_delay_ns=2000"],
    );
    let (code, v) = verdicts(&base, &slow, &["--history", path(&store)]);
    assert_eq!(
        (code, v[0]["verdict"].as_str()),
        (1, Some("regressed")),
        "{v:?}"
    );
    assert_eq!(v[0]["limit_from"], "history", "{v:?}");
    assert!(
        v[0]["reason"]
            .as_str()
            .unwrap()
            .contains("learned from 3 history entries"),
        "{v:?}"
    );
    // The same run on both sides stays unchanged whatever the floor.
    let (code, v) = verdicts(&base, &base, &["--history", path(&store)]);
    assert_eq!((code, v[0]["verdict"].as_str()), (0, Some("unchanged")));
    // Not a store: one line, status 2.
    let t = compare(&[path(&base), path(&slow), "--history", path(&runs)]);
    assert_eq!(t.code, 2, "{}", t.stderr);
    assert!(t.stderr.starts_with("error: --history "), "{}", t.stderr);
}

#[test]
fn the_values_shown_are_the_medians_the_verdict_is_decided_on() {
    let shm = osu_run("cmp-one-medians-a", "shm", &[]);
    let other = osu_run("cmp-one-medians-b", "shm", &[]);
    let (_, rows) = verdicts(&shm, &other, &[]);
    assert_eq!(rows.len(), 22, "{rows:?}");
    for r in &rows {
        assert_eq!(r["statistic"], "median", "{r}");
        // The change is of the numbers printed beside it: no row can read opposite.
        let (b, c) = (num(r, "baseline"), num(r, "candidate"));
        assert!((c / b - num(r, "ratio")).abs() < 1e-9, "{r}");
        assert!(r["baseline_headline"].as_f64().is_some(), "{r}");
    }
    let t = compare(&[path(&shm), path(&other)]);
    let header = t.stdout.lines().next().unwrap();
    assert!(
        header.contains("baseline median") && header.contains("candidate median"),
        "{header}"
    );
}
