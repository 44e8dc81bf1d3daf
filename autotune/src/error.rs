//! autotune's errors: input refused before anything is measured (one line, what is valid),
//! and a tuning that could not finish.

use crate::export::ExportError;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// Bad input: nothing was measured or written.
    #[error("{0}")]
    Usage(String),
    /// Measuring failed in a way that leaves nothing to decide with (the fabric cannot run
    /// its defaults, say); the message names the run and why.
    #[error("{0}")]
    Failed(String),
    /// The caller asked to stop; nothing was written.
    #[error("{0}")]
    Interrupted(String),
    #[error(transparent)]
    Export(#[from] ExportError),
    /// The output directory could not be written.
    #[error("{0}")]
    Write(String),
}
