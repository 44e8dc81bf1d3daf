//! The global search: differential evolution over the unit cube, in JADE's form (Zhang and
//! Sanderson, IEEE TEC 2009: "current-to-pbest/1" with binomial crossover, and a scale factor
//! F and crossover rate CR that each adapt to what succeeded). A calibration's landscape has
//! valleys a long way apart (a slow copy stands in for a slow queue at one size and not at
//! another), and the card's own values may sit orders of magnitude from the right one: a
//! population spread over the whole space, pulled towards its best few, finds the valley a
//! descent from the card does not. A generation's trials are independent, so the caller runs
//! them as a batch (in parallel). The generator is seeded: a calibration repeats exactly.

/// How a search runs.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// At most this many generations.
    pub generations: usize,
    /// Stop once the best cost has gained less than 0.1 % (or 1e-6) over this many
    /// generations.
    pub stall: usize,
    pub seed: u64,
}

/// The share of the population a member moves towards (JADE's p).
const PBEST: f64 = 0.2;
/// How fast F's and CR's means follow the values that succeeded (JADE's c).
const LEARN: f64 = 0.1;

/// What one generation ended with, for progress.
pub struct Generation {
    pub number: usize,
    pub best: f64,
}

/// Minimises `costs` (a batch of unit points -> their costs, in order) from `initial` (the
/// first population: it sets the population's size, at least 4); returns the best point and
/// its cost. `each` hears every generation. An error from `costs` ends the search.
pub fn evolve<E, C>(
    initial: Vec<Vec<f64>>,
    s: &Settings,
    mut costs: C,
    each: &mut dyn FnMut(&Generation),
) -> Result<(Vec<f64>, f64), E>
where
    C: FnMut(&[Vec<f64>]) -> Result<Vec<f64>, E>,
{
    let n = initial.len();
    assert!(n >= 4, "differential evolution needs at least 4 members");
    let dims = initial[0].len();
    let mut rng = fastrand::Rng::with_seed(s.seed);
    let mut pop = initial;
    let mut cost = costs(&pop)?;
    let (mut mean_f, mut mean_cr) = (0.5, 0.5);
    let best_of = |cost: &[f64]| {
        (0..cost.len())
            .min_by(|&a, &b| cost[a].total_cmp(&cost[b]))
            .expect("a population")
    };
    let mut history = vec![cost[best_of(&cost)]];
    for number in 1..=s.generations {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| cost[a].total_cmp(&cost[b]));
        let top = ((n as f64 * PBEST).ceil() as usize).max(2);
        let mut trials = Vec::with_capacity(n);
        let mut drawn = Vec::with_capacity(n);
        for i in 0..n {
            let f = cauchy(&mut rng, mean_f, 0.1);
            let cr = (mean_cr + 0.1 * normal(&mut rng)).clamp(0.0, 1.0);
            let pbest = order[rng.usize(..top)];
            let r1 = pick(&mut rng, n, &[i]);
            let r2 = pick(&mut rng, n, &[i, r1]);
            let forced = rng.usize(..dims);
            let x = &pop[i];
            let trial: Vec<f64> = (0..dims)
                .map(|d| {
                    if d != forced && rng.f64() >= cr {
                        return x[d];
                    }
                    let v = x[d] + f * (pop[pbest][d] - x[d]) + f * (pop[r1][d] - pop[r2][d]);
                    // Past a bound: halfway from the parent to it, so the edge keeps no pile.
                    if v < 0.0 {
                        x[d] / 2.0
                    } else if v > 1.0 {
                        (x[d] + 1.0) / 2.0
                    } else {
                        v
                    }
                })
                .collect();
            trials.push(trial);
            drawn.push((f, cr));
        }
        let tried = costs(&trials)?;
        let (mut good_f, mut good_cr) = (Vec::new(), Vec::new());
        for (i, (t, c)) in trials.into_iter().zip(tried).enumerate() {
            if c <= cost[i] {
                if c < cost[i] {
                    good_f.push(drawn[i].0);
                    good_cr.push(drawn[i].1);
                }
                pop[i] = t;
                cost[i] = c;
            }
        }
        if !good_f.is_empty() {
            let lehmer = good_f.iter().map(|f| f * f).sum::<f64>() / good_f.iter().sum::<f64>();
            mean_f = (1.0 - LEARN) * mean_f + LEARN * lehmer;
            let mean = good_cr.iter().sum::<f64>() / good_cr.len() as f64;
            mean_cr = (1.0 - LEARN) * mean_cr + LEARN * mean;
        }
        let best = cost[best_of(&cost)];
        history.push(best);
        each(&Generation { number, best });
        if history.len() > s.stall {
            let then = history[history.len() - 1 - s.stall];
            // A gain below 1e-6 is nothing either: near a perfect fit, where every gain is
            // a large share of almost nothing.
            if best >= then * 0.999 || then - best < 1e-6 {
                break;
            }
        }
    }
    let b = best_of(&cost);
    Ok((pop.swap_remove(b), cost[b]))
}

