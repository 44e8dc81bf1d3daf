//! Every chart kind drawn from stored runs (tests/data: run and autotune directories that
//! fabbench wrote, canonical files only), checked three ways: the figure holds the series and
//! values the runs hold; the SVG has those series, axis titles, tick labels and legend
//! entries as elements (read structurally, not compared byte for byte, so a plotters update
//! that moves a pixel does not break it); the PNG decodes, is not blank, and has text in its
//! title band. Set PLOTS_OUT=DIR to also keep the images for looking at.

use std::path::{Path, PathBuf};

use bench_core::measure::{Better, Derivation, Layout, Metric, Point, PointKey};
use plots::figure::{Scale, Stroke};
use plots::{Chart, Input, Options};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn load(names: &[&str]) -> Vec<Input> {
    names
        .iter()
        .map(|n| Input::load(&data(n)).unwrap())
        .collect()
}

fn charts(names: &[&str]) -> Vec<Chart> {
    let c = plots::charts(&load(names), &Options::default()).unwrap();
    keep(&c);
    c
}

fn keep(charts: &[Chart]) {
    if let Some(dir) = std::env::var_os("PLOTS_OUT") {
        plots::write_all(charts, Path::new(&dir), plots::Format::Both).unwrap();
    }
}

fn chart<'a>(charts: &'a [Chart], name: &str) -> &'a Chart {
    charts.iter().find(|c| c.name == name).unwrap_or_else(|| {
        let names: Vec<&str> = charts.iter().map(|c| c.name.as_str()).collect();
        panic!("no chart {name} among {names:?}")
    })
}

/// The SVG's elements as a test reads them.
struct Svg {
    texts: Vec<String>,
    /// (stroke colour, number of points) of each polyline.
    polylines: Vec<(String, usize)>,
    polygons: usize,
    circles: usize,
}

fn parse(svg: &str) -> Svg {
    let attr = |tag: &str, name: &str| -> Option<String> {
        let k = format!(" {name}=\"");
        let i = tag.find(&k)? + k.len();
        Some(tag[i..i + tag[i..].find('"')?].to_string())
    };
    let mut texts = Vec::new();
    let mut polylines = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        let body = &rest[i..];
        let open_end = body.find('>').unwrap() + 1;
        let close = body.find("</text>").unwrap();
        texts.push(body[open_end..close].trim().replace("&amp;", "&"));
        rest = &body[close..];
    }
    for tag in svg.split("<polyline").skip(1) {
        let tag = &tag[..tag.find("/>").unwrap()];
        let points = attr(tag, "points").unwrap_or_default();
        polylines.push((
            attr(tag, "stroke").unwrap_or_default(),
            points.split_whitespace().count(),
        ));
    }
    Svg {
        texts,
        polylines,
        polygons: svg.matches("<polygon").count(),
        circles: svg.matches("<circle").count(),
    }
}

fn has_text(svg: &Svg, want: &str) {
    assert!(
        svg.texts.iter().any(|t| t == want),
        "no text {want:?} in {:?}",
        svg.texts
    );
}

/// The PNG decodes to the figure's size, is not blank, and has dark (text) pixels in the
/// title band and in the plotting area.
fn check_png(c: &Chart) {
    let bytes = c.png().unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = plots::render::size_of(&c.figure);
    assert_eq!((info.width, info.height), (w, h));
    assert_eq!(info.color_type, png::ColorType::Rgb);
    let px = |x: u32, y: u32| {
        let i = ((y * w + x) * 3) as usize;
        (buf[i], buf[i + 1], buf[i + 2])
    };
    let dark = |(r, g, b): (u8, u8, u8)| u32::from(r) + u32::from(g) + u32::from(b) < 200;
    let title_dark = (0..28)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| dark(px(x, y)))
        .count();
    assert!(
        title_dark > 200,
        "{}: only {title_dark} dark pixels in the title band",
        c.name
    );
    let non_white = (0..h)
        .flat_map(|y| (0..w).map(move |x| (x, y)))
        .filter(|&(x, y)| px(x, y) != (255, 255, 255))
        .count();
    let share = non_white as f64 / f64::from(w * h);
    assert!(share > 0.02 && share < 0.9, "{}: {share} non-white", c.name);
}

