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

/// The text elements of an SVG, trimmed.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// The drawn bands of a panel (bars), without the invisible frame that sets the x range.
fn bars(p: &plots::figure::Panel) -> Vec<(f64, f64)> {
    plots::kinds::bars::drawn(p)
        .filter_map(plots::kinds::bars::extent)
        .collect()
}

/// Two NPB kernels at 1 and 2 ranks on an emulated fabric (virtual time: well under a
/// second): each run gets its kernels' Mop/s as bars beside their compute/communication
/// shares, and the scaling run gets speedup with efficiency in percent and a chart of each
/// kernel's split per rank count, every bar as tall as the run's own numbers.
#[test]
fn kernel_runs_get_rate_and_split_bars_and_their_scaling() {
    let r = run(
        "plot-kernels",
        &[
            "run", "npb", "--kernel", "cg,is", "--class", "S", "--fabric", "rapidio", "-n", "1,2",
            "--plot",
        ],
    );
    let dir = r.ok();
    assert_eq!(
        names(&dir.join("plots")),
        [
            "kernels-npb-rapidio-n1.svg",
            "kernels-npb-rapidio-n2.svg",
            "scaling-npb.svg",
            "scaling-split-npb.svg",
        ]
    );
    // The scaling directory's runs, n1 then n2, as `fabbench plot` finds them.
    let inputs: Vec<plots::Input> = results::read::runs_in(dir)
        .iter()
        .map(|d| plots::Input::load(d).unwrap())
        .collect();
    let charts = plots::charts(&inputs, &plots::Options::default()).unwrap();
    let chart = |name: &str| charts.iter().find(|c| c.name == name).unwrap();
    // Every one keeps the layout rules (inside the image, no overlaps, unique ticks, log past
    // a decade).
    for c in &charts {
        let problems = plots::layout::layout(&c.figure).problems();
        assert!(problems.is_empty(), "{}: {problems:#?}", c.name);
    }

    // One run: a bar per kernel at its Mop/s, and its compute and comm shares stacked.
    let run2 = inputs[1].run().unwrap();
    let points = &run2.series[0].points;
    let c = chart("kernels-npb-rapidio-n2");
    let [rate, split] = c.figure.panels.as_slice() else {
        panic!("two panels: {:?}", c.figure.panels.len())
    };
    assert_eq!(rate.x.names, ["cg", "is"]);
    assert_eq!(rate.y.label, "mops (Mop/s)");
    let mops: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let m = p.metrics.iter().find(|m| m.name == "mops").unwrap();
            (0.0, p.headline_of(m))
        })
        .collect();
    assert_eq!(bars(rate), mops);
    let mut shares = Vec::new();
    for p in points {
        let split = p.split.as_ref().unwrap();
        let compute: u64 = split.compute_ns.iter().sum();
        let comm: u64 = split.comm_ns.iter().sum();
        let total = (compute + comm) as f64;
        let c = 100.0 * compute as f64 / total;
        shares.push((0.0, c));
        shares.push((c, 100.0));
    }
    let got = bars(split);
    assert_eq!(got.len(), shares.len(), "{got:?}");
    for (g, w) in got.iter().zip(&shares) {
        assert!(
            (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-9,
            "{g:?} vs {w:?}"
        );
    }
    let legend: Vec<&str> = split
        .bands
        .iter()
        .map(|b| b.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    assert_eq!(
        legend,
        ["compute", "communication"],
        "each colour named once"
    );
    let texts = svg_texts(&c.svg().unwrap());
    for t in ["compute", "communication", "cg", "is", "mops (Mop/s)"] {
        assert!(texts.iter().any(|x| x == t), "no {t} in {texts:?}");
    }

    // Scaling: efficiency in percent, the ideal a legend entry, not a label on a point.
    let s = chart("scaling-npb");
    let [speedup, eff] = s.figure.panels.as_slice() else {
        panic!("two panels")
    };
    assert_eq!(eff.y.label, "parallel efficiency (%)");
    assert!(eff.levels.iter().all(|l| l.label.is_empty()));
    assert_eq!(eff.lines.last().unwrap().name, "ideal (100 %)");
    let time = |run: &results::Run, kernel: &str| {
        run.series[0]
            .points
            .iter()
            .find(|p| p.key.params["kernel"] == kernel)
            .unwrap()
            .headline()
    };
    let run1 = inputs[0].run().unwrap();
    let cg_speedup = time(run1, "cg") / time(run2, "cg");
    assert!((speedup.lines[0].points[1].1 - cg_speedup).abs() < 1e-9);
    assert!((eff.lines[0].points[1].1 - 100.0 * cg_speedup / 2.0).abs() < 1e-9);
    assert_eq!(eff.lines[0].points[0].1, 100.0);
    // Speedups within a decade get a linear axis. NPB's compute is timed on the host even on
    // an emulated fabric, so a loaded machine can stretch one run: the rule is checked on the
    // values this run measured.
    let values: Vec<f64> = speedup
        .lines
        .iter()
        .filter(|l| !l.name.starts_with("ideal"))
        .flat_map(|l| l.points.iter().map(|q| q.1))
        .collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &v| (a.min(v), b.max(v)));
    assert_eq!(
        speedup.y.scale == plots::figure::Scale::Linear,
        hi < 10.0 * lo,
        "{values:?}"
    );

    // Each kernel's seconds per rank count, compute below communication.
    let sp = chart("scaling-split-npb");
    assert_eq!(sp.figure.panels.len(), 2, "a panel per kernel");
    let cg = &sp.figure.panels[0];
    assert_eq!(cg.x.names, ["1", "2"]);
    let seconds = |run: &results::Run| {
        let p = run.series[0]
            .points
            .iter()
            .find(|p| p.key.params["kernel"] == "cg")
            .unwrap();
        let split = p.split.as_ref().unwrap();
        let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64 / 1e9;
        (mean(&split.compute_ns), mean(&split.comm_ns))
    };
    let (c1, m1) = seconds(run1);
    let (c2, m2) = seconds(run2);
    let mut want = vec![(0.0, c1)];
    if m1 > 0.0 {
        want.push((c1, c1 + m1));
    }
    want.extend([(0.0, c2), (c2, c2 + m2)]);
    let got = bars(cg);
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g.0 - w.0).abs() < 1e-12 && (g.1 - w.1).abs() < 1e-12,
            "{g:?} vs {w:?}"
        );
    }
    assert!(svg_texts(&sp.svg().unwrap()).contains(&"time (s)".to_string()));
}

