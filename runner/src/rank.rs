//! One rank of a job: bring up each fabric, run every suite through the shared driver, report
//! points (rank 0) and counters (every rank) to the frontend as events. The same code runs in
//! a rank process, a rank thread, and a rank started by mpirun or srun.

use std::sync::Arc;

use bench_core::bootstrap::tcp::Client;
use bench_core::bootstrap::{env, Bootstrap};
use bench_core::measure::{Point, PointKey};
use suites::{PointSink, SuiteError};
use transports::comm::Comm;
use transports::fabric::FabricContext;
use transports::registry;

use crate::error::{PlanError, RunError};
use crate::job::{FabricJob, JobSpec, RankEvent, SPEC_ENV};

/// A failure on a rank: the stage it was in and what went wrong.
pub type Failure = (String, String);

fn var(name: &str) -> Result<String, PlanError> {
    std::env::var(name).map_err(|_| {
        PlanError(format!(
            "{name} is not set: `fabbench __rank` is started by `fabbench run`, not by hand"
        ))
    })
}

fn number(name: &str) -> Result<usize, PlanError> {
    var(name)?
        .parse()
        .map_err(|_| PlanError(format!("{name} is not a number")))
}

/// Serves this process as one rank of a job started by fabbench's launcher (or by mpirun on
/// fabbench's behalf): the spec and bootstrap come from the environment. A failure has been
/// reported to the frontend when this returns [`RunError::Reported`].
pub fn rank_process() -> Result<(), RunError> {
    let spec: JobSpec = serde_json::from_str(&var(SPEC_ENV)?)
        .map_err(|e| PlanError(format!("{SPEC_ENV} is not a job spec: {e}")))?;
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
    match detect().map_err(PlanError)? {
        Started::External(e) if e.size == size => Ok(e.rank),
        Started::External(e) => Err(PlanError(format!(
            "{} started {} ranks but fabbench asked for {size}: is this the mpirun of the MPI fabbench was built against?",
            e.launcher, e.size
        ))),
        _ => Err(PlanError(format!(
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
    let client = Client::connect(&url, rank, size, &token, &job, patience)
        .map_err(|e| PlanError(e.to_string()))?;
    Ok(Arc::new(client))
}

/// Runs the job and reports a failure to the frontend as an event; true on success.
pub fn run_reporting(spec: &JobSpec, boot: Arc<dyn Bootstrap>) -> bool {
    match run(spec, boot.clone()) {
        Ok(()) => true,
        Err((stage, message)) => {
            let ev = RankEvent::Failed {
                stage,
                message: message.clone(),
            };
            if send(boot.as_ref(), &ev).is_err() {
                eprintln!("error: {message}");
            }
            false
        }
    }
}

fn send(boot: &dyn Bootstrap, ev: &RankEvent) -> Result<(), String> {
    let json = serde_json::to_string(ev).expect("event serialises");
    boot.send_event(&json).map_err(|e| e.to_string())
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
        .map_err(SuiteError::Report)
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
        .map_err(SuiteError::Report)
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
        .map_err(SuiteError::Report)
    }
}

fn run_fabric(spec: &JobSpec, job: &FabricJob, boot: Arc<dyn Bootstrap>) -> Result<(), Failure> {
    let def = registry::find(&job.fabric).ok_or_else(|| {
        (
            "setup".to_string(),
            format!("unknown fabric '{}'", job.fabric),
        )
    })?;
    let stage = format!("connect fabric {}", def.name);
    boot.report_stage(&stage);
    let ctx = FabricContext {
        boot: boot.clone(),
        settings: &job.settings,
    };
    let transport = (def.connect)(&ctx).map_err(|e| (stage.clone(), e.to_string()))?;
    let comm = Comm::new(transport);
    let fail = |comm: &Comm, e: String| (comm.transport().stage(), e);
    for s in &spec.suites {
        let suite = suites::find(&s.suite)
            .ok_or_else(|| ("setup".to_string(), format!("unknown suite '{}'", s.suite)))?;
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
            .map_err(|e| fail(&comm, e))?;
        }
        let mut report = Reporter {
            boot: boot.as_ref(),
            fabric: &job.label,
            suite: &s.suite,
        };
        suite
            .run(&comm, &s.params, done_points, &mut report)
            .map_err(|e| fail(&comm, e.to_string()))?;
        if comm.rank() == 0 {
            send(
                boot.as_ref(),
                &RankEvent::SuiteEnd {
                    fabric: job.label.clone(),
                    suite: s.suite.clone(),
                },
            )
            .map_err(|e| fail(&comm, e))?;
        }
    }
    comm.set_stage(&format!("finish fabric {}", def.name));
    send(
        boot.as_ref(),
        &RankEvent::Done {
            fabric: job.label.clone(),
            counters: comm.counters(),
            facts: comm.describe(),
            virtual_time: comm.virtual_time(),
        },
    )
    .map_err(|e| fail(&comm, e))?;
    comm.finish()
        .map_err(|e| (format!("finish fabric {}", def.name), e.to_string()))
}
