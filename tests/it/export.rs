//! `fabbench export` through the real binary on a small emulated run (osu_latency and osu_bw on
//! rapidio, 1 B to 1 KiB): the github-action-benchmark files and bmf.json are read back with
//! strict structs that mirror exactly what each tool documents (github-action-benchmark: an
//! array of {name, unit, value, range?, extra?}, strings and a number; Bencher: benchmark ->
//! measure -> {value, lower_value?, upper_value?}, numbers), latency lands only in the
//! smaller-is-better file and bandwidth only in the bigger one, names are unique and the same
//! from run to run, values are summary.csv's, bounds are ordered; scaling directories, --out
//! and bad input behave as documented.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::*;
use serde::Deserialize;

/// One entry of a customSmallerIsBetter / customBiggerIsBetter file, field for field as the
/// action's README documents it (and its parser reads it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GabEntry {
    name: String,
    unit: String,
    value: f64,
    #[serde(default)]
    range: Option<String>,
    #[serde(default)]
    extra: Option<String>,
}

/// A Bencher Metric Format metric, as its JSON schema has it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BmfMetric {
    value: f64,
    #[serde(default)]
    lower_value: Option<f64>,
    #[serde(default)]
    upper_value: Option<f64>,
}

type Bmf = BTreeMap<String, BTreeMap<String, BmfMetric>>;

const SIZES: usize = 11; // 1, 2, 4 ... 1024

fn make_run(name: &str, iterations: &str) -> PathBuf {
    let _s = serial();
    let args = [
        "run",
        "osu_latency",
        "osu_bw",
        "-m",
        "1:1024",
        "-i",
        iterations,
        "-x",
        "2",
        "--fabric",
        "rapidio",
    ];
    run(name, &args).ok().to_path_buf()
}

/// The run the tests share (made once).
fn the_run() -> &'static Path {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| make_run("export", "20"))
}