#[test]
fn latency_sweep_has_a_log_log_line_per_fabric() {
    let all = charts(&["shm", "emu"]);
    let c = chart(&all, "latency-osu_latency");
    let p = &c.figure.panels[0];
    assert_eq!((p.x.scale, p.y.scale), (Scale::Log2, Scale::Log10));
    let names: Vec<&str> = p.lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["shm", "rapidio (emulated)", "hyperlink (emulated)"]);
    // The lines carry the runs' headlines: rapidio's 1-byte latency from its manifest.
    let run = plots::input::Input::load(&data("emu")).unwrap();
    let run = run.run().unwrap();
    let s = run.series_of("osu_latency", "rapidio").unwrap();
    let p1 = s.point(&PointKey::size(1)).unwrap();
    assert_eq!(p.lines[1].points[0], (1.0, p1.headline()));
    assert_eq!(p.lines[1].points.len(), s.points.len());
    assert!(c.figure.title.contains("osu_latency"));
    assert!(c
        .figure
        .subtitle
        .contains("rapidio, hyperlink emulated in virtual time"));

    let svg = parse(&c.svg().unwrap());
    has_text(&svg, &c.figure.title);
    has_text(&svg, "message size (bytes)");
    has_text(&svg, "latency (us)");
    for n in names {
        has_text(&svg, n);
    }
    for tick in ["1", "64", "1K", "64K", "0.1", "10"] {
        has_text(&svg, tick);
    }
    // One polyline per fabric, with a vertex per size (the legend's samples are 2-point).
    let long: Vec<_> = svg.polylines.iter().filter(|(_, n)| *n == 17).collect();
    assert_eq!(long.len(), 3, "{:?}", svg.polylines);
    check_png(c);
}

#[test]
fn bandwidth_goes_log_when_its_values_span_more_than_a_decade() {
    let all = charts(&["shm", "emu"]);
    let c = chart(&all, "bandwidth-osu_bw");
    let p = &c.figure.panels[0];
    assert_eq!(p.x.scale, Scale::Log2);
    // Drawn as OSU users read bandwidth (linear from zero) unless the values span a decade:
    // shm's and rapidio's peaks differ 50-fold.
    assert_eq!(p.y.scale, Scale::Linear);
    let drawn = plots::rules::resolve(p);
    assert_eq!(
        drawn.y.scale,
        Scale::Log10,
        "shm and rapidio peaks differ 50-fold"
    );
    let l = plots::layout::layout(&c.figure);
    assert_eq!(l.panels[0].panel.y.scale, Scale::Log10);
    let svg = parse(&c.svg().unwrap());
    has_text(&svg, "bandwidth (MB/s)");
    // The sizes near the peak alone are within a decade: linear from zero.
    let mut near_peak = p.clone();
    let peak = p.lines[0].points.iter().map(|q| q.1).fold(0.0, f64::max);
    near_peak.lines.truncate(1);
    near_peak.lines[0].points.retain(|q| q.1 > peak / 5.0);
    let drawn = plots::rules::resolve(&near_peak);
    assert_eq!(drawn.y.scale, Scale::Linear);
    assert!(drawn.y.from_zero);
    check_png(c);
}

