//! The report binary on its own: what it refuses, as one line and exit status 2. Its tables are
//! tested end to end through `fabbench report` in the root tests; this file also makes
//! `cargo test --workspace` build the `fabbench-report` executable those tests hand over to.

use std::process::Command;

fn report() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fabbench-report"))
}

#[test]
fn a_directory_that_holds_no_run_is_refused_in_one_line() {
    let empty = std::env::temp_dir().join(format!("fabbench-report-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let o = report().arg(&empty).output().unwrap();
    std::fs::remove_dir_all(&empty).unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn an_unknown_option_is_refused_in_one_line() {
    let o = report().args(["--by", "colour", "x"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("colour"), "{err}");
}
