//! What a suite is: typed parameters, a rank rule, a text layout, the points it measures (a
//! fixed list, or chosen one at a time from what was measured so far), and a per-rank
//! [`Bench`] that knows how to do one timed iteration at a point. The shared driver
//! ([`crate::driver`]) owns everything else: the point loop, warm-up, timing, validation and
//! handing over raw samples.

use bench_core::bootstrap::BootstrapError;
use bench_core::measure::{Layout, Metric, Point, PointKey};
use serde::de::DeserializeOwned;
use serde::Serialize;
use transports::comm::Comm;
use transports::TransportError;

pub use crate::options::ParamError;
use crate::options::{OptionDef, SuiteArgs};
use crate::ranks::RankRule;
use crate::work::Work;

/// Why a suite failed while running.
#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error(transparent)]
    Transport(#[from] TransportError),
    #[error("validation failed at size {size}, iteration {iteration}: byte {offset} is {got:#04x}, expected {expected:#04x}")]
    Validation {
        size: u64,
        iteration: u64,
        offset: usize,
        expected: u8,
        got: u8,
    },
    /// A result that cannot be right (a collective's sum), or a limit the user set was hit.
    #[error("{0}")]
    Check(String),
    #[error(transparent)]
    Params(#[from] ParamError),
    /// Handing a result to the frontend failed.
    #[error(transparent)]
    Bootstrap(#[from] BootstrapError),
    /// A message buffer the size the user chose is more memory than the process may have.
    #[error("cannot allocate a {bytes}-byte message buffer: out of memory; use smaller sizes (-m) or raise the process's memory limit")]
    OutOfMemory { bytes: usize },
    /// Rank 0 handed the other ranks a point they cannot read.
    #[error("rank 0 chose a point that does not decode: {0}")]
    PointDecode(#[source] serde_json::Error),
}

/// How one point is measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// Timed iterations.
    pub iterations: u64,
    /// Untimed iterations before them.
    pub warmup: u64,
    /// Prepare and check every iteration's data ([`Bench::prepare`], [`Bench::check`]),
    /// outside the timed region.
    pub validate: bool,
    /// What the samples report, headline first.
    pub metrics: Vec<Metric>,
    /// Each sample is the longest any rank took for that iteration (NPB's timing: every rank
    /// times itself and the maximum is reported), rather than rank 0's own time.
    pub across_ranks: bool,
}

/// Chooses points one at a time from the points measured so far (on rank 0; the driver hands
/// each choice to every rank).
pub trait Adaptive: Send {
    /// The next point to measure, or `None` when done. `done` holds every point measured so
    /// far, in the order measured.
    fn next(&mut self, done: &[Point]) -> Option<PointKey>;
}

/// What a [`Sampler`] reports once it has measured enough.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sampled {
    /// The points to report, in the order to print them.
    pub points: Vec<Point>,
    /// Lines a user should read beside the table (how many points were re-run, say).
    pub notes: Vec<String>,
}

/// Runs many short tests and combines them into the points it reports: mpptest's timing,
/// which sweeps every size, repeats the sweep, and keeps each size's fastest average. Like
/// [`Adaptive`] it chooses each test on rank 0 from the tests so far; unlike it, nothing is
/// reported until [`Sampler::finish`] combines the tests.
pub trait Sampler: Send {
    /// The next test, or `None` when done. `done` holds every test measured so far.
    fn next(&mut self, done: &[Point]) -> Option<PointKey>;
    /// The points to report, made from every test measured.
    fn finish(&mut self, done: Vec<Point>) -> Result<Sampled, SuiteError>;
}

/// Which points a run measures.
pub enum Schedule {
    /// Every rank knows them up front.
    Fixed(Vec<PointKey>),
    /// Chosen as the run goes; each is reported as it is measured.
    Adaptive(Box<dyn Adaptive>),
    /// Repeated tests combined at the end (mpptest's minimum of averages, its `-auto` sizes).
    Sampled(Box<dyn Sampler>),
}

impl Schedule {
    /// How many points, when known up front.
    pub fn planned(&self) -> Option<usize> {
        match self {
            Schedule::Fixed(k) => Some(k.len()),
            Schedule::Adaptive(_) | Schedule::Sampled(_) => None,
        }
    }
}

/// One rank's state for measuring a suite: buffers, peers, the point being measured.
pub trait Bench {
    /// Gets ready to measure at `key` and says how.
    fn at(&mut self, key: &PointKey) -> Result<Measure, SuiteError>;
    /// Untimed, before iteration `i` when validating: fill the data it will carry (or, for an
    /// application kernel, put its state back to the start).
    fn prepare(&mut self, _i: u64) -> Result<(), SuiteError> {
        Ok(())
    }
    /// One timed iteration.
    fn iteration(&mut self, i: u64) -> Result<(), SuiteError>;
    /// Untimed, after iteration `i` when validating: check what arrived.
    fn check(&mut self, _i: u64) -> Result<(), SuiteError> {
        Ok(())
    }
    /// The compute time of the last timed iteration on this rank (nanoseconds of `comm.now()`),
    /// for suites that separate computing from communicating; None for the others.
    fn compute_ns(&self) -> Option<u64> {
        None
    }
    /// Time inside the last timed iteration that is not to count (nanoseconds of
    /// `comm.now()`): a delay a pattern puts between a call and its wait, measured by the
    /// bench around it. The driver takes it off the iteration's sample.
    fn excluded_ns(&self) -> u64 {
        0
    }
    /// Lines for the user once a point is measured (rank 0's are reported): an application
    /// kernel's verification values, say.
    fn notes(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// A benchmark suite. It reads time only through `comm.now()` and never knows which fabric is
/// underneath.
pub trait Suite: Sync + 'static {
    /// The suite's own parameters, typed; they travel to every rank as JSON.
    type Params: Clone + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;
    type Bench<'c>: Bench
    where
        Self: 'c;

    fn name(&self) -> &'static str;
    fn summary(&self) -> &'static str;
    fn ranks(&self) -> RankRule;
    /// The command-line options this suite takes.
    fn options(&self) -> &'static [OptionDef];
    /// Typed parameters from the options a user gave (only this suite's are passed).
    fn params(&self, args: &SuiteArgs) -> Result<Self::Params, ParamError>;
    /// Checks what depends on the rank count or on several parameters at once.
    fn check(&self, _params: &Self::Params, _ranks: usize) -> Result<(), ParamError> {
        Ok(())
    }
    fn layout(&self, params: &Self::Params) -> Layout;
    fn schedule(&self, params: &Self::Params) -> Schedule;
    /// The parameters of a first look (`fabbench run --quick`): fewer iterations, what the
    /// user set explicitly kept; None (the default) for a suite that has no quicker form.
    fn quick(&self, _params: &Self::Params) -> Option<Self::Params> {
        None
    }
    /// The communication a run at `ranks` ranks asks for, when known before it runs (the
    /// runner's estimate of its length); None by default.
    fn work(&self, _params: &Self::Params, _ranks: usize) -> Option<Work> {
        None
    }
    /// The option that lengthens a timed section that was too short to measure (`-i`,
    /// `--class A`), for the warning that says so; None when the suite has none.
    fn longer(&self) -> Option<&'static str> {
        None
    }
    /// This rank's bench for a run (allocates what every point needs).
    fn start<'c>(
        &'c self,
        comm: &'c Comm,
        params: &'c Self::Params,
    ) -> Result<Self::Bench<'c>, SuiteError>;
}
