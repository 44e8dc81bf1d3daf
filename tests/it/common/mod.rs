//! Helpers for end-to-end tests through the real `fabbench` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

/// Jobs spin on their cores: two at once on a 2-core machine would starve each other, so the
/// tests of one binary take turns.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_fabbench")
}

/// A fresh, empty directory for one test's results.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "fabbench-test-{name}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub struct Run {
    pub out: Output,
    pub dir: Option<PathBuf>,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    pub fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
    /// Asserts success and returns the run directory.
    pub fn ok(&self) -> &Path {
        assert_eq!(
            self.code(),
            0,
            "fabbench failed\nstdout:\n{}\nstderr:\n{}",
            self.stdout(),
            self.stderr()
        );
        self.dir.as_deref().expect("a results directory")
    }
    pub fn manifest(&self) -> serde_json::Value {
        let text = std::fs::read_to_string(self.ok().join("manifest.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }
    pub fn summary(&self) -> Vec<csv::StringRecord> {
        let mut r = csv::Reader::from_path(self.ok().join("summary.csv")).unwrap();
        r.records().map(|x| x.unwrap()).collect()
    }
    /// Sum of a protocol counter over every rank of the first fabric.
    pub fn counter(&self, name: &str) -> u64 {
        let m = self.manifest();
        m["fabrics"][0]["counters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["counters"][name].as_u64().unwrap())
            .sum()
    }
}

/// Runs `fabbench ARGS --out SCRATCH` and finds the run directory it made.
pub fn run(name: &str, args: &[&str]) -> Run {
    run_under(&[], name, args)
}

/// As [`run`], with fabbench started through `wrapper` (`["taskset", "-c", "0"]`).
pub fn run_under(wrapper: &[&str], name: &str, args: &[&str]) -> Run {
    let out_dir = scratch(name);
    let mut cmd = match wrapper.split_first() {
        Some((program, rest)) => {
            let mut c = Command::new(program);
            c.args(rest).arg(bin());
            c
        }
        None => Command::new(bin()),
    };
    let out = cmd.args(args).arg("--out").arg(&out_dir).output().unwrap();
    let dir = std::fs::read_dir(&out_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir());
    Run { out, dir }
}

/// Runs fabbench with exactly ARGS (no --out added).
pub fn raw(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().unwrap()
}

/// What `dir` holds (files and directories, hidden ones too), sorted; nothing if it is gone.
pub fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Files under `dir`, recursively, relative.
pub fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// fabbench segments currently in /dev/shm.
pub fn shm_segments() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("fabbench-"))
                .collect()
        })
        .unwrap_or_default()
}

/// A run that takes a fraction of a second anywhere: one size on an emulated fabric.
pub const QUICK: &[&str] = &[
    "run",
    "osu_latency",
    "--fabric",
    "rapidio",
    "-m",
    "8:8",
    "-i",
    "10",
];

/// [`QUICK`] into `out`; asserts it succeeded.
pub fn quick_run(out: &Path) {
    let mut args = QUICK.to_vec();
    args.extend(["--out", out.to_str().unwrap()]);
    let o = raw(&args);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
}

/// The parent of process `pid`, from /proc.
pub fn parent_of(pid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// The processes whose parent is `pid`.
pub fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| parent_of(*p) == Some(pid))
        .collect()
}

/// The process of rank `rank` among the children of the frontend `frontend`.
pub fn rank_pid(frontend: u32, rank: usize) -> Option<u32> {
    children_of(frontend).into_iter().find(|p| {
        std::fs::read(format!("/proc/{p}/environ")).is_ok_and(|env| {
            env.split(|b| *b == 0)
                .any(|kv| kv == format!("FABBENCH_RANK={rank}").as_bytes())
        })
    })
}

/// Waits for `child` to exit, failing the test after `limit`; its status and how long it took.
pub fn wait_exit(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> (i32, std::time::Duration) {
    let start = std::time::Instant::now();
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return (st.code().unwrap_or(-1), start.elapsed());
        }
        assert!(
            start.elapsed() < limit,
            "fabbench did not stop within {limit:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
