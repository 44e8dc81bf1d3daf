//! `fabbench report` end to end through the built binary, on runs of emulated fabrics (virtual
//! time: exact numbers, the same on every machine): runs with different sizes joined, with
//! ratios checked against the runs' own summary.csv; the column labels of --by fabric, run and
//! tunable; the shapes of Markdown and HTML; and every refusal as one line, exit 2, and no file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use crate::common::*;

/// The runs every test reports on, made once: all under one --out, so their ids differ even
/// when they start in the same second.
struct Runs {
    /// osu_latency on rapidio, 1 B to 8 KiB, eager_limit at its default (4 KiB).
    a: PathBuf,
    /// osu_latency on rapidio, 2 KiB to 32 KiB, eager_limit=16K: shares 2, 4 and 8 KiB with
    /// `a`, and at 8 KiB sends eagerly where `a` uses rendezvous, so the ratio there is not 1.
    b: PathBuf,
    /// osu_latency and osu_bw on rapidio and bxi, 1 to 64 B: one run, two fabrics.
    c: PathBuf,
}

fn runs() -> &'static Runs {
    static RUNS: OnceLock<Runs> = OnceLock::new();
    RUNS.get_or_init(|| {
        let _g = serial();
        let out = scratch("report-runs");
        let mk = |args: &[&str]| -> PathBuf {
            let before: Vec<PathBuf> = dirs(&out);
            let o = std::process::Command::new(bin())
                .args(args)
                .args(["-i", "5", "-x", "1", "--out"])
                .arg(&out)
                .output()
                .unwrap();
            assert!(
                o.status.success(),
                "fabbench {args:?} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let made: Vec<PathBuf> = dirs(&out)
                .into_iter()
                .filter(|d| !before.contains(d))
                .collect();
            assert_eq!(made.len(), 1, "{made:?}");
            made[0].clone()
        };
        Runs {
            a: mk(&["run", "osu_latency", "-m", "1:8K", "--fabric", "rapidio"]),
            b: mk(&[
                "run",
                "osu_latency",
                "-m",
                "2K:32K",
                "--fabric",
                "rapidio",
                "--set",
                "eager_limit=16K",
            ]),
            c: mk(&[
                "run",
                "osu_latency",
                "osu_bw",
                "-m",
                "1:64",
                "--fabric",
                "rapidio,bxi",
            ]),
        }
    })
}

fn dirs(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn id(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// How a report names runs `x` and `y` given together: by their short stamps (the naming
/// rule the charts share, tested on its own in results::naming), numbered when the two started
/// in the same second.
fn labels(x: &Path, y: &Path) -> (String, String) {
    let (a, b) = (id(x), id(y));
    let mut v = results::naming::short_stamps(&[&a, &b]).into_iter();
    let (a, b) = (v.next().unwrap(), v.next().unwrap());
    // The short stamp is the time of day: no longer than that, nor the whole id.
    assert!(!a.contains('T'), "{a}");
    (a, b)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn report(args: &[&str]) -> Output {
    let mut all = vec!["report"];
    all.extend_from_slice(args);
    raw(&all)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "fabbench report failed ({:?}): {}",
        o.status.code(),
        stderr(o)
    );
}

/// A run's summary.csv values: (suite, fabric, size) -> value.
fn summary(dir: &Path) -> BTreeMap<(String, String, u64), f64> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    let h = r.headers().unwrap().clone();
    let at = |name: &str| h.iter().position(|x| x == name).unwrap();
    let (suite, fabric, size, value) = (at("suite"), at("fabric"), at("size"), at("value"));
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            (
                (
                    rec[suite].to_string(),
                    rec[fabric].to_string(),
                    rec[size].parse().unwrap(),
                ),
                rec[value].parse().unwrap(),
            )
        })
        .collect()
}

/// A CSV report: its header, and each row's cells by column name.
fn parse_csv(text: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect();
    (header, rows)
}

fn float(cell: &str) -> Option<f64> {
    (!cell.is_empty()).then(|| cell.parse().unwrap())
}

