//! A run longer than two seconds shows a progress bar on a terminal, and nothing extra when
//! its output goes to a pipe (so OSU parsers read stdout as before).

use std::process::Command;

use crate::common::*;

/// Several seconds of osu_bw at large sizes on shm (the bar waits two before it shows).
const LONG: &[&str] = &["run", "osu_bw", "-m", "1M:4M", "-i", "500", "-x", "2"];

#[test]
fn a_long_run_draws_a_bar_on_a_terminal_and_nothing_on_a_pipe() {
    let _g = serial();
    let out = scratch("progress");
    // `script` gives the run a pseudo-terminal for stdout and stderr.
    let mut cmd = vec![bin().to_string()];
    cmd.extend(LONG.iter().map(|s| s.to_string()));
    cmd.extend(["--out".to_string(), out.display().to_string()]);
    let log = out.join("tty.log");
    let tty = Command::new("script")
        .args(["-qec", &cmd.join(" "), log.to_str().unwrap()])
        .output()
        .expect("script (util-linux) runs the command on a pseudo-terminal");
    assert!(
        tty.status.success(),
        "{}",
        String::from_utf8_lossy(&tty.stderr)
    );
    let text = String::from_utf8_lossy(&std::fs::read(&log).unwrap()).into_owned();
    assert!(
        text.contains("osu_bw on shm, size") && text.contains("/3 points"),
        "no progress bar on a terminal:\n{text}"
    );

    let piped = run("progress-pipe", LONG);
    piped.ok();
    let err = piped.stderr();
    // The estimate is a line of its own before the run (these sizes take tens of seconds by
    // the cost model), not a bar.
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("estimate: "))
        .collect();
    assert_eq!(lines.len(), 1, "stderr: {err}");
    assert!(lines[0].starts_with("# results: "), "{err}");
    assert!(!piped.stdout().contains("points"), "{}", piped.stdout());
}
