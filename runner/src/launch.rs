//! Starting a job's ranks and collecting what they report, the way each fabric's registry
//! entry says: processes under fabbench's local launcher, threads of this process (emulated
//! fabrics), one launcher process such as mpirun (the fabric's hook builds its command line),
//! or, under mpirun or srun, this process as one rank with rank 0 also the frontend.
//!
//! Every path ends the same way: the failure to report names the rank, how it ended and the
//! stage it was in, and no wait is unbounded.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::bootstrap::discover::External;
use bench_core::bootstrap::tcp::{Client, Server, ServerEvent};
use bench_core::bootstrap::{random_hex, Bootstrap, BootstrapError};
use bench_core::launcher::{Job, LaunchError, Placement, RankCommand};
use transports::fabric::{Launch as FabricLaunch, LaunchCommand, LaunchRequest, BIND};

use crate::collect::{Collector, Reported};
use crate::error::{JobError, RunError, Silent};
use crate::job::{JobSpec, SPEC_ENV};
use crate::plan::{BootSpec, Plan, Secret};
use crate::rank::run_reporting;

/// How long rank 0 waits for the other ranks' last reports once its own work is done.
const GRACE: Duration = Duration::from_secs(10);

/// Runs fabric `idx` of the plan with ranks fabbench starts. Once `stop` says so (the caller
/// asked, or results can no longer be written), the error is what failed while the ranks
/// were stopping (or the stop itself).
pub(crate) fn local(
    plan: &Plan,
    idx: usize,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    let fp = &plan.fabrics[idx];
    let job_id = random_hex(6);
    let outcome = match fp.def.launch {
        FabricLaunch::Threads => threads(plan, idx, c, stop),
        FabricLaunch::Processes => processes(plan, idx, &job_id, c, stop),
        FabricLaunch::Launcher(hook) => launcher(plan, idx, hook, &job_id, c, stop),
    };
    // Whatever happened, nothing of this job may outlive it.
    (fp.def.cleanup)(&job_id);
    outcome
}

fn rank_program(plan: &Plan) -> Result<PathBuf, JobError> {
    match &plan.rank_program {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe().map_err(JobError::OwnExecutable),
    }
}

fn spec_env(plan: &Plan, idx: usize) -> (String, String) {
    (
        SPEC_ENV.to_string(),
        serde_json::to_string(&JobSpec::of(plan, &[idx])).expect("spec serialises"),
    )
}

