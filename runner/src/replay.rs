//! Compute replayed from an earlier run (`fabbench run --compute-from DIR`): the host times an
//! emulated run recorded for each rank's compute stretches (compute.csv), read back, checked
//! against what the replaying plan runs, and handed to each rank to charge instead of timing.
//! Two runs of one command then charge the same compute whatever the host did meanwhile (a
//! busy neighbour slows memory-bound code's own CPU time on a shared core), so what differs
//! between them is the fabric's doing. SMPI calls this sampling; here every stretch is measured
//! once, in the run that recorded it. It knows runs, not plans: the plan asks with its facts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use results::model::Run;
use transports::comm::Replay;

use crate::error::ReplayError;

/// One fabric's recorded compute: every rank's stretches, and the run they came from.
#[derive(Debug)]
pub struct ComputeReplay {
    /// The recording's run directory, as the output names it.
    pub source: String,
    /// Host nanoseconds of each stretch, per rank.
    pub ranks: Vec<Vec<u64>>,
}

impl ComputeReplay {
    /// What rank `rank` charges.
    pub fn for_rank(&self, rank: usize) -> Replay {
        Replay {
            source: self.source.clone(),
            host_ns: self.ranks.get(rank).cloned().unwrap_or_default(),
        }
    }
}

/// What the replaying plan runs, to check the recording against.
pub(crate) struct Expected<'a> {
    /// Suite names and their parameters, in order.
    pub suites: Vec<(&'static str, &'a serde_json::Value)>,
    /// Fabric labels, in order; every one emulated.
    pub fabrics: Vec<&'a str>,
    pub ranks: usize,
}

/// The recording `dir` holds for each of `expected`'s fabrics: `dir` is a run directory, or a
/// scaling run's directory (the run inside it with this plan's rank count).
pub(crate) fn read(
    dir: &Path,
    expected: &Expected<'_>,
) -> Result<BTreeMap<String, Arc<ComputeReplay>>, ReplayError> {
    let (path, run) = the_run(dir, expected.ranks)?;
    let names: Vec<&str> = expected.suites.iter().map(|(n, _)| *n).collect();
    let same_params = expected
        .suites
        .iter()
        .all(|(name, params)| run.manifest.params.get(*name) == Some(*params));
    if run.manifest.suites != names || !same_params {
        return Err(ReplayError::OtherWork {
            had: run.manifest.command_line.join(" "),
        });
    }
    let source = path.display().to_string();
    let mut out = BTreeMap::new();
    for label in &expected.fabrics {
        let Some(f) = run.manifest.fabrics.iter().find(|f| f.fabric == *label) else {
            return Err(ReplayError::NoFabric {
                fabric: label.to_string(),
                had: run
                    .manifest
                    .fabrics
                    .iter()
                    .map(|f| f.fabric.clone())
                    .collect(),
            });
        };
        if f.compute.is_empty() {
            return Err(ReplayError::NothingRecorded {
                fabric: label.to_string(),
            });
        }
        out.insert(
            label.to_string(),
            Arc::new(ComputeReplay {
                source: source.clone(),
                ranks: f.compute.clone(),
            }),
        );
    }
    Ok(out)
}

/// The run under `dir` with `ranks` ranks, and its directory.
fn the_run(dir: &Path, ranks: usize) -> Result<(PathBuf, Run), ReplayError> {
    let mut found = Vec::new();
    let mut counts = Vec::new();
    for path in results::read::runs_in(dir) {
        let run = results::read_run(&path)?;
        let n = run.manifest.fabrics.first().map(|f| f.ranks).unwrap_or(0);
        if run.manifest.partial.is_some() {
            continue;
        }
        if n == ranks {
            found.push((path, run));
        } else {
            counts.push(n);
        }
    }
    match found.len() {
        1 => Ok(found.pop().expect("one")),
        0 => Err(ReplayError::NoRankCount { ranks, had: counts }),
        _ => Err(ReplayError::Several { ranks }),
    }
}
