//! The outside reference for fabbench's HdrHistogram files: HdrHistogram's own Java library
//! (Debian's libhdrhistogram-java, 2.1) reads a run's .hlog files, and
//! - HistogramLogProcessor's percentile distribution is the run's .hgrm;
//! - `outputPercentileDistribution(out, 5, 1000.0)` of every decoded .hlog is its .hgrm, row
//!   for row and byte for byte, footer included;
//! - `getValueAtPercentile` at 50, 90, 99 and 99.9 % and `getMaxValue` are summary.csv's
//!   p50, p90, p99, p99.9 and max of the latency rows;
//! - the logs' StartTime is the run's start as the manifest records it, and each interval
//!   starts there.
//!
//! Needs java and libhdrhistogram-java, so it is ignored by default; .ci/run installs both and
//! runs it with `--ignored`. tests/java/HdrReference.java is compiled with javac when there is
//! one, else launched as a single source file (Java 11 and later).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

const JAR: &str = "/usr/share/java/hdrhistogram.jar";
const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/java/HdrReference.java");

/// The distribution's rows: from the header line to the end, comment lines left out.
fn rows(hgrm: &str) -> Vec<String> {
    hgrm.lines()
        .skip_while(|l| !l.trim_start().starts_with("Value"))
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// The distribution's footer: its `#[Mean`, `#[Max` and `#[Buckets` lines.
fn footer(hgrm: &str) -> Vec<String> {
    hgrm.lines()
        .filter(|l| l.starts_with("#[Mean") || l.starts_with("#[Max") || l.starts_with("#[Buckets"))
        .map(str::to_string)
        .collect()
}

/// What HdrReference.java printed for one .hlog.
#[derive(Debug, Default)]
struct JavaLog {
    /// The reader's StartTime, seconds since the epoch.
    start: f64,
    /// Each interval's start and end (ms since the epoch) and maximum (ns).
    intervals: Vec<(i64, i64, u64)>,
    /// getValueAtPercentile at 50, 90, 99, 99.9 (ns).
    percentiles: Vec<(f64, u64)>,
    /// outputPercentileDistribution(out, 5, 1000.0).
    hgrm: String,
}

/// Runs HdrReference.java on `logs` and reads what it printed, per log.
fn java_reference(logs: &[PathBuf]) -> BTreeMap<PathBuf, JavaLog> {
    let javac = Command::new("javac")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut java = Command::new("java");
    if javac {
        let classes = scratch("hdr-java-classes");
        let o = Command::new("javac")
            .args(["-cp", JAR, "-d"])
            .arg(&classes)
            .arg(REFERENCE)
            .output()
            .expect("javac runs");
        assert!(
            o.status.success(),
            "javac: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        java.arg("-cp")
            .arg(format!("{JAR}:{}", classes.display()))
            .arg("HdrReference");
    } else {
        java.args(["-cp", JAR, REFERENCE]);
    }
    let o = java.args(logs).output().expect("java runs");
    assert!(
        o.status.success(),
        "HdrReference: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut out: BTreeMap<PathBuf, JavaLog> = BTreeMap::new();
    let mut current: Option<&mut JavaLog> = None;
    for line in String::from_utf8(o.stdout).unwrap().lines() {
        if let Some(file) = line.strip_prefix("## ") {
            current = Some(out.entry(PathBuf::from(file)).or_default());
            continue;
        }
        let r = current.as_deref_mut().expect("a section");
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "start" => r.start = f[1].parse().unwrap(),
            "interval" => r.intervals.push((
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].parse().unwrap(),
            )),
            "percentile" => r
                .percentiles
                .push((f[1].parse().unwrap(), f[2].parse().unwrap())),
            _ => {
                r.hgrm.push_str(line);
                r.hgrm.push('\n');
            }
        }
    }
    out
}

/// Every .hlog under `dir`, sorted.
fn logs(dir: &Path) -> Vec<PathBuf> {
    files(dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hlog"))
        .map(|p| dir.join(p))
        .collect()
}

#[test]
#[ignore = "needs java and libhdrhistogram-java (.ci/run installs them and runs it)"]
fn hdrhistograms_own_log_processor_reads_our_logs() {
    let _turn = serial();
    let r = run(
        "hdr-java",
        &[
            "run",
            "osu_latency",
            "osu_bw",
            "-m",
            "8:8K",
            "-i",
            "200",
            "-x",
            "5",
            "--fabric",
            "shm",
        ],
    );
    let dir = r.ok().to_path_buf();
    let mut checked = 0;
    for (suite, size) in [("osu_latency", 8), ("osu_latency", 8192), ("osu_bw", 1024)] {
        let base = dir.join(format!("histograms/{suite}/shm/{size}"));
        let out = scratch("hdr-java-out").join("processed");
        let o = Command::new("java")
            .args(["-cp", JAR, "org.HdrHistogram.HistogramLogProcessor", "-i"])
            .arg(base.with_extension("hlog"))
            .args(["-outputValueUnitRatio", "1000", "-o"])
            .arg(&out)
            .output()
            .expect("java runs");
        assert!(
            o.status.success(),
            "HistogramLogProcessor failed on {suite} {size}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let theirs = std::fs::read_to_string(out.with_extension("hgrm")).unwrap();
        let ours = std::fs::read_to_string(base.with_extension("hgrm")).unwrap();
        let (t, u) = (rows(&theirs), rows(&ours));
        assert!(t.len() > 10, "{theirs}");
        assert_eq!(
            t, u,
            "{suite} at {size} bytes: Java's distribution against ours"
        );
        assert_eq!(footer(&theirs), footer(&ours), "{suite} at {size} bytes");
        // And its total count is the run's sample count.
        assert!(
            theirs.contains("Total count    =          200]"),
            "{theirs}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
}

/// A real run, OSU's default iterations (10000 for latency, so levels up to 99.978 % are
/// printed), with what Java makes of each of its logs.
struct Reference {
    run: crate::common::Run,
    dir: PathBuf,
    logs: Vec<PathBuf>,
    java: BTreeMap<PathBuf, JavaLog>,
}

fn reference_run(name: &str) -> Reference {
    let run = run(
        name,
        &[
            "run",
            "osu_latency",
            "osu_bw",
            "-m",
            "1:1K",
            "--fabric",
            "shm",
        ],
    );
    let dir = run.ok().to_path_buf();
    let logs = logs(&dir);
    assert_eq!(logs.len(), 2 * 11, "{logs:?}");
    let java = java_reference(&logs);
    assert_eq!(java.len(), logs.len());
    Reference {
        run,
        dir,
        logs,
        java,
    }
}

#[test]
#[ignore = "needs java and libhdrhistogram-java (.ci/run installs them and runs it)"]
fn every_hgrm_row_is_the_one_java_prints() {
    let _turn = serial();
    let r = reference_run("hdr-java-rows");
    let (mut compared, mut differing) = (0, Vec::new());
    for log in &r.logs {
        let java = &r.java[log];
        let ours = std::fs::read_to_string(log.with_extension("hgrm")).unwrap();
        let (t, u) = (rows(&java.hgrm), rows(&ours));
        assert!(t.len() > 10, "{}", java.hgrm);
        assert_eq!(t.len(), u.len(), "{}: rows", log.display());
        for (a, b) in t.iter().zip(&u) {
            compared += 1;
            if a != b {
                differing.push(format!("{}:\n  java {a}\n  ours {b}", log.display()));
            }
        }
        assert_eq!(footer(&java.hgrm), footer(&ours), "{}", log.display());
    }
    eprintln!(
        "{} .hgrm rows compared with Java's, {} differing",
        compared,
        differing.len()
    );
    assert!(
        differing.is_empty(),
        "{} of {compared} rows differ from Java's:\n{}",
        differing.len(),
        differing.join("\n")
    );
}

#[test]
#[ignore = "needs java and libhdrhistogram-java (.ci/run installs them and runs it)"]
fn the_logs_start_when_the_run_started() {
    let _turn = serial();
    let r = reference_run("hdr-java-start");
    let manifest = r.run.manifest();
    let started = humantime::parse_rfc3339(manifest["start_time"].as_str().unwrap()).unwrap();
    let started_ms = started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for log in &r.logs {
        let java = &r.java[log];
        assert_eq!(java.start, started_ms as f64 / 1000.0, "{}", log.display());
        assert_eq!(java.intervals.len(), 1, "{}", log.display());
        let (from, to, max) = java.intervals[0];
        assert_eq!(from, started_ms, "{}", log.display());
        assert!(to >= from);
        // The interval line's max is what Java's writer writes: the maximum in ms, to 3
        // decimals.
        let text = std::fs::read_to_string(log).unwrap();
        let line = text.lines().last().unwrap();
        let written: f64 = line.split(',').nth(2).unwrap().parse().unwrap();
        assert!(
            (written - max as f64 / 1e6).abs() <= 0.0005,
            "{}: {line} against a maximum of {max} ns",
            log.display()
        );
    }
}

#[test]
#[ignore = "needs java and libhdrhistogram-java (.ci/run installs them and runs it)"]
fn summary_percentiles_are_hdrhistograms() {
    let _turn = serial();
    let r = reference_run("hdr-java-summary");
    let mut checked = 0;
    for row in r.run.summary() {
        if &row[6] != "latency" {
            continue;
        }
        let log = r.dir.join(format!(
            "histograms/{}/{}/{}.hlog",
            &row[0], &row[1], &row[4]
        ));
        let java = &r.java[&log];
        let want: Vec<f64> = java
            .percentiles
            .iter()
            .map(|&(_, v)| v as f64 / 1000.0)
            .collect();
        let have: Vec<f64> = [12, 13, 14, 15]
            .iter()
            .map(|&i| row[i].parse().unwrap())
            .collect();
        assert_eq!(have, want, "{}: p50, p90, p99, p99.9", log.display());
        let max = java.intervals[0].2 as f64 / 1000.0;
        assert_eq!(row[16].parse::<f64>().unwrap(), max, "{}", log.display());
        checked += 1;
    }
    assert_eq!(checked, 11);
}
