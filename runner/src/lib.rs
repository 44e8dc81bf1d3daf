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

pub use error::{Interruption, JobError, Kept, PlanError, ResumeError, RunError, Unwritten};
pub use plan::{BootSpec, FabricSpec, Launch, Plan, PlanBuilder, Resume, Role, SuiteSpec};
pub use rank::rank_process;
pub use results::model::Run;
pub use sink::{Event, Sink};

/// The git revision this build came from, for manifests written outside the runner (`fabbench
/// limits`).
pub const GIT_REVISION: &str = env!("FABBENCH_GIT_REVISION");

use collect::Collector;
use results::format::json_csv::ManifestJson;
use results::format::Exporter;
use results::model::Partial;
use results::run_dir::{RunDir, MANIFEST, SAMPLES};
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
    // Raised by the collector when a point cannot be journalled: measuring on would only
    // produce what the run cannot keep.
    let unwritable = AtomicBool::new(false);
    let halted = || stop.load(Ordering::SeqCst) || unwritable.load(Ordering::SeqCst);
    let mut c = Collector::new(plan, id, start, sink, dir, plan.kept(), &unwritable);
    let mut failures: Vec<JobError> = Vec::new();
    let mut interrupted: Option<JobError> = None;
    // Once the caller has asked to stop, a job's error is the stop: nothing more runs. Once
    // results cannot be written, its error is only the ranks being stopped for that.
    let mut go_on = |result: Result<(), JobError>| match result {
        Ok(()) => !unwritable.load(Ordering::SeqCst),
        Err(cause) if stop.load(Ordering::SeqCst) => {
            interrupted = Some(cause);
            false
        }
        Err(_) if unwritable.load(Ordering::SeqCst) => false,
        Err(cause) => {
            failures.push(cause);
            true
        }
    };
    match ext_boot {
        None => {
            for idx in 0..plan.fabrics.len() {
                c.begin_fabric();
                if !go_on(launch::local(plan, idx, &mut c, &halted)) {
                    break;
                }
            }
        }
        Some((ext, boot, secret)) => {
            go_on(launch::external(plan, ext, boot, secret, &mut c, &halted));
        }
    }
    let journal_error = c.journal_error.take();
    let unwritten = journal_error.as_ref().map(|e| format!("{UNWRITTEN}: {e}"));
    let reason = match (&interrupted, failures.as_slice(), unwritten) {
        (Some(cause), _, _) if cause.is_stop() => cause.to_string(),
        (Some(cause), _, _) => format!("interrupted: {cause}"),
        (None, _, Some(unwritten)) => unwritten,
        (None, [], None) => String::new(),
        (None, many, None) => many
            .iter()
            .map(|f| f.to_string())
            .collect::<Vec<_>>()
            .join("; "),
    };
    let complete = reason.is_empty();
    let ended = c.finish(complete, &reason);
    let (run, sink) = (ended.run, ended.sink);
    let Some(dir) = ended.dir else {
        return if complete {
            Ok(run)
        } else {
            Err(end(interrupted, failures, journal_error, Kept::Nothing))
        };
    };
    let measured = run.series.iter().any(|s| !s.points.is_empty());
    if !complete && !measured {
        dir.discard();
        return Err(end(interrupted, failures, journal_error, Kept::Nothing));
    }
    let final_write = write_final(&dir, &run);
    if complete && final_write.is_ok() {
        let path = dir.commit().map_err(|cause| {
            RunError::Unwritten(Box::new(Unwritten {
                cause,
                kept: Kept::Nothing,
            }))
        })?;
        sink.event(&Event::Written { path: &path });
        return Ok(run);
    }
    // Incomplete, or its final files did not all fit: keep it as a partial run that says why,
    // its journal intact for every reader and for --resume.
    let mut journal_error = journal_error;
    if let Err(failed) = final_write {
        let reason = match &journal_error {
            Some(_) => reason,
            None if complete => format!("{UNWRITTEN}: {}", failed.cause),
            None => format!("{reason}; {UNWRITTEN}: {}", failed.cause),
        };
        keep_readable(
            &dir,
            &run,
            &ended.journalled,
            failed.samples_written,
            &reason,
        );
        journal_error.get_or_insert(failed.cause);
    }
    let kept = match dir.keep() {
        Ok(path) => {
            sink.event(&Event::Written { path: &path });
            Kept::In(path)
        }
        Err(e) => Kept::Lost(e),
    };
    Err(end(interrupted, failures, journal_error, kept))
}

