//! Nothing measured is lost, and nothing half-done passes for complete: a run stopped by a
//! signal or failing on one fabric keeps its points as `RUN_ID.partial` (marked, with the
//! reason), `run --resume` finishes it, a launcher killed outright leaves a directory the
//! next run keeps, two runs started at once never share a directory, the manifest says what
//! was in force (and that a run was resumed), and a message buffer past the memory limit fails
//! its stage in one line instead of panicking.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn spawn(args: &[&str], out: &Path) -> Child {
    Command::new(bin())
        .args(args)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until a run working in `out` has journalled at least `points` points.
fn wait_for_points(out: &Path, points: usize) {
    let start = Instant::now();
    loop {
        let journalled = entries(out)
            .into_iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .filter_map(|p| std::fs::read_to_string(p.join("manifest.json")).ok())
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|m| {
                m["series"]
                    .as_array()
                    .map(|s| s.iter().map(|x| x["points"].as_array().unwrap().len()))
                    .into_iter()
                    .flatten()
                    .sum::<usize>()
            })
            .max()
            .unwrap_or(0);
        if journalled >= points {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no {points} points journalled in {}",
            out.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn finish(mut child: Child) -> (i32, String, String) {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "fabbench did not stop"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn manifest(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap()
}

fn points(m: &serde_json::Value) -> Vec<(String, String, usize)> {
    m["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["suite"].as_str().unwrap().to_string(),
                s["fabric"].as_str().unwrap().to_string(),
                s["points"].as_array().unwrap().len(),
            )
        })
        .collect()
}

/// A latency sweep long enough to stop in the middle: 13 sizes of 20,000 iterations.
const SWEEP: &[&str] = &["run", "osu_latency", "-m", "1:4K", "-i", "20000"];

#[test]
fn a_stopped_run_keeps_its_points_and_resume_finishes_it() {
    let _g = serial();
    for (signal, status, name) in [
        (libc::SIGINT, 130, "SIGINT"),
        (libc::SIGTERM, 143, "SIGTERM"),
        (libc::SIGHUP, 129, "SIGHUP"),
    ] {
        let out = scratch("stopped");
        let child = spawn(SWEEP, &out);
        wait_for_points(&out, 2);
        unsafe { libc::kill(child.id() as i32, signal) };
        let (code, _, err) = finish(child);
        assert_eq!(code, status, "{name}: {err}");
        assert!(
            err.contains(&format!("stopped by {name}")) && err.contains("kept in"),
            "{name}: {err}"
        );
        let kept = entries(&out);
        assert_eq!(kept.len(), 1, "{name}: {kept:?}");
        let dir = &kept[0];
        assert!(dir.to_string_lossy().ends_with(".partial"), "{dir:?}");
        let m = manifest(dir);
        assert!(
            m["partial"]["reason"]
                .as_str()
                .unwrap()
                .contains("interrupted"),
            "{m}"
        );
        let had = points(&m)[0].2;
        assert!((2..13).contains(&had), "{name}: {had} points kept");
        // Every derived file is there for what was measured, and samples.csv holds exactly
        // the kept points' samples (a reader checks the counts).
        let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
        assert_eq!(summary.lines().count() - 1, had, "{summary}");
        if signal != libc::SIGINT {
            continue;
        }
        // Readers mark it.
        let plot = raw(&[
            "plot",
            dir.to_str().unwrap(),
            "-o",
            out.join("p").to_str().unwrap(),
        ]);
        assert_eq!(plot.status.code(), Some(0), "{plot:?}");
        // Resume: the rest is measured, nothing twice, and the run takes its final name.
        let resumed = raw(&["run", "--resume", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&resumed.stderr);
        assert_eq!(resumed.status.code(), Some(0), "{err}");
        let stdout = String::from_utf8_lossy(&resumed.stdout);
        assert_eq!(
            stdout
                .lines()
                .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
                .count(),
            13,
            "the resumed table shows every size once: {stdout}"
        );
        let done: Vec<PathBuf> = entries(&out)
            .into_iter()
            .filter(|p| p.file_name().unwrap() != "p")
            .collect();
        assert_eq!(done.len(), 1, "{done:?}");
        assert!(!done[0].to_string_lossy().ends_with(".partial"));
        let m = manifest(&done[0]);
        assert!(m.get("partial").is_none(), "{m}");
        assert_eq!(points(&m), vec![("osu_latency".into(), "shm".into(), 13)]);
        // It says it was made in two parts: when it was continued, why the first ended, and
        // how many of its points stand.
        let resumed = m["resumed"].as_array().unwrap_or_else(|| panic!("{m}"));
        assert_eq!(resumed.len(), 1, "{m}");
        assert!(
            resumed[0]["after"]
                .as_str()
                .unwrap()
                .contains("interrupted"),
            "{m}"
        );
        assert_eq!(resumed[0]["points_kept"], had, "{m}");
        assert!(!resumed[0]["at"].as_str().unwrap().is_empty(), "{m}");
        let samples = std::fs::read_to_string(done[0].join("samples.csv")).unwrap();
        assert_eq!(samples.lines().count() - 1, 13 * 20000);
        // A complete run is not resumed.
        let again = raw(&["run", "--resume", done[0].to_str().unwrap()]);
        assert_eq!(again.status.code(), Some(2));
    }
}

#[test]
fn a_launcher_killed_outright_leaves_a_run_the_next_one_keeps() {
    let _g = serial();
    let out = scratch("sigkill");
    let child = spawn(SWEEP, &out);
    wait_for_points(&out, 2);
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = finish(child);
    // The ranks notice their launcher is gone and stop.
    std::thread::sleep(Duration::from_secs(6));
    let left = entries(&out);
    assert_eq!(left.len(), 1);
    assert!(
        left[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with('.'),
        "{left:?}"
    );
    quick_run(&out);
    let names: Vec<String> = entries(&out)
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let kept: Vec<&String> = names.iter().filter(|n| n.ends_with(".partial")).collect();
    assert_eq!(kept.len(), 1, "{names:?}");
    assert!(!kept[0].starts_with('.'), "{names:?}");
    let m = manifest(&out.join(kept[0]));
    assert!(
        m["partial"]["reason"]
            .as_str()
            .unwrap()
            .contains("ended without finishing"),
        "{m}"
    );
    assert!(points(&m)[0].2 >= 2);
}

#[test]
fn one_fabric_failing_keeps_the_others() {
    let _g = serial();
    let out = scratch("one-fabric");
    // shm runs first and loses a rank; rapidio runs after it to the end.
    let child = spawn(
        &[
            "run",
            "osu_latency",
            "--fabric",
            "shm,rapidio",
            "-m",
            "1:4K",
            "-i",
            "20000",
        ],
        &out,
    );
    wait_for_points(&out, 2);
    let rank = rank_pid(child.id(), 1).expect("rank 1 of shm") as i32;
    unsafe { libc::kill(rank, libc::SIGKILL) };
    let (code, stdout, err) = finish(child);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("rank 1 was killed by signal 9") && err.contains("kept in"),
        "{err}"
    );
    let kept = entries(&out);
    assert_eq!(kept.len(), 1);
    let m = manifest(&kept[0]);
    let got = points(&m);
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got[0].1 == "shm" && got[0].2 < 13, "{got:?}");
    assert_eq!(got[1], ("osu_latency".into(), "rapidio".into(), 13));
    let finished = m["partial"]["finished"].as_array().unwrap();
    assert_eq!(finished.len(), 1, "{m}");
    assert_eq!(finished[0][1], "rapidio");
    // The table with a column per fabric is printed with what there is.
    assert!(stdout.contains("rapidio"), "{stdout}");
}

#[test]
fn runs_started_together_never_share_a_directory() {
    let _g = serial();
    let out = scratch("together");
    let children: Vec<Child> = (0..4).map(|_| spawn(QUICK, &out)).collect();
    for c in children {
        let (code, _, err) = finish(c);
        assert_eq!(code, 0, "{err}");
    }
    let dirs = entries(&out);
    assert_eq!(dirs.len(), 4, "{dirs:?}");
    for d in &dirs {
        assert_eq!(
            manifest(d)["run_id"].as_str().unwrap(),
            d.file_name().unwrap().to_str().unwrap()
        );
    }
}

#[test]
fn the_manifest_records_the_values_in_force() {
    let _g = serial();
    let bw = run(
        "in-force",
        &[
            "run", "osu_bw", "-m", "4K:16K", "-i", "5", "--fabric", "rapidio",
        ],
    );
    let m = bw.manifest();
    assert_eq!(m["params"]["osu_bw"]["window"], 64, "{m}");
    let warmups: Vec<u64> = m["series"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["warmup"].as_u64().unwrap())
        .collect();
    // OSU's rule for bw: 10 warm-up iterations up to 8 KiB, 2 above.
    assert_eq!(warmups, vec![10, 10, 2]);
    let lat = run(
        "in-force-lat",
        &[
            "run",
            "osu_latency",
            "-m",
            "8:8",
            "-i",
            "5",
            "-x",
            "3",
            "--fabric",
            "rapidio",
        ],
    );
    let m = lat.manifest();
    assert!(m["params"]["osu_latency"].get("window").is_none(), "{m}");
    assert_eq!(m["series"][0]["points"][0]["warmup"], 3);
}

#[test]
fn a_message_buffer_past_the_memory_limit_fails_in_one_named_stage_without_a_panic() {
    let _g = serial();
    use std::os::unix::process::CommandExt;
    let out = scratch("out-of-memory");
    let mut cmd = Command::new(bin());
    cmd.args([
        "run", "osu_bw", "-m", "1G:1G", "-W", "1", "-i", "1", "-x", "0", "--fabric", "rapidio",
        "--out",
    ])
    .arg(&out);
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            // 3 GB of address space: two ranks' 1 GiB send and receive buffers do not fit.
            let limit = libc::rlimit {
                rlim_cur: 3 << 30,
                rlim_max: 3 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("cannot allocate a 1073741824-byte message buffer")
            && err.contains("osu_bw start (message buffers)"),
        "{err}"
    );
}
