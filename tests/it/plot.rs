//! `fabbench plot` and `fabbench run --plot` through the real binary: charts of fresh runs
//! and of an autotune directory written where asked, in the formats asked, each file whole;
//! bad input refused in one line with status 2 and no chart written.

use std::path::Path;

use crate::common::*;

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn run_with_plot_draws_the_suites_charts_into_the_run_directory() {
    let r = run(
        "plot-run",
        &[
            "run",
            "osu_latency",
            "osu_bw",
            "-m",
            "1:4K",
            "-i",
            "5",
            "-x",
            "1",
            "--fabric",
            "rapidio,hyperlink",
            "--plot",
        ],
    );
    let dir = r.ok();
    assert_eq!(
        names(&dir.join("plots")),
        [
            "bandwidth-osu_bw.svg",
            "distribution-osu_latency-1.svg",
            "latency-osu_latency.svg",
            "percentiles-osu_latency-hyperlink.svg",
            "percentiles-osu_latency-rapidio.svg",
        ]
    );
    let svg = std::fs::read_to_string(dir.join("plots/latency-osu_latency.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    assert!(svg.contains("rapidio (emulated)") && svg.contains("hyperlink (emulated)"));
    assert!(
        r.stderr().contains("# plots: 5 charts in"),
        "{}",
        r.stderr()
    );
    // stdout stays OSU's layout: nothing about plots on it.
    assert!(!r.stdout().contains("plots"), "{}", r.stdout());
    // The run directory still reads back.
    assert_eq!(r.manifest()["suites"][1], "osu_bw");
}

#[test]
fn plot_draws_several_runs_and_an_autotune_in_both_formats() {
    let a = run(
        "plot-a",
        &[
            "run",
            "osu_latency",
            "-m",
            "1:1K",
            "-i",
            "5",
            "-x",
            "1",
            "--fabric",
            "rapidio",
        ],
    );
    let b = run(
        "plot-b",
        &[
            "run",
            "osu_latency",
            "-m",
            "1:1K",
            "-i",
            "5",
            "-x",
            "1",
            "--fabric",
            "rapidio",
            "--set",
            "eager_limit=256",
        ],
    );
    let t = run(
        "plot-at",
        &[
            "autotune",
            "--fabric",
            "rapidio",
            "--sizes",
            "256:64K",
            "--params",
            "eager_limit",
        ],
    );
    let out = scratch("plot-out");
    let o = raw(&[
        "plot",
        a.ok().to_str().unwrap(),
        b.ok().to_str().unwrap(),
        t.ok().to_str().unwrap(),
        "--format",
        "both",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = names(&out);
    for want in [
        "latency-osu_latency.svg",
        "latency-osu_latency.png",
        "autotune-rapidio-eager_limit.svg",
        "autotune-rapidio-eager_limit.png",
    ] {
        assert!(got.iter().any(|n| n == want), "{want} in {got:?}");
    }
    assert!(!got.iter().any(|n| n.ends_with(".partial")), "{got:?}");
    // Two runs of one fabric are told apart by the setting that differs.
    let svg = std::fs::read_to_string(out.join("latency-osu_latency.svg")).unwrap();
    let legend = |want: &str| svg.lines().any(|l| l.trim() == want);
    assert!(
        legend("rapidio (emulated) · eager_limit=4KiB")
            && legend("rapidio (emulated) · eager_limit=256"),
        "legend of {svg}"
    );
    // Every path printed is a file written.
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(stdout.lines().count(), got.len());
    let png = std::fs::read(out.join("latency-osu_latency.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
}

#[test]
fn bad_plot_input_is_one_line_and_writes_nothing() {
    let good = run(
        "plot-good",
        &[
            "run",
            "osu_latency",
            "-m",
            "1:16",
            "-i",
            "3",
            "-x",
            "1",
            "--fabric",
            "rapidio",
        ],
    );
    let good = good.ok().to_str().unwrap().to_string();
    let broken = scratch("plot-broken");
    std::fs::write(broken.join("manifest.json"), "{ not json").unwrap();
    let empty = scratch("plot-empty");
    let out = scratch("plot-bad-out");
    let o_dir = out.join("charts");
    let o = o_dir.to_str().unwrap();
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec!["plot", "/nonexistent/run", "-o", o],
            "/nonexistent/run: no such run directory".into(),
        ),
        (
            vec!["plot", &good, broken.to_str().unwrap(), "-o", o],
            format!("{}", broken.join("manifest.json").display()),
        ),
        (
            vec!["plot", empty.to_str().unwrap(), "-o", o],
            "neither a run directory".into(),
        ),
        (
            vec!["plot", &good, "--hist-size", "3K", "-o", o],
            "--hist-size 3072: no latency series measured 3072 bytes".into(),
        ),
        (
            vec!["plot", &good, "--hist-size", "lots", "-o", o],
            "--hist-size".into(),
        ),
        (
            vec!["plot", &good, "--format", "jpg", "-o", o],
            "'jpg'".into(),
        ),
    ];
    for (args, want) in cases {
        let r = raw(&args);
        let err = String::from_utf8_lossy(&r.stderr).into_owned();
        assert_eq!(r.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: ") && err.contains(&want),
            "{args:?}: {err}"
        );
        assert!(!o_dir.exists(), "{args:?} wrote {o}");
    }
}
