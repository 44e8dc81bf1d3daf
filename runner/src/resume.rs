//! A kept partial run continued (`fabbench run --resume DIR`): the run read back and checked
//! against the plan that continues it, what each fabric's ranks leave out, and the part of it
//! that stands.

use std::path::{Path, PathBuf};

use results::model::Run;

use crate::error::PlanError;
use crate::job::DoneSuite;
use crate::plan::{FabricSpec, Launch, Plan, SuiteSpec};

/// A kept partial run to continue: its directory and what it had measured.
#[derive(Debug, Clone)]
pub struct Resume {
    pub dir: PathBuf,
    pub prior: Run,
}

impl Plan {
    /// Whether a suite's points are a fixed list, so a resumed run can leave out those it has
    /// (an adaptive or sampled suite chooses from what it measures and runs again whole).
    fn fixed(&self, suite: &str) -> bool {
        self.suites
            .iter()
            .find(|s| s.name() == suite)
            .is_some_and(|s| matches!(s.suite.planned(&s.params), Ok(Some(_))))
    }

    /// What of the resumed run a fabric's ranks leave out, by suite.
    pub fn done_on(&self, fabric: &str) -> Vec<DoneSuite> {
        let Some(r) = &self.resume else {
            return Vec::new();
        };
        let finished = r
            .prior
            .manifest
            .partial
            .as_ref()
            .map(|p| p.finished.clone())
            .unwrap_or_default();
        r.prior
            .series
            .iter()
            .filter(|s| s.fabric == fabric)
            .map(|s| DoneSuite {
                suite: s.suite.clone(),
                whole: finished.contains(&(s.suite.clone(), s.fabric.clone())),
                points: if self.fixed(&s.suite) {
                    s.points.iter().map(|p| p.key.clone()).collect()
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    /// The part of the resumed run that stands: finished series, and the points of unfinished
    /// series with a fixed list (an unfinished adaptive or sampled series is measured again).
    pub fn kept(&self) -> Option<Run> {
        let r = self.resume.as_ref()?;
        let finished = r
            .prior
            .manifest
            .partial
            .as_ref()
            .map(|p| p.finished.clone())
            .unwrap_or_default();
        let mut run = r.prior.clone();
        run.series.retain(|s| {
            finished.contains(&(s.suite.clone(), s.fabric.clone())) || self.fixed(&s.suite)
        });
        Some(run)
    }
}

/// The kept partial run in `dir`, checked against the plan that is to continue it.
pub(crate) fn resumable(
    dir: &Path,
    suites: &[SuiteSpec],
    fabrics: &[FabricSpec],
    ranks: usize,
    launch: &Launch,
) -> Result<Resume, PlanError> {
    let refuse = |why: String| PlanError(format!("--resume {}: {why}", dir.display()));
    if *launch != Launch::Local {
        // Every rank under a launcher builds its own plan; only rank 0 could read the run.
        return Err(refuse(
            "runs under mpirun or srun cannot be resumed yet; run the missing sizes with -m".into(),
        ));
    }
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.ends_with(results::run_dir::PARTIAL_SUFFIX) {
        return Err(refuse(
            "give the directory of a run that was kept incomplete, named RUN_ID.partial".into(),
        ));
    }
    let prior = results::read_run(dir).map_err(|e| refuse(e.to_string()))?;
    if prior.manifest.partial.is_none() {
        return Err(refuse("its manifest says the run is complete".into()));
    }
    let names: Vec<String> = suites.iter().map(|s| s.name().to_string()).collect();
    let labels: Vec<String> = fabrics.iter().map(|f| f.label.clone()).collect();
    let had: Vec<String> = prior
        .manifest
        .fabrics
        .iter()
        .map(|f| f.fabric.clone())
        .collect();
    let had_ranks = prior.manifest.fabrics.first().map(|f| f.ranks);
    if prior.manifest.suites != names || had != labels || had_ranks.is_some_and(|n| n != ranks) {
        return Err(refuse(format!(
            "it ran {} on {} with {} ranks; this plan is {} on {} with {ranks}",
            prior.manifest.suites.join(" "),
            had.join(","),
            had_ranks.unwrap_or(0),
            names.join(" "),
            labels.join(",")
        )));
    }
    for s in suites {
        if prior.manifest.params.get(s.name()) != Some(&s.params) {
            return Err(refuse(format!(
                "{} ran with other parameters than this plan's",
                s.name()
            )));
        }
    }
    Ok(Resume {
        dir: dir.to_path_buf(),
        prior,
    })
}