/// One process per rank under fabbench's local launcher.
fn processes(
    plan: &Plan,
    idx: usize,
    job_id: &str,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    let fp = &plan.fabrics[idx];
    let token = random_hex(16);
    let server = Server::start("127.0.0.1:0", plan.ranks, &token, job_id)?;
    let cmd = RankCommand {
        program: rank_program(plan)?,
        args: vec!["__rank".into()],
        env: vec![spec_env(plan, idx)],
    };
    let placement = Placement {
        ranks: plan.ranks,
        bind_to_core: fp.settings.get(BIND) == "core",
        grace: Duration::from_secs(2),
    };
    let outcome = Job::spawn(&cmd, &placement, server, &token, job_id)
        .and_then(|job| job.supervise(&mut |r, j| c.on_event(r, j), stop));
    match outcome {
        Ok(()) => {
            if let Some(e) = c.root_failure() {
                return Err(e);
            }
            if !c.all_done(&fp.label) {
                return Err(JobError::RankSilent {
                    fabric: fp.label.clone(),
                });
            }
            Ok(())
        }
        Err(LaunchError::RankFailed { rank, how, stage }) => {
            let reported = c.failures.get(&rank);
            // A rank that reported no stage had not reached the bootstrap yet.
            let stage = stage
                .or_else(|| reported.map(|r| r.stage.clone()))
                .unwrap_or_else(|| "start".into());
            Err(JobError::RankEnded {
                rank,
                how,
                stage,
                cause: reported.map(|r| r.message.clone()),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// One launcher process (mpirun) starts every rank; each reports to this frontend's bootstrap
/// server as any rank does.
fn launcher(
    plan: &Plan,
    idx: usize,
    hook: fn(&LaunchRequest) -> Result<LaunchCommand, transports::Refusal>,
    job_id: &str,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    use bench_core::bootstrap::env;
    let fp = &plan.fabrics[idx];
    let token = random_hex(16);
    let program = rank_program(plan)?;
    let server = Server::start("127.0.0.1:0", plan.ranks, &token, job_id)?;
    let base = vec![
        spec_env(plan, idx),
        (env::SIZE.into(), plan.ranks.to_string()),
        (env::BOOTSTRAP.into(), server.url()),
        (env::TOKEN.into(), token.clone()),
        (env::JOB_ID.into(), job_id.to_string()),
    ];
    let cmd = hook(&LaunchRequest {
        ranks: plan.ranks,
        settings: &fp.settings,
        program: &program,
        args: &["__rank".to_string()],
        env: &base,
        launcher: &plan.mpirun,
    })
    .map_err(|r| JobError::LaunchCommand(Box::new(r)))?;
    let cmd = RankCommand {
        program: cmd.program,
        args: cmd.args.into_iter().map(Into::into).collect(),
        env: cmd.env,
    };
    let outcome = Job::spawn_launcher(&cmd, plan.ranks, server, &token, job_id)
        .and_then(|job| job.supervise(&mut |r, j| c.on_event(r, j), stop));
    if let Some(e) = c.root_failure() {
        return Err(e);
    }
    match outcome {
        Ok(()) if c.all_done(&fp.label) => Ok(()),
        Ok(()) => Err(JobError::LauncherSilent {
            launcher: plan.mpirun.clone(),
            fabric: fp.label.clone(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Ranks as tasks of one thread of this process (emulated fabrics under their discrete-event
/// scheduler, which lets one rank run at a time); their events arrive on an in-process channel.
fn threads(
    plan: &Plan,
    idx: usize,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    let fp = &plan.fabrics[idx];
    let (boots, events) = bench_core::bootstrap::local::group(plan.ranks);
    let spec = Arc::new(JobSpec::of(plan, &[idx]));
    let ranks: Vec<_> = boots
        .into_iter()
        .map(|b| {
            let spec = spec.clone();
            move || {
                let boot: Arc<dyn Bootstrap> = Arc::new(b);
                run_reporting(&spec, boot);
            }
        })
        .collect();
    let job = std::thread::Builder::new()
        .name(format!("{}-ranks", fp.def.name))
        .spawn(move || bench_core::tasks::run(ranks))
        .map_err(JobError::Threads)?;
    // Events flow until every rank thread has dropped its end of the channel.
    loop {
        if stop() {
            return Err(JobError::Interrupted);
        }
        match events.recv_timeout(Duration::from_millis(20)) {
            Ok((rank, json)) => c.on_event(rank, &json),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // The executor itself failing leaves every rank without an outcome.
    let outcomes = job.join().unwrap_or_else(|_| {
        (0..plan.ranks)
            .map(|_| Err(bench_core::tasks::TaskFailure::Stranded))
            .collect()
    });
    for (rank, outcome) in outcomes.into_iter().enumerate() {
        if let Err(failure) = outcome {
            let message = match failure {
                bench_core::tasks::TaskFailure::Panicked(_) => "the rank panicked",
                bench_core::tasks::TaskFailure::Stranded => {
                    "the rank waited for a turn nobody could give it"
                }
            };
            c.failures.entry(rank).or_insert_with(|| Reported {
                stage: "unknown".into(),
                message: message.into(),
                secondary: false,
            });
        }
    }
    match c.root_failure() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn external_job(ext: &External) -> String {
    ext.job
        .clone()
        .unwrap_or_else(|| "job".into())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn all_fabrics(plan: &Plan) -> Vec<usize> {
    (0..plan.fabrics.len()).collect()
}

/// Under mpirun or srun, a rank other than 0: meet the others and run this rank's part.
pub(crate) fn worker(
    plan: &Plan,
    ext: &External,
    boot: &BootSpec,
    secret: &Secret,
) -> Result<(), RunError> {
    let spec = JobSpec::of(plan, &all_fabrics(plan));
    let job = external_job(ext);
    let b: Arc<dyn Bootstrap> = match boot {
        BootSpec::Tcp(hp) => Arc::new(
            Client::connect(
                &format!("tcp://{hp}"),
                ext.rank,
                ext.size,
                secret.value(),
                &job,
                spec.setup_timeout(),
            )
            .map_err(|source| join_failed(ext.rank, source))?,
        ),
        BootSpec::Dir(path) => Arc::new(
            bench_core::bootstrap::dir::Dir::new(path, &job, ext.rank, ext.size)
                .map_err(|source| join_failed(ext.rank, source))?,
        ),
    };
    if run_reporting(&spec, b) {
        Ok(())
    } else {
        Err(RunError::Reported)
    }
}

fn join_failed(rank: usize, source: BootstrapError) -> RunError {
    RunError::failed(JobError::Join { rank, source })
}

/// Under mpirun or srun, rank 0: the frontend, running its own rank in a thread.
pub(crate) fn external(
    plan: &Plan,
    ext: &External,
    boot: &BootSpec,
    secret: &Secret,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    let spec = JobSpec::of(plan, &all_fabrics(plan));
    let job = external_job(ext);
    match boot {
        BootSpec::Tcp(hp) => external_tcp(plan, ext, hp, secret, &job, spec, c, stop),
        BootSpec::Dir(path) => external_dir(plan, ext, path, &job, spec, c, stop),
    }
}

/// Rank 0 serves the bootstrap on HOST:PORT (only there: the plan checked HOST is this
/// host's) and runs its own rank in a thread.
#[allow(clippy::too_many_arguments)]
fn external_tcp(
    plan: &Plan,
    ext: &External,
    hostport: &str,
    secret: &Secret,
    job: &str,
    spec: JobSpec,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    let server = Server::start(hostport, ext.size, secret.value(), job).map_err(JobError::Serve)?;
    tracing::debug!(
        "bootstrap on {} for {} ranks; the secret: {}",
        server.addr(),
        ext.size,
        secret.source()
    );
    // Through the address the other ranks use, so rank 0's fabric traffic picks the interface
    // that reaches them (tcp.if=auto), not loopback.
    // rank 0 serves the bootstrap itself: a short patience is plenty.
    let patience = Duration::from_secs(2).min(spec.setup_timeout());
    let client = Client::connect(&server.url(), 0, ext.size, secret.value(), job, patience)?;
    let me = std::thread::spawn(move || run_reporting(&spec, Arc::new(client)));
    let mut stages: BTreeMap<usize, String> = BTreeMap::new();
    let mut connected = vec![false; ext.size];
    let mut closed = vec![false; ext.size];
    let mut finished_at: Option<Instant> = None;
    let mut refusals = Refusals::default();
    loop {
        if stop() {
            return Err(JobError::Interrupted);
        }
        if let Some(ev) = server.next_event(Duration::from_millis(20)) {
            match ev {
                ServerEvent::Hello { rank } => connected[rank] = true,
                ServerEvent::Closed { rank } => closed[rank] = true,
                ServerEvent::Stage { rank, text } => {
                    stages.insert(rank, text);
                }
                ServerEvent::Event { rank, json } => c.on_event(rank, &json),
                ServerEvent::Rejected { peer, reason } => refusals.show(&peer, &reason),
            }
            continue;
        }
        if me.is_finished() && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        if let Some(t) = finished_at {
            let everyone_closed = (0..ext.size).all(|r| !connected[r] || closed[r]);
            if everyone_closed || t.elapsed() > GRACE {
                break;
            }
        }
    }
    refusals.total(server.refused());
    let ok = me.join().unwrap_or(false);
    let absent: Vec<usize> = (1..ext.size).filter(|r| !connected[*r]).collect();
    everyone_reported(plan, c, ok, |r| stages.get(&r).cloned())
        .map_err(|e| never_arrived(&absent, &format!("the bootstrap on {hostport}"), e))
}

/// The log lines of the bootstrap's refusals: one each for the first
/// [`SHOWN_REFUSALS`](bench_core::bootstrap::tcp::SHOWN_REFUSALS) (the server reports no more),
/// then the count at the end, so a flood cannot fill the terminal.
#[derive(Default)]
struct Refusals {
    shown: u64,
}

impl Refusals {
    fn show(&mut self, peer: &str, reason: &str) {
        tracing::warn!("bootstrap refused a connection from {peer}: {reason}");
        self.shown += 1;
        if self.shown == bench_core::bootstrap::tcp::SHOWN_REFUSALS {
            tracing::warn!("bootstrap: further refusals are counted, not shown one by one");
        }
    }

    fn total(&self, refused: u64) {
        if refused > self.shown {
            tracing::warn!(
                "bootstrap refused {refused} connections in all ({} shown)",
                self.shown
            );
        }
    }
}

/// A failure while some ranks never reached the bootstrap: that is the cause to name first
/// (the rank that waited for them only saw a peer missing).
fn never_arrived(absent: &[usize], place: &str, err: JobError) -> JobError {
    if absent.is_empty() {
        return err;
    }
    JobError::NeverArrived {
        ranks: absent.to_vec(),
        place: place.to_string(),
        then: Box::new(err),
    }
}

/// After rank 0's own work: the root failure if any, else an error naming the ranks (and the
/// stage each was last in) that did not report results for some fabric.
fn everyone_reported(
    plan: &Plan,
    c: &Collector,
    rank0_ok: bool,
    stage_of: impl Fn(usize) -> Option<String>,
) -> Result<(), JobError> {
    if let Some(e) = c.root_failure() {
        return Err(e);
    }
    if !rank0_ok {
        return Err(JobError::FrontendRank);
    }
    for fp in &plan.fabrics {
        let missing = c.missing(&fp.label);
        if !missing.is_empty() {
            return Err(JobError::Unreported {
                ranks: missing
                    .into_iter()
                    .map(|rank| Silent {
                        rank,
                        last_stage: stage_of(rank),
                    })
                    .collect(),
                fabric: fp.label.clone(),
            });
        }
    }
    Ok(())
}

/// Rank 0 meets the others through a shared directory and runs its own rank in a thread.
fn external_dir(
    plan: &Plan,
    ext: &External,
    path: &std::path::Path,
    job: &str,
    spec: JobSpec,
    c: &mut Collector,
    stop: &dyn Fn() -> bool,
) -> Result<(), JobError> {
    use bench_core::bootstrap::dir::Dir;
    let watcher = Dir::new(path, job, 0, ext.size)?;
    let mine = Dir::new(path, job, 0, ext.size)?;
    let me = std::thread::spawn(move || run_reporting(&spec, Arc::new(mine)));
    let mut finished_at: Option<Instant> = None;
    let result = loop {
        if stop() {
            break Err(JobError::Interrupted);
        }
        let events = watcher.take_events();
        let quiet = events.is_empty();
        for (rank, json) in events {
            c.on_event(rank, &json);
        }
        if me.is_finished() && finished_at.is_none() {
            finished_at = Some(Instant::now());
        }
        if let Some(t) = finished_at {
            let all = plan.fabrics.iter().all(|fp| c.all_done(&fp.label));
            if all || !c.failures.is_empty() || t.elapsed() > GRACE {
                break Ok(());
            }
        }
        if quiet {
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let ok = me.join().unwrap_or(false);
    // A rank reports its first stage as soon as it has joined the directory.
    let absent: Vec<usize> = (1..ext.size)
        .filter(|r| watcher.stage_of(*r).is_none())
        .collect();
    let place = format!("the bootstrap directory {}", path.display());
    let outcome = result
        .and_then(|_| everyone_reported(plan, c, ok, |r| watcher.stage_of(r)))
        .map_err(|e| never_arrived(&absent, &place, e));
    watcher.remove();
    outcome
}
