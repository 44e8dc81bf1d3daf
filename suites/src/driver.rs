//! The shared driver every suite runs through: it walks the suite's points (agreeing on each
//! adaptive choice across ranks), and for each one runs warm-up and timed iterations with
//! validation outside the timed region, then hands rank 0's raw samples over as a [`Point`].
//!
//! The timing loop reads the clock once per iteration when not validating (the end of one
//! iteration is the start of the next), and restarts it after the untimed preparation when
//! validating, exactly as OSU does. Barriers bracket each point so no rank's set-up leaks into
//! another's timing.

use bench_core::measure::{Point, PointKey, Split};
use transports::comm::{Comm, ReduceOp};

use crate::suite::{Bench, Measure, Schedule, Suite, SuiteError};

/// Where rank 0 hands over what it measured, as soon as it is measured.
pub trait PointSink {
    /// A point is about to be measured (for progress displays).
    fn starting(&mut self, key: &PointKey) -> Result<(), SuiteError>;
    /// A point was measured.
    fn measured(&mut self, point: Point) -> Result<(), SuiteError>;
    /// A line for the user beside the suite's table.
    fn note(&mut self, text: &str) -> Result<(), SuiteError>;
}

/// Runs `suite` on this rank: every point of its schedule; rank 0 reports each.
pub fn drive<S: Suite>(
    suite: &S,
    comm: &Comm,
    params: &S::Params,
    report: &mut dyn PointSink,
) -> Result<(), SuiteError> {
    drive_from(suite, comm, params, &[], report)
}

/// As [`drive`], leaving out the points of a fixed schedule in `done` (a resumed run measured
/// them before it was stopped). An adaptive or sampled schedule chooses from what it measures,
/// so it runs whole whatever `done` says.
pub fn drive_from<S: Suite>(
    suite: &S,
    comm: &Comm,
    params: &S::Params,
    done: &[PointKey],
    report: &mut dyn PointSink,
) -> Result<(), SuiteError> {
    // Named before anything is allocated, so a failure there says where it was.
    comm.set_stage(&format!("{} start (message buffers)", suite.name()));
    let mut bench = suite.start(comm, params)?;
    match suite.schedule(params) {
        Schedule::Fixed(keys) => {
            for key in keys.iter().filter(|k| !done.contains(k)) {
                if let Some(p) = point(suite.name(), comm, &mut bench, key, report)? {
                    report.measured(p)?;
                }
            }
        }
        Schedule::Adaptive(mut chooser) => {
            chosen(suite.name(), comm, &mut bench, report, true, |d| {
                chooser.next(d)
            })?;
        }
        Schedule::Sampled(mut sampler) => {
            let done = chosen(suite.name(), comm, &mut bench, report, false, |d| {
                sampler.next(d)
            })?;
            if comm.rank() == 0 {
                let out = sampler.finish(done)?;
                for p in out.points {
                    report.measured(p)?;
                }
                for n in &out.notes {
                    report.note(n)?;
                }
            }
        }
    }
    Ok(())
}

/// Measures the points rank 0 chooses, one at a time, until it chooses none; rank 0 gets every
/// point back (the chooser needs them: only here is a copy of what is reported kept), and
/// reports each as it is measured when `report_each`.
fn chosen<B: Bench>(
    suite: &str,
    comm: &Comm,
    bench: &mut B,
    report: &mut dyn PointSink,
    report_each: bool,
    mut next: impl FnMut(&[Point]) -> Option<PointKey>,
) -> Result<Vec<Point>, SuiteError> {
    let mut done = Vec::new();
    while let Some(key) = agree(comm, (comm.rank() == 0).then(|| next(&done)))? {
        if let Some(p) = point(suite, comm, bench, &key, report)? {
            if report_each {
                report.measured(p.clone())?;
            }
            done.push(p);
        }
    }
    Ok(done)
}

