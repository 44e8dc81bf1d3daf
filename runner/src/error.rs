//! The runner's errors: a plan refused before anything runs (the caller's input is wrong), a
//! fabric's job that failed once started ([`JobError`], with the rank and stage as fields),
//! and a run that ended without a result ([`RunError`]). Each renders the one line a user
//! reads; callers decide by variant, never by that text.

use std::path::PathBuf;

use bench_core::bootstrap::discover::DiscoveryError;
use bench_core::bootstrap::BootstrapError;
use bench_core::launcher::LaunchError;
use bench_core::tunables::{ProfileError, TunableError};
use results::ResultsError;

/// A refusal of a plan: one line saying what is wrong and what is valid. Nothing has run and
/// nothing has been written.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The plan asks for what cannot run (a rank count, a fabric, a combination): the line
    /// says what and what is valid.
    #[error("{0}")]
    Refused(String),
    /// A fabric refused the label or the rank count (its own words). Boxed, as every refusal
    /// here is: a plan error travels inside most of the workspace's errors.
    #[error(transparent)]
    Fabric(Box<transports::Refusal>),
    /// A fabric refused the settings in force on it.
    #[error("on {label}, {source}")]
    FabricSettings {
        label: String,
        source: Box<transports::Refusal>,
    },
    #[error(transparent)]
    Params(#[from] suites::ParamError),
    /// A tunable set by the fabric's own defaults or preset that the registry refuses.
    #[error(transparent)]
    Tunable(#[from] TunableError),
    /// A tunable from an option (`--set`, `--model`) the registry refuses.
    #[error("{option}: {source}")]
    Option {
        option: &'static str,
        #[source]
        source: TunableError,
    },
    #[error("cannot read profile {path}: {source}")]
    ProfileUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("profile {path}: {source}")]
    Profile {
        path: PathBuf,
        #[source]
        source: ProfileError,
    },
    #[error("cannot read model card {path}: {source}")]
    ModelCardUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The model card's text is refused (the registry's own words).
    #[error("{path}: {source}")]
    ModelCard {
        path: PathBuf,
        source: Box<transports::Refusal>,
    },
    #[error("--compute-from {dir}: {source}")]
    Replay {
        dir: PathBuf,
        #[source]
        source: Box<ReplayError>,
    },
    #[error("--resume {dir}: {source}")]
    Resume {
        dir: PathBuf,
        #[source]
        source: Box<ResumeError>,
    },
    /// A rank's environment lacks what fabbench's launcher sets.
    #[error("{name} is not set: `fabbench __rank` is started by `fabbench run`, not by hand")]
    NotSet { name: &'static str },
    #[error("{name} is not a number")]
    NotANumber { name: &'static str },
    #[error("{name} is not a job spec: {source}")]
    NotAJobSpec {
        name: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
}

impl From<transports::Refusal> for PlanError {
    fn from(r: transports::Refusal) -> Self {
        PlanError::Fabric(Box::new(r))
    }
}

/// Why a directory given to `--compute-from` cannot be replayed by this plan.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Unreadable(#[from] ResultsError),
    #[error("it holds no complete run with {ranks} ranks (it has {}); record one with the same command first", if had.is_empty() { "none".to_string() } else { had.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(", ") + " ranks" })]
    NoRankCount { ranks: usize, had: Vec<usize> },
    #[error("it holds several runs with {ranks} ranks; name one run's directory")]
    Several { ranks: usize },
    #[error("it recorded other work ({had}); replay a run of the same suites and parameters")]
    OtherWork { had: String },
    #[error("it did not run {fabric} (it ran {})", had.join(", "))]
    NoFabric { fabric: String, had: Vec<String> },
    #[error("it recorded no compute on {fabric}: only a complete run on an emulated fabric of a suite that computes (npb, nbody) records compute.csv")]
    NothingRecorded { fabric: String },
    #[error(
        "{fabric} times compute on the host; only emulated fabrics charge (and replay) compute"
    )]
    NotEmulated { fabric: String },
    #[error("a resumed run leaves out points, so the stretches would not line up; replay into a fresh run")]
    Resumed,
}

