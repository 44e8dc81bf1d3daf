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

mod collect;
pub mod error;
pub mod job;
mod launch;
pub mod plan;
pub mod rank;
pub mod sink;
pub mod sinks;

use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

pub use error::{PlanError, RunError};
pub use plan::{BootSpec, FabricSpec, Launch, Plan, PlanBuilder, Role, SuiteSpec};
pub use rank::rank_process;
pub use results::model::Run;
pub use sink::{Event, Sink};

use collect::Collector;
use results::run_dir::RunDir;

/// Runs `plan` to the end and returns what it measured; `sink` hears every step.
pub fn run(plan: &Plan, sink: &mut dyn Sink) -> Result<Run, RunError> {
    run_until(plan, sink, &AtomicBool::new(false))
}

/// As [`run`], stopping every rank (and writing nothing) once `stop` is raised (Ctrl-C).
pub fn run_until(plan: &Plan, sink: &mut dyn Sink, stop: &AtomicBool) -> Result<Run, RunError> {
    let ext_boot = match &plan.launch {
        Launch::External { ext, boot } => {
            if ext.rank != 0 {
                return Err(RunError::NotFrontend(ext.rank));
            }
            Some((ext, boot))
        }
        Launch::Local => None,
    };
    let start = SystemTime::now();
    let id = run_id(start, plan);
    // The directory comes first, so an unwritable --out stops the run before it starts.
    let dir = match &plan.out {
        Some(out) => Some(RunDir::create(out, &id).map_err(RunError::Unwritable)?),
        None => None,
    };
    let id = dir
        .as_ref()
        .and_then(|d| d.final_path().file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(id);
    let mut c = Collector::new(plan, id, start, sink);
    match ext_boot {
        None => {
            for idx in 0..plan.fabrics.len() {
                launch::local(plan, idx, &mut c, stop)?;
            }
        }
        Some((ext, boot)) => launch::external(plan, ext, boot, &mut c, stop)?,
    }
    let (run, sink) = c.finish();
    if let Some(dir) = dir {
        for (path, bytes) in results::export::export_all(&run).map_err(RunError::Results)? {
            dir.write(&path, &bytes).map_err(RunError::Results)?;
        }
        let path = dir.commit().map_err(RunError::Results)?;
        sink.event(&Event::Written { path: &path });
    }
    Ok(run)
}

/// Serves this process as rank `N > 0` of a job started by mpirun or srun (the plan's role is
/// [`Role::Worker`]); rank 0 runs [`run`] and collects the results.
pub fn run_worker(plan: &Plan) -> Result<(), RunError> {
    match &plan.launch {
        Launch::External { ext, boot } if ext.rank != 0 => launch::worker(plan, ext, boot),
        _ => Err(RunError::Plan(PlanError(
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
