//! A strong-scaling run: one plan per rank count, run one after the other as ordinary runs,
//! each into its own directory `OUT/STAMP-scaling/nN/` of a directory claimed for the group.
//! The plans are built (and so checked) by the caller before this runs, so a count a suite
//! refuses stops everything before anything is created or measured; what is measured is
//! handed back with the directory, for the caller to tabulate (`results::scaling`).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use results::run_dir;

use crate::{run_until, Plan, Run, RunError, Sink};

/// The runs of a scaling run, in the order of the plans, and the directory holding them.
pub struct Scaling {
    pub dir: PathBuf,
    pub runs: Vec<Run>,
}

/// A scaling run that ended early: the error of the count that failed (or of claiming the
/// directory), and the directory when some counts had finished in it.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ScalingError {
    pub error: RunError,
    /// Where the counts that did finish are, when any did.
    pub finished_in: Option<PathBuf>,
}

/// Claims `OUT/STAMP-scaling[-n]` under `out` and runs each plan into `nN/` of it (N its
/// rank count), one after the other; `sink_for` gives each count's sink as the count starts
/// (and is where a caller announces it). Stops at the first count that fails or once `stop`
/// is raised.
pub fn run_counts<S: Sink>(
    mut plans: Vec<Plan>,
    out: &Path,
    mut sink_for: impl FnMut(&Plan) -> S,
    stop: &AtomicBool,
) -> Result<Scaling, ScalingError> {
    let dir = run_dir::claim(out, &run_dir::stamp(SystemTime::now()), "scaling").map_err(|e| {
        ScalingError {
            error: RunError::Unwritable(e),
            finished_in: None,
        }
    })?;
    for plan in &mut plans {
        plan.out = Some(dir.join(format!("n{}", plan.ranks)));
    }
    let mut runs = Vec::new();
    for plan in &plans {
        let mut sink = sink_for(plan);
        match run_until(plan, &mut sink, stop) {
            Ok(run) => runs.push(run),
            Err(error) => {
                return Err(ScalingError {
                    error,
                    finished_in: (!runs.is_empty()).then(|| dir.clone()),
                })
            }
        }
    }
    Ok(Scaling { dir, runs })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::Discard;
    use crate::{PlanBuilder, SuiteSpec};
    use suites::osu::{OsuParams, LATENCY};

    fn tmp() -> PathBuf {
        std::env::temp_dir().join(format!(
            "fabbench-scaling-{}",
            bench_core::bootstrap::random_hex(6)
        ))
    }

    #[test]
    fn each_count_runs_into_its_own_directory() {
        let params = OsuParams {
            min_size: Some(8),
            max_size: Some(8),
            iterations: Some(5),
            ..Default::default()
        };
        let plan = |n: usize| {
            PlanBuilder::new()
                .suite(SuiteSpec::new(&LATENCY, params.clone()))
                .fabrics("rapidio")
                .ranks(n)
                .tag(&format!("n{n}"))
                .build()
                .unwrap()
        };
        let out = tmp();
        let mut announced = Vec::new();
        let s = run_counts(
            vec![plan(2), plan(2)],
            &out,
            |p| {
                announced.push(p.ranks);
                Discard
            },
            &AtomicBool::new(false),
        )
        .unwrap();
        assert_eq!(announced, [2, 2]);
        assert_eq!(s.runs.len(), 2);
        assert!(s.dir.starts_with(&out));
        assert!(s
            .dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .contains("-scaling"));
        for run in &s.runs {
            assert!(s.dir.join("n2").join(&run.manifest.run_id).is_dir());
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
