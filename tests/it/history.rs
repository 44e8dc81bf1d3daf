//! `fabbench history` through the real binary: runs on the emulated RapidIO fabric (exact,
//! the same numbers every run) are added to a store with their revisions, two at the default
//! send overhead and three at a larger one; `history show` finds the step at the revision the
//! overhead changed and calls it a regression, in every output format, draws a chart per
//! metric with --plot, and --fail-on-regression maps it to exit 1. Bad input (a run added
//! twice, a directory that is not a store, a filter that matches nothing, a bad date or option)
//! is refused in one line with status 2 and leaves the store as it was. Ten adds started at
//! once into a store that does not exist yet all succeed.

use std::path::{Path, PathBuf};

use crate::common::*;

/// An osu_latency run on rapidio with `sets` (`--set` values), into `out`; its directory.
fn rapidio_run(out: &Path, sets: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "osu_latency",
        "-m",
        "1:1024",
        "-i",
        "20",
        "-x",
        "2",
        "--fabric",
        "rapidio",
    ];
    for s in sets {
        args.extend(["--set", s]);
    }
    let before: Vec<PathBuf> = dirs_in(out);
    let o = std::process::Command::new(bin())
        .args(&args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dirs_in(out)
        .into_iter()
        .find(|d| !before.contains(d))
        .expect("a new run directory")
}

fn dirs_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

