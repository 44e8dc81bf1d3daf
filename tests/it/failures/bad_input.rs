//! Bad input: one line on stderr saying what is wrong and what is valid, exit status 2,
//! nothing on stdout and nothing written.

use crate::common::*;

fn refused(args: &[&str], expect: &str) {
    let out_dir = scratch("bad");
    let mut full: Vec<&str> = args.to_vec();
    let out_arg = out_dir.join("results");
    let out_str = out_arg.to_str().unwrap().to_string();
    if args[0] == "run" && !args.contains(&"--out") {
        full.extend(["--out", &out_str]);
    }
    let out = raw(&full);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: not one line: {stderr}"
    );
    assert!(
        stderr.contains(expect),
        "{args:?}: {stderr} lacks {expect:?}"
    );
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    assert!(!out_arg.exists(), "{args:?} wrote {}", out_arg.display());
}

#[test]
fn unknown_suite_fabric_and_tunable() {
    refused(
        &["run", "osu_nope"],
        "valid suites: osu_latency, osu_bw, osu_bibw",
    );
    refused(
        &["run", "osu_bw", "--fabric", "infiniband"],
        "valid fabrics: shm",
    );
    refused(
        &["run", "osu_bw", "--set", "eagr_limit=1K"],
        "did you mean 'eager_limit'",
    );
    refused(&["run", "osu_bw", "--set", "rx_thread=maybe"], "on or off");
    refused(&["run", "osu_bw", "--set", "noequals"], "NAME=VALUE");
}

#[test]
fn bad_message_sizes() {
    refused(
        &["run", "osu_bw", "-m", "8:4"],
        "MIN (8) is larger than MAX (4)",
    );
    refused(&["run", "osu_bw", "-m", "1:abc"], "'abc' is not a size");
    refused(
        &["run", "osu_bw", "-m", "2G"],
        "exceeds the largest message size, 1GiB",
    );
    refused(
        &["run", "osu_bw", "-m", "4G:8G"],
        "exceeds the largest message size",
    );
}

#[test]
fn wrong_rank_counts_and_options() {
    refused(
        &["run", "osu_latency", "-n", "1"],
        "osu_latency needs exactly 2 ranks, got -n 1",
    );
    refused(&["run", "osu_bibw", "-n", "3"], "exactly 2 ranks");
    refused(&["run", "osu_bw", "-W", "0"], "window must be 1 to 1024");
    refused(
        &["run", "osu_bw", "-i", "0"],
        "iterations must be at least 1",
    );
    refused(
        &["run", "osu_bw", "--bogus"],
        "unexpected argument '--bogus'",
    );
    refused(&["list", "everything"], "use fabrics, suites or tunables");
}