/// A member other than those in `not`.
fn pick(rng: &mut fastrand::Rng, n: usize, not: &[usize]) -> usize {
    loop {
        let r = rng.usize(..n);
        if !not.contains(&r) {
            return r;
        }
    }
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut fastrand::Rng) -> f64 {
    let u = rng.f64().max(f64::MIN_POSITIVE);
    (-2.0_f64 * u.ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos()
}

/// F from a Cauchy distribution around `mean`, redrawn while not positive, capped at 1.
fn cauchy(rng: &mut fastrand::Rng, mean: f64, scale: f64) -> f64 {
    loop {
        let f = mean + scale * (std::f64::consts::PI * (rng.f64() - 0.5)).tan();
        if f > 0.0 {
            return f.min(1.0);
        }
    }
}

/// Points spread evenly over the unit cube (a Halton sequence, bases the first primes), for
/// a first population or a first look: deterministic, so a calibration repeats exactly.
pub fn halton(count: usize, dims: usize) -> Vec<Vec<f64>> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Rastrigin's function on [-5.12, 5.12]^d mapped from the unit cube: a grid of local
    /// minima around one global minimum of 0, moved off the centre to (1.5, ..) so the start
    /// is no help. A descent from any Halton point ends in a local valley.
    fn rastrigin(u: &[f64]) -> f64 {
        u.iter()
            .map(|&x| {
                let z = (x - 0.5) * 10.24 - 1.5;
                z * z - 10.0 * (std::f64::consts::TAU * z).cos() + 10.0
            })
            .sum()
    }

    #[test]
    fn finds_the_global_minimum_among_many_valleys() {
        let dims = 5;
        let s = Settings {
            generations: 400,
            stall: 60,
            seed: 7,
        };
        let initial = halton(40, dims);
        let mut trials = 0;
        let mut generations = 0;
        let (best, cost) = evolve::<(), _>(
            initial.clone(),
            &s,
            |batch: &[Vec<f64>]| {
                trials += batch.len();
                Ok(batch.iter().map(|u| rastrigin(u)).collect())
            },
            &mut |g| generations = g.number,
        )
        .unwrap();
        let first = initial
            .iter()
            .map(|u| rastrigin(u))
            .fold(f64::MAX, f64::min);
        assert!(first > 5.0, "the start is far from the answer: {first}");
        assert!(cost < 1e-3, "cost {cost} at {best:?} after {trials} trials");
        for x in &best {
            assert!(((x - 0.5) * 10.24 - 1.5).abs() < 0.01, "{best:?}");
        }
        assert_eq!(trials, 40 * (generations + 1));
        assert!(generations < 400, "stopped once it stalled");
    }

    #[test]
    fn an_error_ends_the_search() {
        let s = Settings {
            generations: 50,
            stall: 10,
            seed: 1,
        };
        let mut calls = 0;
        let r = evolve(
            halton(8, 2),
            &s,
            |b: &[Vec<f64>]| {
                calls += 1;
                if calls == 3 {
                    Err("stop")
                } else {
                    Ok(b.iter().map(|u| u[0] + u[1]).collect())
                }
            },
            &mut |_| {},
        );
        assert_eq!((r.unwrap_err(), calls), ("stop", 3));
    }
}
