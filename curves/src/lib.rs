//! curves fits a curve of time against message size as a few straight pieces, each following
//! `t = a + size / b` with `a` the latency in microseconds and `b` the bandwidth in MB/s (one
//! byte per microsecond is one MB/s), and names the breakpoints where one piece hands over to
//! the next. Those breakpoints are what a user of an interconnect benchmark is looking for:
//! the sizes where the transport switches protocol, from eager to rendezvous or from one copy
//! mode to another. mpptest's output uses it now; autotune and characterise are to use it to
//! pick thresholds later.
//!
//! [`segments`] gives the pieces, [`breakpoints`] the switches between them; both take the
//! measured points and a [`Tolerance`] saying how closely a piece must follow its points.
//!
//! [`segments`] takes every point at its word: one outlier (a size disturbed by the system
//! during its run) becomes a one-point segment. [`analyse`] (and so [`breakpoints`]) sets such
//! blips aside when the segments on either side lie on one line, and reports them apart.

mod breakpoint;
mod error;
mod fit;
mod segment;

pub use breakpoint::{analyse, breakpoints, Analysis, Breakpoint, Kind};
pub use error::CurveError;
pub use segment::{segments, Segment};

/// How far a point may sit from its segment's line and still belong to it. Relative, because
/// a timer's noise grows with the time measured; with an absolute floor, because at the
/// smallest times the clock's resolution, not a percentage, is the limit.
///
/// A point of time `t` fits a line when `|t - line(size)| <= max(relative * t, absolute_us)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Fraction of the point's time; must lie in `[0, 1)`.
    pub relative: f64,
    /// Microseconds; finite and `>= 0`.
    pub absolute_us: f64,
}

impl Default for Tolerance {
    /// 5 %: wider than the run-to-run noise of a quiet machine, narrower than the step a
    /// protocol switch usually makes. 10 ns: so that near-zero times are not held to a
    /// fraction of a nanosecond, while staying below any interconnect's latency.
    fn default() -> Tolerance {
        Tolerance {
            relative: 0.05,
            absolute_us: 0.01,
        }
    }
}

impl Tolerance {
    /// How far a line may miss a point (or value) of time `t`.
    pub(crate) fn allowed_miss(self, t: f64) -> f64 {
        (self.relative * t).max(self.absolute_us)
    }
}

#[cfg(test)]
mod tests;
