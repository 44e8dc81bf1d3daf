//! Results that cannot be written: a disk that fills up during a run stops the measuring at the
//! first write that fails, keeps every point journalled before it readable by every reader and
//! by `--resume`, and says why in the manifest; and every command that cannot write what it
//! was asked to exits 3 (README's "could not write results"), never 1 (a rank failed) or 2.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;

/// The exit status for "results could not be written".
const UNWRITTEN: i32 = 3;

/// `fabbench ARGS` with files limited to `bytes` (RLIMIT_FSIZE) and SIGXFSZ ignored, so a
/// write past the limit fails with EFBIG as one past a full disk fails with ENOSPC.
fn with_file_limit(args: &[&str], bytes: u64) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    // SAFETY: signal and setrlimit are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.output().unwrap()
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

fn points(m: &serde_json::Value) -> usize {
    m["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["points"].as_array().unwrap().len())
        .sum()
}

/// The rows of an OSU table on stdout: lines starting with a size.
fn table_rows(stdout: &[u8]) -> usize {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .count()
}

#[test]
fn a_disk_that_fills_up_stops_the_run_and_keeps_every_journalled_point_readable() {
    let _g = serial();
    let out = scratch("full-disk");
    let out_s = out.to_str().unwrap();
    // 13 sizes of 2,000 samples: about 50 kB of samples.csv each on this emulated fabric
    // (virtual time, the same everywhere); 250 kB of file holds a few points, not all.
    let args = [
        "run",
        "osu_latency",
        "-m",
        "1:4K",
        "-i",
        "2000",
        "-x",
        "10",
        "--fabric",
        "rapidio",
        "--out",
        out_s,
    ];
    let o = with_file_limit(&args, 250_000);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(UNWRITTEN), "{err}");
    let line = err.lines().last().unwrap();
    assert!(
        line.starts_with("error: results could not be written: writing ")
            && line.contains("samples.csv: File too large")
            && line.contains("--resume"),
        "{err}"
    );
    let kept: Vec<_> = entries(&out);
    assert_eq!(kept.len(), 1, "{kept:?}");
    let dir = &kept[0];
    assert!(dir.to_string_lossy().ends_with(".partial"), "{dir:?}");
    assert!(line.contains(&*dir.to_string_lossy()), "{err}");

    // The journal is whole: its manifest says why the run stopped and lists the points
    // samples.csv holds, which are some but not all of the 13.
    let m = manifest(dir);
    let reason = m["partial"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("results could not be written: writing "),
        "{reason}"
    );
    let kept_points = points(&m);
    assert!((1..13).contains(&kept_points), "{kept_points} points kept");
    // Measuring stopped at the first write that failed: the table shows at most the one
    // point whose samples did not fit besides those kept.
    let shown = table_rows(&o.stdout);
    assert!(
        shown <= kept_points + 1,
        "{shown} points measured, {kept_points} kept: measuring went on after the disk refused"
    );
    assert!(
        !String::from_utf8_lossy(&std::fs::read(dir.join("samples.csv")).unwrap())
            .ends_with(|c| c != '\n'),
        "samples.csv ends in a torn line"
    );

    // Every reader reads it.
    let d = dir.to_str().unwrap();
    let report = raw(&["report", d]);
    assert!(report.status.success(), "{report:?}");
    let compare = raw(&["compare", d, d]);
    assert!(compare.status.success(), "{compare:?}");
    let exported = raw(&[
        "export",
        d,
        "--format",
        "gab",
        "--out",
        out.join("gab").to_str().unwrap(),
    ]);
    assert!(exported.status.success(), "{exported:?}");

    // Once there is room, --resume measures the rest and completes the run.
    let resumed = raw(&["run", "--resume", d]);
    assert!(resumed.status.success(), "{resumed:?}");
    let done: Vec<_> = entries(&out)
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".partial") && p.join("manifest.json").is_file())
        .collect();
    assert_eq!(done.len(), 1, "{done:?}");
    let m = manifest(&done[0]);
    assert!(m.get("partial").is_none_or(|p| p.is_null()), "{m}");
    assert_eq!(points(&m), 13);
}

#[test]
fn every_command_that_cannot_write_what_it_was_asked_to_exits_3() {
    let _g = serial();
    let base = scratch("unwritten");
    let file = base.join("file");
    std::fs::write(&file, b"x").unwrap();
    let under = |name: &str| file.join(name).to_string_lossy().into_owned();
    let runs = base.join("runs");
    quick_run(&runs);
    let run = entries(&runs).pop().unwrap();
    let r = run.to_str().unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec![
            "run".into(),
            "osu_latency".into(),
            "--out".into(),
            under("out"),
        ],
        vec![
            "autotune".into(),
            "--fabric".into(),
            "rapidio".into(),
            "--out".into(),
            under("tune"),
        ],
        vec![
            "compare".into(),
            r.into(),
            r.into(),
            "--export-json".into(),
            under("c.json"),
        ],
        vec![
            "export".into(),
            r.into(),
            "--format".into(),
            "gab".into(),
            "--out".into(),
            under("ci"),
        ],
        vec!["plot".into(), r.into(), "-o".into(), under("plots")],
        vec!["report".into(), r.into(), "-o".into(), under("table.md")],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = raw(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(UNWRITTEN), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(&*file.to_string_lossy()), "{args:?}: {err}");
    }
}
