//! One rank of a job started by fabbench's launcher: connect to the bootstrap, bring up the
//! fabric, run the suites, report points (rank 0) and counters (every rank) as events.

use std::sync::Arc;

use bench_core::bootstrap::tcp::Client;
use bench_core::bootstrap::{env, Bootstrap};
use transports::comm::Comm;
use transports::fabric::{self, FabricContext};

use crate::events::{JobSpec, RankEvent, SPEC_ENV};

fn var(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| {
        format!("{name} is not set: `fabbench __rank` is started by `fabbench run`, not by hand")
    })
}

fn number(name: &str) -> Result<usize, String> {
    var(name)?
        .parse()
        .map_err(|_| format!("{name} is not a number"))
}

pub fn main() -> i32 {
    let boot: Arc<dyn Bootstrap> = match connect() {
        Ok(b) => b,
        Err(msg) => {
            eprintln!("error: {msg}");
            return crate::frontend::EXIT_USAGE;
        }
    };
    let spec: JobSpec = match var(SPEC_ENV).and_then(|s| {
        serde_json::from_str(&s).map_err(|e| format!("{SPEC_ENV} is not a job spec: {e}"))
    }) {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("error: {msg}");
            return crate::frontend::EXIT_USAGE;
        }
    };
    if run_reporting(&spec, boot) {
        crate::frontend::EXIT_OK
    } else {
        crate::frontend::EXIT_FAILED
    }
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
            let json = serde_json::to_string(&ev).expect("event serialises");
            if boot.send_event(&json).is_err() {
                eprintln!("error: {message}");
            }
            false
        }
    }
}

/// This rank's number: from fabbench's launcher, or from mpirun's environment when fabbench
/// started the ranks through mpirun.
fn my_rank(size: usize) -> Result<usize, String> {
    if std::env::var(env::RANK).is_ok() {
        return number(env::RANK);
    }
    match bench_core::bootstrap::discover::detect()? {
        bench_core::bootstrap::discover::Started::External(e) if e.size == size => Ok(e.rank),
        bench_core::bootstrap::discover::Started::External(e) => Err(format!(
            "{} started {} ranks but fabbench asked for {size}: is this the mpirun of the MPI fabbench was built against?",
            e.launcher, e.size
        )),
        _ => Err(format!(
            "{} is not set and no MPI launcher's rank is either: `fabbench __rank` is started by `fabbench run`",
            env::RANK
        )),
    }
}

fn connect() -> Result<Arc<dyn Bootstrap>, String> {
    let size = number(env::SIZE)?;
    let rank = my_rank(size)?;
    let url = var(env::BOOTSTRAP)?;
    let token = var(env::TOKEN)?;
    let job = var(env::JOB_ID)?;
    let client = Client::connect(&url, rank, size, &token, &job).map_err(|e| e.to_string())?;
    Ok(Arc::new(client))
}

fn send(boot: &dyn Bootstrap, ev: &RankEvent) -> Result<(), String> {
    let json = serde_json::to_string(ev).expect("event serialises");
    boot.send_event(&json).map_err(|e| e.to_string())
}

/// Runs the job; an error carries (stage, message).
pub fn run(spec: &JobSpec, boot: Arc<dyn Bootstrap>) -> Result<(), (String, String)> {
    for job in &spec.fabrics {
        run_fabric(spec, job, boot.clone())?;
    }
    Ok(())
}

fn run_fabric(
    spec: &JobSpec,
    job: &crate::events::FabricJob,
    boot: Arc<dyn Bootstrap>,
) -> Result<(), (String, String)> {
    let def = fabric::find(&job.fabric).ok_or_else(|| {
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
    let rank = comm.rank();
    let fail = |comm: &Comm, e: String| (comm.transport().stage(), e);
    for name in &spec.suites {
        let suite = suites::find(name)
            .ok_or_else(|| ("setup".to_string(), format!("unknown suite '{name}'")))?;
        if rank == 0 {
            send(
                boot.as_ref(),
                &RankEvent::SuiteStart {
                    fabric: job.label.clone(),
                    suite: name.clone(),
                    layout: suite.layout(),
                },
            )
            .map_err(|e| fail(&comm, e))?;
        }
        let b = boot.clone();
        let mut emit = |point| {
            send(
                b.as_ref(),
                &RankEvent::Point {
                    fabric: job.label.clone(),
                    suite: name.clone(),
                    point,
                },
            )
            .map_err(suites::SuiteError::Emit)
        };
        suite
            .run(&comm, &spec.opts, &mut emit)
            .map_err(|e| fail(&comm, e.to_string()))?;
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
