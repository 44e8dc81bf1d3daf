//! The grid search autotune is measured against (what Open MPI's OTPO does): every candidate
//! threshold, each run over every size of the fine grid. It exists to check the search (tests
//! hold autotune to within one refinement step of its best at a quarter of its cost) and to
//! let a user see what the search saved (`fabbench autotune --exhaustive`).

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use bench_core::size::format_size;

use crate::error::TuneError;
use crate::grid;
use crate::measure::{Bench, Halt, Observer};
use crate::params::threshold_limits;
use crate::request::Tuning;

/// Every threshold candidate's cost at every size.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub param: String,
    pub workload: String,
    /// Candidate thresholds, as the largest message each sends eagerly (0: none).
    pub thresholds: Vec<u64>,
    /// The parameter value of each candidate (header included).
    pub values: Vec<u64>,
    /// The header the library counts in the parameter (a value sends messages up to value
    /// less this eagerly).
    pub header: u64,
    pub sizes: Vec<u64>,
    /// `costs[i][j]`: microseconds per message at `sizes[j]` under `thresholds[i]`.
    pub costs: Vec<Vec<f64>>,
    /// The candidate with the smallest geometric-mean cost relative to the best at each size.
    pub best: usize,
    pub measured_s: f64,
    pub wall_s: f64,
    pub runs: usize,
}

impl Sweep {
    /// Cost at each size under a threshold that sends messages up to `eager_max` eagerly,
    /// read from the grid (the sweep measured every protocol choice at every size).
    pub fn costs_under(&self, eager_max: u64) -> Vec<f64> {
        // Under any threshold, a size goes eager iff it is at most the threshold: the
        // candidate whose eager set is the same gives the same costs.
        let i = self
            .thresholds
            .iter()
            .rposition(|t| *t <= eager_max)
            .unwrap_or(0);
        self.costs[i].clone()
    }

    /// Each size's cost under each protocol, from the whole grid: the median over every
    /// candidate that sends the size eagerly, and over every one that does not. On a real
    /// fabric one cell is one run, and a run the machine slowed as a whole would otherwise
    /// make its candidate look bad at every size; each size was measured under every
    /// candidate, so the grid holds many runs of each protocol at it.
    pub fn protocol_costs(&self) -> (Vec<f64>, Vec<f64>) {
        let mut eager = Vec::new();
        let mut rndv = Vec::new();
        for (j, size) in self.sizes.iter().enumerate() {
            let pick = |want_eager: bool| {
                self.thresholds
                    .iter()
                    .zip(&self.costs)
                    .filter(|(t, _)| (*t >= size) == want_eager)
                    .map(|(_, c)| c[j])
                    .collect::<Vec<f64>>()
            };
            eager.push(bench_core::stats::two_sample::median(&pick(true)));
            rndv.push(bench_core::stats::two_sample::median(&pick(false)));
        }
        (eager, rndv)
    }

    /// The per-size costs under a threshold sending messages up to `eager_max` eagerly, from
    /// [`Sweep::protocol_costs`].
    pub fn robust_costs_under(&self, eager_max: u64) -> Vec<f64> {
        under(&self.sizes, &self.protocol_costs(), eager_max)
    }

    /// The candidate whose robust per-size costs have the smallest geometric mean.
    pub fn robust_best(&self) -> usize {
        // The grid's medians once, not once per candidate.
        let costs = self.protocol_costs();
        let score = |t: u64| -> f64 { under(&self.sizes, &costs, t).iter().map(|c| c.ln()).sum() };
        (0..self.thresholds.len())
            .min_by(|a, b| score(self.thresholds[*a]).total_cmp(&score(self.thresholds[*b])))
            .expect("candidates")
    }
}

/// What a chosen threshold costs against the sweep's best, size by size: each size's cost
/// under the choice over its cost under the best candidate, less one (0.05: 5 % slower), both
/// read from the grid's per-protocol medians (one cell is one run; see
/// [`Sweep::protocol_costs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Regret {
    /// The sweep's best candidate ([`Sweep::robust_best`]), an index into its thresholds.
    pub best: usize,
    pub median: f64,
    /// The 90th percentile over the sizes.
    pub p90: f64,
    pub worst: f64,
}

