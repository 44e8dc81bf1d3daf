//! Whether a measured point's timing can be trusted for its length: on a fabric that runs in
//! real time (shm, tcp, mpi), a timed section of about a millisecond is within reach of a
//! scheduler's time slice and the host's noise, so its number says little. Emulated fabrics in
//! virtual time are exact at any length and are never short. The runner warns of short points
//! after a run, and scaling tables mark their rows, from this one rule.

use bench_core::measure::Point;

use crate::model::Series;

/// A kernel point (NPB, nbody: each sample one whole timed section) whose mean section is
/// shorter than this is short: a Linux time slice is a few milliseconds, so one preemption
/// would be a large share of it.
pub const SHORT_SECTION_NS: f64 = 10_000_000.0;

/// A point of message sizes (OSU, mpptest) whose timed loop, every sample added up, lasted
/// less than this is short: fewer iterations than it takes to average out the noise of single
/// ones (OSU's defaults time milliseconds at least).
pub const SHORT_LOOP_NS: u64 = 1_000_000;

/// How a point was too short.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Short {
    /// A kernel point's mean timed section, in nanoseconds.
    Section(f64),
    /// A size point's whole timed loop, in nanoseconds.
    Loop(u64),
}

impl Short {
    /// "timed sections of 1.3 ms", "a timed loop of 0.2 ms".
    pub fn words(&self) -> String {
        match *self {
            Short::Section(ns) => format!("timed sections of {:.1} ms", ns / 1e6),
            Short::Loop(ns) => format!("a timed loop of {:.2} ms", ns as f64 / 1e6),
        }
    }
}

/// Whether `point` of `series` was timed too briefly to trust (never on an emulated fabric,
/// nor for a point with no samples).
pub fn short(series: &Series, point: &Point) -> Option<Short> {
    if series.emulated || point.samples_ns.is_empty() {
        return None;
    }
    let total: u64 = point.samples_ns.iter().sum();
    match point.key.size {
        None => {
            let mean = total as f64 / point.samples_ns.len() as f64;
            (mean < SHORT_SECTION_NS).then_some(Short::Section(mean))
        }
        Some(_) => (total < SHORT_LOOP_NS).then_some(Short::Loop(total)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::npb_run;

    #[test]
    fn kernel_sections_under_the_threshold_are_short_on_real_fabrics_only() {
        let quick = npb_run("npb", "shm", 2, &[("mg", 0.0013)]);
        let s = &quick.series[0];
        match short(s, &s.points[0]) {
            Some(Short::Section(ns)) => assert!((ns - 1.3e6).abs() < 1e3, "{ns}"),
            other => panic!("a 1.3 ms section on shm is short: {other:?}"),
        }
        let long = npb_run("npb", "shm", 2, &[("mg", 0.5)]);
        assert_eq!(short(&long.series[0], &long.series[0].points[0]), None);
        let mut emulated = quick.series[0].clone();
        emulated.emulated = true;
        assert_eq!(short(&emulated, &emulated.points[0]), None);
    }

    #[test]
    fn a_size_point_is_short_when_its_whole_loop_is() {
        let mut s = npb_run("npb", "shm", 2, &[("mg", 0.5)]).series[0].clone();
        let p = &mut s.points[0];
        p.key = bench_core::measure::PointKey::size(8);
        p.samples_ns = vec![2_000; 100];
        assert_eq!(short(&s, &s.points[0]), Some(Short::Loop(200_000)));
        s.points[0].samples_ns = vec![2_000; 1000];
        assert_eq!(short(&s, &s.points[0]), None);
    }
}
