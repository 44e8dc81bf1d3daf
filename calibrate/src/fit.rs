//! The search: argmin's Nelder-Mead over the free parameters' unit coordinates, minimising the
//! sum of squared log ratios of emulated to measured values (so 10 % too high and 10 % too low
//! cost alike, at any magnitude), restarted from its best point until a restart gains nothing,
//! then polished on the worst point's log ratio, since a calibration is judged by its worst
//! point. A trial the fabric cannot run costs more than any fit.

use std::sync::atomic::{AtomicBool, Ordering};

use argmin::core::{CostFunction, Error as ArgminError, Executor, State};
use argmin::solver::neldermead::NelderMead;

use crate::error::FitError;
use crate::evaluate::{evaluate, Values};
use crate::params::Free;
use crate::progress::Progress;
use crate::table::Target;

/// The cost of a trial the fabric refused.
const REFUSED: f64 = 1e6;

/// What the search minimises, and the trials it made.
pub struct Problem<'a> {
    pub fabric: &'a str,
    pub free: &'a [Free],
    /// Settings held during the fit (`FABRIC.NAME=VALUE`).
    pub fixed: &'a [String],
    /// The targets fitted (values above zero).
    pub targets: &'a [Target],
    pub stop: &'a AtomicBool,
    /// Counts the trials and hears their costs, across every problem of a calibration.
    pub progress: &'a Progress<'a>,
}

impl Problem<'_> {
    /// The settings a point in unit space stands for.
    pub fn sets(&self, unit: &[f64]) -> Vec<String> {
        let mut sets: Vec<String> = self.fixed.to_vec();
        for (f, &u) in self.free.iter().zip(unit) {
            sets.push(format!(
                "{}={}",
                f.tunable(self.fabric),
                f.text(f.from_unit(u))
            ));
        }
        sets
    }

    /// The emulated values at a unit point, or the fabric's refusal.
    pub fn values(&self, unit: &[f64]) -> Result<Values, FitError> {
        let values = evaluate(self.fabric, &self.sets(unit), self.targets, self.stop);
        self.progress.tried();
        Ok(values?)
    }

    /// The error for a search that has stopped: the caller's stop if raised, else `other`.
    fn stopped(&self, other: impl FnOnce() -> FitError) -> FitError {
        if self.stop.load(Ordering::Relaxed) {
            FitError::Interrupted
        } else {
            other()
        }
    }

    /// The largest |log ratio| over the targets.
    pub fn worst_of(&self, values: &Values) -> f64 {
        self.targets
            .iter()
            .map(|t| match values.get(&(t.suite.clone(), t.size)) {
                Some(&v) if v > 0.0 => (v / t.value).ln().abs(),
                _ => REFUSED,
            })
            .fold(0.0, f64::max)
    }

    /// Sum of squared log ratios over the targets.
    pub fn cost_of(&self, values: &Values) -> f64 {
        let cost = self
            .targets
            .iter()
            .map(|t| match values.get(&(t.suite.clone(), t.size)) {
                Some(&v) if v > 0.0 => (v / t.value).ln().powi(2),
                _ => REFUSED,
            })
            .sum();
        self.progress.cost(cost);
        cost
    }
}

/// What a descent minimises.
#[derive(Clone, Copy)]
enum Objective {
    /// Sum of squared log ratios: every point counts.
    Squares,
    /// The worst point's |log ratio|.
    Worst,
}

/// The problem as argmin's executor takes it (by value), borrowed.
struct Cost<'p, 'a>(&'p Problem<'a>, Objective);

impl CostFunction for Cost<'_, '_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, unit: &Vec<f64>) -> Result<f64, ArgminError> {
        let p = self.0;
        if p.stop.load(Ordering::Relaxed) {
            // Only a stop ends a descent early; `descend` reports it as FitError::Interrupted.
            return Err(ArgminError::msg("interrupted"));
        }
        Ok(match (p.values(unit), self.1) {
            (Ok(v), Objective::Squares) => p.cost_of(&v),
            (Ok(v), Objective::Worst) => p.worst_of(&v),
            (Err(_), _) => REFUSED * p.targets.len() as f64,
        })
    }
}

/// Nelder-Mead from `start` (unit coordinates), its simplex `step` wide, at most `iters`
/// iterations; the best point and its cost.
fn descend(
    p: &Problem,
    objective: Objective,
    start: &[f64],
    step: f64,
    iters: u64,
) -> Result<(Vec<f64>, f64), FitError> {
    let mut simplex = vec![start.to_vec()];
    for i in 0..start.len() {
        let mut v = start.to_vec();
        v[i] = if v[i] + step <= 1.0 {
            v[i] + step
        } else {
            v[i] - step
        };
        simplex.push(v);
    }
    let solver = NelderMead::new(simplex)
        .with_sd_tolerance(1e-7)
        .map_err(FitError::Solver)?;
    let res = Executor::new(Cost(p, objective), solver)
        .configure(|s| s.max_iters(iters))
        .run()
        .map_err(|e| p.stopped(|| FitError::Solver(e)))?;
    let best = res
        .state()
        .get_best_param()
        .cloned()
        .unwrap_or_else(|| start.to_vec());
    Ok((best, res.state().get_best_cost()))
}

