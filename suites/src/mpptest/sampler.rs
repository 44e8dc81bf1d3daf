//! mpptest's timing, as a [`Sampler`]: a test is `n_avg` iterations at one size, and its
//! average is one sample of that size. Sweeps over every size repeat until `n_stable` sweeps
//! in a row leave every size's minimum unchanged (or `sample_reps` sweeps ran); each size
//! reports its fastest average. With `-auto`, after each sweep a size is inserted halfway
//! between neighbours wherever linear interpolation misses the measured time by more than
//! `-autorel`, down to `-autodx` apart, so sizes gather where the curve bends — at protocol
//! switches. Finally, sizes slower than 1.1 times what their neighbours predict are re-run (up
//! to four passes), as mpptest smooths out transient disturbances.
//!
//! Where mpptest differs from its own description, this follows the description: a new
//! minimum counts as a change only when it improves by more than `-rthresh` (mpptest's code
//! counts any improvement, which on a noisy machine never lets a run settle), and `-auto`
//! keeps refining until no gap needs it (mpptest refines only every fifth sweep, which leaves
//! a switch located to 1/64 of the range rather than to `-autodx`).

use std::collections::VecDeque;

use bench_core::measure::{Point, PointKey};

use super::params::{Sizes, Timing};
use crate::suite::{Sampled, Sampler, SuiteError};

/// A test whose total is under this many clock ticks is not trusted: it is re-run with twice
/// the iterations (mpptest's 100 x MPI_Wtick rule), up to [`TICK_RETRIES`] times.
const TICKS: u64 = 100;
/// fabbench's clock reads nanoseconds.
const TICK_NS: u64 = 1;
const TICK_RETRIES: u32 = 10;
/// mpptest smooths in at most this many passes.
const SMOOTH_PASSES: u32 = 4;
/// A size is re-run when slower than this times its neighbours' linear estimate.
const SMOOTH_RATIO: f64 = 1.1;
/// mpptest's end-point spacing for smoothing estimates.
const SMOOTH_DX: f64 = 4.0;
/// mpptest's cap on the sizes `-auto` may hold.
const MAX_SIZES: usize = 1024;
/// The key parameter carrying a test's iteration count.
pub const N_AVG: &str = "n_avg";

/// One size and what its tests found.
#[derive(Debug, Clone)]
struct Entry {
    size: u64,
    n_avg: u64,
    /// Indexes (into the tests measured) of the accepted tests.
    tests: Vec<usize>,
    /// The fastest and slowest average of one iteration, ns.
    best: f64,
    worst: f64,
    /// Tests re-run because they were too short for the clock.
    tick_reruns: u32,
    /// Tests re-run by smoothing.
    smoothed: u32,
}

impl Entry {
    fn new(size: u64, n_avg: u64) -> Entry {
        Entry {
            size,
            n_avg,
            tests: Vec::new(),
            best: f64::INFINITY,
            worst: 0.0,
            tick_reruns: 0,
            smoothed: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Sweeps,
    Smoothing(u32),
    Done,
}

/// Where `-auto` places sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Refine {
    dx: u64,
    rel: f64,
}

/// mpptest's minimum of averages over repeated sweeps.
#[derive(Debug)]
pub struct MinOfAverages {
    timing: Timing,
    refine: Option<Refine>,
    /// Sorted by size.
    entries: Vec<Entry>,
    /// Sizes to test next, in order.
    queue: VecDeque<u64>,
    /// Tests absorbed so far.
    seen: usize,
    phase: Phase,
    sweeps: u64,
    /// Sweeps in a row without a new minimum.
    unchanged: u64,
    /// Whether the current sweep found a new minimum (or added sizes).
    changed: bool,
    measured_ns: u128,
    exceeded: bool,
}

impl MinOfAverages {
    pub fn new(timing: Timing, sizes: &Sizes, initial: Vec<u64>) -> MinOfAverages {
        let refine = match *sizes {
            Sizes::Auto { dx, rel, .. } => Some(Refine { dx, rel }),
            Sizes::Listed { .. } => None,
        };
        let n_avg = timing.n_avg;
        let mut entries: Vec<Entry> = Vec::new();
        let mut queue = VecDeque::new();
        for s in initial {
            // A size listed twice is measured once, in its first place.
            if entries.iter().all(|e| e.size != s) {
                entries.push(Entry::new(s, n_avg));
                queue.push_back(s);
            }
        }
        // Listed sizes print in the order given; only -auto's list is kept sorted.
        if refine.is_some() {
            entries.sort_by_key(|e| e.size);
        }
        MinOfAverages {
            timing,
            refine,
            entries,
            queue,
            seen: 0,
            phase: Phase::Sweeps,
            sweeps: 0,
            unchanged: 0,
            changed: false,
            measured_ns: 0,
            exceeded: false,
        }
    }

