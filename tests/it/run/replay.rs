//! Compute recorded and replayed (`run --compute-from`): a kernel run on an emulated fabric
//! writes every rank's compute stretches to compute.csv; a run of the same command given that
//! directory (or its scaling directory) charges them instead of timing, so its kernel times
//! and its own compute.csv equal the recording's, `compute_scale` still multiplies them, and
//! the report says the compute was replayed. A recording of other work, another rank count,
//! another fabric, or a fabric that times compute on the host is refused in one line with
//! status 2, before anything runs or is written.

use std::path::{Path, PathBuf};

use crate::common::*;

const CG_S: [&str; 9] = [
    "run", "npb", "--kernel", "cg", "--class", "S", "--fabric", "rapidio", "-n",
];

/// The value column of summary.csv's rows of `metric`, by params.
fn values(r: &Run, metric: &str) -> Vec<(String, String)> {
    r.summary()
        .iter()
        .filter(|x| &x[6] == metric)
        .map(|x| (x[5].to_string(), x[8].to_string()))
        .collect()
}

fn compute_csv(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("compute.csv")).expect("compute.csv in the run")
}

fn with(args: &[&str], more: &[&str]) -> Vec<String> {
    args.iter().chain(more).map(|s| s.to_string()).collect()
}

fn run_owned(name: &str, args: &[String]) -> Run {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(name, &args)
}

#[test]
fn a_replayed_run_charges_the_recorded_compute_and_says_so() {
    let _s = serial();
    let recorded = run_owned("replay-rec", &with(&CG_S, &["2"]));
    let rec_dir = recorded.ok().to_path_buf();
    let rows = compute_csv(&rec_dir);
    let mut lines = rows.lines();
    assert_eq!(lines.next(), Some("fabric,rank,stretch,host_ns"));
    let ranks: std::collections::BTreeSet<&str> =
        lines.map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(ranks.into_iter().collect::<Vec<_>>(), ["0", "1"]);
    assert!(!recorded.stdout().contains("replayed"));

    let from = rec_dir.to_str().unwrap();
    let replayed = run_owned("replay-rep", &with(&CG_S, &["2", "--compute-from", from]));
    let rep_dir = replayed.ok().to_path_buf();
    // Thousands of stretches timed again would never sum to the same nanosecond.
    assert_eq!(values(&replayed, "compute"), values(&recorded, "compute"));
    assert_eq!(values(&replayed, "time"), values(&recorded, "time"));
    assert_eq!(
        compute_csv(&rep_dir),
        rows,
        "the replay records what it charged"
    );
    let said = format!("host times replayed from {from} (not timed in this run)");
    assert!(replayed.stdout().contains(&said), "{}", replayed.stdout());
    let report = std::fs::read_to_string(rep_dir.join("npb.txt")).unwrap();
    assert!(report.contains(&said), "{report}");
    assert_eq!(
        replayed.manifest()["fabrics"][0]["facts"]["compute_replayed_from"],
        from
    );

    // compute_scale keeps its meaning over replayed host times: a tenth of the default 10x.
    let fast = run_owned(
        "replay-fast",
        &with(
            &CG_S,
            &[
                "2",
                "--compute-from",
                from,
                "--set",
                "rapidio.compute_scale=1",
            ],
        ),
    );
    let number = |v: &[(String, String)]| -> f64 { v[0].1.parse().unwrap() };
    let (slow, quick) = (
        number(&values(&recorded, "compute")),
        number(&values(&fast, "compute")),
    );
    assert!(
        (quick * 10.0 / slow - 1.0).abs() < 1e-3,
        "compute {slow} s at 10x, {quick} s at 1x"
    );
}

#[test]
fn a_scaling_directory_replays_each_rank_count_from_its_own_run() {
    let _s = serial();
    let out = scratch("replay-scaling");
    let scaled = |more: &[&str]| raw(&[&CG_S[..], &["1,2"], more].concat());
    let record = scaled(&["--out", out.to_str().unwrap()]);
    assert!(
        record.status.success(),
        "{}",
        String::from_utf8_lossy(&record.stderr)
    );
    let scaling = only_entry(&out);
    let again = scratch("replay-scaling-again");
    let replay = scaled(&[
        "--compute-from",
        scaling.to_str().unwrap(),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(
        replay.status.success(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let table = |dir: &Path| std::fs::read_to_string(only_entry(dir).join("scaling.csv")).unwrap();
    assert_eq!(table(&again), table(&out));
    let stdout = String::from_utf8_lossy(&replay.stdout);
    for n in ["n1", "n2"] {
        let from = scaling.join(n);
        assert!(
            stdout.contains(&format!("replayed from {}", from.display())),
            "{n}: {stdout}"
        );
    }
}

fn only_entry(dir: &Path) -> PathBuf {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    entries.pop().unwrap()
}

#[test]
fn a_recording_that_does_not_fit_is_refused_before_anything_runs() {
    let _s = serial();
    let recorded = run_owned("replay-src", &with(&CG_S, &["2"]));
    let from = recorded.ok().to_str().unwrap().to_string();
    let cases: [(&[&str], &str); 5] = [
        (
            &[
                "npb", "--kernel", "cg", "--class", "S", "--fabric", "shm", "-n", "2",
            ],
            "shm times compute on the host",
        ),
        (
            &[
                "npb", "--kernel", "cg", "--class", "W", "--fabric", "rapidio", "-n", "2",
            ],
            "it recorded other work",
        ),
        (
            &[
                "npb", "--kernel", "cg", "--class", "S", "--fabric", "rapidio", "-n", "4",
            ],
            "it holds no complete run with 4 ranks (it has 2 ranks)",
        ),
        (
            &[
                "npb", "--kernel", "cg", "--class", "S", "--fabric", "bxi", "-n", "2",
            ],
            "it did not run bxi (it ran rapidio)",
        ),
        (
            &[
                "npb", "--kernel", "cg", "--class", "S", "--fabric", "rapidio", "-n", "2",
            ],
            "cannot read",
        ),
    ];
    for (i, (args, says)) in cases.iter().enumerate() {
        let source = if i == 4 {
            "/nonexistent-recording".to_string()
        } else {
            from.clone()
        };
        let out = scratch("replay-refused");
        let o = raw(&[
            &["run"],
            *args,
            &["--compute-from", &source, "--out", out.to_str().unwrap()],
        ]
        .concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: --compute-from {source}: "))
                && stderr.contains(says),
            "{args:?}: {stderr}"
        );
        assert!(files(&out).is_empty(), "{args:?} wrote {:?}", files(&out));
    }
    // A run that charged no compute has nothing to replay.
    let osu = run(
        "replay-osu",
        &["run", "osu_latency", "-m", "8:8", "--fabric", "rapidio"],
    );
    let osu_dir = osu.ok().to_str().unwrap().to_string();
    let o = raw(&[
        "run",
        "osu_latency",
        "-m",
        "8:8",
        "--fabric",
        "rapidio",
        "--compute-from",
        &osu_dir,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("it recorded no compute on rapidio"),
        "{stderr}"
    );
}
