//! Exit statuses, and how the runner's outcomes map to them (with the one line to print).

use runner::RunError;

pub const OK: i32 = 0;
/// A rank, the launcher or the fabric failed; or results could not be written.
pub const FAILED: i32 = 1;
/// Bad input: nothing was run or written.
pub const USAGE: i32 = 2;
/// 128 + SIGINT, as shells report an interrupted command.
pub const INTERRUPTED: i32 = 130;

/// Prints the one line an error deserves (if any) and gives its exit status.
pub fn of(e: &RunError) -> i32 {
    let code = match e {
        RunError::Plan(_) | RunError::Unwritable(_) => USAGE,
        RunError::Interrupted(_) => INTERRUPTED,
        RunError::Failed(_)
        | RunError::Results(_)
        | RunError::NotFrontend(_)
        | RunError::Reported => FAILED,
    };
    // A rank that failed has told the frontend, which reports it once for the job.
    if !matches!(e, RunError::Reported) {
        eprintln!("error: {e}");
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
