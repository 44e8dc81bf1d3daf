//! The local launcher: starts a job's ranks as processes on this host and supervises them.
//!
//! Each rank is the same executable, told its rank, size, job token and bootstrap address
//! through the environment (the variables in [`crate::bootstrap::env`]). The launcher forwards
//! each rank's output prefixed with `[rank N]`, relays the ranks' stage reports and events, and
//! if any rank fails or dies, stops the others (SIGTERM, then SIGKILL after a grace period) and
//! reports which rank failed, how, and in what stage. Ranks are started with a parent-death
//! signal so they never outlive a launcher that was killed.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::bootstrap::env;
use crate::bootstrap::tcp::{Server, ServerEvent};

/// How long a rank's failure waits for another rank killed by a signal to be reaped.
const SIGNALLED_SETTLE: Duration = Duration::from_millis(250);

/// What to run as each rank.
#[derive(Debug, Clone)]
pub struct RankCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Extra environment for every rank (the job description, for instance).
    pub env: Vec<(String, String)>,
}

/// How to place the ranks.
#[derive(Debug, Clone)]
pub struct Placement {
    pub ranks: usize,
    /// Pin rank i to the i-th CPU this launcher may use (round robin), as mpirun does by default.
    pub bind_to_core: bool,
    /// Time between SIGTERM and SIGKILL when stopping ranks after a failure.
    pub grace: Duration,
}

/// Why a job did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("cannot start rank {rank} ({program}): {source}")]
    Spawn {
        rank: usize,
        program: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("rank {rank} {how} during stage '{}'", stage.as_deref().unwrap_or("start"))]
    RankFailed {
        rank: usize,
        /// "exited with status 1", "was killed by signal 9 (SIGKILL)".
        how: String,
        stage: Option<String>,
    },
    #[error("{program} {how}{}", stage.as_ref().map(|(r, s)| format!(" (rank {r} was in stage '{s}')")).unwrap_or_default())]
    LauncherFailed {
        program: String,
        how: String,
        stage: Option<(usize, String)>,
    },
    #[error("interrupted; stopped all ranks")]
    Interrupted,
}

/// A running job.
pub struct Job {
    server: Server,
    /// Some(program) when one launcher process (mpirun) starts every rank.
    launcher: Option<String>,
    children: Vec<Option<Child>>,
    stages: Vec<Option<String>>,
    forwarders: Vec<JoinHandle<()>>,
    grace: Duration,
}