fn history(args: &[&str]) -> std::process::Output {
    let mut all = vec!["history"];
    all.extend(args);
    raw(&all)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A refusal: status 2 and one line that starts with "error:".
fn refused(o: &std::process::Output) -> String {
    let err = text(&o.stderr);
    assert_eq!(
        o.status.code(),
        Some(2),
        "stderr: {err}\nstdout: {}",
        text(&o.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    err
}

#[test]
fn history_finds_the_step_where_the_send_overhead_grew() {
    let scratch = scratch("history-step");
    let out = scratch.join("runs");
    let store = scratch.join("store");
    let store_arg = store.to_str().unwrap();
    {
        let _s = serial();
        for i in 1..=5 {
            let sets: &[&str] = if i >= 3 {
                &["rapidio.send_overhead_ns=25000"]
            } else {
                &[]
            };
            let run = rapidio_run(&out, sets);
            let (rev, date) = (format!("rev{i}"), format!("2026-01-0{i}T12:00:00Z"));
            let o = history(&[
                "add",
                run.to_str().unwrap(),
                "--store",
                store_arg,
                "--revision",
                &rev,
                "--date",
                &date,
            ]);
            assert!(o.status.success(), "{}", text(&o.stderr));
            assert!(text(&o.stdout).starts_with("added "), "{}", text(&o.stdout));
        }
    }
    assert_eq!(std::fs::read_dir(store.join("entries")).unwrap().count(), 5);

    let o = history(&["show", "--store", store_arg, "--format", "json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let series = json["series"].as_array().unwrap();
    assert_eq!(series.len(), 11, "one latency series per size, 1 to 1024");
    for s in series {
        assert_eq!(s["exact"], true, "{s}");
        assert_eq!(s["values"].as_array().unwrap().len(), 5);
        let cps = s["change_points"].as_array().unwrap();
        assert_eq!(cps.len(), 1, "{s}");
        let cp = &cps[0];
        assert_eq!(cp["revision"], "rev3", "{cp}");
        assert_eq!(cp["date"], "2026-01-03T12:00:00Z");
        assert_eq!(cp["index"], 2);
        assert_eq!(cp["regression"], true);
        assert_eq!(cp["p_value"], serde_json::Value::Null, "exact: no test");
        // 5 us more per message each way: the one-way latency grows by about 5 us.
        let grew = cp["after"].as_f64().unwrap() - cp["before"].as_f64().unwrap();
        assert!((grew - 5.0).abs() < 0.5, "{cp}");
    }
    assert_eq!(json["regressed"], true);

    let o = history(&["show", "--store", store_arg, "--metric", "latency"]);
    let table = text(&o.stdout);
    assert!(o.status.success());
    assert!(
        table.starts_with("5 entries, 2026-01-01 (rev1) to 2026-01-05 (rev5)"),
        "{table}"
    );
    assert!(table.contains("at rev3 2026-01-03: "), "{table}");
    assert!(table.contains("regression, exact)"), "{table}");

    let o = history(&["show", "--store", store_arg, "--format", "markdown"]);
    assert!(
        text(&o.stdout).contains("| suite | fabric |"),
        "{}",
        text(&o.stdout)
    );
    let o = history(&["show", "--store", store_arg, "--format", "csv"]);
    assert_eq!(text(&o.stdout).lines().count(), 12);

    // Apache Otava's shape: one row per entry, time and attributes, then a column per series.
    let o = history(&["show", "--store", store_arg, "--format", "otava"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let csv = text(&o.stdout);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(header[..4], ["time", "commit", "run_id", "host"], "{csv}");
    let sizes: Vec<u64> = (0..=10).map(|k| 1 << k).collect();
    let columns: Vec<String> = sizes
        .iter()
        .map(|s| format!("osu_latency/rapidio/2 ranks/size {s}/latency"))
        .collect();
    assert_eq!(header[4..], columns, "a column per series, by size");
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 5, "a row per entry: {csv}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(&row[0], format!("2026-01-0{}T12:00:00Z", i + 1));
        assert_eq!(&row[1], format!("rev{}", i + 1));
        // Each cell is the value json gives that series at that entry.
        for (c, s) in series.iter().enumerate() {
            let want = s["values"][i]["value"].as_f64().unwrap();
            assert_eq!(row[4 + c].parse::<f64>().unwrap(), want, "{csv}");
        }
    }

    let plots = scratch.join("plots");
    let o = history(&[
        "show",
        "--store",
        store_arg,
        "--plot",
        plots.to_str().unwrap(),
        "--plot-format",
        "svg",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let svg = std::fs::read_to_string(plots.join("history-latency-osu_latency-rapidio.svg"))
        .expect("a latency chart");
    // 11 sizes are two panels of neighbouring sizes (6 and 5), each marking its lines' change.
    assert!(
        svg.contains("rev3") && svg.contains("(6 lines)") && svg.contains("(5 lines)"),
        "the change is marked in both panels"
    );
    assert!(svg.contains("sizes 1 to 32") && svg.contains("sizes 64 to 1K"));
    assert_eq!(files(&plots).len(), 1);

    // The latest entries sit on the regressed level: CI on the main branch fails ...
    let o = history(&["show", "--store", store_arg, "--fail-on-regression"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // ... until the regression is older than the entries looked at.
    let o = history(&[
        "show",
        "--store",
        store_arg,
        "--fail-on-regression",
        "--last",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}

#[test]
fn history_refuses_bad_input_in_one_line_and_keeps_the_store() {
    let scratch = scratch("history-refusals");
    let run = {
        let _s = serial();
        rapidio_run(&scratch.join("runs"), &[])
    };
    let run_arg = run.to_str().unwrap();
    let store = scratch.join("store");
    let store_arg = store.to_str().unwrap();

    // Nothing is created by a refused add.
    let e = refused(&history(&[
        "add", run_arg, "--store", store_arg, "--date", "soon",
    ]));
    assert!(e.contains("RFC 3339"), "{e}");
    assert!(!store.exists());
    let o = history(&["add", run_arg, "--store", store_arg]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let entry = std::fs::read_dir(store.join("entries"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&entry).unwrap();

    let e = refused(&history(&["add", run_arg, "--store", store_arg]));
    assert!(e.contains("in the store already"), "{e}");
    assert_eq!(std::fs::read(&entry).unwrap(), bytes);
    assert_eq!(std::fs::read_dir(store.join("entries")).unwrap().count(), 1);

    // A directory with other things in it is not taken for a store.
    let e = refused(&history(&["add", run_arg, "--store", run_arg]));
    assert!(e.contains("not a fabbench history store"), "{e}");
    let e = refused(&history(&["show", "--store", run_arg]));
    assert!(e.contains("not a fabbench history store"), "{e}");
    let e = refused(&history(&[
        "show",
        "--store",
        scratch.join("none").to_str().unwrap(),
    ]));
    assert!(e.contains("no history store"), "{e}");

    let e = refused(&history(&[
        "show", "--store", store_arg, "--metric", "speed",
    ]));
    assert!(e.contains("--metric speed") && e.contains("latency"), "{e}");
    let e = refused(&history(&["show", "--store", store_arg, "--window", "3"]));
    assert!(e.contains("at least 4"), "{e}");
    let e = refused(&history(&[
        "show",
        "--store",
        store_arg,
        "--max-pvalue",
        "1.5",
    ]));
    assert!(e.contains("between 0 and 1"), "{e}");
    let e = refused(&history(&[
        "show",
        "--store",
        store_arg,
        "--min-magnitude",
        "lots",
    ]));
    assert!(e.contains("5%"), "{e}");

    // One entry: nothing to compare yet, and no regression.
    let o = history(&["show", "--store", store_arg, "--fail-on-regression"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("none"));
}

#[test]
fn ten_adds_started_at_once_into_a_new_store_all_succeed() {
    let _s = serial();
    let out = scratch("history-concurrent-runs");
    let runs: Vec<PathBuf> = (0..10).map(|_| rapidio_run(&out, &[])).collect();
    let store = scratch("history-concurrent").join("store");
    // All started before any finishes: each may find the store absent, being made, or made.
    let children: Vec<std::process::Child> = runs
        .iter()
        .map(|run| {
            std::process::Command::new(bin())
                .args(["history", "add"])
                .arg(run)
                .arg("--store")
                .arg(&store)
                .args(["--revision", "r1"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let entries = std::fs::read_dir(store.join("entries")).unwrap().count();
    assert_eq!(entries, 10);
}
