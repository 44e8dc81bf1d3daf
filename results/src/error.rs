//! The one error type of the results crate: writing a run, and reading one back. Every
//! variant names the file or directory involved, and an I/O failure keeps its
//! `std::io::Error` as the source.

use std::path::PathBuf;

/// Why results could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot write results to {path}: {source}; pass --out DIR with a writable directory")]
    Unwritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("formatting results: {0}")]
    Json(#[from] serde_json::Error),
    #[error("formatting results: {0}")]
    Csv(#[from] csv::Error),
    /// hdrhistogram's error says what it is only through Debug.
    #[error("formatting results: {0:?}")]
    Histogram(hdrhistogram::serialization::V2DeflateSerializeError),
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A directory given to resume that is not a kept partial run.
    #[error("cannot read {path}: {why}")]
    NotResumable { path: PathBuf, why: &'static str },
    #[error("{path} is not a fabbench result file as expected: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("{path} has schema version {found}; this fabbench reads versions 0 to {supported}: read it with the fabbench that wrote it, or a newer one")]
    Schema {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
}

impl ResultsError {
    /// Whether results could not be written (as opposed to a file read that was refused).
    pub fn is_write_failure(&self) -> bool {
        matches!(
            self,
            ResultsError::Unwritable { .. }
                | ResultsError::Io { .. }
                | ResultsError::Json(_)
                | ResultsError::Csv(_)
                | ResultsError::Histogram(_)
        )
    }

    /// A CSV writer's buffer that could not be taken back, as the CSV error it is.
    pub(crate) fn csv_flush<W>(e: csv::IntoInnerError<W>) -> ResultsError {
        ResultsError::Csv(csv::Error::from(e.into_error()))
    }
}