    fn entry(&mut self, size: u64) -> Option<&mut Entry> {
        self.entries.iter_mut().find(|e| e.size == size)
    }

    /// Takes in a measured test.
    fn absorb(&mut self, index: usize, test: &Point) {
        let Some(size) = test.key.size else { return };
        let total: u128 = test.samples_ns.iter().map(|&s| s as u128).sum();
        self.measured_ns += total;
        let n = test.samples_ns.len().max(1) as f64;
        let (rthresh, tgoal) = (self.timing.rthresh, self.timing.tgoal);
        let Some(e) = self.entry(size) else { return };
        if total <= (TICKS * TICK_NS) as u128 && e.tick_reruns < TICK_RETRIES {
            // Too short for the clock: twice the iterations, at once.
            e.tick_reruns += 1;
            e.n_avg *= 2;
            self.queue.push_front(size);
            return;
        }
        let avg = total as f64 / n;
        e.tests.push(index);
        let improved = avg < e.best * (1.0 - rthresh);
        e.best = e.best.min(avg);
        e.worst = e.worst.max(avg);
        if let Some(goal) = tgoal {
            // -tgoal: as many iterations as make one test last about that long.
            e.n_avg = ((goal * 1e9 / avg.max(1.0)).round() as u64).clamp(1, 1 << 24);
        }
        self.changed |= improved;
    }

    /// What to do once the queue is empty.
    fn plan_more(&mut self) {
        loop {
            match self.phase {
                Phase::Sweeps => {
                    self.sweeps += 1;
                    if self.changed {
                        self.unchanged = 0;
                    } else {
                        self.unchanged += 1;
                    }
                    self.changed = false;
                    let added = self.refine_sizes();
                    let settled = self.unchanged >= self.timing.n_stable
                        || self.sweeps >= self.timing.sample_reps;
                    if added == 0 && settled {
                        self.phase = Phase::Smoothing(1);
                        continue;
                    }
                    for e in &self.entries {
                        self.queue.push_back(e.size);
                    }
                }
                Phase::Smoothing(pass) => {
                    let rough = self.rough_sizes();
                    if rough.is_empty() || pass > SMOOTH_PASSES {
                        self.phase = Phase::Done;
                        continue;
                    }
                    for s in rough {
                        if let Some(e) = self.entry(s) {
                            e.smoothed += 1;
                        }
                        self.queue.push_back(s);
                    }
                    self.phase = Phase::Smoothing(pass + 1);
                }
                Phase::Done => {}
            }
            return;
        }
    }

    /// `-auto`: inserts sizes where the curve bends; new sizes catch up with as many tests as
    /// the others have had. Returns how many were added.
    fn refine_sizes(&mut self) -> usize {
        let Some(Refine { dx, rel }) = self.refine else {
            return 0;
        };
        let mut add = Vec::new();
        let n = self.entries.len();
        for i in 0..n {
            let e = &self.entries[i];
            let est = estimate(&self.entries, i, dx as f64);
            if (e.best - est).abs() <= rel * est + 1e-4 {
                continue;
            }
            if i > 0 && e.size - self.entries[i - 1].size > dx {
                add.push((self.entries[i - 1].size + e.size) / 2);
            }
            if i + 1 < n && self.entries[i + 1].size - e.size > dx {
                add.push((e.size + self.entries[i + 1].size) / 2);
            }
        }
        add.sort_unstable();
        add.dedup();
        add.truncate(MAX_SIZES.saturating_sub(n));
        let catch_up = self.sweeps.saturating_sub(1);
        for &s in &add {
            let n_avg = self.timing.n_avg;
            let at = self.entries.partition_point(|e| e.size < s);
            self.entries.insert(at, Entry::new(s, n_avg));
            for _ in 0..catch_up {
                self.queue.push_back(s);
            }
            self.changed = true;
        }
        if !add.is_empty() {
            self.unchanged = 0;
        }
        add.len()
    }

    /// Sizes slower than their neighbours predict (mpptest's smoothing test).
    fn rough_sizes(&self) -> Vec<u64> {
        (0..self.entries.len())
            .filter(|&i| {
                let e = &self.entries[i];
                e.best.is_finite() && e.best > SMOOTH_RATIO * estimate(&self.entries, i, SMOOTH_DX)
            })
            .map(|i| self.entries[i].size)
            .collect()
    }

