//! One rank of a job: bring up each fabric, run every suite through the shared driver, report
//! points (rank 0) and counters (every rank) to the frontend as events. The same code runs in
//! a rank process, a rank thread, and a rank started by mpirun or srun.

use std::sync::Arc;

use bench_core::bootstrap::tcp::Client;
use bench_core::bootstrap::BootstrapError;
use bench_core::bootstrap::{env, Bootstrap};
use bench_core::measure::{Point, PointKey};
use suites::{PointSink, SuiteError};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::{registry, TransportError};

use crate::error::{PlanError, RunError};
use crate::job::{FabricJob, JobSpec, RankEvent, SPEC_ENV};

/// A failure on a rank: the stage it was in and what went wrong.
#[derive(Debug, thiserror::Error)]
#[error("{cause}")]
pub struct Failure {
    pub stage: String,
    #[source]
    pub cause: RankError,
}

impl Failure {
    fn new(stage: impl Into<String>, cause: impl Into<RankError>) -> Failure {
        Failure {
            stage: stage.into(),
            cause: cause.into(),
        }
    }
}

/// What went wrong on a rank.
#[derive(Debug, thiserror::Error)]
pub enum RankError {
    #[error("unknown fabric '{0}'")]
    UnknownFabric(String),
    #[error("unknown suite '{0}'")]
    UnknownSuite(String),
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error(transparent)]
    Suite(#[from] SuiteError),
    /// Handing an event to the frontend failed.
    #[error(transparent)]
    Report(#[from] BootstrapError),
}

impl RankError {
    /// Whether this rank only saw the consequence of another's failure (its peer gone, or
    /// every rank waiting): the frontend names a root cause before these.
    pub fn is_secondary(&self) -> bool {
        let transport = match self {
            RankError::Transport(t) | RankError::Suite(SuiteError::Transport(t)) => t,
            _ => return false,
        };
        matches!(
            transport,
            TransportError::Deadlock(_) | TransportError::PeerGone { .. }
        )
    }
}

fn var(name: &'static str) -> Result<String, PlanError> {
    std::env::var(name).map_err(|_| PlanError::NotSet { name })
}

fn number(name: &'static str) -> Result<usize, PlanError> {
    var(name)?
        .parse()
        .map_err(|_| PlanError::NotANumber { name })
}

/// Serves this process as one rank of a job started by fabbench's launcher (or by mpirun on
/// fabbench's behalf): the spec and bootstrap come from the environment. A failure has been
/// reported to the frontend when this returns [`RunError::Reported`].
pub fn rank_process() -> Result<(), RunError> {
    let spec: JobSpec =
        serde_json::from_str(&var(SPEC_ENV)?).map_err(|source| PlanError::NotAJobSpec {
            name: SPEC_ENV,
            source,
        })?;
    let boot = connect(spec.setup_timeout())?;
    if run_reporting(&spec, boot) {
        Ok(())
    } else {
        Err(RunError::Reported)
    }
}

/// This rank's number: from fabbench's launcher, or from mpirun's environment when fabbench
/// started the ranks through mpirun.
fn my_rank(size: usize) -> Result<usize, PlanError> {
    use bench_core::bootstrap::discover::{detect, Started};
    if std::env::var(env::RANK).is_ok() {
        return number(env::RANK);
    }
    match detect()? {
        Started::External(e) if e.size == size => Ok(e.rank),
        Started::External(e) => Err(PlanError::Refused(format!(
            "{} started {} ranks but fabbench asked for {size}: is this the mpirun of the MPI fabbench was built against?",
            e.launcher, e.size
        ))),
        _ => Err(PlanError::Refused(format!(
            "{} is not set and no MPI launcher's rank is either: `fabbench __rank` is started by `fabbench run`",
            env::RANK
        ))),
    }
}

fn connect(patience: std::time::Duration) -> Result<Arc<dyn Bootstrap>, PlanError> {
    let size = number(env::SIZE)?;
    let rank = my_rank(size)?;
    let url = var(env::BOOTSTRAP)?;
    let token = var(env::TOKEN)?;
    let job = var(env::JOB_ID)?;
    let client = Client::connect(&url, rank, size, &token, &job, patience)?;
    Ok(Arc::new(client))
}

/// Runs the job and reports a failure to the frontend as an event; true on success.
pub fn run_reporting(spec: &JobSpec, boot: Arc<dyn Bootstrap>) -> bool {
    match run(spec, boot.clone()) {
        Ok(()) => true,
        Err(Failure { stage, cause }) => {
            let message = cause.to_string();
            let ev = RankEvent::Failed {
                stage,
                message: message.clone(),
                secondary: cause.is_secondary(),
            };
            if send(boot.as_ref(), &ev).is_err() {
                eprintln!("error: {message}");
            }
            false
        }
    }
}

fn send(boot: &dyn Bootstrap, ev: &RankEvent) -> Result<(), BootstrapError> {
    let json = serde_json::to_string(ev).expect("event serialises");
    boot.send_event(&json)
}

/// Runs every fabric of the job on this rank.
pub fn run(spec: &JobSpec, boot: Arc<dyn Bootstrap>) -> Result<(), Failure> {
    for job in &spec.fabrics {
        run_fabric(spec, job, boot.clone())?;
    }
    Ok(())
}

/// Hands rank 0's points to the frontend as they are measured.
struct Reporter<'a> {
    boot: &'a dyn Bootstrap,
    fabric: &'a str,
    suite: &'a str,
}

