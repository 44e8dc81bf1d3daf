//! runner is fabbench as a library: it runs suites on fabrics and gives back a [`Run`], with no
//! command line involved. A caller builds a [`Plan`] (suites with typed parameters, fabrics,
//! ranks, tunables, output) with [`PlanBuilder`], then [`run`] launches the ranks as each
//! fabric's registry entry says (processes, threads of this process for emulated fabrics, or
//! through mpirun), collects what they measure, streams progress and points to a [`Sink`], and
//! writes the run directory when asked to. The `fabbench` binary is one caller; autotune,
//! characterise and CI tracking are others, and on emulated fabrics they can run thousands of
//! runs in-process without spawning anything.
//!
//! ```no_run
//! use runner::{PlanBuilder, SuiteSpec, sink::Discard};
//! use suites::osu::{OsuParams, LATENCY};
//!
//! let params = OsuParams { min_size: Some(8), max_size: Some(8), iterations: Some(100), ..Default::default() };
//! let plan = PlanBuilder::new()
//!     .suite(SuiteSpec::new(&LATENCY, params))
//!     .fabrics("rapidio")
//!     .set("eager_limit=8K")
//!     .build()?;
//! let run = runner::run(&plan, &mut Discard)?;
//! println!("{:.2} us", run.series[0].points[0].headline());
//! # Ok::<(), runner::RunError>(())
//! ```

pub mod advice;
mod collect;
pub mod error;
pub mod estimate;
pub mod job;
mod launch;
pub mod plan;
pub mod rank;
pub mod replay;
mod resume;
pub mod scaling;
pub mod secret;
pub mod sink;
pub mod sinks;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

pub use error::{Interruption, JobError, Kept, PlanError, ResumeError, RunError};
pub use plan::{BootSpec, FabricSpec, Launch, Plan, PlanBuilder, Resume, Role, SuiteSpec};
pub use rank::rank_process;
pub use results::model::Run;
pub use sink::{Event, Sink};

use collect::Collector;
use results::run_dir::RunDir;
use results::ResultsError;

/// Runs `plan` to the end and returns what it measured; `sink` hears every step.
pub fn run(plan: &Plan, sink: &mut dyn Sink) -> Result<Run, RunError> {
    run_until(plan, sink, &AtomicBool::new(false))
}

/// As [`run`], stopping every rank once `stop` is raised (Ctrl-C).
///
/// With an output directory, every point is on disk as it is measured. A run that fails or
/// is stopped keeps what it measured as `OUT/RUN_ID.partial` (marked so in its manifest, with
/// the reason), and the error says where; with several fabrics, one that fails does not stop
/// the others. A run that measured nothing leaves nothing.
pub fn run_until(plan: &Plan, sink: &mut dyn Sink, stop: &AtomicBool) -> Result<Run, RunError> {
    let ext_boot = match &plan.launch {
        Launch::External { ext, boot, secret } => {
            if ext.rank != 0 {
                return Err(RunError::NotFrontend(ext.rank));
            }
            Some((ext, boot, secret))
        }
        Launch::Local => None,
    };
    let start = SystemTime::now();
    // The directory comes first, so an unwritable --out stops the run before it starts.
    let dir = match (&plan.resume, &plan.out) {
        (Some(r), _) => Some(RunDir::resume(&r.dir).map_err(RunError::Unwritable)?),
        (None, Some(out)) => {
            Some(RunDir::create(out, &run_id(start, plan)).map_err(RunError::Unwritable)?)
        }
        (None, None) => None,
    };
    let id = dir
        .as_ref()
        .map(|d| d.id().to_string())
        .unwrap_or_else(|| run_id(start, plan));
    let mut c = Collector::new(plan, id, start, sink, dir, plan.kept());
    let mut failures: Vec<JobError> = Vec::new();
    let mut interrupted: Option<JobError> = None;
    // Once the caller has asked to stop, a job's error is the stop: nothing more runs.
    let mut go_on = |result: Result<(), JobError>| match result {
        Ok(()) => true,
        Err(cause) if stop.load(Ordering::SeqCst) => {
            interrupted = Some(cause);
            false
        }
        Err(cause) => {
            failures.push(cause);
            true
        }
    };
    match ext_boot {
        None => {
            for idx in 0..plan.fabrics.len() {
                c.begin_fabric();
                if !go_on(launch::local(plan, idx, &mut c, stop)) {
                    break;
                }
            }
        }
        Some((ext, boot, secret)) => {
            go_on(launch::external(plan, ext, boot, secret, &mut c, stop));
        }
    }
    let journal_error = c.journal_error.take();
    let reason = match (&interrupted, failures.as_slice()) {
        (Some(cause), _) if cause.is_stop() => cause.to_string(),
        (Some(cause), _) => format!("interrupted: {cause}"),
        (None, []) => String::new(),
        (None, many) => many
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("; "),
    };
    let complete = reason.is_empty();
    let (run, sink, dir) = c.finish(complete, &reason);
    let ended = |kept: Kept| match interrupted {
        Some(cause) => RunError::Interrupted(Box::new(Interruption { cause, kept })),
        None => RunError::Failed { failures, kept },
    };
    let Some(dir) = dir else {
        return if complete {
            Ok(run)
        } else {
            Err(ended(Kept::Nothing))
        };
    };
    let measured = run.series.iter().any(|s| !s.points.is_empty());
    if complete {
        if let Some(e) = journal_error {
            // The run finished, but its points were not all safe on the way: the final write
            // below is what counts, and it will say if the disk is still refusing.
            tracing::warn!("the journal could not keep up: {e}");
        }
        write_all(&dir, &run).map_err(RunError::Results)?;
        let path = dir.commit().map_err(RunError::Results)?;
        sink.event(&Event::Written { path: &path });
        return Ok(run);
    }
    if !measured {
        dir.discard();
        return Err(ended(Kept::Nothing));
    }
    let kept = match write_all(&dir, &run).and_then(|()| dir.keep()) {
        Ok(path) => {
            sink.event(&Event::Written { path: &path });
            Kept::In(path)
        }
        Err(e) => Kept::Lost(e),
    };
    Err(ended(kept))
}

/// Every file of the run into its directory, replacing the journal.
fn write_all(dir: &RunDir, run: &Run) -> Result<(), ResultsError> {
    dir.clear()?;
    for (path, bytes) in results::format::export_all(run)? {
        dir.write(&path, &bytes)?;
    }
    Ok(())
}

/// Serves this process as rank `N > 0` of a job started by mpirun or srun (the plan's role is
/// [`Role::Worker`]); rank 0 runs [`run`] and collects the results.
pub fn run_worker(plan: &Plan) -> Result<(), RunError> {
    match &plan.launch {
        Launch::External { ext, boot, secret } if ext.rank != 0 => {
            launch::worker(plan, ext, boot, secret)
        }
        _ => Err(RunError::Plan(PlanError::Refused(
            "run_worker serves ranks other than 0 under mpirun or srun; call run".into(),
        ))),
    }
}

/// `20261122T101530Z-osu_latency-shm`
fn run_id(start: SystemTime, plan: &Plan) -> String {
    let stamp = results::run_dir::stamp(start);
    let suites: Vec<&str> = plan.suites.iter().map(|s| s.name()).collect();
    let fabrics: Vec<&str> = plan.fabrics.iter().map(|f| f.label.as_str()).collect();
    let id = format!("{stamp}-{}-{}", suites.join("+"), fabrics.join("+"));
    match &plan.tag {
        Some(tag) => format!("{id}-{tag}"),
        None => id,
    }
}
