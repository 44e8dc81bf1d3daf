//! results holds fabbench's result model and every way a run is written and read back: the
//! manifest (JSON), tidy summary records and raw samples (CSV), a JSON document of both,
//! HdrHistogram interval logs and percentile distributions, and OSU's text layout. Writers sit
//! behind one [`export::Exporter`] trait and work from a [`model::Run`] alone, a run directory
//! is only ever seen complete ([`run_dir::RunDir`]), and [`read::read_run`] turns a directory
//! back into the `Run` it was written from (older layouts through [`legacy`]).

pub mod export;
pub mod hist;
pub mod legacy;
pub mod model;
pub mod osu;
pub mod read;
pub mod run_dir;

pub use model::{Run, SCHEMA_VERSION};
pub use read::read_run;

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
