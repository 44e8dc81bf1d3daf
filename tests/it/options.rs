//! Options every command shares, spelled one way: each command that writes takes `-o/--out`
//! (run, autotune, characterise, calibrate, plot, export, and fabbench-report's file), and the
//! spellings that shipped before (report's `--output`) still parse.

use std::path::Path;

use crate::common::*;

fn ok(args: &[&str]) -> String {
    let out = raw(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether `dir` holds anything.
fn filled(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

#[test]
fn every_command_that_writes_takes_dash_o() {
    // The ones that measure for a while: their help says it (clap derives it from the option).
    for cmd in [
        "run",
        "autotune",
        "characterise",
        "calibrate",
        "plot",
        "export",
    ] {
        let help = ok(&[cmd, "--help"]);
        assert!(help.contains("-o, --out <"), "{cmd} --help:\n{help}");
    }
    // The quick ones, for real, on one small run made with -o.
    let _g = serial();
    let base = scratch("dash-o");
    let run = small_run(&base, "-o");
    let plots = base.join("plots");
    ok(&["plot", s(&run), "-o", s(&plots)]);
    assert!(filled(&plots), "plot -o wrote nothing");
    // SVG and PNG unless --format says one, as `plot --help` states.
    let written: Vec<String> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for ext in [".svg", ".png"] {
        assert!(
            written.iter().any(|n| n.ends_with(ext)),
            "no {ext} in {written:?}"
        );
    }
    let ci = base.join("ci");
    ok(&["export", s(&run), "--format", "bmf", "-o", s(&ci)]);
    assert!(filled(&ci), "export -o wrote nothing");
    let table = base.join("report.csv");
    ok(&["report", s(&run), "--format", "csv", "-o", s(&table)]);
    assert!(table.is_file(), "report -o wrote no file");
}

/// A small emulated run written with `out_option` (`-o` or the old `--out`) into BASE/results:
/// its run directory, which must be there.
fn small_run(base: &std::path::Path, out_option: &str) -> std::path::PathBuf {
    let results = base.join("results");
    ok(&[
        "run",
        "osu_latency",
        "-f",
        "rapidio",
        "-m",
        "8",
        "-i",
        "4",
        "-x",
        "1",
        out_option,
        s(&results),
    ]);
    std::fs::read_dir(&results)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .unwrap_or_else(|| panic!("run {out_option} made its run directory there"))
}

#[test]
fn old_spellings_still_parse() {
    let _g = serial();
    let base = scratch("old-spellings");
    let run = small_run(&base, "--out");
    let table = base.join("report.csv");
    ok(&["report", s(&run), "--format", "csv", "--output", s(&table)]);
    assert!(table.is_file(), "report --output wrote no file");
    let help = ok(&["report", "--help"]);
    assert!(help.contains("--output"), "the alias is shown: {help}");
}