#[test]
fn runs_with_different_sizes_join_and_ratios_are_the_summaries_quotient() {
    let r = runs();
    let (a, b) = labels(&r.a, &r.b);
    let out_dir = scratch("report-csv");
    let file = out_dir.join("report.csv");
    let o = report(&[
        s(&r.a),
        s(&r.b),
        "--by",
        "run",
        "--reference",
        s(&r.a),
        "--format",
        "csv",
        "-o",
        s(&file),
    ]);
    ok(&o);
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert_eq!(files(&out_dir), [PathBuf::from("report.csv")]);
    let (header, rows) = parse_csv(&std::fs::read_to_string(&file).unwrap());
    let ratio = format!("{b}/{a}");
    assert_eq!(
        header,
        ["suite", "metric", "unit", "size", "params", &a, &b, &ratio]
    );
    let (sa, sb) = (summary(&r.a), summary(&r.b));
    let key = |size: u64| ("osu_latency".to_string(), "rapidio".to_string(), size);
    let sizes: Vec<u64> = rows.iter().map(|r| r["size"].parse().unwrap()).collect();
    let want: Vec<u64> = (0..=15).map(|k| 1u64 << k).collect();
    assert_eq!(sizes, want, "every size of either run, ascending");
    let mut differing = 0;
    for row in &rows {
        let size: u64 = row["size"].parse().unwrap();
        assert_eq!(
            (
                row["suite"].as_str(),
                row["metric"].as_str(),
                row["unit"].as_str()
            ),
            ("osu_latency", "latency", "us")
        );
        assert_eq!(row["params"], "");
        let (va, vb) = (sa.get(&key(size)), sb.get(&key(size)));
        assert_eq!(float(&row[&a]), va.copied(), "{a} at {size}");
        assert_eq!(float(&row[&b]), vb.copied(), "{b} at {size}");
        match (va, vb) {
            (Some(va), Some(vb)) => {
                let got = float(&row[&ratio]).unwrap();
                assert_eq!(got, vb / va, "the ratio at {size}: B's value over A's");
                if got != 1.0 {
                    differing += 1;
                }
            }
            _ => assert_eq!(row[&ratio], "", "no ratio at {size}: a value is missing"),
        }
    }
    // At 8 KiB A's eager limit (4 KiB) sends by rendezvous and B's (16 KiB) eagerly.
    assert!(differing >= 1, "no shared size has a ratio other than 1");
    // Sizes only one run measured are empty cells, in either direction.
    let at = |size: &str| rows.iter().find(|r| r["size"] == size).unwrap();
    assert_eq!((at("1")[&b].as_str(), at("32768")[&a].as_str()), ("", ""));
}

#[test]
fn by_fabric_names_the_run_only_for_a_fabric_in_several() {
    let r = runs();
    let (a, c) = labels(&r.a, &r.c);
    let o = report(&[s(&r.c), "--by", "fabric", "--format", "csv"]);
    ok(&o);
    let (header, rows) = parse_csv(&stdout(&o));
    assert_eq!(header[5..], ["rapidio", "bxi"]);
    // osu_latency first (the order the run has its suites), then osu_bw; sizes ascending.
    let order: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r["suite"].clone(), r["size"].clone()))
        .collect();
    let sizes = ["1", "2", "4", "8", "16", "32", "64"];
    let want: Vec<(String, String)> = ["osu_latency", "osu_bw"]
        .iter()
        .flat_map(|s| sizes.iter().map(|z| (s.to_string(), z.to_string())))
        .collect();
    assert_eq!(order, want);
    let sc = summary(&r.c);
    for row in &rows {
        for fabric in ["rapidio", "bxi"] {
            let k = (
                row["suite"].clone(),
                fabric.to_string(),
                row["size"].parse().unwrap(),
            );
            assert_eq!(float(&row[fabric]), Some(sc[&k]), "{k:?}");
        }
        assert_eq!(
            row["unit"],
            if row["suite"] == "osu_bw" {
                "MB/s"
            } else {
                "us"
            }
        );
    }

    // With A too, rapidio is in two runs: those columns name their run; bxi is in one.
    let o = report(&[
        s(&r.a),
        s(&r.c),
        "--by",
        "fabric",
        "--reference",
        s(&r.c),
        "--format",
        "csv",
    ]);
    ok(&o);
    let (header, rows) = parse_csv(&stdout(&o));
    let ra = format!("rapidio · {a}");
    let rc = format!("rapidio · {c}");
    assert_eq!(
        header[5..],
        [ra.clone(), rc.clone(), "bxi".into(), format!("{ra}/{rc}")]
    );
    let sa = summary(&r.a);
    let row = rows
        .iter()
        .find(|r| r["suite"] == "osu_latency" && r["size"] == "64")
        .unwrap();
    let k = |f: &str| ("osu_latency".to_string(), f.to_string(), 64u64);
    assert_eq!(
        float(&row[&format!("{ra}/{rc}")]),
        Some(sa[&k("rapidio")] / sc[&k("rapidio")])
    );
    // A measured no bandwidth: its column is empty on osu_bw's rows.
    assert!(rows
        .iter()
        .filter(|r| r["suite"] == "osu_bw")
        .all(|r| r[&ra].is_empty() && !r[&rc].is_empty()));
}

