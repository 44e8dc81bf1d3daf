//! `fabbench compare` through the real binary: a slowdown injected into an emulated fabric's
//! model is a regression of latency (up) and of bandwidth (down), exit 1, and the same runs
//! swapped are improvements, exit 0; two runs of one build on an emulated fabric are exactly
//! unchanged; a measured run against itself is unchanged by the statistics, and too few samples
//! are invalid; application kernels on an emulated fabric are not exact (their compute is timed
//! by the host); `--fail-on change` fails an improvement; exports are written whole; bad input is
//! one line and status 2; a directory of several runs is a side of replicates, decided over
//! its runs.

use std::path::{Path, PathBuf};

use crate::common::*;

/// Small OSU runs: 11 sizes, 2 warm-up iterations; milliseconds on an emulated fabric.
const OSU: [&str; 7] = ["run", "osu_latency", "osu_bw", "-m", "1:1024", "-x", "2"];

/// A run of OSU on `fabric` with `extra` options (20 iterations unless they say otherwise);
/// the directory `--out` made (which holds the run directory, as a CI job's does).
pub(super) fn osu_run(name: &str, fabric: &str, extra: &[&str]) -> PathBuf {
    let _s = serial();
    let mut args: Vec<&str> = OSU.to_vec();
    if !extra.contains(&"-i") {
        args.extend(["-i", "20"]);
    }
    args.extend(["--fabric", fabric]);
    args.extend(extra);
    let r = run(name, &args);
    r.ok().parent().unwrap().to_path_buf()
}

