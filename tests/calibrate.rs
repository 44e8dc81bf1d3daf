//! calibrate end to end: bad input is refused in one line with exit status 2 and nothing
//! written.

mod common;

use std::path::{Path, PathBuf};

use std::process::Command;

use common::{bin, scratch};

fn paper() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/rapidio-paper.csv")
}

fn calibrate(args: &[&str], out: &Path) -> std::process::Output {
    Command::new(bin())
        .arg("calibrate")
        .args(args)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let out = scratch("calibrate-bad");
    let paper = paper();
    let paper = paper.to_str().unwrap();
    let bad_csv = out.join("bad.csv");
    std::fs::write(&bad_csv, "suite,size,value\nosu_latency,64,fast\n").unwrap();
    let missing = out.join("missing.csv");
    for (args, says) in [
        (vec!["--fabric", "shm", "--from", paper], "not emulated"),
        (
            vec!["--fabric", "warp", "--from", paper],
            "valid fabrics: hyperlink, rapidio, bxi",
        ),
        (
            vec!["--fabric", "rapidio", "--from", paper, "--params", "warp"],
            "valid: link_mbps",
        ),
        (
            vec!["--fabric", "rapidio", "--from", bad_csv.to_str().unwrap()],
            "bad.csv:2:",
        ),
        (
            vec!["--fabric", "rapidio", "--from", missing.to_str().unwrap()],
            "cannot read",
        ),
    ] {
        let o = calibrate(&args, &out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Nothing half-written.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&out).ok();
}
