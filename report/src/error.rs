//! The one error type of the report crate. Every variant renders as one line that names the
//! file or option at fault, because the binary prints it as `error: ...` and exits 2.

use results::ResultsError;

/// Why a report could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A run directory that is not there: said before the reader's "cannot read
    /// DIR/manifest.json", which would suggest the directory exists.
    #[error("{path} is not a directory; give run directories as `fabbench run` writes them")]
    NotADirectory { path: String },
    /// A run directory the results reader refused; its message names the file.
    #[error(transparent)]
    Results(#[from] ResultsError),
    /// Two copies of one run: its columns would be indistinguishable.
    #[error("{first} and {second} are copies of the same run, {run_id}: give each run once")]
    SameRun {
        first: String,
        second: String,
        run_id: String,
    },
    #[error("{path} is given twice: give each run once")]
    GivenTwice { path: String },
    #[error("--reference {given} is not among the runs given ({run_ids})")]
    Reference { given: String, run_ids: String },
    #[error("--reference {given}: {count} of the runs given have that id; give the run's directory ({paths})")]
    AmbiguousReference {
        given: String,
        count: usize,
        paths: String,
    },
    #[error("--by tunable: every tunable has the same value in all {columns} columns, so there is no setting to tell them apart; use --by run")]
    NothingDiffers { columns: usize },
    #[error("no measurements in {paths}: the runs have no points to tabulate")]
    Empty { paths: String },
    /// polars refused a step of the table (a bug here rather than bad input).
    #[error("building the table: {0}")]
    Table(String),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
}

impl From<polars::error::PolarsError> for ReportError {
    fn from(e: polars::error::PolarsError) -> Self {
        // polars' messages can span lines (context chains); the binary prints one.
        ReportError::Table(
            e.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
        )
    }
}