#[test]
fn by_run_names_the_fabric_only_for_a_run_with_several() {
    let r = runs();
    let (a, c) = labels(&r.a, &r.c);
    let o = report(&[s(&r.a), s(&r.c), "--by", "run", "--format", "csv"]);
    ok(&o);
    let (header, _) = parse_csv(&stdout(&o));
    assert_eq!(
        header[5..],
        [a, format!("rapidio · {c}"), format!("bxi · {c}")]
    );
}

#[test]
fn by_tunable_labels_are_the_settings_that_differ() {
    let r = runs();
    let o = report(&[s(&r.a), s(&r.b), "--by", "tunable", "--format", "csv"]);
    ok(&o);
    let (header, _) = parse_csv(&stdout(&o));
    assert_eq!(header[5..], ["eager_limit=4KiB", "eager_limit=16KiB"]);
    // rapidio and bxi of one run, both at their defaults: nothing tells them apart.
    let o = report(&[s(&r.c), "--by", "tunable"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("error: --by tunable") && e.contains("--by run"),
        "{e}"
    );
}

#[test]
fn a_scaling_runs_columns_name_their_rank_counts() {
    let out = scratch("report-scaling");
    {
        let _g = serial();
        let o = std::process::Command::new(bin())
            .args([
                "run", "npb", "--kernel", "ep", "-n", "1,2,4", "--fabric", "rapidio",
            ])
            .args(["--out", s(&out)])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let scaling = dirs(&out).remove(0);
    // Each count's run directory (SCALING/nN/RUN_ID) and its Mop/s from its summary.csv.
    let mops = |n: usize| -> f64 {
        let run = dirs(&scaling.join(format!("n{n}"))).remove(0);
        let mut r = csv::Reader::from_path(run.join("summary.csv")).unwrap();
        let h = r.headers().unwrap().clone();
        let at = |name: &str| h.iter().position(|x| x == name).unwrap();
        let (metric, value) = (at("metric"), at("value"));
        r.records()
            .map(Result::unwrap)
            .find(|rec| &rec[metric] == "mops")
            .unwrap()[value]
            .parse()
            .unwrap()
    };
    let o = report(&[s(&scaling), "--format", "csv"]);
    ok(&o);
    let (header, rows) = parse_csv(&stdout(&o));
    assert_eq!(header[5..], ["rapidio n=1", "rapidio n=2", "rapidio n=4"]);
    // Each column holds its own count's numbers, not another's.
    let row = rows.iter().find(|r| r["metric"] == "mops").unwrap();
    for n in [1, 2, 4] {
        assert_eq!(
            float(&row[&format!("rapidio n={n}")]),
            Some(mops(n)),
            "n={n}"
        );
    }
    // --by run names each run, and the count after it; --by tunable, where no setting
    // differs, the count alone.
    let o = report(&[s(&scaling), "--by", "run", "--format", "csv"]);
    ok(&o);
    let (header, _) = parse_csv(&stdout(&o));
    for (label, n) in header[5..].iter().zip([1, 2, 4]) {
        assert!(label.ends_with(&format!(" n={n}")), "{header:?}");
    }
    let o = report(&[s(&scaling), "--by", "tunable", "--format", "csv"]);
    ok(&o);
    let (header, _) = parse_csv(&stdout(&o));
    assert_eq!(header[5..], ["n=1", "n=2", "n=4"]);
}

#[test]
fn the_text_table_has_a_legend_and_a_table_per_suite() {
    let r = runs();
    // Columns are named by label, runs by id.
    let (ia, ib) = (id(&r.a), id(&r.b));
    let (a, b) = labels(&r.a, &r.b);
    let o = report(&[s(&r.a), s(&r.b), "--by", "run", "--reference", &ia]);
    ok(&o);
    let out = stdout(&o);
    assert!(out.starts_with("# fabbench report: 2 runs"), "{out}");
    assert!(
        out.contains(&format!(
            "#   {b}: run {ib}, fabric rapidio (emulated, virtual time), host "
        )),
        "{out}"
    );
    assert!(out.contains("eager_limit=16KiB"), "{out}");
    assert!(
        out.contains(&format!("# reference: run {ia} (column {a});")),
        "{out}"
    );
    let table = out.split("# osu_latency: latency (us)\n").nth(1).unwrap();
    // Columns are two spaces apart at least; a label may hold one (`15:08:01 #2`).
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap()
        .split("  ")
        .map(str::trim)
        .filter(|h| !h.is_empty())
        .collect();
    let ratio = format!("{b}/{a}");
    assert_eq!(header, ["size", &a, &b, &ratio]);
    let (sa, sb) = (summary(&r.a), summary(&r.b));
    let k = |size: u64| ("osu_latency".to_string(), "rapidio".to_string(), size);
    let line = |size: &str| -> Vec<String> {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(size))
            .unwrap()
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    assert_eq!(
        line("8192"),
        [
            "8192".to_string(),
            format!("{:.2}", sa[&k(8192)]),
            format!("{:.2}", sb[&k(8192)]),
            format!("{:.3}", sb[&k(8192)] / sa[&k(8192)]),
        ]
    );
    assert_eq!(line("1")[2..], ["-", "-"]);
    assert_eq!(line("32768")[1], "-");
}

#[test]
fn markdown_has_the_legend_tables_and_links_only_to_written_figures() {
    let r = runs();
    // Columns are named by label, runs by id.
    let ia = id(&r.a);
    let (a, b) = labels(&r.a, &r.b);
    let out_dir = scratch("report-md");
    let file = out_dir.join("report.md");
    let o = report(&[
        s(&r.a),
        s(&r.b),
        "--by",
        "run",
        "--reference",
        &ia,
        "--format",
        "markdown",
        "-o",
        s(&file),
    ]);
    ok(&o);
    let md = std::fs::read_to_string(&file).unwrap();
    assert!(md.starts_with("# fabbench report\n\n2 runs, "), "{md}");
    assert!(
        md.contains("| column | run | fabric | kind | host | started | settings |\n| --- |"),
        "{md}"
    );
    assert!(
        md.contains(&format!("\nReference: run {ia} (column {a}); ")),
        "{md}"
    );
    let (sa, sb) = (summary(&r.a), summary(&r.b));
    let k = |size: u64| ("osu_latency".to_string(), "rapidio".to_string(), size);
    let section = md.split("## osu_latency: latency (us)\n\n").nth(1).unwrap();
    let lines: Vec<&str> = section.lines().collect();
    assert_eq!(lines[0], format!("| size | {a} | {b} | {b}/{a} |"));
    assert_eq!(lines[1], "| ---: | ---: | ---: | ---: |");
    assert_eq!(lines[2], format!("| 1 | {:.2} | - | - |", sa[&k(1)]));
    assert!(
        lines.contains(
            &format!(
                "| 8192 | {:.2} | {:.2} | {:.3} |",
                sa[&k(8192)],
                sb[&k(8192)],
                sb[&k(8192)] / sa[&k(8192)]
            )
            .as_str()
        ),
        "{md}"
    );
    // Every figure linked is a file written beside the report, and nothing else is there.
    let plots = out_dir.join("report-plots");
    let links: Vec<&str> = md
        .lines()
        .filter_map(|l| l.strip_prefix("!["))
        .map(|l| l.rsplit_once("](").unwrap().1.trim_end_matches(')'))
        .collect();
    for l in &links {
        assert!(l.starts_with("report-plots/"), "{l}");
        assert!(out_dir.join(l).is_file(), "{l} is linked but not written");
    }
    let written = if plots.is_dir() {
        files(&plots).len()
    } else {
        0
    };
    assert_eq!(written, links.len());
    assert!(files(&out_dir)
        .iter()
        .all(|f| f == Path::new("report.md") || f.starts_with("report-plots")));

    // On stdout: no image links (nothing beside it to link to), at most one note saying so.
    let o = report(&[s(&r.a), s(&r.b), "--by", "run", "--format", "markdown"]);
    ok(&o);
    let out = stdout(&o);
    assert!(!out.contains("!["), "{out}");
    assert!(out.matches("<!--").count() <= 1, "{out}");
    assert!(out.contains("## osu_latency: latency (us)"), "{out}");
}

#[test]
fn html_is_one_standalone_page() {
    let r = runs();
    let (a, _) = labels(&r.a, &r.c);
    let out_dir = scratch("report-html");
    let file = out_dir.join("report.html");
    let o = report(&[
        s(&r.a),
        s(&r.c),
        "--by",
        "fabric",
        "--reference",
        s(&r.a),
        "--format",
        "html",
        "-o",
        s(&file),
    ]);
    ok(&o);
    assert_eq!(files(&out_dir), [PathBuf::from("report.html")]);
    let html = std::fs::read_to_string(&file).unwrap();
    assert!(
        html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">")
    );
    assert!(html.trim_end().ends_with("</html>"));
    for external in ["<link", "<script", "src=\"http", "href=\"http", "@import"] {
        assert!(!html.contains(external), "{external} in the page");
    }
    assert!(
        html.contains("<h2>osu_latency: latency (us) <small>· lower is better</small></h2>"),
        "{html}"
    );
    assert!(
        html.contains("<h2>osu_bw: bandwidth (MB/s) <small>· higher is better</small></h2>"),
        "{html}"
    );
    // Every ratio is against A's rapidio: it heads the ratios, named as the columns are.
    assert!(
        html.contains(&format!("class=\"group\">ratio to rapidio · {a}</th>")),
        "{html}"
    );
    // The full run ids, once each, in the table of columns.
    for dir in [&r.a, &r.c] {
        let cell = format!("<td class=\"id\">{}</td>", id(dir));
        assert!(html.contains(&cell), "{cell} in {html}");
    }
    let k = |f: &str| ("osu_latency".to_string(), f.to_string(), 64u64);
    let (sa, sc) = (summary(&r.a), summary(&r.c));
    // A latency ratio below 1 is better (a sign and a class, not colour alone).
    let marked = |ratio: f64| {
        let (class, sign) = match (format!("{ratio:.3}") == "1.000", ratio < 1.0) {
            (true, _) => ("same", "="),
            (false, true) => ("better", "▲"),
            (false, false) => ("worse", "▼"),
        };
        (class, format!("{sign} {ratio:.3}"))
    };
    let (m1, t1) = marked(sc[&k("rapidio")] / sa[&k("rapidio")]);
    let (m2, t2) = marked(sc[&k("bxi")] / sa[&k("rapidio")]);
    let row = format!(
        "<tr><th class=\"idx num\">64</th><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num ratio {m1} first\">{t1}</td><td class=\"num ratio {m2}\">{t2}</td></tr>",
        sa[&k("rapidio")],
        sc[&k("rapidio")],
        sc[&k("bxi")],
    );
    assert!(html.contains(&row), "{row} not in {html}");
}

/// Runs `fabbench report ARGS -o DIR/out.csv` and checks the refusal: exit 2, one line on
/// stderr containing `names`, nothing on stdout, no file written.
fn refused(args: &[&str], names: &str) {
    let out_dir = scratch("report-refused");
    let file = out_dir.join("out.csv");
    let mut all = args.to_vec();
    all.extend(["--format", "csv", "-o", s(&file)]);
    let o = report(&all);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.lines().count(), 1, "{args:?}: {e}");
    assert!(
        e.starts_with("error: ") && e.contains(names),
        "{args:?}: {e}"
    );
    assert!(stdout(&o).is_empty(), "{args:?}");
    assert!(
        files(&out_dir).is_empty(),
        "{args:?} left {:?}",
        files(&out_dir)
    );
}