/// Points spread evenly over the unit cube (a Halton sequence, bases the first primes), for a
/// first look at the landscape: deterministic, so a calibration repeats exactly.
fn halton(count: usize, dims: usize) -> Vec<Vec<f64>> {
    const PRIMES: [u32; 16] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];
    (1..=count)
        .map(|i| {
            (0..dims)
                .map(|d| {
                    let b = PRIMES[d % PRIMES.len()] as f64;
                    let (mut f, mut r, mut n) = (1.0, 0.0, i as f64);
                    while n > 0.0 {
                        f /= b;
                        r += f * (n % b);
                        n = (n / b).floor();
                    }
                    r
                })
                .collect()
        })
        .collect()
}

/// Points of the unit cube with their costs.
pub type Seen = Vec<(Vec<f64>, f64)>;

/// Factors the card's times are scaled by (and its rates divided by) for the scan's scaled
/// starts.
pub const SCALES: [f64; 7] = [0.1, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0];

/// The card's point with every time (`_ns`) multiplied by `k` and every rate (`_mbps`)
/// divided by it, other values kept: the same machine k times slower.
fn scaled(free: &[Free], start: &[f64], k: f64) -> Vec<f64> {
    free.iter()
        .zip(start)
        .map(|(f, &u)| {
            let x = f.from_unit(u);
            if f.name.ends_with("_ns") {
                f.to_unit(x.max(f.from_unit(0.0)) * k)
            } else if f.name.ends_with("_mbps") {
                f.to_unit(x / k)
            } else {
                u
            }
        })
        .collect()
}

/// A first look at the landscape, best first: the card's own point, the card scaled as a
/// machine uniformly slower or faster (a prototype's clock is the commonest reason a card is
/// off, and it moves every time together, which points spread at random rarely do), and
/// `count` points spread over the whole space. A model's cost has several valleys (a slow
/// copy can stand in for a slow queue at one size and not at another), so the descents start
/// from the best of these.
pub fn scan(p: &Problem, start: &[f64], count: usize) -> Result<Seen, FitError> {
    let cost = |u: &[f64]| p.values(u).map(|v| p.cost_of(&v)).unwrap_or(f64::INFINITY);
    let mut seen: Vec<(Vec<f64>, f64)> = vec![(start.to_vec(), cost(start))];
    let starts = SCALES.iter().map(|&k| scaled(p.free, start, k));
    for u in starts.chain(halton(count, start.len())) {
        if p.stop.load(Ordering::Relaxed) {
            return Err(FitError::Interrupted);
        }
        let c = cost(&u);
        seen.push((u, c));
    }
    seen.sort_by(|a, b| a.1.total_cmp(&b.1));
    Ok(seen)
}

/// The best unit point found by descending from the two best points of a scan; each descent
/// restarts from its best with a smaller simplex until it gains less than 0.1 %.
pub fn refine(
    p: &Problem,
    seen: &[(Vec<f64>, f64)],
    rounds: usize,
    iters: u64,
) -> Result<(Vec<f64>, f64), FitError> {
    let mut best = seen[0].clone();
    for (from, _) in seen.iter().take(2) {
        let found = descend_from(p, from, rounds, iters)?;
        if found.1 < best.1 {
            best = found;
        }
    }
    Ok(best)
}

fn descend_from(
    p: &Problem,
    start: &[f64],
    rounds: usize,
    iters: u64,
) -> Result<(Vec<f64>, f64), FitError> {
    let mut best = (start.to_vec(), f64::INFINITY);
    let mut step = 0.08;
    for _ in 0..rounds {
        let (x, c) = descend(p, Objective::Squares, &best.0, step, iters)?;
        if p.stop.load(Ordering::Relaxed) {
            return Err(FitError::Interrupted);
        }
        let gained = best.1.is_infinite() || c < best.1 * 0.999;
        if c < best.1 {
            best = (x, c);
        }
        if !gained {
            break;
        }
        step = (step * 0.5).max(0.005);
    }
    Ok(best)
}

/// The best point after polishing `from` on the worst point's log ratio, in shrinking
/// simplexes; the squares' optimum can leave one point well outside where the rest sit.
pub fn polish(p: &Problem, from: &[f64], iters: u64) -> Result<Vec<f64>, FitError> {
    let mut best = from.to_vec();
    for step in [0.05, 0.02, 0.01] {
        let (x, _) = descend(p, Objective::Worst, &best, step, iters)?;
        if p.stop.load(Ordering::Relaxed) {
            return Err(FitError::Interrupted);
        }
        best = x;
    }
    Ok(best)
}
