//! `fabbench compare --references FILE RUN` through the real binary, on an emulated run whose
//! numbers are exact (osu_latency and osu_bw on rapidio, 1 B to 1 KiB, 20 iterations: 39.45335
//! us one-way at 1 KiB, 36.80195420533195 MB/s): references within tolerance pass (exit 0), a
//! tightened one fails (exit 1), as does a point the run did not measure; a unit mismatch, an
//! unknown metric, a malformed file or two run directories exit 2 with one line. A file written
//! by `fabbench export --format refs` passes against its own run, exactly at tolerance 0.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::common::*;

const LATENCY_1K: f64 = 39.45335;
const BANDWIDTH_1K: f64 = 36.80195420533195;

fn the_run() -> &'static Path {
    static RUN: OnceLock<PathBuf> = OnceLock::new();
    RUN.get_or_init(|| {
        let _s = serial();
        let args = [
            "run",
            "osu_latency",
            "osu_bw",
            "-m",
            "1:1024",
            "-i",
            "20",
            "-x",
            "2",
            "--fabric",
            "rapidio",
        ];
        run("references", &args).ok().to_path_buf()
    })
}

/// A reference file with `text` in a fresh directory.
fn refs_file(name: &str, text: &str) -> PathBuf {
    let path = scratch(name).join("refs.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// One `[[reference]]` table.
fn entry(suite: &str, size: u64, value: f64, bounds: &str, unit: &str) -> String {
    format!(
        "[[reference]]\nsuite = \"{suite}\"\nfabric = \"rapidio\"\nsize = {size}\nvalue = \
         {value:?}\n{bounds}\nunit = \"{unit}\"\n\n"
    )
}

/// `fabbench compare --references FILE RUN EXTRA...`: (status, stdout, stderr).
fn check(file: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "compare",
        "--references",
        file.to_str().unwrap(),
        the_run().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = raw(&args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn within() -> String {
    entry(
        "osu_latency",
        1024,
        39.45,
        "lower = -0.01\nupper = 0.01",
        "us",
    ) + &entry("osu_bw", 1024, 36.8, "lower = -0.001", "MB/s")
}

#[test]
fn references_within_tolerance_pass() {
    let file = refs_file("refs-pass", &within());
    let (code, stdout, stderr) = check(&file, &["--format", "json"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(j["passed"], true);
    let c = &j["checks"];
    assert_eq!(c[0]["measured"], LATENCY_1K);
    assert_eq!(c[0]["metric"], "latency");
    assert_eq!(c[1]["measured"], BANDWIDTH_1K);
    assert_eq!(c[1]["max_allowed"], serde_json::Value::Null);
    assert_eq!(
        (c[0]["verdict"].as_str(), c[1]["verdict"].as_str()),
        (Some("pass"), Some("pass"))
    );
    let (code, table, _) = check(&file, &[]);
    assert_eq!(code, 0);
    assert!(
        table.ends_with("2 references: 2 pass, 0 fail, 0 not measured\n"),
        "{table}"
    );
}

#[test]
fn a_tightened_reference_fails_and_the_exports_say_so() {
    // 39.45335 is 0.0085 % above 39.45: a 0.005 % upper bound fails it
    let text = within().replace("upper = 0.01", "upper = 0.00005");
    let file = refs_file("refs-tight", &text);
    let dir = file.parent().unwrap().to_path_buf();
    let md = dir.join("summary/check.md");
    let json = dir.join("check.json");
    let (code, stdout, stderr) = check(
        &file,
        &[
            "--export-markdown",
            md.to_str().unwrap(),
            "--export-json",
            json.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 1, "{stdout}{stderr}");
    let failing = stdout.lines().find(|l| l.starts_with("1 ")).unwrap();
    assert!(
        failing.contains("39.4534") && failing.ends_with("FAIL"),
        "{stdout}"
    );
    assert!(stdout.ends_with("2 references: 1 pass, 1 fail, 0 not measured\n"));
    let md = std::fs::read_to_string(md).unwrap();
    assert!(
        md.starts_with("### fabbench reference check: 1 of 2 failed\n"),
        "{md}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(j["checks"][0]["verdict"], "fail");
    assert_eq!(j["checks"][0]["max_allowed"], 39.45 + 39.45 * 0.00005);
}

#[test]
fn a_point_the_run_did_not_measure_fails() {
    let text = within() + &entry("osu_latency", 2048, 45.0, "upper = 0.1", "us");
    let (code, stdout, _) = check(&refs_file("refs-missing", &text), &[]);
    assert_eq!(code, 1, "{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("3 ")).unwrap();
    assert!(
        line.contains("size 2048") && line.ends_with("FAIL: not measured"),
        "{stdout}"
    );
}

#[test]
fn unjudgeable_input_exits_2_with_one_line() {
    let ms = within().replacen("unit = \"us\"", "unit = \"ms\"", 1);
    let metric = within().replacen("size = 1024\n", "size = 1024\nmetric = \"bandwidth\"\n", 1);
    let typo = within().replacen("lower = -0.01", "lowr = -0.01", 1);
    let syntax = within().replacen("value = 39.45", "value = 39.45.1", 1);
    let cases = [
        (ms, "reference 1 (osu_latency on rapidio, size 1024, latency): unit \"ms\" but the run measures latency in \"us\""),
        (metric, "reference 1 (osu_latency on rapidio, size 1024): the run has no metric \"bandwidth\""),
        (typo, "refs.toml: reference 1: unknown field `lowr`, expected one of"),
        (syntax, "refs.toml line 5: "),
        ("".to_string(), "no [[reference]] tables"),
    ];
    for (text, says) in cases {
        let (code, stdout, stderr) = check(&refs_file("refs-bad", &text), &[]);
        assert_eq!(code, 2, "{says}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(says),
            "{says}: {stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
    }
    let file = refs_file("refs-two-runs", &within());
    let run = the_run().to_str().unwrap();
    let out = raw(&["compare", "--references", file.to_str().unwrap(), run, run]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1);
    assert!(
        stderr.contains("--references checks one run; 2 run directories"),
        "{stderr}"
    );
    let missing = Path::new("/nonexistent/refs.toml");
    let (code, _, stderr) = check(missing, &[]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: cannot read /nonexistent/refs.toml"),
        "{stderr}"
    );
}

#[test]
fn a_reference_file_exported_from_a_run_passes_against_it_exactly() {
    let out = scratch("refs-export");
    for (tolerance, code) in [("0", 0), ("5%", 0)] {
        let export = raw(&[
            "export",
            the_run().to_str().unwrap(),
            "--format",
            "refs",
            "--tolerance",
            tolerance,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(export.status.code(), Some(0), "{export:?}");
        let path = out.join("refs.toml");
        assert_eq!(
            String::from_utf8_lossy(&export.stdout).trim(),
            path.to_str().unwrap()
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches("[[reference]]").count(), 22, "{text}");
        let (got, stdout, stderr) = check(&path, &[]);
        assert_eq!(got, code, "{stdout}{stderr}");
        assert!(stdout.ends_with("22 references: 22 pass, 0 fail, 0 not measured\n"));
    }
    // at tolerance 0 the gate is exact: a reference 0.05 ns below the value fails
    let text = std::fs::read_to_string(out.join("refs.toml")).unwrap();
    let exact = text
        .replace("lower = -0.05", "lower = 0.0")
        .replace("upper = 0.05", "upper = 0.0")
        .replacen("value = 39.45335\n", "value = 39.4533\n", 1);
    assert!(exact.contains("value = 39.4533\n"));
    let (code, stdout, _) = check(&refs_file("refs-exact", &exact), &[]);
    assert_eq!(code, 1);
    assert!(
        stdout.ends_with("22 references: 21 pass, 1 fail, 0 not measured\n"),
        "{stdout}"
    );
}