/// The words a run kept partial because its results could not be written starts its reason
/// with (the manifest's `partial.reason`, and the error line).
pub const UNWRITTEN: &str = "results could not be written";

/// The error a run that did not complete ends with: the stop if the caller asked for one,
/// else results that could not be written, else the jobs that failed.
fn end(
    interrupted: Option<JobError>,
    failures: Vec<JobError>,
    unwritten: Option<ResultsError>,
    kept: Kept,
) -> RunError {
    match (interrupted, unwritten) {
        (Some(cause), _) => RunError::Interrupted(Box::new(Interruption { cause, kept })),
        (None, Some(cause)) => RunError::Unwritten(Box::new(Unwritten { cause, kept })),
        (None, None) => RunError::Failed { failures, kept },
    }
}

/// A final write that failed part way.
struct Unfinished {
    cause: ResultsError,
    /// The new samples.csv, holding every point, replaced the journal's.
    samples_written: bool,
}

/// Every file of the run into its directory, replacing the journal: samples.csv first, then
/// the files exported from the run, and last the manifest that lists them, each replaced
/// atomically; then whatever an earlier part of a resumed run left that this export did not
/// write again. Until the manifest is replaced, the journal's manifest and samples describe
/// the same points (a reader ignores rows past the manifest's), so a write that fails
/// anywhere leaves a readable run.
fn write_final(dir: &RunDir, run: &Run) -> Result<(), Unfinished> {
    let failed = |samples_written| {
        move |cause| Unfinished {
            cause,
            samples_written,
        }
    };
    let mut files = results::format::export_all(run).map_err(failed(false))?;
    let order = |p: &std::path::Path| match p.to_str() {
        Some(SAMPLES) => 0,
        Some(MANIFEST) => 2,
        _ => 1,
    };
    files.sort_by_key(|(p, _)| order(p));
    let mut samples_written = false;
    for (path, bytes) in &files {
        dir.write_unless_same(path, bytes)
            .map_err(failed(samples_written))?;
        samples_written |= path.as_os_str() == SAMPLES;
    }
    let tops: Vec<String> = files
        .iter()
        .filter_map(|(p, _)| p.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let keep: Vec<&str> = tops.iter().map(String::as_str).collect();
    dir.remove_except(&keep).map_err(failed(true))
}

/// After the final write failed part way: the manifest marked partial with `reason`, listing
/// the points samples.csv holds (every point if the new samples.csv was written, else the
/// ones the journal kept whole), and none of the exports, which may describe other points.
/// On a disk that refuses even this, the journal's own manifest stays, which reads too.
fn keep_readable(
    dir: &RunDir,
    run: &Run,
    journalled: &[usize],
    samples_written: bool,
    reason: &str,
) {
    let mut kept = run.clone();
    let mut finished: Vec<(String, String)> = match &run.manifest.partial {
        Some(p) => p.finished.clone(),
        // A complete run: every series finished.
        None => run
            .series
            .iter()
            .map(|s| (s.suite.clone(), s.fabric.clone()))
            .collect(),
    };
    if !samples_written {
        for (s, n) in kept.series.iter_mut().zip(journalled) {
            if s.points.len() > *n {
                s.points.truncate(*n);
                finished.retain(|(suite, fabric)| !(*suite == s.suite && *fabric == s.fabric));
            }
        }
    }
    kept.manifest.partial = Some(Partial {
        reason: reason.to_string(),
        finished,
    });
    if let Err(e) = dir.remove_except(&[SAMPLES, MANIFEST]) {
        tracing::warn!("the partial run's exports could not all be removed: {e}");
    }
    let written = ManifestJson.export(&kept).and_then(|files| {
        for (path, bytes) in files {
            dir.write(&path, &bytes)?;
        }
        Ok(())
    });
    if let Err(e) = written {
        tracing::warn!("the partial run's manifest could not be rewritten either: {e}");
    }
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
