//! Why a calibration was refused or failed, and why one search of the fit stopped.

use std::path::PathBuf;

use results::ResultsError;
use runner::RunError;

#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// Bad input: nothing was run or written.
    #[error("{0}")]
    Request(String),
    /// The output directory cannot be made: bad input too, nothing was run.
    #[error(transparent)]
    Unwritable(ResultsError),
    /// An emulated run failed at a trial's settings in a way that is not just a bad fit.
    #[error("running {fabric}: {source}")]
    Run {
        fabric: String,
        #[source]
        source: FitError,
    },
    #[error("interrupted")]
    Interrupted,
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: ResultsError,
    },
    /// The chart of the table beside the fit could not be drawn (nothing was written).
    #[error("drawing the calibration's chart: {0}")]
    Chart(#[from] plots::PlotError),
}

/// Why a search over the card's parameters stopped without a point.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// The caller asked to stop.
    #[error("interrupted")]
    Interrupted,
    /// An emulated run at a trial's settings failed (the fabric's own diagnosis).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The solver refused its own set-up (argmin's error, which is not a std error).
    #[error("{0}")]
    Solver(argmin::core::Error),
}

impl FitError {
    /// Whether the search stopped because the caller asked it to.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            FitError::Interrupted | FitError::Run(RunError::Interrupted(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runner::{Interruption, JobError, Kept};

    #[test]
    fn a_stop_is_known_by_its_variant_not_its_words() {
        assert!(FitError::Interrupted.is_interrupted());
        let stopped = RunError::Interrupted(Box::new(Interruption {
            cause: JobError::Interrupted,
            kept: Kept::Nothing,
        }));
        assert!(FitError::Run(stopped).is_interrupted());
        // A failure whose words mention an interruption is still a failure.
        let failed = RunError::failed(JobError::RankFailed {
            rank: 1,
            stage: "setup".into(),
            cause: "interrupted system call".into(),
        });
        assert!(!FitError::Run(failed).is_interrupted());
    }
}
