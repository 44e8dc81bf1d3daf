//! Run directories read back into a `Run`: one written now re-exports to the same bytes in
//! every file; one written before schema versions existed (tests/fixtures/runs) is rebuilt
//! whole; a missing, malformed or newer one is refused naming the file; a partial run cut off
//! in the middle of a row reads back without it.

use std::path::{Path, PathBuf};

use crate::common::*;
use results::format::export_all;
use results::read_run;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/runs")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// Every file `export_all` makes from the run read back equals the file on disk, and no file
/// on disk is left out.
fn reexports_identically(dir: &Path) {
    let run = read_run(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let files = export_all(&run).unwrap();
    let mut names: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    names.sort();
    assert_eq!(names, crate::common::files(dir), "the same files");
    for (path, bytes) in files {
        let on_disk = std::fs::read(dir.join(&path)).unwrap();
        assert!(
            on_disk == bytes,
            "{} differs when re-exported from the run read back",
            path.display()
        );
    }
}

#[test]
fn a_run_written_now_reads_back_and_reexports_byte_for_byte() {
    let _g = serial();
    let shm = run(
        "reread-shm",
        &[
            "run",
            "osu_latency",
            "osu_bibw",
            "-m",
            "1:2K",
            "-i",
            "7",
            "-x",
            "1",
            "-z",
            "-c",
        ],
    );
    reexports_identically(shm.ok());
    let multi = run(
        "reread-multi",
        &[
            "run",
            "osu_bw",
            "-m",
            "64:256",
            "-i",
            "3",
            "-x",
            "1",
            "--fabric",
            "rapidio,bxi",
        ],
    );
    reexports_identically(multi.ok());
    let run = read_run(multi.ok()).unwrap();
    assert_eq!(run.manifest.schema_version, results::SCHEMA_VERSION);
    assert_eq!(run.series.len(), 2);
    assert_eq!(run.series[1].fabric, "bxi");
    assert_eq!(run.series[1].points.len(), 3);
    assert!(run
        .series
        .iter()
        .all(|s| s.points.iter().all(|p| p.samples_ns.len() == 3)));
}

#[test]
fn a_run_written_before_schema_versions_is_rebuilt_whole() {
    for (name, series, points) in [("schema0-rapidio", 2, 7), ("schema0-hyperlink+bxi", 2, 4)] {
        let dir = fixture(name);
        let run = read_run(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(run.manifest.schema_version, 0, "{name}");
        assert_eq!(run.series.len(), series, "{name}");
        assert!(
            run.series.iter().all(|s| s.points.len() == points),
            "{name}"
        );
        // The text rebuilt from the samples, layouts and settings is what that run printed,
        // word for word: the table with a column per fabric has since widened its columns so
        // its labels stand apart, and only the spaces between words differ.
        let words = |t: &str| -> Vec<Vec<String>> {
            t.lines()
                .map(|l| l.split_whitespace().map(str::to_string).collect())
                .collect()
        };
        assert_eq!(
            words(&results::format::osu::text(&run)),
            words(&std::fs::read_to_string(dir.join("osu.txt")).unwrap()),
            "{name}: osu.txt"
        );
        // And the statistics agree with the summary it wrote.
        let old: Vec<csv::StringRecord> = csv::Reader::from_path(dir.join("summary.csv"))
            .unwrap()
            .records()
            .map(|r| r.unwrap())
            .collect();
        let new = run.records();
        assert_eq!(old.len(), new.len(), "{name}");
        for (o, n) in old.iter().zip(&new) {
            assert_eq!(&o[0], n.suite, "{name}");
            assert_eq!(o[4].parse::<u64>().ok(), n.size, "{name}");
            assert_eq!(
                o[7].parse::<f64>().unwrap(),
                n.value,
                "{name} {} {:?}",
                n.suite,
                n.size
            );
            // That summary held the nearest-rank sample; a time's percentile is now
            // HdrHistogram's, the same rank at histogram resolution: the one-way time rounded
            // up to whole ns, then to the top of its bucket (at most 1/1024 above).
            let old_p99 = o[13].parse::<f64>().unwrap();
            if n.unit == "us" {
                assert!(
                    n.p99 >= old_p99 && n.p99 - old_p99 <= old_p99 / 1024.0 + 0.0005,
                    "{name}: {old_p99} then, {} now",
                    n.p99
                );
            } else {
                assert_eq!(old_p99, n.p99, "{name}");
            }
            assert_eq!(&o[17], n.validation, "{name}");
        }
    }
}

#[test]
fn missing_malformed_and_newer_runs_are_refused_naming_the_file() {
    let base = scratch("refused");
    let case = |name: &str, change: &dyn Fn(&Path)| -> String {
        let dir = base.join(name);
        copy_dir(&fixture("schema0-rapidio"), &dir);
        // Make it a schema-1 directory first, then break it.
        let run = read_run(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        for (p, bytes) in export_all(&run).unwrap() {
            std::fs::create_dir_all(dir.join(&p).parent().unwrap()).unwrap();
            std::fs::write(dir.join(&p), bytes).unwrap();
        }
        assert!(read_run(&dir).is_ok(), "{name}: the intact copy reads");
        change(&dir);
        read_run(&dir).unwrap_err().to_string()
    };
    let e = case("no-samples", &|d| {
        std::fs::remove_file(d.join("samples.csv")).unwrap()
    });
    assert!(
        e.contains("samples.csv") && e.contains("cannot read"),
        "{e}"
    );
    let e = case("no-manifest", &|d| {
        std::fs::remove_file(d.join("manifest.json")).unwrap()
    });
    assert!(e.contains("manifest.json"), "{e}");
    let e = case("garbled", &|d| {
        std::fs::write(d.join("manifest.json"), "{ nope").unwrap()
    });
    assert!(
        e.contains("manifest.json") && e.contains("not a fabbench result"),
        "{e}"
    );
    let e = case("newer", &|d| {
        let p = d.join("manifest.json");
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(
            &p,
            t.replace("\"schema_version\": 1", "\"schema_version\": 9"),
        )
        .unwrap();
    });
    assert!(
        e.contains("manifest.json") && e.contains("schema version 9") && e.contains("0 to 1"),
        "{e}"
    );
    let e = case("short", &|d| {
        let p = d.join("samples.csv");
        let t = std::fs::read_to_string(&p).unwrap();
        let lines: Vec<&str> = t.lines().collect();
        std::fs::write(&p, lines[..lines.len() - 1].join("\n") + "\n").unwrap();
    });
    assert!(
        e.contains("samples.csv") && e.contains("manifest.json says 5"),
        "{e}"
    );
}

#[test]
fn a_partial_run_cut_off_mid_row_reads_back_without_the_torn_row() {
    let _s = serial();
    let r = run(
        "torn-row",
        &[
            "run",
            "osu_latency",
            "-m",
            "8:64",
            "-i",
            "5",
            "-x",
            "1",
            "--fabric",
            "rapidio",
        ],
    );
    let dir = r.ok().to_path_buf();
    let manifest = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    let set_partial = |m: &mut serde_json::Value, partial: serde_json::Value| {
        m["partial"] = partial;
        std::fs::write(&manifest, serde_json::to_vec_pretty(m).unwrap()).unwrap();
    };
    // A killed run's journal: the manifest lists what was whole, and the next point's rows
    // stop in the middle of one, without its newline.
    set_partial(
        &mut m,
        serde_json::json!({"reason": "killed", "finished": []}),
    );
    use std::io::Write;
    let mut csv = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join("samples.csv"))
        .unwrap();
    write!(csv, "osu_latency,rapidio,128,,0,1\nosu_latency,rapidio,12").unwrap();
    drop(csv);
    let back = read_run(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back.series[0].points.len(), 4, "8, 16, 32 and 64 bytes");
    assert_eq!(back.partial_reason(), Some("killed"));
    let report = raw(&["report", dir.to_str().unwrap()]);
    assert!(
        report.status.success(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    // A complete run was written whole: a torn row there is a damaged file, and says so.
    set_partial(&mut m, serde_json::Value::Null);
    let e = read_run(&dir).unwrap_err().to_string();
    assert!(e.contains("samples.csv"), "{e}");
}
