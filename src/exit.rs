//! Exit statuses, and how the library crates' errors map to them (with the one line to
//! print): the one place that decides which failure is the user's input (2), which is the
//! run's (1), and which is a stop (128 + the signal).

use autotune::TuneError;
use calibrate::CalibrateError;
use characterise::CharacteriseError;
use history::HistoryError;
use runner::RunError;

pub const OK: i32 = 0;
/// A rank, the launcher or the fabric failed; or results could not be written.
pub const FAILED: i32 = 1;
/// Bad input: nothing was run or written.
pub const USAGE: i32 = 2;
/// 128 + SIGINT, as shells report an interrupted command (SIGTERM gives 143, SIGHUP 129:
/// the signal that came, see `signals::received`).
pub const INTERRUPTED: i32 = 130;

/// The status of a command a signal stopped: 128 + the signal's number.
pub fn interrupted() -> i32 {
    crate::signals::received().map_or(INTERRUPTED, |(_, c)| c)
}

/// Prints the one line an error deserves (if any) and gives its exit status.
pub fn of(e: &RunError) -> i32 {
    let code = match e {
        RunError::Plan(_) | RunError::Unwritable(_) => USAGE,
        RunError::Interrupted(_) => interrupted(),
        RunError::Failed { .. }
        | RunError::Results(_)
        | RunError::NotFrontend(_)
        | RunError::Reported => FAILED,
    };
    // A rank that failed has told the frontend, which reports it once for the job.
    match (e, crate::signals::received()) {
        (RunError::Reported, _) => {}
        (RunError::Interrupted(m), Some((sig, _))) => eprintln!("error: stopped by {sig}: {m}"),
        _ => eprintln!("error: {e}"),
    }
    code
}

/// The status of this process as one rank of a job.
pub fn rank(outcome: Result<(), RunError>) -> i32 {
    match outcome {
        Ok(()) => OK,
        Err(e) => of(&e),
    }
}

/// Prints `error: {e}` and gives the status of a subcommand's error.
pub fn report(e: &impl Status) -> i32 {
    eprintln!("error: {e}");
    e.status()
}

/// The exit status an error stands for.
pub trait Status: std::fmt::Display {
    fn status(&self) -> i32;
}

impl Status for TuneError {
    fn status(&self) -> i32 {
        match self {
            TuneError::Usage(_) | TuneError::Plan(_) | TuneError::Unwritable(_) => USAGE,
            TuneError::Interrupted(_) => interrupted(),
            TuneError::NoBudget
            | TuneError::SweepFailed { .. }
            | TuneError::Export(_)
            | TuneError::Write(_) => FAILED,
        }
    }
}

impl Status for CalibrateError {
    fn status(&self) -> i32 {
        match self {
            CalibrateError::Request(_) | CalibrateError::Unwritable(_) => USAGE,
            CalibrateError::Interrupted => interrupted(),
            CalibrateError::Run { .. } | CalibrateError::Write { .. } => FAILED,
        }
    }
}

impl Status for CharacteriseError {
    fn status(&self) -> i32 {
        match self {
            CharacteriseError::Request(_)
            | CharacteriseError::Plan(_)
            | CharacteriseError::Unwritable(_) => USAGE,
            CharacteriseError::Interrupted(_) => interrupted(),
            CharacteriseError::Run { .. }
            | CharacteriseError::Fit(_)
            | CharacteriseError::Curve(_)
            | CharacteriseError::Render { .. }
            | CharacteriseError::Write { .. }
            | CharacteriseError::Plot(_) => FAILED,
        }
    }
}

/// Bad input (what was given is not a store, a run, or a date; a run added twice) is 2; a
/// file that could not be read or written is 1.
impl Status for HistoryError {
    fn status(&self) -> i32 {
        match self {
            HistoryError::Io { .. } => FAILED,
            _ => USAGE,
        }
    }
}