/// A calibration directory (its calibration.json as calibrate writes it, with the fields the
/// chart reads) is drawn by `fabbench plot`: the table as markers, the card as lines, the
/// errors in percent; a calibration.json that is not one is refused by name.
#[test]
fn plot_draws_a_calibration_directory() {
    let dir = scratch("plot-calibration");
    let json = serde_json::json!({
        "fabric": "rapidio",
        "tables": ["paper.csv"],
        "params": [],
        "points": [
            {"suite": "osu_latency", "size": 1, "measured": 700.0, "emulated": 735.0,
             "before": 600.0, "error": 0.05},
            {"suite": "osu_latency", "size": 4096, "measured": 950.0, "emulated": 912.0,
             "before": 960.0, "error": -0.04},
            {"suite": "osu_bw", "size": 4096, "measured": 8.4, "emulated": 8.0,
             "before": 9.0, "error": -0.0476},
        ],
        "left_out": 0, "cost_before": 1.0, "cost": 0.1, "trials": 10, "seconds": 1.0,
        "fixed": [],
    });
    std::fs::write(dir.join("calibration.json"), json.to_string()).unwrap();
    let out = dir.join("charts");
    let r = raw(&[
        "plot",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--format",
        "both",
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(
        names(&out),
        ["calibrate-rapidio.png", "calibrate-rapidio.svg"]
    );
    let texts = svg_texts(&std::fs::read_to_string(out.join("calibrate-rapidio.svg")).unwrap());
    for t in [
        "osu_latency (us)",
        "osu_bw (MB/s)",
        "error (%)",
        "table",
        "calibrated card",
    ] {
        assert!(texts.iter().any(|x| x == t), "no {t} in {texts:?}");
    }
    std::fs::write(dir.join("calibration.json"), "{\"fabric\": 3}").unwrap();
    let r = raw(&["plot", dir.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains("not a calibration's calibration.json"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
