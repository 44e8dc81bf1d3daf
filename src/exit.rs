//! Exit statuses, and how the runner's outcomes map to them (with the one line to print).

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
        RunError::Failed(_)
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