#[test]
fn osu_buffers_other_than_host_memory() {
    let run = [
        "run",
        "osu_latency",
        "-f",
        "rapidio",
        "-m",
        "8",
        "-x",
        "10",
        "-i",
        "1000",
        "-c",
    ];
    let with = |words: &[&'static str]| [&run[..], words].concat();
    refused(&with(&["D", "D"]), "fabbench measures host memory only");
    refused(&with(&["H", "D"]), "give H H (host buffers on both ranks)");
    refused(&with(&["MH", "MH"]), "host memory only");
    refused(&with(&["H"]), "take two buffer locations, one per rank");
    refused(&with(&["H", "H", "H"]), "take two buffer locations");
    refused(&["run", "mpptest", "H", "H"], "mpptest takes none");
}

#[test]
fn bad_profile_files() {
    let dir = scratch("profile");
    let p = dir.join("p.toml");
    std::fs::write(&p, "eager_limit = \"lots\"\n").unwrap();
    refused(
        &["run", "osu_bw", "--profile", p.to_str().unwrap()],
        "eager_limit=lots: expected a size",
    );
    refused(
        &["run", "osu_bw", "--profile", "/nonexistent.toml"],
        "cannot read profile",
    );
}

/// As `refused`, for a command that once ran for ever: a run still going after a minute fails
/// the test instead of hanging it.
fn refused_without_hanging(args: &[&str], expect: &[&str]) {
    use std::process::Stdio;
    let out_dir = scratch("bad-card");
    let out_arg = out_dir.join("results");
    let child = std::process::Command::new(bin())
        .args(args)
        .arg("--out")
        .arg(&out_arg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = within(child, 60, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
    for e in expect {
        assert!(stderr.contains(e), "{args:?}: {stderr} lacks {e:?}");
    }
    assert!(out.stdout.is_empty(), "{args:?} printed to stdout");
    assert!(!out_arg.exists(), "{args:?} wrote {}", out_arg.display());
}

/// `child`'s output, once it exits within `secs` seconds; killed, and the test failed, if it
/// does not (`args` names it in the failure).
fn within(mut child: std::process::Child, secs: u64, args: &[&str]) -> std::process::Output {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} still running after {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Card values each in range that together cannot carry a message are refused before the
/// run, naming the parameters and what is valid.
#[test]
fn emulated_cards_that_cannot_carry_a_message() {
    // A put refused for want of a receive buffer was put again at the same instant, for ever:
    // this spun at 100 % CPU until killed.
    refused_without_hanging(
        &[
            "run",
            "osu_latency",
            "--fabric",
            "bxi",
            "-m",
            "8K:8K",
            "-i",
            "3",
            "--set",
            "bxi.recvq=1",
            "--set",
            "bxi.latency_ns=0",
            "--set",
            "bxi.retry_ns=0",
        ],
        &[
            "on bxi, bxi.latency_ns=0 with bxi.retry_ns=0",
            "at least 1 ps",
        ],
    );
    refused_without_hanging(
        &[
            "run",
            "osu_latency",
            "--fabric",
            "bxi",
            "-m",
            "8K:8K",
            "-i",
            "3",
            "--set",
            "bxi.rendezvous=1GiB",
        ],
        &[
            "on bxi, bxi.rendezvous=1GiB",
            "use bxi.rendezvous <= 1073741800",
        ],
    );
    refused_without_hanging(
        &[
            "run",
            "osu_bw",
            "--fabric",
            "hyperlink",
            "-m",
            "1:4M",
            "-i",
            "3",
            "--set",
            "hyperlink.frag_bytes=1KiB",
        ],
        &[
            "on hyperlink, frag_size=65472",
            "hyperlink.frag_bytes=1KiB",
            "use frag_size <= 30720",
        ],
    );
    refused_without_hanging(
        &[
            "run",
            "osu_latency",
            "--fabric",
            "rapidio",
            "--set",
            "rapidio.segment_bytes=8",
            "--set",
            "rapidio.message_segments=1",
        ],
        &[
            "on rapidio, rapidio.message_header=16",
            "rapidio.segment_bytes=8",
        ],
    );
}

#[test]
fn runs_that_could_only_mislead_are_refused() {
    // A suite twice would write its rows twice and one histogram over the other.
    refused(
        &["run", "osu_latency", "osu_latency"],
        "osu_latency is given twice; name each suite once",
    );
    // Size ranges that select nothing.
    refused(
        &["run", "osu_latency", "-m", "8M:"],
        "osu_latency: -m selects no message size (from 8MiB to 4MiB)",
    );
    refused(
        &["run", "osu_latency", "-m", "1G:"],
        "selects no message size",
    );
    refused(
        &["run", "osu_bw", "-m", "0"],
        "give -m [MIN:]MAX with 1 <= MIN <= MAX",
    );
    // Counts whose samples would not fit in memory.
    refused(
        &["run", "osu_latency", "-i", "4294967297"],
        "-i 4294967297: at most 10000000 timed iterations",
    );
    refused(
        &["run", "osu_latency", "-x", "99999999999"],
        "-x 99999999999: at most 10000000 warm-up iterations",
    );
    // A tunable of a fabric the run does not use would be recorded as set yet do nothing.
    refused(
        &["run", "osu_latency", "--set", "hyperlink.gbaud=6.25"],
        "hyperlink.gbaud is a tunable of hyperlink, which this run does not use (fabrics: shm)",
    );
    refused(
        &["run", "osu_latency", "-z50,101"],
        "'101' is not a percentile",
    );
    refused(
        &["run", "--resume", "/nonexistent/x.partial"],
        "--resume /nonexistent/x.partial",
    );
}

#[test]
fn a_model_card_with_an_unknown_key_is_refused() {
    let dir = scratch("card-typo");
    let card = dir.join("card.toml");
    std::fs::write(
        &card,
        "fabric = \"bxi\"\n[[param]]\nname = \"latency_ns\"\nvalue = \"900\"\nsoruce = \"[A] typo\"\n",
    )
    .unwrap();
    refused(
        &[
            "run",
            "osu_latency",
            "--fabric",
            "bxi",
            "--model",
            card.to_str().unwrap(),
        ],
        "unknown key 'soruce' in a [[param]]",
    );
}

/// A FIFO where a run's manifest.json belongs once blocked every reader for ever: each is
/// refused at once, in one line, with status 2.
#[test]
fn a_fifo_where_a_file_belongs_is_refused_without_hanging() {
    use std::os::unix::ffi::OsStrExt;
    let _s = serial();
    let dir = scratch("fifo-run");
    let fifo = std::ffi::CString::new(dir.join("manifest.json").as_os_str().as_bytes()).unwrap();
    // SAFETY: a valid C string and mode.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let d = dir.to_str().unwrap();
    let store = scratch("fifo-store").join("store");
    let cases: [&[&str]; 4] = [
        &["report", d],
        &["plot", d],
        &["export", d, "--format", "gab"],
        &["history", "add", d, "--store", store.to_str().unwrap()],
    ];
    for args in cases {
        let child = std::process::Command::new(bin())
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = within(child, 20, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{args:?}: {stderr}");
    }
}

/// Every byte `out` printed is shown text: no control character but the line breaks and tabs
/// of its layout, and no line longer than a person can read (a 5 MB value cut).
fn readable(args: &[&str], out: &std::process::Output) {
    for (name, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let raw: Vec<char> = text
            .chars()
            .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
            .collect();
        assert!(raw.is_empty(), "{args:?} printed {raw:?} raw on {name}");
        let longest = text.lines().map(str::len).max().unwrap_or(0);
        assert!(
            longest < 5000,
            "{args:?}: a line of {longest} bytes on {name}"
        );
    }
}

#[test]
fn text_from_result_files_cannot_drive_the_terminal_or_flood_it() {
    let _g = serial();
    let base = scratch("hostile");
    let runs = base.join("runs");
    quick_run(&runs);
    let dir = entries(&runs).pop().unwrap();
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    // A host name that would clear the screen and retitle the window, and a run id of 300 kB
    // (more than a cell, a legend line or an error should ever repeat).
    m["host"]["hostname"] = "vm\u{1b}[2J\u{1b}]0;owned\u{7}".into();
    m["run_id"] = format!("run\u{1b}[31m{}", "A".repeat(300_000)).into();
    std::fs::write(&path, m.to_string()).unwrap();
    let d = dir.to_str().unwrap();
    let store = base.join("store");
    let s = store.to_str().unwrap();
    for args in [
        vec!["report", d],
        vec!["report", d, "--format", "markdown"],
        vec!["compare", d, d],
        vec!["compare", d, d, "--format", "markdown"],
        vec!["history", "add", "--store", s, d],
        vec!["history", "show", "--store", s],
    ] {
        let o = raw(&args);
        assert!(o.status.success(), "{args:?}: {o:?}");
        readable(&args, &o);
    }

    // A one-line error repeats a 5 MB value cut, not whole.
    m["schema_version"] = format!("\u{1b}[5m{}", "9".repeat(5_000_000)).into();
    std::fs::write(&path, m.to_string()).unwrap();
    for args in [vec!["report", d], vec!["plot", d], vec!["compare", d, d]] {
        let o = raw(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        readable(&args, &o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("more bytes)"), "{args:?}: {err}");
    }
}
