//! Exit statuses, and how a command's [`Failure`] and the library crates' errors map to them
//! (with the one line to print): the one place that decides which failure is the user's input
//! (2), which is the run's (1), which is a write that failed (3), and which is a stop
//! (128 + the signal). Commands return their
//! failure; `main` hands it to [`code`].

use autotune::TuneError;
use calibrate::CalibrateError;
use characterise::CharacteriseError;
use history::HistoryError;
use limits::LimitsError;
use runner::RunError;

pub const OK: i32 = 0;
/// A rank, the launcher or the fabric failed; or a verdict failed (a regression, a check).
pub const FAILED: i32 = 1;
/// Bad input: nothing was run or written.
pub const USAGE: i32 = 2;
/// Results could not be written: an output directory that cannot be made or written, a
/// disk that filled up. What a run had measured is kept where it could be (the line says).
pub const UNWRITTEN: i32 = 3;
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
    /// Results could not be written: `error: LINE`, status 3.
    Unwritten(String),
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
            say(&line);
            USAGE
        }
        Err(Failure::Failed(line)) => {
            say(&line);
            FAILED
        }
        Err(Failure::Unwritten(line)) => {
            say(&line);
            UNWRITTEN
        }
        Err(Failure::Verdict) => FAILED,
        Err(Failure::Error(e)) => {
            e.print();
            e.status()
        }
    }
}

/// A results directory that could not be made or written is [`UNWRITTEN`]; one given to be
/// read or resumed that is not what was asked for is the user's input.
fn results_status(e: &results::ResultsError) -> i32 {
    if e.is_write_failure() {
        UNWRITTEN
    } else {
        USAGE
    }
}

/// A chart that could not be written is [`UNWRITTEN`]; one that could not be drawn failed.
fn plot_status(e: &plots::PlotError) -> i32 {
    match e {
        plots::PlotError::Write { .. } => UNWRITTEN,
        plots::PlotError::Results(r) => results_status(r),
        _ => FAILED,
    }
}

/// Charts that could not be drawn (1) or written (3), the line being the error's own.
pub fn plot_failure(e: plots::PlotError) -> Failure {
    charts_failed(e, "")
}

/// A failure to draw or write charts, after `what` (the line's start, if any) was written.
pub fn charts_failed(e: plots::PlotError, what: &str) -> Failure {
    let line = if what.is_empty() {
        e.to_string()
    } else {
        format!("{what}: {e}")
    };
    match plot_status(&e) {
        UNWRITTEN => Failure::Unwritten(line),
        _ => Failure::Failed(line),
    }
}

/// Prints `error: LINE` on stderr. The line often holds text from a file or a peer (a run id,
/// a host name, a value that was refused): control characters are escaped and a huge value is
/// cut ([`results::printable::error_line`]), so it stays one readable line.
pub fn say(line: &str) {
    eprintln!("error: {}", results::printable::error_line(line));
}

/// The exit status an error stands for, and the line it prints.
pub trait Status: std::fmt::Display + std::fmt::Debug {
    fn status(&self) -> i32;

    /// The one line the error deserves on stderr.
    fn print(&self) {
        say(&self.to_string());
    }
}

impl Status for RunError {
    fn status(&self) -> i32 {
        match self {
            RunError::Plan(_) => USAGE,
            RunError::Unwritable(e) => results_status(e),
            RunError::Unwritten(_) => UNWRITTEN,
            RunError::Interrupted(_) => interrupted(),
            RunError::Failed { .. } | RunError::NotFrontend(_) | RunError::Reported => FAILED,
        }
    }

    fn print(&self) {
        // A rank that failed has told the frontend, which reports it once for the job.
        match (self, crate::signals::received()) {
            (RunError::Reported, _) => {}
            (RunError::Interrupted(m), Some((sig, _))) => say(&format!("stopped by {sig}: {m}")),
            _ => say(&self.to_string()),
        }
    }
}

impl Status for TuneError {
    fn status(&self) -> i32 {
        match self {
            TuneError::Usage(_) | TuneError::Plan(_) => USAGE,
            TuneError::Unwritable(e) => results_status(e),
            TuneError::Write(_) => UNWRITTEN,
            TuneError::Interrupted(_) => interrupted(),
            TuneError::NoBudget | TuneError::SweepFailed { .. } | TuneError::Export(_) => FAILED,
        }
    }
}

impl Status for CalibrateError {
    fn status(&self) -> i32 {
        match self {
            CalibrateError::Request(_) => USAGE,
            CalibrateError::Unwritable(e) => results_status(e),
            CalibrateError::Write { .. } => UNWRITTEN,
            CalibrateError::Chart(e) => plot_status(e),
            CalibrateError::Interrupted => interrupted(),
            CalibrateError::Run { .. } => FAILED,
        }
    }
}

impl Status for CharacteriseError {
    fn status(&self) -> i32 {
        match self {
            CharacteriseError::Request(_) | CharacteriseError::Plan(_) => USAGE,
            CharacteriseError::Unwritable(e) => results_status(e),
            CharacteriseError::Write { .. } => UNWRITTEN,
            CharacteriseError::Plot(e) => plot_status(e),
            CharacteriseError::Interrupted(_) => interrupted(),
            CharacteriseError::Run { .. }
            | CharacteriseError::Fit(_)
            | CharacteriseError::Curve(_)
            | CharacteriseError::Render { .. } => FAILED,
        }
    }
}

/// Bad input (what was given is not a store, a run, or a date; a run added twice) is 2; a
/// file of the store that could not be written is 3, one that could not be read 1.
impl Status for HistoryError {
    fn status(&self) -> i32 {
        match self {
            HistoryError::Write { .. } => UNWRITTEN,
            HistoryError::Io { .. } => FAILED,
            _ => USAGE,
        }
    }
}

/// `--against` that is not a run of shm or tcp, or an `--out` that cannot be made, is bad input
/// (nothing measured); a write after measuring that failed is 3; a process of a pair that
/// failed or did not answer, or a call that failed, is 1.
impl Status for LimitsError {
    fn status(&self) -> i32 {
        match self {
            LimitsError::Against { .. } | LimitsError::NothingToCompare { .. } => USAGE,
            LimitsError::Unwritable(e) => results_status(e),
            LimitsError::Write { .. } => UNWRITTEN,
            _ => FAILED,
        }
    }
}
