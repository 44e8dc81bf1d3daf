//! The runs a directory given on the command line stands for: a run directory itself, or the
//! runs directly inside a directory (as a CI job's `--out` holds after one or several `fabbench
//! run`s; a scaling run's directory holds one per rank count). [`read_runs`] takes them all, as
//! a side of a comparison whose runs are replicates; [`read_side`] wants exactly one and
//! refuses several by name, for the caller to choose.

use std::path::{Path, PathBuf};

use results::Run;

use crate::CompareError;

/// Reads every run `dir` stands for, in name order (at least one).
pub fn read_runs(dir: &Path) -> Result<Vec<Run>, CompareError> {
    run_dirs(dir)?
        .iter()
        .map(|d| results::read_run(d).map_err(CompareError::from))
        .collect()
}

/// Reads the one run `dir` stands for.
pub fn read_side(dir: &Path) -> Result<Run, CompareError> {
    let run = run_dir(dir)?;
    Ok(results::read_run(&run)?)
}

/// Every run directory `dir` stands for, in name order (at least one).
pub fn run_dirs(dir: &Path) -> Result<Vec<PathBuf>, CompareError> {
    let name = || dir.display().to_string();
    if !dir.is_dir() {
        return Err(CompareError::Missing { dir: name() });
    }
    if dir.join("manifest.json").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    // A scaling run's directory stands for its runs at each rank count.
    let mut runs = results::read::runs_in(dir);
    if runs == [dir.to_path_buf()] {
        runs = runs_inside(dir);
    }
    if runs.is_empty() {
        return Err(CompareError::NoRun { dir: name() });
    }
    Ok(runs)
}

/// The one run directory `dir` stands for.
pub fn run_dir(dir: &Path) -> Result<PathBuf, CompareError> {
    let name = || dir.display().to_string();
    let mut runs = run_dirs(dir)?;
    match runs.len() {
        1 => Ok(runs.remove(0)),
        _ => Err(CompareError::SeveralRuns {
            dir: name(),
            runs: runs
                .iter()
                .map(|r| r.strip_prefix(dir).unwrap_or(r).display().to_string())
                .collect(),
        }),
    }
}

/// The run directories directly inside `dir`, in name order. Hidden ones are left out: a run
/// being written lives under a hidden temporary name until it is complete.
fn runs_inside(dir: &Path) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join("manifest.json").is_file())
        .collect();
    runs.sort();
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fabbench-compare-input-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn fake_run(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("manifest.json"), "{}").unwrap();
    }

    #[test]
    fn a_run_or_a_directory_holding_one() {
        let d = scratch("one");
        let run = d.join("20261123T000000Z-osu_bw-rapidio");
        fake_run(&run);
        assert_eq!(run_dir(&run).unwrap(), run);
        assert_eq!(run_dir(&d).unwrap(), run);
        // A run still being written (hidden) is not one of them.
        fake_run(&d.join(".20261123T000001Z-osu_bw-rapidio.tmp"));
        assert_eq!(run_dir(&d).unwrap(), run);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn none_or_several_are_refused_by_name() {
        let d = scratch("several");
        let e = run_dir(&d).unwrap_err().to_string();
        assert!(e.contains("holds no run"), "{e}");
        fake_run(&d.join("b"));
        fake_run(&d.join("a"));
        let e = run_dir(&d).unwrap_err().to_string();
        assert!(e.ends_with("holds 2 runs (a, b): give one of them"), "{e}");
        let e = run_dir(&d.join("absent")).unwrap_err().to_string();
        assert!(e.contains("absent: no such directory"), "{e}");
        // As a side of a comparison, the runs inside are replicates, in name order.
        assert_eq!(run_dirs(&d).unwrap(), [d.join("a"), d.join("b")]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