#[test]
fn percentile_bands_hold_each_sizes_spread() {
    let all = charts(&["shm"]);
    let c = chart(&all, "percentiles-osu_latency-shm");
    let p = &c.figure.panels[0];
    let names: Vec<&str> = p.bands.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(
        names,
        ["p99.9 to max", "p99 to p99.9", "p90 to p99", "p50 to p90"]
    );
    let run = Input::load(&data("shm")).unwrap();
    let rec = run
        .run()
        .unwrap()
        .records()
        .into_iter()
        .find(|r| r.suite == "osu_latency" && r.size == Some(1024))
        .unwrap();
    let at = |b: usize| *p.bands[b].points.iter().find(|q| q.0 == 1024.0).unwrap();
    assert_eq!(at(0), (1024.0, rec.p99_9, rec.max));
    assert_eq!(at(3), (1024.0, rec.p50, rec.p90));
    assert!(!c.figure.title.contains('#'), "{}", c.figure.title);
    let svg = parse(&c.svg().unwrap());
    // The four bands (their legend swatches are rectangles).
    assert_eq!(svg.polygons, 4);
    for n in names {
        has_text(&svg, n);
    }
    has_text(&svg, "p50");
    check_png(c);
    // Neighbouring bands are shades clearly apart.
    let o: Vec<f64> = p.bands.iter().map(|b| b.opacity).collect();
    assert!(o.windows(2).all(|w| w[1] - w[0] >= 0.15), "{o:?}");
    // An emulated fabric in virtual time has no spread: one line, no bands, and it says so.
    let emu = charts(&["emu"]);
    let e = &chart(&emu, "percentiles-osu_latency-rapidio").figure.panels[0];
    assert!(e.bands.is_empty(), "{:?}", e.bands);
    assert_eq!(e.lines.len(), 1);
    assert_eq!(e.lines[0].name, "latency (exact: no spread)");
}

#[test]
fn the_percentile_distribution_uses_hdrhistograms_axis() {
    let inputs = load(&["shm", "emu"]);
    let all = plots::charts(
        &inputs,
        &Options {
            hist_size: Some(64),
        },
    )
    .unwrap();
    keep(&all);
    let c = chart(&all, "distribution-osu_latency-64");
    let p = &c.figure.panels[0];
    assert_eq!(p.x.scale, Scale::Percentile);
    assert_eq!(p.lines.len(), 3);
    // shm: 100 samples, so the line reaches 1/(1 - 0.99) = 100 with the maximum.
    let shm = &p.lines[0];
    assert!(shm.name.starts_with("shm (100 samples)"), "{}", shm.name);
    let run = inputs[0].run().unwrap();
    let point = run
        .series_of("osu_latency", "shm")
        .unwrap()
        .point(&PointKey::size(64))
        .unwrap();
    let max_us = point
        .samples_ns
        .iter()
        .map(|&ns| ns as f64 / 2000.0)
        .fold(0.0, f64::max);
    let (x, top) = *shm.points.last().unwrap();
    assert_eq!(x, 100.0);
    assert!(
        (top - max_us).abs() <= max_us * 1e-3 + 0.001,
        "{top} vs {max_us}"
    );
    let svg = parse(&c.svg().unwrap());
    for t in ["0%", "90%", "99%", "percentile", "one-way latency (us)"] {
        has_text(&svg, t);
    }
    check_png(c);
    // A size nobody measured is refused.
    let e = plots::charts(
        &inputs,
        &Options {
            hist_size: Some(3000),
        },
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "--hist-size 3000: no latency series measured 3000 bytes"
    );
}

