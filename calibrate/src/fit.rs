//! The problem a calibration solves and its local searches: the sum of squared log ratios of
//! emulated to measured values (so 10 % too high and 10 % too low cost alike, at any
//! magnitude) over the free parameters' unit coordinates, and the card's on/off assumptions as
//! coordinates past them (at or above one half: on). Trials run one at a time for argmin's
//! Nelder-Mead, which descends from the global search's best (evolve.rs) until a restart gains
//! nothing and then polishes on the worst point's log ratio, since a calibration is judged by
//! its worst point; or as a batch over several threads, for a generation of the global search.
//! A trial the fabric cannot run costs more than any fit.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

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
    /// On/off settings (`FABRIC.NAME`) searched as the coordinates after the free parameters'.
    pub switches: &'a [String],
    /// Trials a batch runs at once.
    pub jobs: usize,
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
        for (name, &u) in self
            .switches
            .iter()
            .zip(&unit[self.free.len().min(unit.len())..])
        {
            sets.push(switch(name, u));
        }
        sets
    }

    /// The costs of a batch of unit points, in order, `jobs` trials at a time (each trial is
    /// one emulated run, which keeps about one core busy). A refused trial costs more than
    /// any fit; only a stop ends the batch early.
    pub fn costs(&self, units: &[Vec<f64>]) -> Result<Vec<f64>, FitError> {
        let sets: Vec<Vec<String>> = units.iter().map(|u| self.sets(u)).collect();
        let refused = REFUSED * self.targets.len() as f64;
        let mut out = vec![refused; units.len()];
        let next = AtomicUsize::new(0);
        let (fabric, targets, stop) = (self.fabric, self.targets, self.stop);
        std::thread::scope(|scope| {
            let (tx, rx) = mpsc::channel();
            for _ in 0..self.jobs.clamp(1, units.len().max(1)) {
                let (tx, next, sets) = (tx.clone(), &next, &sets);
                scope.spawn(move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= sets.len() || stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let values = evaluate(fabric, &sets[i], targets, stop);
                    if tx.send((i, values)).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            // The tally is the caller's thread's: trials report here as they end.
            for (i, values) in rx {
                self.progress.tried();
                if let Ok(v) = values {
                    out[i] = self.cost_of(&v);
                }
            }
        });
        if self.stop.load(Ordering::Relaxed) {
            return Err(FitError::Interrupted);
        }
        Ok(out)
    }

    /// The emulated values at a unit point, or the fabric's refusal.
    pub fn values(&self, unit: &[f64]) -> Result<Values, FitError> {
        let values = evaluate(self.fabric, &self.sets(unit), self.targets, self.stop);
        self.progress.tried();
        Ok(values?)
    }

    /// The problem's settings with its switches set as `unit` has them.
    pub fn held(&self, unit: &[f64]) -> Vec<String> {
        let mut fixed = self.fixed.to_vec();
        for (name, &u) in self.switches.iter().zip(&unit[self.free.len()..]) {
            fixed.push(switch(name, u));
        }
        fixed
    }

    /// The same problem with `fixed` held (from [`Problem::held`]) and no switch searched: its
    /// unit points are the free parameters' alone.
    pub fn holding<'b>(&'b self, fixed: &'b [String]) -> Problem<'b> {
        Problem {
            fabric: self.fabric,
            free: self.free,
            fixed,
            targets: self.targets,
            stop: self.stop,
            progress: self.progress,
            switches: &[],
            jobs: self.jobs,
        }
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

/// A switch's setting at unit coordinate `u`.
fn switch(name: &str, u: f64) -> String {
    format!("{name}={}", if u >= 0.5 { "on" } else { "off" })
}

/// The points the global search's first population starts from, before points spread over the
/// whole space: each start (`--start`'s hint, the card's values), and each scaled as a
/// machine uniformly slower or faster (a prototype's clock is the commonest reason a card is
/// off, and it moves every time together, which points spread at random rarely do), each with
/// every setting of the switches.
pub fn seeds(free: &[Free], starts: &[Vec<f64>], switches: usize) -> Vec<Vec<f64>> {
    let points = starts.iter().flat_map(|start| {
        std::iter::once(start.clone()).chain(SCALES.iter().map(|&k| scaled(free, start, k)))
    });
    points
        .flat_map(|u| {
            (0..1usize << switches).map(move |bits| {
                let mut u = u.clone();
                u.extend((0..switches).map(|i| if bits >> i & 1 == 1 { 0.75 } else { 0.25 }));
                u
            })
        })
        .collect()
}

/// The global search (evolve.rs) over the problem's free parameters and switches: a first
/// population of `population` points, the seeds first (at most half of it) and the rest spread
/// over the whole space; each generation's trials run as one batch. `each` hears every
/// generation.
pub fn global(
    p: &Problem,
    seeds: Vec<Vec<f64>>,
    population: usize,
    settings: &crate::evolve::Settings,
    each: &mut dyn FnMut(&crate::evolve::Generation),
) -> Result<(Vec<f64>, f64), FitError> {
    let dims = p.free.len() + p.switches.len();
    let population = population.max(4);
    let mut initial: Vec<Vec<f64>> = seeds.into_iter().take(population / 2).collect();
    initial.extend(crate::evolve::halton(population - initial.len(), dims));
    crate::evolve::evolve(initial, settings, |batch: &[Vec<f64>]| p.costs(batch), each)
}

/// The best unit point found by descending from `start`: each descent restarts from its best
/// with a smaller simplex until it gains less than 0.1 %.
pub fn refine(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Observer;

    struct Quiet;
    impl Observer for Quiet {
        fn stage(&self, _what: &str) {}
    }

    #[test]
    fn a_batch_in_parallel_costs_what_each_trial_does_alone_in_order() {
        let card = crate::params::card_of("rapidio").unwrap();
        let names = ["rapidio.send_overhead_ns".to_string(), "copy_mbps".into()];
        let free = crate::params::select(&card, Some(&names)).unwrap();
        let targets: Vec<Target> = [("osu_latency", 64, 600.0), ("osu_bw", 4096, 8.4)]
            .into_iter()
            .map(|(suite, size, value)| Target {
                suite: suite.into(),
                size,
                value,
            })
            .collect();
        let stop = AtomicBool::new(false);
        let progress = Progress::new(&Quiet, std::time::Instant::now());
        let switches = ["rapidio.dq_channels".to_string()];
        let p = Problem {
            fabric: "rapidio",
            free: &free,
            fixed: &[],
            targets: &targets,
            stop: &stop,
            progress: &progress,
            switches: &switches,
            jobs: 2,
        };
        let points: Vec<Vec<f64>> = [[0.2, 0.9, 0.0], [0.8, 0.1, 1.0], [0.5, 0.5, 0.7]]
            .iter()
            .map(|u| u.to_vec())
            .collect();
        let batch = p.costs(&points).unwrap();
        let alone: Vec<f64> = points
            .iter()
            .map(|u| p.cost_of(&p.values(u).unwrap()))
            .collect();
        assert_eq!(batch, alone);
        assert!(batch[0] != batch[1], "{batch:?}");
        assert_eq!(progress.done(), 6);
        // The switch is a coordinate: at or above one half, on.
        assert!(p
            .sets(&points[2])
            .contains(&"rapidio.dq_channels=on".into()));
        let held = p.held(&points[0]);
        assert_eq!(held, ["rapidio.dq_channels=off"]);
        let sets = p.holding(&held).sets(&points[0][..2]);
        assert_eq!(sets[0], held[0]);
        assert_eq!(sets.len(), 3, "{sets:?}");
    }
}
