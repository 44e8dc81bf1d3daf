//! The outside reference for fabbench's HdrHistogram logs: HdrHistogram's own Java
//! HistogramLogProcessor reads a run's .hlog, and the percentile distribution it prints is the
//! run's .hgrm row for row (same values, percentiles, counts and 1/(1-p)). Needs java and
//! Debian's libhdrhistogram-java, so it is ignored by default; .ci/run installs both and runs
//! it with `--ignored`.

mod common;

use std::process::Command;

use common::*;

const JAR: &str = "/usr/share/java/hdrhistogram.jar";

/// The distribution's rows: from the header line to the end, comment lines left out.
fn rows(hgrm: &str) -> Vec<String> {
    hgrm.lines()
        .skip_while(|l| !l.trim_start().starts_with("Value"))
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

#[test]
#[ignore = "needs java and libhdrhistogram-java (.ci/run installs them and runs it)"]
fn hdrhistograms_own_log_processor_reads_our_logs() {
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
        // And its total count is the run's sample count.
        assert!(
            theirs.contains("Total count    =          200]"),
            "{theirs}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
}