/// A copy of a run directory, to damage.
fn copy(dir: &Path, name: &str) -> PathBuf {
    let to = scratch(name).join(id(dir));
    for f in files(dir) {
        let dest = to.join(&f);
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(dir.join(&f), dest).unwrap();
    }
    to
}

#[test]
fn a_missing_run_directory_is_one_line() {
    let r = runs();
    let missing = scratch("report-missing").join("no-such-run");
    refused(&[s(&r.a), s(&missing)], s(&missing));
}

#[test]
fn a_directory_without_a_manifest_is_one_line() {
    let r = runs();
    let empty = scratch("report-empty");
    let manifest = empty.join("manifest.json");
    refused(&[s(&r.a), s(&empty)], s(&manifest));
}

#[test]
fn a_corrupt_samples_csv_is_one_line() {
    let r = runs();
    let bad = copy(&r.b, "report-corrupt");
    let samples = bad.join("samples.csv");
    let text = std::fs::read_to_string(&samples).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    // The last sample's nanoseconds are not a number.
    let last = lines.pop().unwrap();
    let (head, _) = last.rsplit_once(',').unwrap();
    lines.push(format!("{head},twelve"));
    std::fs::write(&samples, lines.join("\n") + "\n").unwrap();
    refused(&[s(&r.a), s(&bad)], s(&samples));
}