    fn key(&self, size: u64) -> PointKey {
        let n_avg = self
            .entries
            .iter()
            .find(|e| e.size == size)
            .map(|e| e.n_avg)
            .unwrap_or(self.timing.n_avg);
        let mut k = PointKey::size(size);
        k.params.insert(N_AVG.into(), n_avg.to_string());
        k
    }

    fn diagnostics(&self) -> Vec<String> {
        let mut out = vec![
            "#Test Diagnostics (fabbench)".to_string(),
            "#len\ttick?\tsmooth?\ttests\tn_avg\t(tmax-tmin)/tmax%".to_string(),
        ];
        for e in &self.entries {
            let spread = if e.worst > 0.0 {
                100.0 * (e.worst - e.best) / e.worst
            } else {
                0.0
            };
            out.push(format!(
                "{}\t{}\t{}\t{}\t{}\t{spread:.6}",
                e.size,
                e.tick_reruns,
                e.smoothed,
                e.tests.len(),
                e.n_avg
            ));
        }
        let smoothed = self.entries.iter().filter(|e| e.smoothed > 0).count();
        let tests: usize = self.entries.iter().map(|e| e.tests.len()).sum();
        out.push(format!(
            "# {} sweeps, {tests} tests; smoothing re-ran {smoothed} of {} sizes",
            self.sweeps,
            self.entries.len()
        ));
        out
    }
}

/// The time at entry `i` that its neighbours predict by linear interpolation (an end uses
/// itself `dx` beyond, as mpptest does).
fn estimate(entries: &[Entry], i: usize, dx: f64) -> f64 {
    let cur = &entries[i];
    let (t_prev, dn_prev) = match i.checked_sub(1).map(|j| &entries[j]) {
        Some(p) => (p.best, (cur.size - p.size) as f64),
        None => (cur.best, dx),
    };
    let (t_next, dn_next) = match entries.get(i + 1) {
        Some(n) => (n.best, (n.size - cur.size) as f64),
        None => (cur.best, dx),
    };
    t_prev + dn_prev / (dn_prev + dn_next) * (t_next - t_prev)
}

impl Sampler for MinOfAverages {
    fn next(&mut self, done: &[Point]) -> Option<PointKey> {
        for (i, t) in done.iter().enumerate().skip(self.seen) {
            self.absorb(i, t);
        }
        self.seen = done.len();
        if self.measured_ns as f64 > self.timing.max_run_time * 1e9 {
            self.exceeded = true;
            return None;
        }
        if self.queue.is_empty() {
            self.plan_more();
        }
        let size = self.queue.pop_front()?;
        Some(self.key(size))
    }

