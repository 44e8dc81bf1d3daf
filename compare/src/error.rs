//! The one error type of comparisons: what could not be read, what is out of range, and two
//! runs with nothing in common. Every message says what is wrong and what would be valid.

use std::path::PathBuf;

use results::ResultsError;

/// Why two runs could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A run directory (or a file in it) that could not be read.
    #[error("{0}")]
    Read(#[from] ResultsError),
    #[error("{dir}: no such directory; give a run directory (one holding manifest.json)")]
    Missing { dir: String },
    #[error("{dir} holds no run: neither it nor a directory inside it has a manifest.json")]
    NoRun { dir: String },
    #[error("{dir} holds {} runs ({}): give one of them", .runs.len(), .runs.join(", "))]
    SeveralRuns { dir: String, runs: Vec<String> },
    /// A setting out of its range: `name` is the [`crate::Settings`] field ("noise",
    /// "confidence", "resamples", "min_samples"), so a caller can name its own option.
    #[error("{reason}")]
    Setting { name: &'static str, reason: String },
    #[error(
        "nothing to compare: the baseline {baseline_id} holds {baseline}; the candidate \
         {candidate_id} holds {candidate}; compare runs of the same suites on the same fabrics \
         and rank counts"
    )]
    NothingInCommon {
        baseline_id: String,
        baseline: String,
        candidate_id: String,
        candidate: String,
    },
    #[error("formatting the comparison: {0}")]
    Format(#[from] serde_json::Error),
    #[error("cannot write {path}: {source}; give a file in a writable directory")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {path}: cannot create its directory: {source}; give a file in a writable directory")]
    MakeDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}
