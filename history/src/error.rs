//! The history crate's one error type: every failure names the store, entry or run it is about
//! and says what would be valid, so the binary can print it as one line.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The directory exists, holds files, and is not a history store.
    #[error("{path} is not a fabbench history store (no store.json); give an empty or new directory, or a store made by 'fabbench history add'")]
    NotAStore { path: PathBuf },

    /// No store at all where one is read.
    #[error(
        "no history store at {path}; create one with 'fabbench history add RUN_DIR --store {path}'"
    )]
    NoStore { path: PathBuf },

    /// store.json is there but says something else.
    #[error("{path}: {reason}")]
    BadStore { path: PathBuf, reason: String },

    /// An entry file that cannot be read back.
    #[error("{path}: malformed history entry: {reason}")]
    BadEntry { path: PathBuf, reason: String },

    /// The run is in the store already: a store is append-only, entries are never replaced.
    #[error("run {run_id} is in the store already ({path}); a store is append-only, each run is added once")]
    Duplicate { run_id: String, path: PathBuf },

    /// A run directory the results reader refused.
    #[error("cannot add {path}: {source}")]
    Run {
        path: PathBuf,
        #[source]
        source: results::ResultsError,
    },

    /// A filter that selects nothing, with what there is.
    #[error("{0}")]
    NoMatch(String),

    /// A date that is not RFC 3339.
    #[error("{0}")]
    Date(String),

    /// A file of the store that could not be written (the disk is full, the directory is
    /// read-only).
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl HistoryError {
    pub(crate) fn write(path: &std::path::Path, source: std::io::Error) -> HistoryError {
        HistoryError::Write {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> HistoryError {
        HistoryError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