/// Rank 0's choice (`Some(None)`: no more points), made known to every rank; the others pass
/// `None`.
fn agree(comm: &Comm, choice: Option<Option<PointKey>>) -> Result<Option<PointKey>, SuiteError> {
    let choice = choice.flatten();
    let text = choice
        .as_ref()
        .map(|k| serde_json::to_vec(k).expect("a key serialises"))
        .unwrap_or_default();
    let mut len = [if choice.is_some() {
        text.len() as u64
    } else {
        u64::MAX
    }];
    comm.bcast_values(&mut len, 0)?;
    if len[0] == u64::MAX {
        return Ok(None);
    }
    let mut bytes = if comm.rank() == 0 {
        text
    } else {
        vec![0u8; len[0] as usize]
    };
    comm.bcast(&mut bytes, 0)?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(SuiteError::PointDecode)
}

/// Measures one point; rank 0 gets it back to hand over (the others get None).
fn point<B: Bench>(
    suite: &str,
    comm: &Comm,
    bench: &mut B,
    key: &PointKey,
    report: &mut dyn PointSink,
) -> Result<Option<Point>, SuiteError> {
    let m = bench.at(key)?;
    comm.set_stage(&format!("{suite} {key}"));
    if comm.rank() == 0 {
        report.starting(key)?;
    }
    let (samples_ns, split) = timed(comm, bench, &m)?;
    if comm.rank() != 0 {
        return Ok(None);
    }
    for n in bench.notes() {
        report.note(&n)?;
    }
    let warmup = m.warmup;
    Ok(Some(Point {
        warmup: Some(warmup),
        key: key.clone(),
        metrics: m.metrics,
        samples_ns,
        validated: m.validate.then_some(true),
        batches: Vec::new(),
        split,
    }))
}

/// Warm-up and timed iterations between two barriers; the raw duration of each timed one (on
/// rank 0, or the longest over ranks), and how each divides between computing and
/// communicating when the bench says.
fn timed<B: Bench>(
    comm: &Comm,
    bench: &mut B,
    m: &Measure,
) -> Result<(Vec<u64>, Option<Split>), SuiteError> {
    let (iters, skip) = (m.iterations, m.warmup);
    let mut samples = Vec::with_capacity(iters as usize);
    let mut compute = Vec::new();
    comm.barrier()?;
    let mut prev = 0;
    for i in 0..iters + skip {
        if m.validate {
            bench.prepare(i)?;
        }
        if i == skip || (m.validate && i > skip) {
            prev = comm.now();
        }
        bench.iteration(i)?;
        if i >= skip {
            let t = comm.now();
            samples.push((t - prev).saturating_sub(bench.excluded_ns()));
            prev = t;
            if let Some(c) = bench.compute_ns() {
                compute.push(c);
            }
        }
        if m.validate {
            bench.check(i)?;
        }
    }
    comm.barrier()?;
    // Every rank runs the same bench, so every rank has a split or none does.
    let split = if !compute.is_empty() && compute.len() == samples.len() {
        split_over_ranks(comm, &samples, &compute)?
    } else {
        None
    };
    if m.across_ranks {
        let mine = samples.clone();
        comm.reduce(&mine, &mut samples, ReduceOp::Max, 0)?;
    }
    Ok((samples, split))
}

/// The mean over ranks of each sample's compute and communication time, on rank 0.
fn split_over_ranks(
    comm: &Comm,
    samples: &[u64],
    compute: &[u64],
) -> Result<Option<Split>, SuiteError> {
    let n = samples.len();
    let mut mine = Vec::with_capacity(2 * n);
    mine.extend_from_slice(compute);
    mine.extend(
        samples
            .iter()
            .zip(compute)
            .map(|(t, c)| t.saturating_sub(*c)),
    );
    let mut sum = vec![0u64; 2 * n];
    comm.reduce(&mine, &mut sum, ReduceOp::Sum, 0)?;
    let ranks = comm.size() as u64;
    let mean = |v: &[u64]| v.iter().map(|x| x / ranks).collect();
    Ok((comm.rank() == 0).then(|| Split {
        compute_ns: mean(&sum[..n]),
        comm_ns: mean(&sum[n..]),
    }))
}
