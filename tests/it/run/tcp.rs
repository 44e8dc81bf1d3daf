//! The tcp fabric through the real binary: the OSU trio on loopback, ranks started the way
//! mpirun and srun start them (here a fake Slurm environment), several fabrics in one table,
//! and every fault the issue names: a rank that never shows up, a bootstrap server that is not
//! there (a killed peer is in `failures::killed_rank`, which starts its jobs with [`TcpJob`]).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A job on the tcp fabric whose ranks meet through a tcp bootstrap on a free local port and
/// write results under a scratch directory.
pub(crate) struct TcpJob {
    port: u16,
    pub(crate) out: std::path::PathBuf,
    args: Vec<String>,
}

impl TcpJob {
    /// `fabbench run SUITE_ARGS --fabric tcp --bootstrap tcp://127.0.0.1:PORT --out DIR EXTRA`
    pub(crate) fn new(name: &str, suite_args: &[&str], extra: &[&str]) -> TcpJob {
        let port = free_port();
        let out = scratch(name);
        let mut args: Vec<String> = vec!["run".into()];
        args.extend(suite_args.iter().map(|a| a.to_string()));
        for a in [
            "--fabric",
            "tcp",
            "--bootstrap",
            &format!("tcp://127.0.0.1:{port}"),
            "--out",
            out.to_str().unwrap(),
        ] {
            args.push(a.to_string());
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        TcpJob { port, out, args }
    }

    /// Starts rank `rank` of 2 in the fake Slurm job `job`.
    pub(crate) fn rank(&self, rank: usize, job: &str) -> Child {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        slurm_rank(rank, 2, job, &args)
    }
}

/// One HOME for every rank these tests start, where their key file is made (not the user's).
fn ranks_home() -> &'static std::path::Path {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| scratch("ranks-home"))
}