#[test]
fn mpptest_marks_its_breakpoint_and_fits() {
    let all = charts(&["mpp"]);
    let c = chart(&all, "mpptest-rapidio");
    let p = &c.figure.panels[0];
    let run = Input::load(&data("mpp")).unwrap();
    let series = run.run().unwrap().series_of("mpptest", "rapidio").unwrap();
    let analysis = results::format::mpptest::curve_analysis(series).unwrap();
    assert_eq!(analysis.breakpoints.len(), 1);
    let b = &analysis.breakpoints[0];
    assert_eq!(p.spans.len(), 1);
    assert_eq!(
        (p.spans[0].from, p.spans[0].to),
        (b.after as f64, b.before as f64)
    );
    assert!(
        p.spans[0].label.starts_with("jump +"),
        "{}",
        p.spans[0].label
    );
    let measured = &p.lines[0];
    assert_eq!(measured.stroke, Stroke::Markers);
    assert_eq!(
        measured.points.len(),
        results::format::mpptest::curve_points(series).len() - analysis.off_line.len()
    );
    // A fit line per segment, each ending on its segment's line.
    let fits: Vec<_> = p.lines.iter().filter(|l| l.colour == 1).collect();
    assert_eq!(fits.len(), analysis.segments.len());
    for (l, s) in fits.iter().zip(&analysis.segments) {
        let &(x, y) = l.points.last().unwrap();
        assert_eq!(x, s.to as f64);
        assert!((y - s.at(s.to)).abs() < 1e-9);
    }
    let svg = parse(&c.svg().unwrap());
    has_text(&svg, &p.spans[0].label);
    has_text(&svg, "size (bytes)");
    has_text(&svg, "time (us)");
    // The measured sizes as markers (one more in the legend); size 0 is off the log axis.
    assert_eq!(svg.circles, measured.points.len() - 1 + 1);
    check_png(c);
}

/// Runs of one kernel at 1, 2, 4 and 8 ranks, stored as fabbench stores them.
fn kernel_runs(dir: &Path) -> Vec<PathBuf> {
    let base = Input::load(&data("emu")).unwrap();
    let base = base.run().unwrap();
    let metric = Metric {
        name: "time".into(),
        unit: "s".into(),
        better: Better::Lower,
        derive: Derivation::Time {
            divisor: 1.0,
            unit_ns: 1e9,
        },
    };
    let mut dirs = Vec::new();
    for (ranks, secs) in [(1usize, 8.0f64), (2, 4.2), (4, 2.3), (8, 1.4)] {
        let mut run = base.clone();
        run.manifest.run_id = format!("20261123T10000{ranks}Z-npb_ep-shm");
        run.manifest.suites = vec!["npb_ep".into()];
        run.manifest.fabrics.truncate(1);
        run.manifest.fabrics[0].fabric = "shm".into();
        run.manifest.fabrics[0].ranks = ranks;
        let mut s = base.series[0].clone();
        s.suite = "npb_ep".into();
        s.fabric = "shm".into();
        s.emulated = false;
        s.ranks = ranks;
        s.layout = Layout::Osu {
            title: "NPB EP".into(),
            column: "Time in seconds".into(),
            tail: false,
            tail_at: Vec::new(),
            validation: false,
        };
        s.points = vec![Point {
            warmup: None,
            key: PointKey::params([("class", "S".to_string()), ("kernel", "ep".to_string())]),
            metrics: vec![metric.clone()],
            samples_ns: vec![(secs * 1e9) as u64; 3],
            validated: None,
            batches: Vec::new(),
            split: None,
        }];
        run.series = vec![s];
        let d = dir.join(&run.manifest.run_id);
        std::fs::create_dir_all(&d).unwrap();
        for e in [
            &results::format::json_csv::ManifestJson as &dyn results::format::Exporter,
            &results::format::json_csv::SamplesCsv,
        ] {
            for (rel, bytes) in e.export(&run).unwrap() {
                std::fs::write(d.join(rel), bytes).unwrap();
            }
        }
        dirs.push(d);
    }
    dirs
}