pub(super) struct Compared {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub(super) fn compare(args: &[&str]) -> Compared {
    let mut all = vec!["compare"];
    all.extend(args);
    let out = raw(&all);
    Compared {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub(super) fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The JSON verdicts of comparing `base` with `cand`, and the exit status.
pub(super) fn verdicts(base: &Path, cand: &Path, extra: &[&str]) -> (i32, Vec<serde_json::Value>) {
    let mut args = vec![path(base), path(cand), "--format", "json"];
    args.extend(extra);
    let c = compare(&args);
    assert!(c.code == 0 || c.code == 1, "{}", c.stderr);
    let doc: serde_json::Value = serde_json::from_str(&c.stdout).unwrap();
    (c.code, doc["verdicts"].as_array().unwrap().clone())
}

pub(super) fn num(v: &serde_json::Value, field: &str) -> f64 {
    v[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {v}"))
}

#[test]
fn an_injected_slowdown_on_an_emulated_fabric_regresses_latency_and_bandwidth() {
    let base = osu_run("cmp-base", "rapidio", &[]);
    let slow = osu_run(
        "cmp-slow",
        "rapidio",
        &["--set", "rapidio.send_overhead_ns=25000"],
    );
    let (code, rows) = verdicts(&base, &slow, &[]);
    assert_eq!(code, 1, "a regression exits 1");
    assert_eq!(rows.len(), 22, "11 sizes x 2 suites");
    for r in &rows {
        assert_eq!(r["verdict"], "regressed", "{r}");
        assert_eq!(r["rule"], "exact", "{r}");
        let (b, c) = (num(r, "baseline"), num(r, "candidate"));
        match r["suite"].as_str().unwrap() {
            // Latency went up, and up is worse.
            "osu_latency" => {
                assert_eq!(
                    (&r["metric"], &r["better"]),
                    (&"latency".into(), &"lower".into())
                );
                assert!(c > b && num(r, "ratio") > 1.0, "{r}");
            }
            // Bandwidth went down, and down is worse.
            "osu_bw" => {
                assert_eq!(
                    (&r["metric"], &r["better"]),
                    (&"bandwidth".into(), &"higher".into())
                );
                assert!(c < b && num(r, "ratio") < 1.0, "{r}");
            }
            other => panic!("unexpected suite {other}"),
        }
    }
    // The table says it too, the summary line last but for the note on exact rows.
    let t = compare(&[path(&base), path(&slow)]);
    assert_eq!(t.code, 1);
    assert!(
        t.stdout.contains(
            "22 compared: 22 regressed, 0 improved, 0 unchanged, 0 invalid (noise band ±2%, 95% \
             confidence)"
        ),
        "{}",
        t.stdout
    );
    assert!(
        t.stdout
            .lines()
            .any(|l| l.starts_with("osu_latency  rapidio  8 B")
                && l.ends_with("exact  -  regressed")),
        "{}",
        t.stdout
    );

    // Swapped: the same differences are improvements, and nothing fails.
    let (code, rows) = verdicts(&slow, &base, &[]);
    assert_eq!(code, 0, "improvements exit 0");
    assert!(rows.iter().all(|r| r["verdict"] == "improved"), "{rows:?}");
    // ... unless any change fails the job.
    let (code, _) = verdicts(&slow, &base, &["--fail-on", "change"]);
    assert_eq!(code, 1, "--fail-on change fails an improvement");
}

#[test]
fn two_runs_of_one_build_on_an_emulated_fabric_are_exactly_unchanged() {
    let a = osu_run("cmp-same-a", "rapidio", &[]);
    let b = osu_run("cmp-same-b", "rapidio", &[]);
    for extra in [&[][..], &["--fail-on", "change"]] {
        let (code, rows) = verdicts(&a, &b, extra);
        assert_eq!(code, 0, "{extra:?}");
        assert_eq!(rows.len(), 22);
        for r in &rows {
            assert_eq!(
                (&r["verdict"], &r["rule"]),
                (&"unchanged".into(), &"exact".into()),
                "{r}"
            );
            assert_eq!(num(r, "ratio"), 1.0, "{r}");
            assert!(r["p"].is_null() && r["low"].is_null(), "no statistics: {r}");
        }
    }
}

#[test]
fn a_measured_run_is_compared_by_statistics() {
    // The same run on both sides: identical samples, p = 1, unchanged, whatever the noise.
    let shm = osu_run("cmp-shm", "shm", &[]);
    let (code, rows) = verdicts(&shm, &shm, &[]);
    assert_eq!(code, 0);
    for r in &rows {
        assert_eq!(
            (&r["verdict"], &r["rule"]),
            (&"unchanged".into(), &"statistical".into()),
            "{r}"
        );
        assert_eq!((num(r, "ratio"), num(r, "p")), (1.0, 1.0), "{r}");
        assert!(num(r, "low") <= 1.0 && num(r, "high") >= 1.0, "{r}");
    }
    // Three samples a point: too few for statistics (five are needed by default), where an
    // emulated fabric's three would be compared exactly.
    let few = osu_run("cmp-few", "shm", &["-i", "3"]);
    let (code, rows) = verdicts(&few, &few, &[]);
    assert_eq!(code, 0, "invalid is not a regression");
    for r in &rows {
        assert_eq!(r["verdict"], "invalid", "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("too few samples: 3 in the baseline, 3 in the candidate; at least 5"),
            "{r}"
        );
    }
    let (_, rows) = verdicts(&few, &few, &["--min-samples", "3"]);
    assert!(rows.iter().all(|r| r["verdict"] == "unchanged"), "{rows:?}");
}

#[test]
fn kernels_on_an_emulated_fabric_are_not_compared_exactly() {
    // NPB's compute is timed by the host's clock (then scaled into virtual time), so it varies
    // from run to run like any measured time: statistics, here with one sample too few.
    let _s = serial();
    let r = run(
        "cmp-npb",
        &[
            "run", "npb", "--kernel", "ep", "--class", "S", "--fabric", "rapidio", "-n", "2",
        ],
    );
    let dir = r.ok().to_path_buf();
    let (code, rows) = verdicts(&dir, &dir, &[]);
    assert_eq!(code, 0);
    let metrics: Vec<&str> = rows.iter().map(|r| r["metric"].as_str().unwrap()).collect();
    assert_eq!(metrics, ["time", "mops", "compute", "comm"]);
    for r in &rows {
        assert_eq!(r["rule"], "statistical", "{r}");
        assert_eq!(r["params"], "class=S;kernel=ep", "{r}");
        assert_eq!(r["verdict"], "invalid", "{r}");
    }
}

#[test]
fn exports_are_written_whole() {
    let a = osu_run("cmp-export-a", "rapidio", &[]);
    let b = osu_run(
        "cmp-export-b",
        "rapidio",
        &["--set", "rapidio.send_overhead_ns=25000"],
    );
    let out = scratch("cmp-exports");
    let (md, json) = (out.join("summary.md"), out.join("compare.json"));
    let c = compare(&[
        path(&a),
        path(&b),
        "--export-markdown",
        path(&md),
        "--export-json",
        path(&json),
    ]);
    assert_eq!(c.code, 1, "{}", c.stderr);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(
        text.starts_with("## fabbench compare: 22 regressed\n\n**22 compared: 22 regressed"),
        "{text}"
    );
    assert!(text.contains("### Regressions and improvements"), "{text}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["summary"]["regressed"], 22);
    assert_eq!(
        (doc["noise"].as_f64(), doc["confidence"].as_f64()),
        (Some(0.02), Some(0.95))
    );
    assert!(doc["baseline"]["run_id"]
        .as_str()
        .unwrap()
        .ends_with("-osu_latency+osu_bw-rapidio"));
    // One export that cannot be written: status 3, nothing printed, and the other untouched.
    std::fs::remove_file(&md).unwrap();
    let c = compare(&[
        path(&a),
        path(&b),
        "--export-markdown",
        path(&md),
        "--export-json",
        // Under a file, where no directory can be made.
        "/dev/null/missing/compare.json",
    ]);
    assert_eq!(c.code, 3, "{}", c.stderr);
    assert!(c.stdout.is_empty(), "{}", c.stdout);
    assert!(c.stderr.contains("missing/compare.json"), "{}", c.stderr);
    assert!(!md.exists(), "no export is written unless all are");
    let mut left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["compare.json"], "no temporary file is left");
}

/// One line on stderr starting "error: " and saying `says`, status 2, nothing on stdout.
fn refused(args: &[&str], says: &str) {
    let c = compare(args);
    assert_eq!(c.code, 2, "{args:?}: {}", c.stderr);
    assert!(c.stdout.is_empty(), "{args:?}: {}", c.stdout);
    assert_eq!(c.stderr.lines().count(), 1, "{args:?}: {}", c.stderr);
    assert!(c.stderr.starts_with("error: "), "{args:?}: {}", c.stderr);
    assert!(c.stderr.contains(says), "{args:?}: {}", c.stderr);
}

#[test]
fn bad_input_is_one_line_and_status_2() {
    let a = osu_run("cmp-bad-a", "rapidio", &[]);
    let other = osu_run("cmp-bad-other", "hyperlink", &[]);
    let missing = a.join("no-such-run");
    let a = path(&a);
    refused(&[a, path(&missing)], "no-such-run: no such directory");
    refused(
        &[a, a, "--noise", "150%"],
        "--noise: '150%' is not a percentage",
    );
    refused(
        &[a, a, "--noise", "2"],
        "or a fraction below 1 (such as 0.02)",
    );
    refused(
        &[a, a, "--confidence", "1.5"],
        "--confidence: 1.5 is not a level",
    );
    refused(
        &[a],
        "compare needs two run directories, BASELINE and CANDIDATE",
    );
    refused(&[a, path(&other)], "nothing to compare: the baseline");
}

/// `k` runs of osu_latency at 8 B on shm into one directory, as a CI job's `--runs k` makes them.
pub(super) fn shm_runs(name: &str, k: usize, extra: &[&str]) -> PathBuf {
    let _s = serial();
    let dir = scratch(name);
    for _ in 0..k {
        let mut args = vec!["run", "osu_latency", "-m", "8:8", "-i", "200", "-x", "10"];
        args.extend(["--fabric", "shm", "--out", path(&dir)]);
        args.extend(extra);
        let out = raw(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    dir
}

#[test]
fn several_runs_a_side_are_replicates_compared_over_runs() {
    let base = shm_runs("cmp-reps-base", 4, &[]);
    // Two microseconds more a message: far outside any noise.
    let slow = shm_runs("cmp-reps-slow", 4, &["--set", "inject_delay_ns=2000"]);
    let (code, v) = verdicts(&base, &slow, &[]);
    assert_eq!(code, 1);
    assert_eq!(v.len(), 1, "four runs of one series are one entry: {v:?}");
    assert_eq!(v[0]["rule"], "runs");
    assert_eq!(v[0]["verdict"], "regressed");
    assert!(num(&v[0], "low") > 1.5, "{v:?}");
    // A side against itself: every run median equal, nothing to see.
    let (code, v) = verdicts(&base, &base, &[]);
    assert_eq!((code, v[0]["verdict"].as_str()), (0, Some("unchanged")));
    // Fewer than 4 runs a side cannot reach significance over runs: the samples are pooled,
    // and the change must pass the noise floor the side of 4 runs shows (far beyond it here).
    let few = shm_runs("cmp-reps-few", 2, &[]);
    let (code, v) = verdicts(&few, &slow, &[]);
    assert_eq!(code, 1, "{v:?}");
    assert_eq!(
        (&v[0]["rule"], &v[0]["verdict"]),
        (&"statistical".into(), &"regressed".into())
    );
    assert_eq!(v[0]["limit_from"], "replicates", "{v:?}");
    assert!(
        v[0]["reason"]
            .as_str()
            .unwrap()
            .contains("learned from 4 replicate runs"),
        "{v:?}"
    );
}