/// Starts `fabbench ARGS` as rank `rank` of `size` in a fake Slurm job.
fn slurm_rank(rank: usize, size: usize, job: &str, args: &[&str]) -> Child {
    Command::new(bin())
        .args(args)
        .env("HOME", ranks_home())
        .env_remove("FABBENCH_TOKEN")
        .env("SLURM_PROCID", rank.to_string())
        .env("SLURM_NTASKS", size.to_string())
        .env("SLURM_JOB_ID", job)
        .env("SLURM_STEP_ID", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for a rank to exit, killing it and failing after `limit`; its status, stdout and
/// stderr.
pub(crate) fn finish(child: Child, limit: Duration) -> (i32, String, String) {
    let start = Instant::now();
    let mut child = child;
    loop {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return (
                out.status.code().unwrap_or(-1),
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("rank did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_osu_trio_validates_over_tcp_on_loopback() {
    let _g = serial();
    for suite in ["osu_latency", "osu_bw", "osu_bibw"] {
        for sizes in ["0:64K", "1M:2M"] {
            let r = run(
                "tcp-trio",
                &[
                    "run", suite, "--fabric", "tcp", "-m", sizes, "-i", "5", "-x", "1", "-c",
                ],
            );
            r.ok();
            let rows: Vec<String> = r
                .stdout()
                .lines()
                .filter(|l| !l.starts_with('#') && !l.is_empty())
                .map(String::from)
                .collect();
            assert!(!rows.is_empty(), "{suite} {sizes}");
            assert!(
                rows.iter().all(|l| l.ends_with("Pass")),
                "{suite} {sizes}: {rows:?}"
            );
            let m = r.manifest();
            let peers = m["fabrics"][0]["facts"]["rank0.tcp_peers"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(peers.contains("1=127.0.0.1:"), "{peers}");
        }
    }
}

/// Socket buffers as small as the tunables allow make tcp slower, never stuck: each piece of a
/// message used to wait for a zero-window probe or a delayed ACK (200 ms and 40 ms), 418 ms one
/// way at 16 KiB. The run's own timeout (no message completing for a second) is the bound, not
/// a timing of the test.
#[test]
fn small_socket_buffers_are_slower_not_stuck() {
    let _g = serial();
    for buf in ["tcp.rcvbuf=4K", "tcp.sndbuf=4K"] {
        let r = run(
            "tcp-smallbuf",
            &[
                "run",
                "osu_latency",
                "--fabric",
                "tcp",
                "-m",
                "4K:4M",
                "-i",
                "10",
                "-x",
                "2",
                "-c",
                "--set",
                buf,
                "--set",
                "timeout=1s",
            ],
        );
        r.ok();
        let rows: Vec<String> = r
            .stdout()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .map(String::from)
            .collect();
        assert_eq!(rows.len(), 11, "{buf}: {rows:?}");
        assert!(rows.iter().all(|l| l.ends_with("Pass")), "{buf}: {rows:?}");
    }
}

#[test]
fn ranks_started_by_slurm_meet_through_a_tcp_bootstrap() {
    let _g = serial();
    let job = TcpJob::new(
        "slurm-tcp",
        &[
            "osu_latency",
            "osu_bw",
            "-m",
            "1:64K",
            "-i",
            "5",
            "-x",
            "1",
            "-c",
        ],
        &[],
    );
    let out = job.out.clone();
    let r0 = job.rank(0, "4242");
    let r1 = job.rank(1, "4242");
    let (c1, o1, e1) = finish(r1, Duration::from_secs(60));
    let (c0, o0, e0) = finish(r0, Duration::from_secs(60));
    assert_eq!((c0, c1), (0, 0), "rank 0: {e0}\nrank 1: {e1}");
    assert!(
        o0.contains("# OSU MPI Latency Test v7.4") && o0.contains("Bandwidth Test"),
        "{o0}"
    );
    assert!(o1.is_empty(), "only rank 0 prints: {o1}");
    let dirs: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert_eq!(dirs.len(), 1, "rank 0 writes one run directory");
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dirs[0].path().join("manifest.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        manifest["fabrics"][0]["counters"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn ranks_started_by_slurm_meet_through_a_shared_directory() {
    let _g = serial();
    let shared = scratch("slurm-dir");
    let boot = format!("dir:{}", shared.display());
    let out = scratch("slurm-dir-out");
    let out_s = out.to_str().unwrap().to_string();
    let args = [
        "run",
        "osu_latency",
        "--fabric",
        "tcp,shm",
        "-m",
        "1:4K",
        "-i",
        "5",
        "-x",
        "1",
        "--bootstrap",
        &boot,
        "--out",
        &out_s,
    ];
    let r0 = slurm_rank(0, 2, "99", &args);
    let r1 = slurm_rank(1, 2, "99", &args);
    let (c1, _, e1) = finish(r1, Duration::from_secs(60));
    let (c0, o0, e0) = finish(r0, Duration::from_secs(60));
    assert_eq!((c0, c1), (0, 0), "rank 0: {e0}\nrank 1: {e1}");
    assert!(
        o0.contains("tcp Avg Latency(us)") && o0.contains("shm Avg Latency(us)"),
        "{o0}"
    );
    // rank 0 removed the job's bootstrap state
    assert!(!shared.join("fabbench-99.0").exists());
}

#[test]
fn several_fabrics_make_one_table_with_a_column_each() {
    let _g = serial();
    let r = run(
        "multi",
        &[
            "run",
            "osu_latency",
            "--fabric",
            "shm,tcp",
            "-m",
            "1:1K",
            "-i",
            "20",
            "-x",
            "2",
        ],
    );
    r.ok();
    let out = r.stdout();
    let header = out.lines().find(|l| l.starts_with("# Size")).unwrap();
    assert!(
        header.contains("shm Avg Latency(us)") && header.contains("tcp Avg Latency(us)"),
        "{header}"
    );
    assert_eq!(out.matches("# OSU MPI Latency Test").count(), 1, "{out}");
    for line in out.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        assert_eq!(
            line.split_whitespace().count(),
            3,
            "size and two values: {line}"
        );
    }
    let fabrics: Vec<String> = r.summary().iter().map(|row| row[1].to_string()).collect();
    assert!(fabrics.contains(&"shm".to_string()) && fabrics.contains(&"tcp".to_string()));
    assert_eq!(r.manifest()["fabrics"].as_array().unwrap().len(), 2);
}

#[test]
fn a_rank_that_never_shows_up_is_named_within_the_timeout() {
    let _g = serial();
    let job = TcpJob::new("tcp-missing", &["osu_latency"], &["--set", "timeout=2s"]);
    let start = Instant::now();
    let (c0, _, e0) = finish(job.rank(0, "8"), Duration::from_secs(30));
    assert_eq!(c0, 1, "{e0}");
    assert!(start.elapsed() < Duration::from_secs(15));
    assert!(
        e0.contains(&format!(
            "rank 1 never arrived at the bootstrap on 127.0.0.1:{}",
            job.port
        )),
        "{e0}"
    );
}

/// Ranks other than 0 refuse bad input as rank 0 does: one line, their rank named, status 2.
#[test]
fn every_rank_refuses_bad_input_with_one_line() {
    let _g = serial();
    let args = [
        "run",
        "osu_latency",
        "--fabric",
        "tcp",
        "--bootstrap",
        "tcp://127.0.0.1:1",
        "-m",
        "5:1",
    ];
    let (c1, _, e1) = finish(slurm_rank(1, 2, "11", &args), Duration::from_secs(10));
    assert_eq!(c1, 2, "{e1}");
    assert!(e1.starts_with("error: rank 1: -m 5:1"), "{e1}");
    assert_eq!(e1.lines().count(), 1, "{e1}");
    let (c0, _, e0) = finish(slurm_rank(0, 2, "11", &args), Duration::from_secs(10));
    assert_eq!(c0, 2, "{e0}");
    assert!(e0.starts_with("error: -m 5:1"), "{e0}");
}

/// A bootstrap directory under a parent that does not exist is bad input on every rank: it is
/// not created, and nothing waits for ranks that could never meet there.
#[test]
fn a_bootstrap_directory_without_its_parent_is_refused() {
    let _g = serial();
    let base = scratch("dir-missing").join("not-there");
    let path = base.join("x");
    let boot = format!("dir:{}", path.display());
    for rank in [0, 1] {
        let args = [
            "run",
            "osu_latency",
            "--fabric",
            "tcp",
            "--bootstrap",
            &boot,
        ];
        let start = Instant::now();
        let (code, _, err) = finish(slurm_rank(rank, 2, "12", &args), Duration::from_secs(30));
        assert_eq!(code, 2, "rank {rank}: {err}");
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(
            err.contains(&format!("{} does not exist", base.display())),
            "rank {rank}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!base.exists(), "the directory was created");
}

/// A rank's wait for the bootstrap server follows the run's `timeout`.
#[test]
fn the_bootstrap_connect_wait_follows_the_timeout() {
    let _g = serial();
    let job = TcpJob::new("tcp-noboot-1s", &["osu_latency"], &["--set", "timeout=1s"]);
    let start = Instant::now();
    let (c1, _, e1) = finish(job.rank(1, "13"), Duration::from_secs(30));
    assert_eq!(c1, 1, "{e1}");
    // 10 s before, whatever the timeout said.
    assert!(
        start.elapsed() < Duration::from_secs(6),
        "{:?}",
        start.elapsed()
    );
    assert!(e1.contains("unreachable for 1s"), "{e1}");
}

/// An interface this host does not have is bad input, with the valid ones listed.
#[test]
fn an_unknown_tcp_interface_is_bad_input() {
    let r = raw(&[
        "run",
        "osu_latency",
        "--fabric",
        "tcp",
        "--set",
        "tcp.if=nosuch0",
    ]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{err}");
    assert!(
        err.contains("tcp.if=nosuch0") && err.contains("lo (127.0.0.1)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_bootstrap_server_that_is_not_there_is_named() {
    let _g = serial();
    // The wait follows the run's timeout (30 s by default).
    let job = TcpJob::new("tcp-noboot", &["osu_latency"], &["--set", "timeout=5s"]);
    let port = job.port;
    let start = Instant::now();
    let (c1, _, e1) = finish(job.rank(1, "9"), Duration::from_secs(30));
    assert_eq!(c1, 1, "{e1}");
    assert!(start.elapsed() < Duration::from_secs(20));
    assert!(
        e1.contains(&format!("127.0.0.1:{port}")) && e1.contains("unreachable"),
        "{e1}"
    );
}

#[test]
fn launcher_and_bootstrap_must_go_together() {
    let r = raw(&[
        "run",
        "osu_latency",
        "--fabric",
        "tcp",
        "--bootstrap",
        "tcp://127.0.0.1:1",
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains("is for ranks started by mpirun or srun"));
    let out = Command::new(bin())
        .args(["run", "osu_latency", "--fabric", "tcp"])
        .env("OMPI_COMM_WORLD_RANK", "0")
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("started by Open MPI as rank 0 of 2: give --bootstrap"),
        "{err}"
    );
    let out = Command::new(bin())
        .args([
            "run",
            "osu_latency",
            "--fabric",
            "rapidio",
            "--bootstrap",
            "tcp://h:1",
        ])
        .env("SLURM_PROCID", "0")
        .env("SLURM_NTASKS", "2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run it without mpirun or srun"));
}
