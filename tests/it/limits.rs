//! `fabbench limits`: a quick measurement prints and writes every limit with a positive,
//! finite figure in its unit, states a real shm run's 8 B latency as a multiple of the cache
//! line, and refuses an `--against` that is not a run of shm or tcp in one line, before
//! measuring anything.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::*;

/// (label, size, unit) of every row a measurement prints, CMA's unless it was refused here.
const ROWS: &[(&str, &str, &str)] = &[
    ("cache line, one for both", "64B", "us one way"),
    ("cache lines, one each", "64B", "us one way"),
    ("memcpy", "64KiB", "GB/s"),
    ("memcpy", "1MiB", "GB/s"),
    ("memcpy", "16MiB", "GB/s"),
    ("CMA read", "64B", "us per call"),
    ("CMA read", "4KiB", "us per call"),
    ("CMA read", "64KiB", "us per call"),
    ("TCP loopback, blocking", "64B", "us one way"),
    ("TCP loopback, spinning", "64B", "us one way"),
];

/// (suite, size, params, metric, unit) of every summary.csv row.
const RECORDS: &[(&str, &str, &str, &str, &str)] = &[
    ("limits_cacheline_one", "64", "lines=one", "latency", "us"),
    ("limits_cacheline_two", "64", "lines=two", "latency", "us"),
    ("limits_memcpy", "65536", "", "bandwidth", "GB/s"),
    ("limits_memcpy", "1048576", "", "bandwidth", "GB/s"),
    ("limits_memcpy", "16777216", "", "bandwidth", "GB/s"),
    ("limits_cma", "64", "", "time", "us"),
    ("limits_cma", "4096", "", "time", "us"),
    ("limits_cma", "65536", "", "time", "us"),
    ("limits_tcp_block", "64", "wait=block", "latency", "us"),
    ("limits_tcp_spin", "64", "wait=spin", "latency", "us"),
];

fn positive(text: &str, what: &str) -> f64 {
    let v: f64 = text
        .parse()
        .unwrap_or_else(|e| panic!("{what}: '{text}' {e}"));
    assert!(v.is_finite() && v > 0.0, "{what}: {v}");
    v
}

/// The printed table's rows, split at the runs of spaces between its columns.
fn table_rows(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("limit "))
        .skip(1)
        .take_while(|l| !l.starts_with('#'))
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect()
        })
        .collect()
}

#[test]
fn quick_limits_are_positive_in_their_units_and_state_a_shm_run_as_a_multiple() {
    let _turn = serial();
    let shm = run(
        "limits-shm",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "shm",
            "-m",
            "8:8",
            "-i",
            "200",
        ],
    );
    let shm_dir = shm.ok().to_path_buf();
    let limits = run(
        "limits",
        &["limits", "--quick", "--against", shm_dir.to_str().unwrap()],
    );
    let dir = limits.ok();
    let stdout = limits.stdout();
    let refused = stdout.contains("CMA not permitted here");
    let expected: BTreeSet<(&str, &str, &str)> = ROWS
        .iter()
        .copied()
        .filter(|r| !(refused && r.0 == "CMA read"))
        .collect();
    let rows = table_rows(&stdout);
    let mut seen = BTreeSet::new();
    for r in &rows {
        assert_eq!(r.len(), 6, "{r:?} in\n{stdout}");
        let median = positive(&r[2], &r[0]);
        let best = positive(&r[3], &r[0]);
        // The best sample is the fastest: no slower than the median.
        if r[4] == "GB/s" {
            assert!(best >= median, "{r:?}");
        } else {
            assert!(best <= median, "{r:?}");
        }
        positive(&r[5], "samples");
        seen.insert((r[0].as_str(), r[1].as_str(), r[4].as_str()));
    }
    assert_eq!(seen, expected, "{stdout}");
    assert_eq!(rows.len(), expected.len(), "{stdout}");

    let mut csv = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let headers = csv.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let mut records = BTreeSet::new();
    for r in csv.records().map(Result::unwrap) {
        assert_eq!(&r[col("fabric")], "host");
        for stat in ["value", "min", "p50", "max"] {
            positive(&r[col(stat)], &format!("{:?} {stat}", r));
        }
        records.insert((
            r[col("suite")].to_string(),
            r[col("size")].to_string(),
            r[col("params")].to_string(),
            r[col("metric")].to_string(),
            r[col("unit")].to_string(),
        ));
    }
    let wanted: BTreeSet<(String, String, String, String, String)> = RECORDS
        .iter()
        .filter(|r| !(refused && r.0 == "limits_cma"))
        .map(|r| (r.0.into(), r.1.into(), r.2.into(), r.3.into(), r.4.into()))
        .collect();
    assert_eq!(records, wanted);
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"quick\": true"), "{manifest}");

    let statement = stdout
        .lines()
        .find(|l| l.starts_with("shm osu_latency 8B:"))
        .unwrap_or_else(|| panic!("no statement of the shm run in\n{stdout}"));
    let (_, multiple) = statement
        .split_once(" = ")
        .and_then(|(a, b)| Some((a, b.split_once("x the cache line one way")?.0)))
        .unwrap_or_else(|| panic!("{statement}"));
    positive(multiple, statement);
}

#[test]
fn limits_against_what_is_not_a_shm_or_tcp_run_is_refused_in_one_line() {
    let out = scratch("limits-refused");
    let emulated = scratch("limits-emulated");
    quick_run(&emulated);
    let emulated_run = entries(&emulated).into_iter().next().unwrap();
    for (against, says) in [
        (
            Path::new("/nonexistent/run"),
            "--against /nonexistent/run: ",
        ),
        (
            emulated_run.as_path(),
            "no osu_latency or osu_bw on the shm or tcp",
        ),
    ] {
        let o = raw(&[
            "limits",
            "--quick",
            "--against",
            against.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{stderr}"
        );
        assert!(o.stdout.is_empty());
        assert!(entries(&out).is_empty(), "{:?}", entries(&out));
    }
}
