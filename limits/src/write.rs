//! The limits' run directory: claimed before anything is measured (an unwritable `--out`
//! stops at once), filled with every file the results crate exports from the run (manifest,
//! summary.csv, samples.csv, results.json, histograms, osu.txt), and committed whole; a
//! measurement that failed leaves nothing behind.

use std::path::{Path, PathBuf};

use results::run_dir::RunDir;
use results::Run;

use crate::run::FABRIC;
use crate::LimitsError;

/// Claims the run directory in `out`, before measuring.
pub fn claim(out: &Path) -> Result<RunDir, LimitsError> {
    let id = format!(
        "{}-limits-{FABRIC}",
        results::run_dir::stamp(std::time::SystemTime::now())
    );
    RunDir::create(out, &id).map_err(LimitsError::Unwritable)
}

/// Writes `run` into `dir` under the id `dir` claimed, and commits it; returns its path.
pub fn write(dir: RunDir, run: &mut Run) -> Result<PathBuf, LimitsError> {
    run.manifest.run_id = dir.id().to_string();
    let failed = |path: PathBuf| move |source| LimitsError::Write { path, source };
    let files = results::format::export_all(run).map_err(failed(dir.final_path()))?;
    for (name, bytes) in &files {
        dir.write(name, bytes)
            .map_err(failed(dir.final_path().join(name)))?;
    }
    let path = dir.final_path();
    dir.commit().map_err(failed(path))
}
