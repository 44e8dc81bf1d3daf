//! Where a run's progress and results go while it runs. The runner hands every [`Event`] to
//! one [`Sink`]: the terminal's OSU text and progress bar are sinks ([`crate::sinks`]), a tuner
//! that only wants the final [`Run`] passes [`Discard`].

use std::path::Path;

use bench_core::measure::{Point, PointKey};
use results::model::{Run, Series};

/// Something that happened in a run. `run` is the run so far: its manifest (fabrics, tunables)
/// from the start, series and points as they arrive, counters and facts once it finished.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// The run begins. `planned`: how many points it will measure, when known up front.
    Started {
        run: &'a Run,
        planned: Option<usize>,
    },
    /// A suite begins on a fabric.
    SuiteStarted {
        run: &'a Run,
        series: &'a Series,
        planned: Option<usize>,
    },
    /// A point is about to be measured.
    PointStarted {
        run: &'a Run,
        series: &'a Series,
        key: &'a PointKey,
    },
    /// A point was measured.
    Point {
        run: &'a Run,
        series: &'a Series,
        point: &'a Point,
    },
    /// A suite finished on a fabric: every point and note of `series` is in.
    SuiteFinished { run: &'a Run, series: &'a Series },
    /// Every rank finished; `run` is complete.
    Finished { run: &'a Run },
    /// The run's directory is in place at `path`.
    Written { path: &'a Path },
}

pub trait Sink {
    fn event(&mut self, event: &Event<'_>);
}

/// A sink that keeps nothing (the caller wants only the returned [`Run`]).
#[derive(Debug, Default)]
pub struct Discard;

impl Sink for Discard {
    fn event(&mut self, _event: &Event<'_>) {}
}
