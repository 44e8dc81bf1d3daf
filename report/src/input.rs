//! The runs a report is made of: each read from its directory through the results reader,
//! kept with the path it was given as, and asked for the parts column labels and the legend
//! are made of (run id, fabrics, their kinds and tunables, host, start time). The runs are held
//! in one slice so callers can hand them on whole (the plots crate draws from `&[Run]`).

use std::path::{Path, PathBuf};

use results::model::FabricRun;
use results::Run;

use crate::ReportError;

/// The runs of a report, in the order given.
#[derive(Debug, Clone)]
pub struct Inputs {
    paths: Vec<PathBuf>,
    runs: Vec<Run>,
}

/// One run of a report and the path it was given as.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub path: &'a Path,
    pub run: &'a Run,
}

impl Inputs {
    /// Reads every directory in `paths`. The first one that is missing or malformed stops the
    /// report, with the results reader's error (which names the file); so does a run given
    /// twice.
    pub fn read(paths: &[PathBuf]) -> Result<Inputs, ReportError> {
        let mut runs = Vec::with_capacity(paths.len());
        for p in paths {
            if !p.is_dir() {
                return Err(ReportError::NotADirectory {
                    path: p.display().to_string(),
                });
            }
            runs.push(results::read_run(p)?);
        }
        Inputs::new(paths.iter().cloned().zip(runs).collect())
    }

    /// Runs already in memory, each with the path it stands for.
    pub fn new(runs: Vec<(PathBuf, Run)>) -> Result<Inputs, ReportError> {
        let (paths, runs): (Vec<PathBuf>, Vec<Run>) = runs.into_iter().unzip();
        let same_dir = |a: &Path, b: &Path| {
            a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
        };
        for (i, r) in runs.iter().enumerate() {
            if let Some(j) = (0..i).find(|&j| same_dir(&paths[j], &paths[i])) {
                return Err(ReportError::GivenTwice {
                    path: format!("{} (as {})", paths[i].display(), paths[j].display()),
                });
            }
            // A copy of a directory reads back to an equal run: its columns would repeat
            // another's. Two runs that only share an id (started in the same second into
            // different --out directories) are different runs, and both are kept.
            if let Some(j) = (0..i).find(|&j| runs[j] == *r) {
                return Err(ReportError::SameRun {
                    first: paths[j].display().to_string(),
                    second: paths[i].display().to_string(),
                    run_id: r.manifest.run_id.clone(),
                });
            }
        }
        Ok(Inputs { paths, runs })
    }

    /// The runs, in the order given.
    pub fn runs(&self) -> &[Run] {
        &self.runs
    }

    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    pub fn get(&self, i: usize) -> Input<'_> {
        Input {
            path: &self.paths[i],
            run: &self.runs[i],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = Input<'_>> {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The input `given` names: its path as given, the same directory by another path, or its
    /// run id.
    /// A run id that several inputs share names none of them: the path must be given.
    pub fn find(&self, given: &str) -> Option<usize> {
        let canonical = Path::new(given).canonicalize().ok();
        let by_path = self.iter().position(|i| {
            i.path.as_os_str() == given
                || (canonical.is_some() && i.path.canonicalize().ok() == canonical)
        });
        by_path.or_else(|| {
            let ids: Vec<usize> = (0..self.len())
                .filter(|&k| self.get(k).run_id() == given)
                .collect();
            (ids.len() == 1).then(|| ids[0])
        })
    }

    /// The run ids, comma separated, for messages.
    pub fn run_ids(&self) -> String {
        self.iter()
            .map(|i| i.run_id())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The paths, comma separated, for messages.
    pub fn paths(&self) -> String {
        self.paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl<'a> Input<'a> {
    pub fn run_id(&self) -> &'a str {
        &self.run.manifest.run_id
    }

    /// Whether the run ended before its last point.
    pub fn partial(&self) -> bool {
        self.run.partial_reason().is_some()
    }

    /// The run's fabrics, in `--fabric` order.
    pub fn fabrics(&self) -> &'a [FabricRun] {
        &self.run.manifest.fabrics
    }

    pub fn host(&self) -> &'a str {
        &self.run.manifest.host.hostname
    }

    pub fn start_time(&self) -> &'a str {
        &self.run.manifest.start_time
    }
}