impl Job {
    /// Starts `placement.ranks` copies of `cmd`, each connected to `server`.
    pub fn spawn(
        cmd: &RankCommand,
        placement: &Placement,
        server: Server,
        token: &str,
        job_id: &str,
    ) -> Result<Job, LaunchError> {
        let cpus = crate::machine::allowed_cpus();
        let mut job = Job {
            server,
            launcher: None,
            children: Vec::new(),
            stages: vec![None; placement.ranks],
            forwarders: Vec::new(),
            grace: placement.grace,
        };
        for rank in 0..placement.ranks {
            let mut c = Command::new(&cmd.program);
            c.args(&cmd.args)
                .env(env::RANK, rank.to_string())
                .env(env::SIZE, placement.ranks.to_string())
                .env(env::BOOTSTRAP, job.server.url())
                .env(env::TOKEN, token)
                .env(env::JOB_ID, job_id)
                .envs(cmd.env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let cpu = (placement.bind_to_core && !cpus.is_empty()).then(|| cpus[rank % cpus.len()]);
            // A rank must not outlive the launcher: a killed frontend takes its ranks along.
            tie_to_parent(&mut c, libc::SIGKILL, cpu);
            match c.spawn() {
                Ok(mut child) => {
                    let out = child.stdout.take().expect("piped");
                    let err = child.stderr.take().expect("piped");
                    job.forwarders.push(forward(rank, out));
                    job.forwarders.push(forward(rank, err));
                    job.children.push(Some(child));
                }
                Err(source) => {
                    job.stop_all();
                    return Err(LaunchError::Spawn {
                        rank,
                        program: cmd.program.clone(),
                        source,
                    });
                }
            }
        }
        Ok(job)
    }

    /// Starts one launcher process (mpirun) that starts `ranks` ranks itself; each rank reaches
    /// `server` through the environment `cmd` carries. Its output is forwarded as `[mpirun]`.
    pub fn spawn_launcher(
        cmd: &RankCommand,
        ranks: usize,
        server: Server,
        token: &str,
        job_id: &str,
    ) -> Result<Job, LaunchError> {
        let mut c = Command::new(&cmd.program);
        c.args(&cmd.args)
            .env(env::SIZE, ranks.to_string())
            .env(env::BOOTSTRAP, server.url())
            .env(env::TOKEN, token)
            .env(env::JOB_ID, job_id)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // mpirun gets SIGTERM, so it can stop the ranks it started.
        tie_to_parent(&mut c, libc::SIGTERM, None);
        let program = cmd.program.display().to_string();
        let mut child = c.spawn().map_err(|source| LaunchError::Spawn {
            rank: 0,
            program: cmd.program.clone(),
            source,
        })?;
        let out = child.stdout.take().expect("piped");
        let err = child.stderr.take().expect("piped");
        Ok(Job {
            server,
            launcher: Some(program),
            children: vec![Some(child)],
            stages: vec![None; ranks],
            forwarders: vec![
                forward_as("mpirun".into(), out),
                forward_as("mpirun".into(), err),
            ],
            grace: Duration::from_secs(5),
        })
    }

    /// Relays events to `on_event(rank, json)` until every rank has ended. On the first failure
    /// (or once `interrupt()` says so) the other ranks are stopped and the failure returned.
    pub fn supervise(
        mut self,
        on_event: &mut dyn FnMut(usize, &str),
        interrupt: &dyn Fn() -> bool,
    ) -> Result<(), LaunchError> {
        let mut connected = vec![false; self.stages.len()];
        let result = loop {
            while let Some(ev) = self.server.next_event(Duration::from_millis(2)) {
                self.handle(ev, &mut connected, on_event);
            }
            if interrupt() {
                break Err(LaunchError::Interrupted);
            }
            if let Some(failure) = self.reap_failures() {
                break Err(failure);
            }
            if self.children.iter().all(Option::is_none) {
                break Ok(());
            }
        };
        self.stop_all();
        // Events a rank sent just before exiting are still in flight: drain until every rank
        // that connected has closed its connection, within a bound.
        let deadline = Instant::now() + Duration::from_secs(2);
        while connected.iter().any(|c| *c) && Instant::now() < deadline {
            if let Some(ev) = self.server.next_event(Duration::from_millis(20)) {
                self.handle(ev, &mut connected, on_event);
            }
        }
        for f in self.forwarders.drain(..) {
            let _ = f.join();
        }
        result
    }

    fn handle(
        &mut self,
        ev: ServerEvent,
        connected: &mut [bool],
        on_event: &mut dyn FnMut(usize, &str),
    ) {
        match ev {
            ServerEvent::Hello { rank } => connected[rank] = true,
            ServerEvent::Closed { rank } => connected[rank] = false,
            ServerEvent::Stage { rank, text } => self.stages[rank] = Some(text),
            ServerEvent::Event { rank, json } => on_event(rank, &json),
            ServerEvent::Rejected { peer, reason } => {
                tracing::warn!("bootstrap refused a connection from {peer}: {reason}")
            }
        }
    }

    /// Reaps ended ranks; returns the failure to report, preferring a rank killed by a signal
    /// (the likely cause) over ranks that then exited with an error because a peer vanished.
    fn reap_failures(&mut self) -> Option<LaunchError> {
        let mut failures: Vec<(usize, ExitStatus)> = Vec::new();
        for (rank, slot) in self.children.iter_mut().enumerate() {
            if let Some(child) = slot {
                if let Ok(Some(status)) = child.try_wait() {
                    *slot = None;
                    if !status.success() {
                        failures.push((rank, status));
                    }
                }
            }
        }
        // A rank killed by a signal closes its sockets as it dies, before it can be reaped: a
        // peer may see the connection drop, fail and exit first. Give the others a moment to
        // be reaped too, so the killed one is named and not the peer that saw it go.
        if !failures.is_empty() && failures.iter().all(|(_, st)| st.signal().is_none()) {
            let deadline = Instant::now() + SIGNALLED_SETTLE;
            while Instant::now() < deadline {
                for (rank, slot) in self.children.iter_mut().enumerate() {
                    if let Some(child) = slot {
                        if let Ok(Some(status)) = child.try_wait() {
                            *slot = None;
                            if !status.success() {
                                failures.push((rank, status));
                            }
                        }
                    }
                }
                if failures.iter().any(|(_, st)| st.signal().is_some())
                    || self.children.iter().all(Option::is_none)
                {
                    break;
                }
                thread::sleep(Duration::from_millis(5));
            }
        }
        failures.sort_by_key(|(rank, st)| (st.signal().is_none(), *rank));
        if let Some(program) = &self.launcher {
            return failures
                .first()
                .map(|(_, status)| LaunchError::LauncherFailed {
                    program: program.clone(),
                    how: describe_exit(*status),
                    stage: self
                        .stages
                        .iter()
                        .enumerate()
                        .find_map(|(r, s)| s.clone().map(|s| (r, s))),
                });
        }
        failures
            .first()
            .map(|(rank, status)| LaunchError::RankFailed {
                rank: *rank,
                how: describe_exit(*status),
                stage: self.stages[*rank].clone(),
            })
    }

    /// Stops every rank still running: SIGTERM, then SIGKILL after the grace period.
    fn stop_all(&mut self) {
        for child in self.children.iter().flatten() {
            // SAFETY: kill with a pid we spawned and have not reaped.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let deadline = Instant::now() + self.grace;
        loop {
            for slot in self.children.iter_mut() {
                if let Some(child) = slot {
                    if let Ok(Some(_)) = child.try_wait() {
                        *slot = None;
                    }
                }
            }
            if self.children.iter().all(Option::is_none) {
                return;
            }
            if Instant::now() >= deadline {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        for child in self.children.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.iter_mut().for_each(|c| *c = None);
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// "exited with status 1" or "was killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(sig)) => {
            let name = nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str().to_string())
                .unwrap_or_else(|_| "unknown".into());
            format!("was killed by signal {sig} ({name})")
        }
        _ => "ended for an unknown reason".into(),
    }
}

fn forward(rank: usize, stream: impl Read + Send + 'static) -> JoinHandle<()> {
    forward_as(format!("rank {rank}"), stream)
}

fn forward_as(who: String, stream: impl Read + Send + 'static) -> JoinHandle<()> {
    thread::spawn(move || {
        let reader = BufReader::new(stream);
        for line in reader.split(b'\n') {
            let Ok(line) = line else { break };
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(format!("[{who}] ").as_bytes());
            let _ = err.write_all(&line);
            let _ = err.write_all(b"\n");
        }
    })
}

/// Makes the child get `signal` when this process dies (checking it did not die already),
/// and pins it to `cpu` if given: raw system calls between fork and exec.
fn tie_to_parent(c: &mut Command, signal: libc::c_int, cpu: Option<usize>) {
    let parent = std::process::id() as i32;
    // SAFETY: the closure runs between fork and exec and only makes raw system calls.
    unsafe {
        c.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            if let Some(cpu) = cpu {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(cpu, &mut set);
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> RankCommand {
        RankCommand {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            env: vec![],
        }
    }

    fn run(script: &str, ranks: usize) -> (Result<(), LaunchError>, Duration) {
        let server = Server::start("127.0.0.1:0", ranks, "t", "j").unwrap();
        let placement = Placement {
            ranks,
            bind_to_core: false,
            grace: Duration::from_secs(1),
        };
        let start = Instant::now();
        let job = Job::spawn(&sh(script), &placement, server, "t", "j").unwrap();
        let r = job.supervise(&mut |_, _| {}, &|| false);
        (r, start.elapsed())
    }

    #[test]
    fn all_ranks_succeed() {
        let (r, _) = run("test \"$FABBENCH_RANK\" -lt \"$FABBENCH_SIZE\"", 3);
        r.unwrap();
    }

    #[test]
    fn a_failing_rank_stops_the_others_quickly() {
        let (r, took) = run(
            "if [ \"$FABBENCH_RANK\" = 1 ]; then exit 3; else exec sleep 30; fi",
            3,
        );
        match r {
            Err(LaunchError::RankFailed {
                rank: 1,
                how,
                stage: None,
            }) => assert_eq!(how, "exited with status 3"),
            other => panic!("{other:?}"),
        }
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    /// A killed rank's sockets close before it can be reaped, so the peer that saw the
    /// connection drop may exit first: the killed rank is still the one named.
    #[test]
    fn a_killed_rank_is_named_even_when_a_peer_exits_first() {
        let (r, _) = run(
            "if [ \"$FABBENCH_RANK\" = 0 ]; then sleep 0.05; kill -9 $$; else exit 1; fi",
            2,
        );
        match r {
            Err(LaunchError::RankFailed { rank: 0, how, .. }) => {
                assert_eq!(how, "was killed by signal 9 (SIGKILL)")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_killed_rank_is_reported_with_its_signal() {
        let (r, took) = run(
            "if [ \"$FABBENCH_RANK\" = 0 ]; then kill -9 $$; else exec sleep 30; fi",
            2,
        );
        match r {
            Err(LaunchError::RankFailed { rank: 0, how, .. }) => {
                assert_eq!(how, "was killed by signal 9 (SIGKILL)")
            }
            other => panic!("{other:?}"),
        }
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let server = Server::start("127.0.0.1:0", 1, "t", "j").unwrap();
        let cmd = RankCommand {
            program: "/nonexistent/fabbench".into(),
            args: vec![],
            env: vec![],
        };
        let placement = Placement {
            ranks: 1,
            bind_to_core: false,
            grace: Duration::from_secs(1),
        };
        let err = Job::spawn(&cmd, &placement, server, "t", "j")
            .err()
            .unwrap();
        assert!(matches!(err, LaunchError::Spawn { rank: 0, .. }), "{err}");
    }
}
