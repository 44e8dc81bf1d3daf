//! autotune's errors: input refused before anything is measured (one line, what is valid),
//! and a tuning that could not finish.

use bench_core::size::format_size;
use results::ResultsError;
use runner::{Interruption, PlanError};

use crate::export::ExportError;

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// Bad input: nothing was measured or written.
    #[error("{0}")]
    Usage(String),
    /// The plan for the fabric was refused: bad input too.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The output directory cannot be made: bad input too, nothing was measured.
    #[error(transparent)]
    Unwritable(ResultsError),
    /// The exhaustive sweep was asked for with no budget left to measure it.
    #[error("the exhaustive sweep has no budget")]
    NoBudget,
    /// The exhaustive sweep could not measure one value; `why` is the run's failure as the
    /// measurement log records it.
    #[error("exhaustive sweep at {param} = {}: {why}", format_size(*.value))]
    SweepFailed {
        param: String,
        value: u64,
        why: String,
    },
    /// The caller asked to stop; nothing was written.
    #[error(transparent)]
    Interrupted(Box<Interruption>),
    #[error(transparent)]
    Export(#[from] ExportError),
    /// The output directory could not be written.
    #[error(transparent)]
    Write(ResultsError),
}
