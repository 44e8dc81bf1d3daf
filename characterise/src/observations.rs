//! What characterise measured: for each pattern and message size, the time per message in
//! every round. The patterns are the `loggp` suite's; this is the fit's view of them, kept
//! apart from how they were measured so the fit can be tested on numbers written down by hand.
//!
//! A size's time is the median of its rounds: a round that a busy host disturbed moves a mean
//! but not a median of three. The rounds themselves are kept, because their spread is what
//! a protocol switch must stand out from, and what the fit's intervals are bootstrapped from.

use std::collections::BTreeMap;

use bench_core::stats::two_sample::median;
use serde::Serialize;

/// The measured patterns: the `loggp` suite's own.
pub use suites::loggp::Pattern;

/// Times per message in nanoseconds, by pattern and size, one per round.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Observations {
    /// Messages per acknowledgement in the stream pattern.
    pub window: u64,
    times: BTreeMap<Pattern, BTreeMap<u64, Vec<f64>>>,
}

impl Observations {
    pub fn new(window: u64) -> Observations {
        Observations {
            window,
            times: BTreeMap::new(),
        }
    }

    /// Records a time as a size's only round; a size measured again replaces its rounds.
    pub fn insert(&mut self, pattern: Pattern, size: u64, ns: f64) {
        self.times
            .entry(pattern)
            .or_default()
            .insert(size, vec![ns]);
    }

    /// Adds a round's time to the size's earlier rounds.
    pub fn add_round(&mut self, pattern: Pattern, size: u64, ns: f64) {
        self.times
            .entry(pattern)
            .or_default()
            .entry(size)
            .or_default()
            .push(ns);
    }

    /// Every round of `other` added to this one's.
    pub fn merge(&mut self, other: &Observations) {
        for (&p, sizes) in &other.times {
            for (&s, rounds) in sizes {
                for &ns in rounds {
                    self.add_round(p, s, ns);
                }
            }
        }
    }

    /// The median of the size's rounds.
    pub fn get(&self, pattern: Pattern, size: u64) -> Option<f64> {
        self.rounds(pattern, size).map(median)
    }

    /// Every round's time at a size, in the order measured.
    pub fn rounds(&self, pattern: Pattern, size: u64) -> Option<&[f64]> {
        self.times
            .get(&pattern)?
            .get(&size)
            .filter(|r| !r.is_empty())
            .map(|r| r.as_slice())
    }

    /// The most rounds any size has.
    pub fn max_rounds(&self) -> usize {
        self.times
            .values()
            .flat_map(|m| m.values().map(Vec::len))
            .max()
            .unwrap_or(0)
    }

    /// (size, median ns) ascending in size.
    pub fn series(&self, pattern: Pattern) -> Vec<(u64, f64)> {
        self.times
            .get(&pattern)
            .map(|m| {
                m.iter()
                    .filter(|(_, r)| !r.is_empty())
                    .map(|(&s, r)| (s, median(r)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Sizes every pattern was measured at, ascending.
    pub fn complete_sizes(&self) -> Vec<u64> {
        let mut sizes: Vec<u64> = self.series(Pattern::Pingpong).iter().map(|p| p.0).collect();
        sizes.retain(|&s| Pattern::ALL.iter().all(|&p| self.get(p, s).is_some()));
        sizes
    }

    /// A bootstrap replicate: every size's rounds drawn again, as many, with replacement, by
    /// `draw(n)` (uniform in 0..n).
    pub fn resample(&self, draw: &mut dyn FnMut(usize) -> usize) -> Observations {
        let mut out = Observations::new(self.window);
        for (&p, sizes) in &self.times {
            for (&s, rounds) in sizes {
                let again: Vec<f64> = (0..rounds.len())
                    .map(|_| rounds[draw(rounds.len())])
                    .collect();
                out.times.entry(p).or_default().insert(s, again);
            }
        }
        out
    }
}

/// The median of values and their interquartile range (quartiles interpolated: half the range
/// of three values), 0 and 0 with none. Not the whole range: one round in another of the
/// host's modes (shm's placement here) would widen that past every protocol's step.
pub fn median_and_iqr(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    v.sort_by(f64::total_cmp);
    (quantile(&v, 0.5), quantile(&v, 0.75) - quantile(&v, 0.25))
}

/// The `q` quantile of sorted values, interpolated between neighbours.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    let at = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_is_the_median_of_its_rounds_and_keeps_their_spread() {
        let spread =
            |o: &Observations| median_and_iqr(o.rounds(Pattern::Pingpong, 8).unwrap().to_vec()).1;
        let mut obs = Observations::new(64);
        for ns in [100.0, 400.0, 110.0] {
            obs.add_round(Pattern::Pingpong, 8, ns);
        }
        assert_eq!(obs.get(Pattern::Pingpong, 8), Some(110.0));
        assert_eq!(obs.series(Pattern::Pingpong), vec![(8, 110.0)]);
        // Quartiles 105 and 255: half the range with three rounds.
        assert_eq!(spread(&obs), 150.0);
        assert_eq!(obs.max_rounds(), 3);
        // Five rounds, one in another mode: the spread is the other four's.
        let mut five = Observations::new(64);
        for ns in [100.0, 101.0, 900.0, 102.0, 103.0] {
            five.add_round(Pattern::Pingpong, 8, ns);
        }
        assert_eq!(spread(&five), 2.0);
        obs.insert(Pattern::Pingpong, 8, 120.0);
        assert_eq!(obs.rounds(Pattern::Pingpong, 8), Some(&[120.0][..]));
        assert_eq!(spread(&obs), 0.0);
        let mut more = Observations::new(64);
        more.add_round(Pattern::Pingpong, 8, 130.0);
        obs.merge(&more);
        assert_eq!(obs.rounds(Pattern::Pingpong, 8), Some(&[120.0, 130.0][..]));
    }

    #[test]
    fn a_resample_draws_only_the_rounds_measured() {
        let mut obs = Observations::new(64);
        for ns in [1.0, 2.0, 3.0] {
            obs.add_round(Pattern::Stream, 4, ns);
        }
        let mut k = 0;
        let again = obs.resample(&mut |n| {
            k += 1;
            (k * 2) % n
        });
        let r = again.rounds(Pattern::Stream, 4).unwrap();
        assert_eq!(r.len(), 3);
        assert!(r.iter().all(|v| [1.0, 2.0, 3.0].contains(v)), "{r:?}");
        assert_eq!(r, &[3.0, 2.0, 1.0]);
    }
}