/// Why a directory given to resume cannot be continued by this plan.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error("give the directory of a run that was kept incomplete, named RUN_ID.partial")]
    NotPartial,
    #[error("runs under mpirun or srun cannot be resumed yet; run the missing sizes with -m")]
    UnderLauncher,
    #[error(transparent)]
    Unreadable(#[from] ResultsError),
    #[error("its manifest says the run is complete")]
    Complete,
    /// The kept run measured other suites, fabrics or rank counts than this plan.
    #[error("it ran {} on {} with {had_ranks} ranks; this plan is {} on {} with {ranks}", had_suites.join(" "), had_fabrics.join(","), suites.join(" "), fabrics.join(","))]
    OtherPlan {
        had_suites: Vec<String>,
        had_fabrics: Vec<String>,
        had_ranks: usize,
        suites: Vec<String>,
        fabrics: Vec<String>,
        ranks: usize,
    },
    #[error("{suite} ran with other parameters than this plan's")]
    OtherParams { suite: String },
}

/// A rank that did not report its results, and the stage it was last seen in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Silent {
    pub rank: usize,
    pub last_stage: Option<String>,
}

impl std::fmt::Display for Silent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.last_stage {
            Some(s) => write!(f, "rank {} (last stage '{s}')", self.rank),
            None => write!(f, "rank {}", self.rank),
        }
    }
}

/// Why one fabric's job ended without every rank's results.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A rank said why it failed (its own words travel as text: it may be another process).
    #[error("rank {rank} failed during stage '{stage}': {cause}")]
    RankFailed {
        rank: usize,
        stage: String,
        cause: String,
    },
    /// The launcher saw a rank end before it finished; `cause` is what the rank reported, if
    /// it did.
    #[error("rank {rank} {how} during stage '{stage}'{}; the other ranks were stopped", cause.as_ref().map(|c| format!(": {c}")).unwrap_or_default())]
    RankEnded {
        rank: usize,
        /// "exited with status 1", "was killed by signal 9 (SIGKILL)".
        how: String,
        stage: String,
        cause: Option<String>,
    },
    /// Some ranks never reached the bootstrap: the cause to name first, as the rank that
    /// waited for them only saw a peer missing.
    #[error("{} {} never arrived at {place} (stage: bootstrap); {then}", if ranks.len() == 1 { "rank" } else { "ranks" }, list(ranks))]
    NeverArrived {
        ranks: Vec<usize>,
        place: String,
        then: Box<JobError>,
    },
    /// Every rank ended, some without reporting results.
    #[error("{} did not report results for fabric {fabric}", list(ranks))]
    Unreported { ranks: Vec<Silent>, fabric: String },
    #[error("a rank of {fabric} ended without reporting its results")]
    RankSilent { fabric: String },
    #[error("{launcher} ended without every rank of {fabric} reporting its results")]
    LauncherSilent { launcher: String, fabric: String },
    /// Rank 0 (a thread of the frontend) failed without saying why.
    #[error("rank 0 failed")]
    FrontendRank,
    /// A rank under mpirun or srun could not join the job.
    #[error("rank {rank}: {source}")]
    Join {
        rank: usize,
        #[source]
        source: BootstrapError,
    },
    #[error("rank 0 cannot serve the bootstrap: {0}")]
    Serve(#[source] BootstrapError),
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The fabric's launcher hook refused to build a command line (its own words).
    #[error(transparent)]
    LaunchCommand(Box<transports::Refusal>),
    #[error("cannot find my own executable: {0}")]
    OwnExecutable(#[source] std::io::Error),
    #[error("cannot start rank threads: {0}")]
    Threads(#[source] std::io::Error),
    /// The caller asked the run to stop and the frontend noticed first.
    #[error("interrupted")]
    Interrupted,
}

impl JobError {
    /// Whether this is the stop itself rather than something that failed while stopping.
    pub fn is_stop(&self) -> bool {
        matches!(
            self,
            JobError::Interrupted | JobError::Launch(LaunchError::Interrupted)
        )
    }
}

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What became of the points a failed or stopped run measured.
#[derive(Debug, Default)]
pub enum Kept {
    /// Nothing was measured, or the run had no output directory.
    #[default]
    Nothing,
    /// They are in this `.partial` directory.
    In(PathBuf),
    /// They were measured but could not be written.
    Lost(ResultsError),
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kept::Nothing => Ok(()),
            Kept::In(path) => write!(f, "; what was measured is kept in {}", path.display()),
            Kept::Lost(e) => write!(f, "; what was measured could not be kept: {e}"),
        }
    }
}

/// Where a run whose results could not be written left what it could keep, and how to go on.
fn kept_after_write_failed(kept: &Kept) -> String {
    match kept {
        Kept::In(path) => format!(
            "; measuring stopped there, and the points written before are kept in {0} \
             (`fabbench run --resume {0}` measures the rest once there is room)",
            path.display()
        ),
        other => other.to_string(),
    }
}