/// `fabbench export ARGS`: (status, stdout, stderr).
fn export(args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    let out = raw(&all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn export_ok(dir: &Path, format: &str, extra: &[&str]) -> Vec<PathBuf> {
    let d = dir.to_str().unwrap();
    let mut args = vec![d, "--format", format];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = export(&args);
    assert_eq!(code, 0, "stdout:\n{stdout}\nstderr:\n{stderr}");
    stdout.lines().map(PathBuf::from).collect()
}

/// summary.csv's value per (suite, size).
fn summary_values(dir: &Path) -> BTreeMap<(String, u64), f64> {
    let mut r = csv::Reader::from_path(dir.join("summary.csv")).unwrap();
    r.records()
        .map(|x| x.unwrap())
        .map(|x| {
            (
                (x[0].to_string(), x[4].parse().unwrap()),
                x[8].parse().unwrap(),
            )
        })
        .collect()
}

fn read_gab(path: &Path) -> Vec<GabEntry> {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

fn read_bmf(path: &Path) -> Bmf {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// The (suite, size) a name of the form SUITE/FABRIC/2 ranks/size N[/METRIC] stands for.
fn point_of(name: &str) -> (String, u64) {
    let parts: Vec<&str> = name.split('/').collect();
    assert_eq!(&parts[1..3], ["rapidio", "2 ranks"], "{name}");
    let size = parts[3].strip_prefix("size ").unwrap().parse().unwrap();
    (parts[0].to_string(), size)
}

#[test]
fn gab_files_hold_latency_smaller_and_bandwidth_bigger_in_the_documented_shape() {
    let dir = the_run();
    let paths = export_ok(dir, "gab", &[]);
    let ci = dir.join("ci");
    assert_eq!(
        paths,
        [
            ci.join("gab-smaller-is-better.json"),
            ci.join("gab-bigger-is-better.json")
        ]
    );
    let values = summary_values(dir);
    let smaller = read_gab(&paths[0]);
    let bigger = read_gab(&paths[1]);
    assert_eq!((smaller.len(), bigger.len()), (SIZES, SIZES));
    for (entries, suite, metric, unit) in [
        (&smaller, "osu_latency", "latency", "us"),
        (&bigger, "osu_bw", "bandwidth", "MB/s"),
    ] {
        for e in entries {
            assert!(e.name.starts_with(&format!("{suite}/")), "{e:?}");
            assert!(e.name.ends_with(&format!("/{metric}")), "{e:?}");
            assert_eq!(e.unit, unit);
            assert_eq!(e.value, values[&point_of(&e.name)], "{e:?}");
            // the form the action parses a range in: "±" or "+-", then a number
            let range = e.range.as_deref().unwrap();
            let spread: f64 = range.strip_prefix('±').unwrap().parse().unwrap();
            assert!(spread >= 0.0, "{range}");
            let extra = e.extra.as_deref().unwrap();
            assert!(extra.starts_with("samples: 20\nmin: "), "{extra}");
        }
    }
    let names: HashSet<&str> = smaller
        .iter()
        .chain(&bigger)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names.len(), 2 * SIZES, "names are unique");
    assert_eq!(
        smaller[SIZES - 1].name,
        "osu_latency/rapidio/2 ranks/size 1024/latency"
    );
}

#[test]
fn bmf_matches_bencher_schema_with_ordered_bounds() {
    let dir = the_run();
    let paths = export_ok(dir, "bmf", &[]);
    assert_eq!(paths, [dir.join("ci").join("bmf.json")]);
    let bmf = read_bmf(&paths[0]);
    let values = summary_values(dir);
    // a benchmark per point: none merged
    assert_eq!(bmf.len(), 2 * SIZES);
    for (name, measures) in &bmf {
        assert!(!name.is_empty() && name.len() <= 1024, "{name}");
        let point = point_of(name);
        let slug = if point.0 == "osu_latency" {
            "latency-us"
        } else {
            "bandwidth-mb-s"
        };
        let slugs: Vec<&String> = measures.keys().collect();
        assert_eq!(slugs, [slug], "{name}");
        for slug in measures.keys() {
            // Bencher's slugs: lowercase letters and digits in hyphen-joined words, <= 64
            assert!(slug.len() <= 64);
            assert!(slug.split('-').all(|w| !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())));
        }
        let m = &measures[slug];
        assert_eq!(m.value, values[&point], "{name}");
        let (lo, hi) = (m.lower_value.unwrap(), m.upper_value.unwrap());
        assert!(lo <= m.value && m.value <= hi, "{name}: {m:?}");
    }
}

#[test]
fn names_are_the_same_from_run_to_run() {
    let first = the_run();
    let second = make_run("export-again", "10");
    let names = |dir: &Path| -> Vec<String> {
        let paths = export_ok(dir, "gab", &[]);
        let mut n: Vec<String> = paths
            .iter()
            .flat_map(|p| read_gab(p))
            .map(|e| e.name)
            .collect();
        n.extend(read_bmf(&export_ok(dir, "bmf", &[])[0]).into_keys());
        n
    };
    assert_eq!(names(first), names(&second));
}

#[test]
fn out_puts_the_files_elsewhere_and_a_scaling_directory_exports_each_run() {
    let dir = the_run();
    let out = scratch("export-out");
    let paths = export_ok(dir, "bmf", &["--out", out.to_str().unwrap()]);
    assert_eq!(paths, [out.join("bmf.json")]);
    // a scaling run's directory: scaling.csv and nN/RUN_ID inside
    let scaling = scratch("export-scaling");
    std::fs::write(scaling.join("scaling.csv"), "").unwrap();
    let id = dir.file_name().unwrap();
    for n in ["n2", "n4"] {
        std::fs::create_dir_all(scaling.join(n)).unwrap();
        let copy = scaling.join(n).join(id);
        std::fs::create_dir_all(&copy).unwrap();
        for f in ["manifest.json", "samples.csv"] {
            std::fs::copy(dir.join(f), copy.join(f)).unwrap();
        }
    }
    let each = export_ok(&scaling, "gab", &[]);
    assert_eq!(each.len(), 4);
    assert_eq!(
        each[0],
        scaling
            .join("n2")
            .join(id)
            .join("ci/gab-smaller-is-better.json")
    );
    assert_eq!(
        each[3],
        scaling
            .join("n4")
            .join(id)
            .join("ci/gab-bigger-is-better.json")
    );
    let elsewhere = scratch("export-scaling-out");
    let each = export_ok(&scaling, "bmf", &["-o", elsewhere.to_str().unwrap()]);
    assert_eq!(
        each,
        [
            elsewhere.join("n2").join(id).join("bmf.json"),
            elsewhere.join("n4").join(id).join("bmf.json")
        ]
    );
}

#[test]
fn bad_input_is_one_line_and_writes_nothing() {
    let dir = the_run();
    let d = dir.to_str().unwrap();
    let empty = scratch("export-not-a-run");
    let e = empty.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["/nonexistent/run", "--format", "gab"],
            "is not a directory",
        ),
        (&[e, "--format", "bmf"], "manifest.json"),
        (&[d, "--format", "csv"], "possible values: gab, bmf, refs"),
        (&[d], "--format"),
        (
            &[d, "--format", "gab", "--tolerance", "5%"],
            "--tolerance applies to --format refs only",
        ),
    ];
    for (args, says) in cases {
        let (code, stdout, stderr) = export(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{args:?}: {stderr}"
        );
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    let (code, _, stderr) = export(&[d, "--format", "refs", "--tolerance", "150%"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("from 0 to 1"), "{stderr}");
    assert!(
        files(&empty).is_empty(),
        "nothing written: {:?}",
        files(&empty)
    );
}
