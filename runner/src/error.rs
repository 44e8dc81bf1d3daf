//! The runner's errors: a plan refused before anything runs (the caller's input is wrong), and
//! a run that failed once started.

use results::ResultsError;

/// A refusal of a plan: one line saying what is wrong and what is valid. Nothing has run and
/// nothing has been written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

impl From<suites::ParamError> for PlanError {
    fn from(e: suites::ParamError) -> PlanError {
        PlanError(e.0)
    }
}

/// Why a run did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan was refused; nothing ran.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// The results directory cannot be made; nothing ran.
    #[error(transparent)]
    Unwritable(ResultsError),
    /// A rank, the launcher or the fabric failed; the message names the rank, how it ended and
    /// the stage it was in. Nothing was written.
    #[error("{0}")]
    Failed(String),
    /// The caller asked the run to stop; every rank was stopped and nothing was written.
    #[error("{0}")]
    Interrupted(String),
    /// Measuring worked but the results could not be written.
    #[error(transparent)]
    Results(ResultsError),
    /// A rank (not the frontend) failed and has already told the frontend why.
    #[error("this rank failed; the frontend reports why")]
    Reported,
    /// `run` was called on a rank other than 0 under an external launcher, which only
    /// `run_worker` serves.
    #[error("rank {0} of an externally launched job is not the frontend; call run_worker")]
    NotFrontend(usize),
}