    fn finish(&mut self, mut done: Vec<Point>) -> Result<Sampled, SuiteError> {
        if self.exceeded {
            return Err(SuiteError::Check(format!(
                "mpptest: -max_run_time {} s reached after {} tests; raise it, or measure fewer sizes or iterations",
                self.timing.max_run_time,
                done.len()
            )));
        }
        let mut points = Vec::new();
        for e in &self.entries {
            let Some(&first) = e.tests.first() else {
                continue;
            };
            let mut samples = Vec::new();
            let mut batches = Vec::new();
            for &t in &e.tests {
                let s = std::mem::take(&mut done[t].samples_ns);
                batches.push(s.len() as u64);
                samples.extend(s);
            }
            points.push(Point {
                warmup: None,
                key: PointKey::size(e.size),
                metrics: done[first].metrics.clone(),
                samples_ns: samples,
                validated: done[first].validated,
                batches,
                split: None,
            });
        }
        let notes = if self.timing.diagnostics {
            self.diagnostics()
        } else {
            Vec::new()
        };
        Ok(Sampled { points, notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::measure::Metric;

    fn timing(n_stable: u64) -> Timing {
        Timing {
            n_avg: 5,
            sample_reps: 30,
            n_stable,
            rthresh: 0.05,
            tgoal: None,
            max_run_time: 900.0,
            diagnostics: true,
        }
    }

    /// Runs the sampler against `time(size, test number) -> ns per iteration`.
    fn run(s: &mut MinOfAverages, time: impl Fn(u64, usize) -> u64) -> (Vec<Point>, Sampled) {
        let mut done: Vec<Point> = Vec::new();
        while let Some(k) = s.next(&done) {
            assert!(done.len() < 100_000, "the sampler never stops");
            let n: u64 = k.params[N_AVG].parse().unwrap();
            let t = time(k.size.unwrap(), done.len());
            done.push(Point {
                warmup: None,
                key: k,
                metrics: vec![Metric::latency_us(2.0)],
                samples_ns: vec![t; n as usize],
                validated: None,
                batches: vec![],
                split: None,
            });
        }
        let tests = done.clone();
        (tests, s.finish(done).unwrap())
    }

    #[test]
    fn a_steady_curve_stops_after_n_stable_unchanged_sweeps() {
        let sizes = Sizes::Listed {
            list: vec![0, 8, 16],
        };
        let mut s = MinOfAverages::new(timing(5), &sizes, vec![0, 8, 16]);
        let (tests, out) = run(&mut s, |size, _| 1000 + size);
        // one sweep that sets the minima, five that leave them alone
        assert_eq!(tests.len(), 3 * 6);
        assert_eq!(out.points.len(), 3);
        assert_eq!(out.points[1].batches, vec![5; 6]);
        assert_eq!(out.points[1].headline(), 0.504);
        let mut s = MinOfAverages::new(timing(30), &sizes, vec![0, 8, 16]);
        let (tests, _) = run(&mut s, |size, _| 1000 + size);
        assert_eq!(tests.len(), 3 * 30, "capped by -sample_reps");
    }

    #[test]
    fn a_falling_minimum_keeps_the_sweeps_going() {
        let sizes = Sizes::Listed { list: vec![64] };
        let mut s = MinOfAverages::new(timing(2), &sizes, vec![64]);
        // 10% faster on each of the first six tests, then steady
        let (tests, out) = run(&mut s, |_, i| {
            (10_000.0 * 0.9f64.powi(i.min(5) as i32)) as u64
        });
        assert_eq!(tests.len(), 6 + 2);
        assert_eq!(out.points[0].best_batch()[0], 5904);
    }

    #[test]
    fn too_short_tests_double_their_iterations() {
        let sizes = Sizes::Listed { list: vec![0] };
        let mut s = MinOfAverages::new(timing(1), &sizes, vec![0]);
        // 5 iterations of 15 ns = 75 ns: under 100 ticks, re-run with 10 iterations
        let (tests, out) = run(&mut s, |_, _| 15);
        assert_eq!(tests[0].samples_ns.len(), 5);
        assert_eq!(tests[1].samples_ns.len(), 10);
        assert_eq!(out.points[0].batches[0], 10);
        assert!(out.notes.iter().any(|n| n.starts_with("0\t1\t")));
    }

    #[test]
    fn an_outlier_is_rerun_by_smoothing() {
        let sizes = Sizes::Listed {
            list: vec![0, 8, 16, 24],
        };
        let mut s = MinOfAverages::new(timing(1), &sizes, vec![0, 8, 16, 24]);
        // size 16 is disturbed through the first two sweeps (tests 0 to 7)
        let (_, out) = run(&mut s, |size, i| {
            if size == 16 && i < 8 {
                5000
            } else {
                1000 + size
            }
        });
        assert_eq!(out.points[2].best_batch()[0], 1016);
        assert!(out
            .notes
            .last()
            .unwrap()
            .contains("smoothing re-ran 1 of 4 sizes"));
    }

    #[test]
    fn auto_finds_a_jump_to_within_dx() {
        let sizes = Sizes::Auto {
            first: 0,
            last: 65536,
            dx: 4,
            rel: 0.02,
        };
        let init = super::super::params::auto_start(0, 65536);
        let mut s = MinOfAverages::new(timing(3), &sizes, init);
        let limit = 12_345;
        let (_, out) = run(&mut s, |size, _| {
            if size <= limit {
                1000 + size / 4
            } else {
                3000 + size / 4
            }
        });
        let sizes: Vec<u64> = out.points.iter().map(|p| p.size()).collect();
        let below = sizes.iter().rev().find(|&&s| s <= limit).unwrap();
        let above = sizes.iter().find(|&&s| s > limit).unwrap();
        assert!(above - below <= 4, "{below}..{above}");
        assert!(sizes.windows(2).all(|w| w[0] < w[1]));
        // a straight line needs no extra sizes: far from the jump they stay 8192 apart
        assert!(sizes.contains(&49152) && !sizes.contains(&53248));
    }

    #[test]
    fn running_out_of_time_fails_the_run() {
        let sizes = Sizes::Listed { list: vec![0] };
        let mut t = timing(5);
        t.max_run_time = 1e-6;
        let mut s = MinOfAverages::new(t, &sizes, vec![0]);
        let mut done = Vec::new();
        while let Some(k) = s.next(&done) {
            done.push(Point {
                warmup: None,
                key: k,
                metrics: vec![Metric::latency_us(2.0)],
                samples_ns: vec![1000; 5],
                validated: None,
                batches: vec![],
                split: None,
            });
        }
        let e = s.finish(done).unwrap_err().to_string();
        assert!(e.contains("-max_run_time"), "{e}");
    }
}
