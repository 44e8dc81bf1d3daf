//! results holds fabbench's result model and every way a run is written: the manifest (JSON),
//! tidy summary records and raw samples (CSV), a JSON document of both, HdrHistogram interval
//! logs and percentile distributions, and OSU's text layout. Writers sit behind one
//! [`export::Exporter`] trait, and a run directory is only ever seen complete
//! ([`run_dir::RunDir`]).

pub mod export;
pub mod hist;
pub mod model;
pub mod osu;
pub mod run_dir;

/// Why results could not be written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResultsError {
    #[error("cannot write results to {path}: {reason}; pass --out DIR with a writable directory")]
    Unwritable { path: String, reason: String },
    #[error("writing {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("formatting results: {0}")]
    Format(String),
}

impl ResultsError {
    pub(crate) fn json(e: serde_json::Error) -> ResultsError {
        ResultsError::Format(e.to_string())
    }
}
