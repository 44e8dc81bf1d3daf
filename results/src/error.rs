//! The one error type of the results crate: writing a run, and reading one back. Every
//! variant names the file or directory involved.

/// Why results could not be written or read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot write results to {path}: {reason}; pass --out DIR with a writable directory")]
    Unwritable { path: String, reason: String },
    #[error("writing {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("formatting results: {0}")]
    Format(String),
    #[error("cannot read {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("{path} is not a fabbench result file as expected: {reason}")]
    Malformed { path: String, reason: String },
    #[error("{path} has schema version {found}; this fabbench reads versions 0 to {supported}: read it with the fabbench that wrote it, or a newer one")]
    Schema {
        path: String,
        found: u64,
        supported: u32,
    },
}

impl ResultsError {
    pub(crate) fn json(e: serde_json::Error) -> ResultsError {
        ResultsError::Format(e.to_string())
    }
}