impl PointSink for Reporter<'_> {
    fn starting(&mut self, key: &PointKey) -> Result<(), SuiteError> {
        send(
            self.boot,
            &RankEvent::PointStart {
                fabric: self.fabric.to_string(),
                suite: self.suite.to_string(),
                key: key.clone(),
            },
        )
        .map_err(SuiteError::Bootstrap)
    }

    fn measured(&mut self, point: Point) -> Result<(), SuiteError> {
        send(
            self.boot,
            &RankEvent::Point {
                fabric: self.fabric.to_string(),
                suite: self.suite.to_string(),
                point,
            },
        )
        .map_err(SuiteError::Bootstrap)
    }

    fn note(&mut self, text: &str) -> Result<(), SuiteError> {
        send(
            self.boot,
            &RankEvent::Note {
                fabric: self.fabric.to_string(),
                suite: self.suite.to_string(),
                text: text.to_string(),
            },
        )
        .map_err(SuiteError::Bootstrap)
    }
}

fn run_fabric(spec: &JobSpec, job: &FabricJob, boot: Arc<dyn Bootstrap>) -> Result<(), Failure> {
    let def = registry::find(&job.fabric)
        .ok_or_else(|| Failure::new("setup", RankError::UnknownFabric(job.fabric.clone())))?;
    let stage = format!("connect fabric {}", def.name);
    boot.report_stage(&stage);
    let ctx = FabricContext {
        boot: boot.clone(),
        settings: &job.settings,
    };
    let transport = (def.connect)(&ctx).map_err(|e| Failure::new(stage.clone(), e))?;
    let comm = Comm::new(transport);
    if let Some(r) = &job.compute_replay {
        comm.replay_compute(r.for_rank(comm.rank()));
    }
    let fail = |comm: &Comm, e: RankError| Failure::new(comm.transport().stage(), e);
    for s in &spec.suites {
        let suite = suites::find(&s.suite)
            .ok_or_else(|| Failure::new("setup", RankError::UnknownSuite(s.suite.clone())))?;
        let done = job.done.iter().find(|d| d.suite == s.suite);
        if done.is_some_and(|d| d.whole) {
            continue;
        }
        let done_points = done.map(|d| d.points.as_slice()).unwrap_or_default();
        if comm.rank() == 0 {
            send(
                boot.as_ref(),
                &RankEvent::SuiteStart {
                    fabric: job.label.clone(),
                    suite: s.suite.clone(),
                },
            )
            .map_err(|e| fail(&comm, e.into()))?;
        }
        let mut report = Reporter {
            boot: boot.as_ref(),
            fabric: &job.label,
            suite: &s.suite,
        };
        suite
            .run(&comm, &s.params, done_points, &mut report)
            .map_err(|e| fail(&comm, e.into()))?;
        if comm.rank() == 0 {
            send(
                boot.as_ref(),
                &RankEvent::SuiteEnd {
                    fabric: job.label.clone(),
                    suite: s.suite.clone(),
                },
            )
            .map_err(|e| fail(&comm, e.into()))?;
        }
    }
    comm.set_stage(&format!("finish fabric {}", def.name));
    comm.check_compute_replay()
        .map_err(|e| fail(&comm, e.into()))?;
    send(
        boot.as_ref(),
        &RankEvent::Done {
            fabric: job.label.clone(),
            counters: comm.counters(),
            facts: comm.describe(),
            virtual_time: comm.virtual_time(),
            compute: comm.compute_charged(),
        },
    )
    .map_err(|e| fail(&comm, e.into()))?;
    comm.finish()
        .map_err(|e| Failure::new(format!("finish fabric {}", def.name), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_gone_or_a_deadlock_is_secondary_however_it_arrives() {
        let gone = || TransportError::PeerGone {
            peer: "rank 1".into(),
            why: "connection reset".into(),
            stage: "osu_latency size 8".into(),
        };
        let deadlock = || TransportError::Deadlock("rank 0 waits on rank 1".into());
        assert!(RankError::Transport(gone()).is_secondary());
        assert!(RankError::Suite(SuiteError::Transport(gone())).is_secondary());
        assert!(RankError::Transport(deadlock()).is_secondary());
        assert!(RankError::Suite(SuiteError::Transport(deadlock())).is_secondary());
    }

    #[test]
    fn a_root_cause_is_not_secondary() {
        let remote = TransportError::Remote {
            rank: 1,
            message: "rank 2 is gone (reset) (stage: x)".into(),
        };
        assert!(!RankError::Transport(remote).is_secondary());
        assert!(!RankError::Suite(SuiteError::Check("sum is 3, expected 4".into())).is_secondary());
        assert!(!RankError::UnknownSuite("osu_nope".into()).is_secondary());
    }
}
