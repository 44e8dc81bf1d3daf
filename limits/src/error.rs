//! Why the limits could not be measured, written, or compared with a run.

use std::path::PathBuf;
use std::time::Duration;

use nix::errno::Errno;
use results::ResultsError;

#[derive(Debug, thiserror::Error)]
pub enum LimitsError {
    /// A pair of processes needs two CPUs: on one, every round trip waits for a time slice.
    #[error(
        "fabbench limits needs two CPUs it may run on, and this process may use only CPU {0} \
         (see taskset)"
    )]
    OneCpu(usize),
    #[error("cannot pin {who} to CPU {cpu}: {source}")]
    Pin {
        who: &'static str,
        cpu: usize,
        source: Errno,
    },
    #[error("cannot start the {peer} process: {source}")]
    Fork { peer: &'static str, source: Errno },
    /// A bounded wait on the other process ran out.
    #[error("no answer from the {peer} process within {} during {stage} ({state})", humantime::format_duration(*waited))]
    Timeout {
        peer: &'static str,
        stage: String,
        waited: Duration,
        /// What became of the process: "it is still running", "it exited with status 2".
        state: String,
    },
    #[error("the {peer} process {how} during {stage}")]
    PeerFailed {
        peer: &'static str,
        how: String,
        stage: String,
    },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("cannot map shared memory for the cache line: {0}")]
    Map(Errno),
    /// The call ran but did not do what it was timed doing.
    #[error("{0}")]
    Wrong(String),
    /// `--against` named something that is not a fabbench run (bad input: nothing measured).
    #[error("--against {}: {source}", path.display())]
    Against { path: PathBuf, source: ResultsError },
    /// `--against` named a run with nothing to state against the limits.
    #[error(
        "--against {}: no osu_latency or osu_bw on the shm or tcp fabric in this run; \
         --against takes fabbench run directories of those (fabbench run osu_latency --fabric shm)",
        path.display()
    )]
    NothingToCompare { path: PathBuf },
    /// The output directory cannot be made (nothing was measured).
    #[error(transparent)]
    Unwritable(ResultsError),
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: ResultsError },
}

impl LimitsError {
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LimitsError {
        let what = what.into();
        move |source| LimitsError::Io { what, source }
    }
}
