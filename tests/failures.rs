//! A rank killed with SIGKILL, and the frontend interrupted: the run stops within 5 s with a
//! message naming the rank and stage, exits non-zero, and leaves no rank, no shared-memory
//! segment and no partial results behind.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn wait_for_rank(child: &Child, rank: usize) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(p) = rank_pid(child.id(), rank) {
            // let it get into the timed loop
            std::thread::sleep(Duration::from_millis(500));
            return p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "rank {rank} never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn long_job(out: &std::path::Path) -> Child {
    Command::new(bin())
        .args(["run", "osu_bw", "-m", "64K:64K", "-i", "1000000", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn assert_clean(child: &Child, out: &std::path::Path, segments_before: &[String]) {
    assert!(children_of(child.id()).is_empty(), "ranks left running");
    let new: Vec<String> = shm_segments()
        .into_iter()
        .filter(|s| !segments_before.contains(s))
        .collect();
    assert!(new.is_empty(), "shared memory left behind: {new:?}");
    assert_eq!(
        std::fs::read_dir(out).unwrap().count(),
        0,
        "results written for a failed run"
    );
}

fn stderr_of(child: &mut Child) -> String {
    use std::io::Read;
    let mut s = String::new();
    child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
    s
}

#[test]
fn a_rank_killed_with_sigkill_stops_the_job_and_is_named() {
    let _g = serial();
    for victim in [1usize, 0] {
        let before = shm_segments();
        let out = scratch("killed");
        let mut child = long_job(&out);
        let pid = wait_for_rank(&child, victim);
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        let (code, took) = wait_exit(&mut child, Duration::from_secs(10));
        let err = stderr_of(&mut child);
        assert_eq!(code, 1, "{err}");
        assert!(took < Duration::from_secs(5), "stopping took {took:?}");
        assert!(
            err.contains(&format!(
                "rank {victim} was killed by signal 9 (SIGKILL) during stage 'osu_bw size 65536'"
            )),
            "{err}"
        );
        assert_clean(&child, &out, &before);
    }
}

#[test]
fn an_interrupted_run_cleans_up() {
    let _g = serial();
    let before = shm_segments();
    let out = scratch("interrupted");
    let mut child = long_job(&out);
    wait_for_rank(&child, 1);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (code, took) = wait_exit(&mut child, Duration::from_secs(10));
    let err = stderr_of(&mut child);
    assert_eq!(code, 130, "{err}");
    assert!(took < Duration::from_secs(5), "stopping took {took:?}");
    assert!(err.contains("interrupted"), "{err}");
    assert_clean(&child, &out, &before);
}
