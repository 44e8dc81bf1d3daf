//! What an NPB kernel is to the suite: its fixed facts per class (problem size, iterations, the
//! operation count behind Mop/s), an untimed set-up, the timed section NPB's timer brackets,
//! and NPB's verification. The suite ([`super::NpbSuite`]) does the rest for every kernel
//! alike: rank checks, timing through the shared driver, the compute/communication split,
//! the report.
//!
//! A kernel communicates only through the [`Comm`] it is given, and runs every stretch of
//! computing in the timed section inside [`Meter::compute`]: that is how the split is measured,
//! and how an emulated fabric charges the emulated node's compute time in virtual time.

use transports::comm::Comm;

use super::class::Class;
use crate::ranks::RankRule;
use crate::suite::{ParamError, SuiteError};

/// The problem as NPB's report states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The "Size" field: "33554432" (EP prints 2^(M+1)), "64x 64x 64" (MG, FT), "14000"
    /// (CG), "1048576" (IS).
    pub size: String,
    /// The "Iterations" field.
    pub iterations: u32,
}

/// NPB's verdict on one run, with the lines NPB prints before it (computed and reference
/// values, errors), so a user sees why.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    pub passed: bool,
    pub lines: Vec<String>,
}

/// Tracks the compute time of one timed section on this rank (on the suite's clock).
pub struct Meter<'c> {
    comm: &'c Comm,
    compute_ns: u64,
}

impl<'c> Meter<'c> {
    pub fn new(comm: &'c Comm) -> Meter<'c> {
        Meter {
            comm,
            compute_ns: 0,
        }
    }

    /// Runs `f`, a stretch of computing with no communication in it, and counts its time as
    /// compute. On an emulated fabric the host time it takes, scaled to the emulated node,
    /// moves the virtual clock on.
    #[inline]
    pub fn compute<R>(&mut self, f: impl FnOnce() -> R) -> Result<R, SuiteError> {
        let t0 = self.comm.now();
        let r = self.comm.compute(f)?;
        self.compute_ns += self.comm.now() - t0;
        Ok(r)
    }

    /// Compute time so far, in nanoseconds of the suite's clock.
    pub fn compute_ns(&self) -> u64 {
        self.compute_ns
    }
}

/// One NPB kernel. Every method runs on every rank; set-up and verification are untimed.
pub trait Kernel: Sized {
    /// NPB's name for it: "EP", "IS", "CG", "MG", "FT".
    const NAME: &'static str;
    /// What Mop/s counts, as NPB's report says it: "Random numbers generated", "keys ranked",
    /// "floating point".
    const OPERATION: &'static str;

    /// The rank counts NPB runs it on.
    fn ranks() -> RankRule;

    /// Refuses a class and rank count NPB cannot run (a grid too small to divide), in one line
    /// saying what is valid.
    fn check(_class: Class, _ranks: usize) -> Result<(), ParamError> {
        Ok(())
    }

    /// The problem size and iteration count for a class.
    fn problem(class: Class) -> Problem;

    /// How many operations Mop/s counts for a class: NPB's formula with the time taken out
    /// (Mop/s total = operations / seconds / 10^6).
    fn operations(class: Class) -> f64;

    /// Allocates and generates everything the timed section needs (NPB's initialisation
    /// before its timer starts), for `comm.size()` ranks.
    fn new(comm: &Comm, class: Class) -> Result<Self, SuiteError>;

    /// Puts the state back to the start of the timed section, including any untimed warm-up
    /// NPB does first. Called before every timed section, so a kernel can be timed repeatedly.
    fn reset(&mut self, comm: &Comm) -> Result<(), SuiteError>;

    /// The timed section: NPB's benchmark loop, computing only inside `meter.compute`.
    fn run(&mut self, comm: &Comm, meter: &mut Meter<'_>) -> Result<(), SuiteError>;

    /// NPB's verification of the last timed section against the published reference values
    /// with NPB's tolerance. Every rank returns the same verdict.
    fn verify(&mut self, comm: &Comm) -> Result<Verification, SuiteError>;
}
