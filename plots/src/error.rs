//! What can go wrong drawing charts: a directory that is neither a run nor an autotune, a
//! size asked for that no series has, the bundled font, plotters itself, writing files.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    #[error("{path}: {message}")]
    Input { path: PathBuf, message: String },
    #[error("the bundled font (DejaVu Sans) could not be loaded")]
    Font,
    #[error("drawing failed: {0}")]
    Draw(String),
    #[error("{path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Usage(String),
}