impl Sweep {
    /// The regret of the parameter value `chosen` (header included, as a profile writes it);
    /// 0 at every quantile when no size has a finite ratio.
    pub fn regret(&self, chosen: u64) -> Regret {
        let best = self.robust_best();
        let best_costs = self.robust_costs_under(self.thresholds[best]);
        let mut ratios: Vec<f64> = self
            .robust_costs_under(chosen.saturating_sub(self.header))
            .iter()
            .zip(&best_costs)
            .map(|(a, b)| a / b)
            .filter(|r| r.is_finite())
            .collect();
        ratios.sort_by(f64::total_cmp);
        // The nearest rank: with few sizes a quantile is one of them, not between two.
        let at = |q: f64| {
            ratios
                .get(((ratios.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(1.0)
                - 1.0
        };
        Regret {
            best,
            median: at(0.5),
            p90: at(0.9),
            worst: at(1.0),
        }
    }
}

/// Per-size costs under a threshold sending messages up to `eager_max` eagerly, from the
/// per-protocol costs; a size no candidate sent one way takes the other protocol's figure.
fn under(sizes: &[u64], (e, r): &(Vec<f64>, Vec<f64>), eager_max: u64) -> Vec<f64> {
    sizes
        .iter()
        .enumerate()
        .map(|(j, s)| {
            let (mine, other) = if *s <= eager_max {
                (e[j], r[j])
            } else {
                (r[j], e[j])
            };
            if mine.is_nan() {
                other
            } else {
                mine
            }
        })
        .collect()
}

/// Runs the exhaustive threshold sweep of `param` on `workload` over the fine grid of the
/// tuning's sizes.
pub fn threshold_sweep(
    t: &Tuning,
    param: &str,
    workload: &'static str,
    observer: &mut dyn Observer,
) -> Result<Sweep, TuneError> {
    let p =
        t.params.iter().find(|p| p.name == param).ok_or_else(|| {
            TuneError::Usage(format!("{param} is not a parameter of this tuning"))
        })?;
    let (min, max, header) = threshold_limits(&p.name, &p.kind);
    let top = t.sizes.1.min(max.saturating_sub(header));
    let sizes = grid::all_fine(t.sizes.0, top.max(t.sizes.0));
    let thresholds: Vec<u64> = std::iter::once(0).chain(sizes.iter().copied()).collect();
    let values: Vec<u64> = thresholds
        .iter()
        .map(|s| if *s == 0 { min } else { (s + header).min(max) })
        .collect();
    let stop = AtomicBool::new(false);
    let mut unbounded = t.clone();
    unbounded.budget = Duration::from_secs(u64::MAX / 4);
    let mut bench = Bench::new(&unbounded, observer, &stop);
    let mut costs = Vec::new();
    for v in &values {
        let id = bench
            .measure(
                &format!("exhaustive: {param} = {}", format_size(*v)),
                workload,
                &sizes,
                &[(param.to_string(), format_size(*v))],
            )
            .map_err(|h| match h {
                Halt::Interrupted(w) => TuneError::Interrupted(w),
                Halt::Budget => TuneError::NoBudget,
            })?;
        let m = bench.get(id);
        if let Some(why) = &m.failed {
            return Err(TuneError::SweepFailed {
                param: param.to_string(),
                value: *v,
                why: why.clone(),
            });
        }
        costs.push(
            sizes
                .iter()
                .map(|s| m.cost(*s).unwrap_or(f64::NAN))
                .collect::<Vec<_>>(),
        );
    }
    let best_at: Vec<f64> = (0..sizes.len())
        .map(|j| {
            costs
                .iter()
                .map(|c: &Vec<f64>| c[j])
                .fold(f64::INFINITY, f64::min)
        })
        .collect();
    let score = |c: &Vec<f64>| -> f64 { c.iter().zip(&best_at).map(|(x, b)| (x / b).ln()).sum() };
    let best = (0..costs.len())
        .min_by(|a, b| score(&costs[*a]).total_cmp(&score(&costs[*b])))
        .expect("candidates");
    Ok(Sweep {
        param: param.to_string(),
        workload: workload.to_string(),
        thresholds,
        values,
        header,
        sizes,
        costs,
        best,
        measured_s: bench.spent.measured_s,
        wall_s: bench.elapsed().as_secs_f64(),
        runs: bench.spent.runs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eager costs 1, 2, 10 and rendezvous 5, 6, 8 at sizes 8, 64, 512: the best threshold
    /// is 64 (eager up to 64, rendezvous above).
    fn sweep() -> Sweep {
        let sizes = vec![8, 64, 512];
        let thresholds = vec![0, 8, 64, 512];
        let (eager, rndv) = ([1.0, 2.0, 10.0], [5.0, 6.0, 8.0]);
        let costs = thresholds
            .iter()
            .map(|t| {
                sizes
                    .iter()
                    .enumerate()
                    .map(|(j, s)| if s <= t { eager[j] } else { rndv[j] })
                    .collect()
            })
            .collect();
        Sweep {
            param: "eager_limit".into(),
            workload: "osu_latency".into(),
            values: thresholds.clone(),
            thresholds,
            header: 0,
            sizes,
            costs,
            best: 2,
            measured_s: 1.0,
            wall_s: 1.0,
            runs: 4,
        }
    }

    #[test]
    fn regret_is_the_chosen_cost_over_the_best_by_size() {
        let s = sweep();
        let none = s.regret(64);
        assert_eq!(none.best, 2);
        assert_eq!((none.median, none.p90, none.worst), (0.0, 0.0, 0.0));
        // Threshold 0 sends everything by rendezvous: 5/1, 6/2, 8/8 at the three sizes.
        let r = s.regret(0);
        assert_eq!((r.median, r.p90, r.worst), (2.0, 4.0, 4.0));
        // A header counted in the value: 64 + 16 still sends up to 64 eagerly.
        let with_header = Sweep { header: 16, ..s };
        assert_eq!(with_header.regret(80).worst, 0.0);
    }
}