/// Results that could not be written, and what of the run was kept.
#[derive(Debug, thiserror::Error)]
#[error("{}: {cause}{}", crate::UNWRITTEN, kept_after_write_failed(kept))]
pub struct Unwritten {
    pub cause: ResultsError,
    pub kept: Kept,
}

/// Why a stopped run stopped: the stop itself, or what failed while the ranks were stopping.
#[derive(Debug, thiserror::Error)]
#[error("{cause}{kept}")]
pub struct Interruption {
    pub cause: JobError,
    pub kept: Kept,
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
    /// A rank, the launcher or the fabric failed, on one fabric or several (in plan order);
    /// each failure names the rank, how it ended and the stage it was in.
    #[error("{}{kept}", failures.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("; "))]
    Failed { failures: Vec<JobError>, kept: Kept },
    /// The caller asked the run to stop; every rank was stopped.
    #[error(transparent)]
    Interrupted(Box<Interruption>),
    /// Results could not be written (the disk filled up, say): measuring stopped at the first
    /// write that failed, and what the journal held whole is kept, the run marked partial.
    #[error(transparent)]
    Unwritten(Box<Unwritten>),
    /// A rank (not the frontend) failed and has already told the frontend why.
    #[error("this rank failed; the frontend reports why")]
    Reported,
    /// `run` was called on a rank other than 0 under an external launcher, which only
    /// `run_worker` serves.
    #[error("rank {0} of an externally launched job is not the frontend; call run_worker")]
    NotFrontend(usize),
}

impl RunError {
    /// One fabric's job failed, with nothing kept.
    pub fn failed(failure: JobError) -> RunError {
        RunError::Failed {
            failures: vec![failure],
            kept: Kept::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank_failed(rank: usize) -> JobError {
        JobError::RankFailed {
            rank,
            stage: "osu_latency size 8".into(),
            cause: "validation failed".into(),
        }
    }

    #[test]
    fn job_failures_read_as_one_line() {
        assert_eq!(
            rank_failed(1).to_string(),
            "rank 1 failed during stage 'osu_latency size 8': validation failed"
        );
        let ended = |cause: Option<&str>| JobError::RankEnded {
            rank: 2,
            how: "exited with status 3".into(),
            stage: "start".into(),
            cause: cause.map(String::from),
        };
        assert_eq!(
            ended(None).to_string(),
            "rank 2 exited with status 3 during stage 'start'; the other ranks were stopped"
        );
        assert_eq!(
            ended(Some("no route")).to_string(),
            "rank 2 exited with status 3 during stage 'start': no route; the other ranks were stopped"
        );
        let never = |ranks: Vec<usize>| JobError::NeverArrived {
            ranks,
            place: "the bootstrap on h:7000".into(),
            then: Box::new(JobError::FrontendRank),
        };
        assert_eq!(
            never(vec![3]).to_string(),
            "rank 3 never arrived at the bootstrap on h:7000 (stage: bootstrap); rank 0 failed"
        );
        assert_eq!(
            never(vec![1, 3]).to_string(),
            "ranks 1, 3 never arrived at the bootstrap on h:7000 (stage: bootstrap); rank 0 failed"
        );
        let silent = JobError::Unreported {
            ranks: vec![
                Silent {
                    rank: 1,
                    last_stage: Some("connect fabric shm".into()),
                },
                Silent {
                    rank: 2,
                    last_stage: None,
                },
            ],
            fabric: "shm".into(),
        };
        assert_eq!(
            silent.to_string(),
            "rank 1 (last stage 'connect fabric shm'), rank 2 did not report results for fabric shm"
        );
    }

    #[test]
    fn a_run_error_joins_its_failures_and_says_what_was_kept() {
        let e = RunError::Failed {
            failures: vec![rank_failed(0), rank_failed(1)],
            kept: Kept::In("out/x.partial".into()),
        };
        assert_eq!(
            e.to_string(),
            "rank 0 failed during stage 'osu_latency size 8': validation failed; \
             rank 1 failed during stage 'osu_latency size 8': validation failed; \
             what was measured is kept in out/x.partial"
        );
        let stopped = RunError::Interrupted(Box::new(Interruption {
            cause: JobError::Interrupted,
            kept: Kept::Nothing,
        }));
        assert_eq!(stopped.to_string(), "interrupted");
    }

    #[test]
    fn only_the_stop_itself_is_a_stop() {
        assert!(JobError::Interrupted.is_stop());
        assert!(JobError::Launch(LaunchError::Interrupted).is_stop());
        assert!(!rank_failed(0).is_stop());
    }
}
