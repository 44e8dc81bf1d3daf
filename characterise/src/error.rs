//! Why a characterisation was refused or failed.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum CharacteriseError {
    /// Bad input: nothing was measured or written.
    #[error("{0}")]
    Request(String),
    /// The plan was refused: bad input too, nothing was measured.
    #[error(transparent)]
    Plan(runner::PlanError),
    /// The output directory cannot be made: bad input too, nothing was measured.
    #[error(transparent)]
    Unwritable(results::ResultsError),
    /// A measurement run failed (the fabric's own diagnosis).
    #[error("measuring {what}: {source}")]
    Run {
        what: String,
        #[source]
        source: runner::RunError,
    },
    /// The caller asked to stop.
    #[error("interrupted while {0}")]
    Interrupted(Box<runner::Interruption>),
    /// The measurements cannot be fitted (too few sizes).
    #[error("fit: {0}")]
    Fit(String),
    /// The ping-pong curve could not be analysed.
    #[error("fit: ping-pong curve: {0}")]
    Curve(#[source] curves::CurveError),
    /// An output file could not be rendered.
    #[error("fit: {file}: {source}")]
    Render {
        file: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: results::ResultsError,
    },
    #[error(transparent)]
    Plot(#[from] plots::PlotError),
}
