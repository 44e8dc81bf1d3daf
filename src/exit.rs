//! Exit statuses, and how a command's [`Failure`] and the library crates' errors map to them
//! (with the one line to print): the one place that decides which failure is the user's input
//! (2), which is the run's (1), and which is a stop (128 + the signal). Commands return their
//! failure; `main` hands it to [`code`].

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

/// How a command ended when it did not succeed; [`code`] prints its line and gives its status.
/// Commands return `Result<(), Failure>` and never pick a number themselves.
#[derive(Debug)]
pub enum Failure {
    /// Bad input, nothing run or written: `error: LINE`, status 2.
    Usage(String),
    /// The work failed: `error: LINE`, status 1.
    Failed(String),
    /// A verdict the command has printed (a regression, a failed check): status 1, no line.
    Verdict,
    /// A library's error: its own line and status ([`Status`]).
    Error(Box<dyn Status>),
}

impl<E: Status + 'static> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Error(Box::new(e))
    }
}

/// The exit status of a command's outcome, after printing the one line its failure deserves.
pub fn code(outcome: Result<(), Failure>) -> i32 {
    match outcome {
        Ok(()) => OK,
        Err(Failure::Usage(line)) => {
            eprintln!("error: {line}");
            USAGE
        }
        Err(Failure::Failed(line)) => {
            eprintln!("error: {line}");
            FAILED
        }
        Err(Failure::Verdict) => FAILED,
        Err(Failure::Error(e)) => {
            e.print();
            e.status()
        }
    }
}

/// The exit status an error stands for, and the line it prints.
pub trait Status: std::fmt::Display + std::fmt::Debug {
    fn status(&self) -> i32;

    /// The one line the error deserves on stderr.
    fn print(&self) {
        eprintln!("error: {self}");
    }
}

impl Status for RunError {
    fn status(&self) -> i32 {
        match self {
            RunError::Plan(_) | RunError::Unwritable(_) => USAGE,
            RunError::Interrupted(_) => interrupted(),
            RunError::Failed { .. }
            | RunError::Results(_)
            | RunError::NotFrontend(_)
            | RunError::Reported => FAILED,
        }
    }

    fn print(&self) {
        // A rank that failed has told the frontend, which reports it once for the job.
        match (self, crate::signals::received()) {
            (RunError::Reported, _) => {}
            (RunError::Interrupted(m), Some((sig, _))) => eprintln!("error: stopped by {sig}: {m}"),
            _ => eprintln!("error: {self}"),
        }
    }
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
            CalibrateError::Run { .. }
            | CalibrateError::Write { .. }
            | CalibrateError::Chart(_) => FAILED,
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