#[test]
fn scaling_shows_speedup_and_efficiency_against_the_ideal() {
    let tmp = std::env::temp_dir().join(format!("plots-scaling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let dirs = kernel_runs(&tmp);
    let inputs: Vec<Input> = dirs.iter().map(|d| Input::load(d).unwrap()).collect();
    let all = plots::charts(&inputs, &Options::default()).unwrap();
    keep(&all);
    let c = chart(&all, "scaling-npb_ep");
    assert_eq!(c.figure.panels.len(), 2);
    let (speedup, eff) = (&c.figure.panels[0], &c.figure.panels[1]);
    // Computed here by hand: T(1)/T(n), and that over n.
    let want = [
        (1.0, 1.0),
        (2.0, 8.0 / 4.2),
        (4.0, 8.0 / 2.3),
        (8.0, 8.0 / 1.4),
    ];
    let got = &speedup.lines[0].points;
    assert_eq!(got.len(), 4);
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.0, w.0);
        assert!((g.1 - w.1).abs() < 1e-9, "{g:?} vs {w:?}");
    }
    for (g, w) in eff.lines[0].points.iter().zip(want) {
        assert!((g.1 - 100.0 * w.1 / w.0).abs() < 1e-9, "{g:?}");
    }
    assert_eq!(speedup.lines[0].name, "shm class=S kernel=ep");
    let ideal = speedup.lines.last().unwrap();
    assert_eq!(ideal.points, vec![(1.0, 1.0), (8.0, 8.0)]);
    // Speedups 1 to 8 within a decade: linear, from zero.
    assert_eq!(speedup.y.scale, Scale::Linear);
    // The ideal efficiency is a legend entry: a level's label would print over the first
    // point, where every kernel is at 100 %.
    let ideal = eff.lines.last().unwrap();
    assert_eq!(ideal.name, "ideal (100 %)");
    assert_eq!(ideal.points, vec![(1.0, 100.0), (8.0, 100.0)]);
    assert!(eff.levels.iter().all(|l| l.label.is_empty()));
    let svg = parse(&c.svg().unwrap());
    for t in [
        "speedup",
        "parallel efficiency (%)",
        "ranks",
        "shm class=S kernel=ep",
        "ideal (100 %)",
    ] {
        has_text(&svg, t);
    }
    check_png(c);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn autotune_decisions_show_their_sweeps_and_choice() {
    let all = charts(&["autotune", "autotune-hyperlink"]);
    let o = load(&["autotune"]);
    let o = o[0].autotune().unwrap();
    let d = o
        .decisions
        .iter()
        .find(|d| d.param == "eager_limit")
        .unwrap();

    let c = chart(&all, "autotune-rapidio-eager_limit");
    let p = &c.figure.panels[0];
    assert_eq!(p.lines[0].name, "eager forced (1MiB)");
    assert_eq!(p.lines[1].name, "rendezvous forced (0)");
    let chosen = p
        .marks
        .iter()
        .find(|m| m.label.starts_with("chosen"))
        .unwrap();
    assert_eq!(chosen.label, format!("chosen {}", d.chosen));
    assert_eq!(
        chosen.x,
        bench_core::size::parse_size(&d.chosen).unwrap() as f64
    );
    let near = &p.spans[0];
    assert_eq!(near.label, "near-equal");
    let svg = parse(&c.svg().unwrap());
    for t in [
        "chosen 11KiB",
        "default 4KiB",
        "near-equal",
        "eager forced (1MiB)",
        "bisection probes",
    ] {
        has_text(&svg, t);
    }
    check_png(c);

    let c = chart(&all, "autotune-rapidio-frag_size");
    let p = &c.figure.panels[0];
    assert_eq!(p.x.scale, Scale::Log2);
    // Relative to the best candidate at each size: the minimum of every line is 1.
    for l in &p.lines {
        let min = l
            .points
            .iter()
            .map(|&(_, y)| y)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(min, 1.0, "{}", l.name);
    }
    check_png(c);

    let c = chart(&all, "autotune-hyperlink-rx_thread");
    let p = &c.figure.panels[0];
    assert_eq!(p.levels[0].y, 1.0);
    assert_eq!(p.bands[0].name, "95 % interval");
    assert!(
        c.figure.title.contains("chosen off (default on)"),
        "{}",
        c.figure.title
    );
    let svg = parse(&c.svg().unwrap());
    has_text(&svg, "ratio of medians");
    check_png(c);
}

#[test]
fn a_directory_that_is_neither_kind_is_refused_by_name() {
    let tmp = std::env::temp_dir().join(format!("plots-empty-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let e = Input::load(&tmp).unwrap_err().to_string();
    assert!(e.starts_with(&tmp.display().to_string()), "{e}");
    assert!(e.contains("neither a run directory"), "{e}");
    let e = Input::load(&tmp.join("missing")).unwrap_err().to_string();
    assert!(e.ends_with("no such run directory"), "{e}");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn a_partial_run_is_marked_in_the_legend() {
    let input = Input::load(&data("emu")).unwrap();
    let mut run = input.run().unwrap().clone();
    let curve = |run: &results::Run| {
        plots::label::names(&[plots::label::Curve {
            run,
            series: &run.series[0],
        }])
    };
    assert!(!curve(&run)[0].contains("partial"));
    run.manifest.partial = Some(results::model::Partial {
        reason: "interrupted".into(),
        finished: Vec::new(),
    });
    assert_eq!(curve(&run), ["rapidio (emulated) (partial)"]);
}

/// The SVG's text elements with their anchor points: (text, x, y).
fn svg_text_positions(svg: &str) -> Vec<(String, f64, f64)> {
    let attr = |tag: &str, name: &str| -> Option<f64> {
        let k = format!(" {name}=\"");
        let i = tag.find(&k)? + k.len();
        tag[i..i + tag[i..].find('"')?].parse().ok()
    };
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        let body = &rest[i..];
        let open_end = body.find('>').unwrap() + 1;
        let close = body.find("</text>").unwrap();
        let tag = &body[..open_end];
        let text = body[open_end..close].trim().replace("&amp;", "&");
        out.push((text, attr(tag, "x").unwrap(), attr(tag, "y").unwrap()));
        rest = &body[close..];
    }
    out
}

/// The rules every chart keeps, checked on its layout (no text outside the image or over
/// another, no repeated tick label on an axis, log where values span a decade) and on its
/// SVG (every text the layout placed is there, anchored inside the image).
fn obeys_the_rules(c: &Chart) {
    let l = plots::layout::layout(&c.figure);
    let problems = l.problems();
    assert!(problems.is_empty(), "{}: {problems:#?}", c.name);
    let svg = c.svg().unwrap();
    let texts = svg_text_positions(&svg);
    let (w, h) = l.size();
    for (t, x, y) in &texts {
        assert!(
            (0.0..=f64::from(w)).contains(x) && (0.0..=f64::from(h)).contains(y),
            "{}: {t:?} anchored at ({x}, {y}) outside {w}x{h}",
            c.name
        );
    }
    for p in &l.texts {
        let t = p.text.replace('<', "&lt;").replace('>', "&gt;");
        assert!(
            texts.iter().any(|(s, _, _)| *s == p.text || *s == t),
            "{}: {:?} placed but not in the SVG",
            c.name,
            p.text
        );
    }
}

#[test]
fn every_chart_kind_keeps_the_layout_rules() {
    let mut all = charts(&["shm", "emu", "mpp", "autotune", "autotune-hyperlink"]);
    let tmp = std::env::temp_dir().join(format!("plots-rules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let inputs: Vec<Input> = kernel_runs(&tmp)
        .iter()
        .map(|d| Input::load(d).unwrap())
        .collect();
    all.extend(plots::charts(&inputs, &Options::default()).unwrap());
    let _ = std::fs::remove_dir_all(&tmp);
    let kinds: std::collections::BTreeSet<&str> = all
        .iter()
        .map(|c| c.name.split('-').next().unwrap())
        .collect();
    for k in [
        "latency",
        "bandwidth",
        "percentiles",
        "distribution",
        "mpptest",
        "kernels",
        "scaling",
        "autotune",
    ] {
        assert!(kinds.contains(k), "no {k} chart among {kinds:?}");
    }
    for c in &all {
        obeys_the_rules(c);
    }
}
