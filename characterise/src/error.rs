//! Why a characterisation was refused or failed.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CharacteriseError {
    /// Bad input: nothing was measured or written.
    #[error("{0}")]
    Request(String),
    /// A measurement run failed (the fabric's own diagnosis).
    #[error("measuring {what}: {source}")]
    Run {
        what: String,
        #[source]
        source: runner::RunError,
    },
    /// The caller asked to stop.
    #[error("interrupted while {0}")]
    Interrupted(String),
    /// The measurements cannot be fitted (too few sizes, a curve that does not parse).
    #[error("fit: {0}")]
    Fit(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Plot(#[from] plots::PlotError),
}
