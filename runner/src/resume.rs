//! A kept partial run continued (`fabbench run --resume DIR`): the run read back and checked
//! against what the continuing plan runs, what each fabric's ranks leave out, and the part of
//! it that stands. It knows runs, not plans: the plan asks it with its own facts.

use std::path::{Path, PathBuf};

use bench_core::measure::PointKey;
use results::model::Run;
use serde::{Deserialize, Serialize};

use crate::error::ResumeError;

/// A kept partial run to continue: its directory and what it had measured.
#[derive(Debug, Clone)]
pub struct Resume {
    pub dir: PathBuf,
    pub prior: Run,
}

/// What a resumed run already has of one suite on one fabric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DoneSuite {
    pub suite: String,
    /// Every point: the suite is not run again.
    pub whole: bool,
    /// The points measured (of a fixed schedule), left out when it runs.
    pub points: Vec<PointKey>,
}

/// What the continuing plan runs, to check the kept run against.
pub(crate) struct Expected<'a> {
    /// Suite names and their parameters, in order.
    pub suites: Vec<(&'static str, &'a serde_json::Value)>,
    /// Fabric labels, in order.
    pub fabrics: Vec<&'a str>,
    pub ranks: usize,
}

impl Resume {
    /// The kept partial run in `dir`, if it is one and ran what `expected` runs; otherwise
    /// why not, in words.
    pub(crate) fn read(dir: &Path, expected: &Expected<'_>) -> Result<Resume, ResumeError> {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.ends_with(results::run_dir::PARTIAL_SUFFIX) {
            return Err(ResumeError::NotPartial);
        }
        let prior = results::read_run(dir)?;
        if prior.manifest.partial.is_none() {
            return Err(ResumeError::Complete);
        }
        let names: Vec<&str> = expected.suites.iter().map(|(n, _)| *n).collect();
        let had: Vec<&str> = prior
            .manifest
            .fabrics
            .iter()
            .map(|f| f.fabric.as_str())
            .collect();
        let had_ranks = prior.manifest.fabrics.first().map(|f| f.ranks);
        if prior.manifest.suites != names
            || had != expected.fabrics
            || had_ranks.is_some_and(|n| n != expected.ranks)
        {
            return Err(ResumeError::OtherPlan {
                had_suites: prior.manifest.suites.clone(),
                had_fabrics: had.iter().map(|f| f.to_string()).collect(),
                had_ranks: had_ranks.unwrap_or(0),
                suites: names.iter().map(|s| s.to_string()).collect(),
                fabrics: expected.fabrics.iter().map(|f| f.to_string()).collect(),
                ranks: expected.ranks,
            });
        }
        for (name, params) in &expected.suites {
            if prior.manifest.params.get(*name) != Some(*params) {
                return Err(ResumeError::OtherParams {
                    suite: name.to_string(),
                });
            }
        }
        Ok(Resume {
            dir: dir.to_path_buf(),
            prior,
        })
    }

    /// Whether the series of `suite` on `fabric` was measured to the end.
    fn finished(&self, suite: &str, fabric: &str) -> bool {
        self.prior
            .manifest
            .partial
            .as_ref()
            .is_some_and(|p| p.finished.iter().any(|(s, f)| s == suite && f == fabric))
    }

    /// What a fabric's ranks leave out, by suite; `fixed` says whether a suite's points are a
    /// fixed list (an adaptive or sampled suite chooses from what it measures and runs again
    /// whole).
    pub fn done_on(&self, fabric: &str, fixed: impl Fn(&str) -> bool) -> Vec<DoneSuite> {
        self.prior
            .series
            .iter()
            .filter(|s| s.fabric == fabric)
            .map(|s| DoneSuite {
                suite: s.suite.clone(),
                whole: self.finished(&s.suite, &s.fabric),
                points: if fixed(&s.suite) {
                    s.points.iter().map(|p| p.key.clone()).collect()
                } else {
                    Vec::new()
                },
            })
            .collect()
    }

    /// The part of the run that stands: finished series, and the points of unfinished series
    /// with a fixed list (an unfinished adaptive or sampled series is measured again).
    pub fn kept(&self, fixed: impl Fn(&str) -> bool) -> Run {
        let mut run = self.prior.clone();
        run.series
            .retain(|s| self.finished(&s.suite, &s.fabric) || fixed(&s.suite));
        run
    }
}
