//! The run directory: manifest, tidy summary, raw samples, histograms and OSU text, each
//! consistent with what was printed.

use crate::common::*;

#[test]
fn a_run_writes_every_result_file_consistently() {
    let _g = serial();
    let r = run(
        "files",
        &[
            "run",
            "osu_latency",
            "-m",
            "1:1K",
            "-i",
            "20",
            "-x",
            "2",
            "-z",
        ],
    );
    let dir = r.ok().to_path_buf();
    let files = files(&dir);
    for f in [
        "manifest.json",
        "summary.csv",
        "samples.csv",
        "results.json",
        "osu.txt",
    ] {
        assert!(
            files.iter().any(|p| p.to_str() == Some(f)),
            "{f} missing: {files:?}"
        );
    }
    let sizes: Vec<u64> = (0..=10).map(|k| 1 << k).collect();
    for s in &sizes {
        for ext in ["hlog", "hgrm"] {
            let p = format!("histograms/osu_latency/shm/{s}.{ext}");
            assert!(files.iter().any(|f| f.to_str() == Some(&p)), "{p} missing");
        }
    }
    // nothing temporary left
    assert!(files.iter().all(|f| !f.to_string_lossy().ends_with('~')));
    assert!(files.iter().all(|f| !f.to_string_lossy().contains(".tmp-")));

    // osu.txt is exactly what was printed
    assert_eq!(
        std::fs::read_to_string(dir.join("osu.txt")).unwrap(),
        r.stdout()
    );

    let m = r.manifest();
    assert_eq!(m["fabbench_version"], env!("CARGO_PKG_VERSION"));
    assert!(!m["git_revision"].as_str().unwrap().is_empty());
    for k in ["hostname", "cpu_model", "kernel"] {
        assert!(!m["host"][k].as_str().unwrap().is_empty(), "host.{k}");
    }
    assert_eq!(m["suites"][0], "osu_latency");
    assert!(m["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "-z"));
    assert!(m["start_time"].as_str().unwrap().ends_with('Z'));
    let f = &m["fabrics"][0];
    assert_eq!(f["fabric"], "shm");
    assert_eq!(f["emulated"], false);
    assert_eq!(f["ranks"], 2);
    assert_eq!(f["tunables"]["eager_limit"]["value"], "4KiB");
    assert_eq!(f["tunables"]["eager_limit"]["source"], "default");
    assert_eq!(f["counters"].as_array().unwrap().len(), 2);

    // summary.csv: the documented columns, a row per size, statistics in order
    let mut rdr = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
    assert_eq!(
        header,
        [
            "suite",
            "fabric",
            "emulated",
            "ranks",
            "size",
            "params",
            "metric",
            "unit",
            "value",
            "count",
            "min",
            "mean",
            "p50",
            "p90",
            "p99",
            "p99.9",
            "max",
            "stddev",
            "validation"
        ]
    );
    let rows = r.summary();
    assert_eq!(rows.len(), sizes.len());
    let printed: Vec<(u64, String)> = r
        .stdout()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[0].parse().unwrap(), f[1].to_string())
        })
        .collect();
    for (row, (size, shown)) in rows.iter().zip(&printed) {
        let num = |i: usize| row[i].parse::<f64>().unwrap();
        assert_eq!(row[4].parse::<u64>().unwrap(), *size);
        assert_eq!(&row[5], "", "an OSU point has no params");
        assert_eq!((&row[6], &row[7]), ("latency", "us"));
        assert_eq!(format!("{:.2}", num(8)), *shown, "value column vs printed");
        assert_eq!(num(9), 20.0);
        assert!(num(10) <= num(12) && num(12) <= num(13) && num(13) <= num(14));
        assert!(num(14) <= num(15) && num(15) <= num(16));
    }

    // samples.csv holds every timed iteration
    let samples = csv::Reader::from_path(dir.join("samples.csv"))
        .unwrap()
        .records()
        .count();
    assert_eq!(samples, sizes.len() * 20);

    // the percentile distribution counts the same samples
    let hgrm = std::fs::read_to_string(dir.join("histograms/osu_latency/shm/8.hgrm")).unwrap();
    assert!(hgrm.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"));
    assert!(hgrm.contains("Total count    =           20]"), "{hgrm}");
    let hlog = std::fs::read_to_string(dir.join("histograms/osu_latency/shm/8.hlog")).unwrap();
    assert!(hlog.contains("#[Histogram log format version 1.3]"));
    assert!(hlog
        .lines()
        .any(|l| l.starts_with("0.000,") && l.contains("HISTF")));
}

#[test]
fn list_shows_fabrics_suites_and_tunables() {
    let out = raw(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "FABRICS",
        "shm",
        "usable",
        "SUITES",
        "osu_latency",
        "osu_bw",
        "osu_bibw",
        "TUNABLES",
        "eager_limit",
        "frag_size",
        "single_copy",
        "rx_thread",
        "auto|on|off",
    ] {
        assert!(text.contains(want), "list lacks {want}:\n{text}");
    }
}