#[test]
fn an_unknown_by_is_one_line() {
    let r = runs();
    refused(&[s(&r.a), "--by", "size"], "--by");
}

#[test]
fn a_reference_not_among_the_runs_is_one_line() {
    let r = runs();
    let (a, b) = (id(&r.a), id(&r.b));
    refused(
        &[s(&r.a), s(&r.b), "--reference", s(&r.c)],
        &format!(
            "--reference {} is not among the runs given ({a}, {b})",
            s(&r.c)
        ),
    );
}

#[test]
fn the_same_run_twice_is_one_line() {
    let r = runs();
    let again = copy(&r.a, "report-again");
    refused(
        &[s(&r.a), s(&again)],
        &format!("copies of the same run, {}", id(&r.a)),
    );
}

#[test]
fn fabbench_directories_that_are_not_runs_are_left_out_by_name() {
    // `fabbench report fabbench-results/*` meets autotune, characterise and calibrate
    // directories beside the runs; each is named on stderr and the runs are reported.
    let r = runs();
    let others = scratch("report-others");
    let mut args = vec![s(&r.a).to_string()];
    for (name, file) in [
        ("autotune", "autotune.json"),
        ("characterise", "fit.json"),
        ("calibrate", "calibration.json"),
    ] {
        let dir = others.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(file), "{}").unwrap();
        args.push(s(&dir).to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = report(&args);
    ok(&o);
    let e = stderr(&o);
    for kind in [
        "an autotune directory",
        "a characterisation",
        "a calibration",
    ] {
        assert!(
            e.contains(&format!("is {kind}, not a run: left out")),
            "{e}"
        );
    }
    assert!(stdout(&o).contains("osu_latency"), "{}", stdout(&o));
}
