//! Whether a ratio against the reference is better or worse, by the metric's own direction
//! (bench_core's `Metric::better`): a ratio below 1 is better for a time (latency, seconds) and
//! worse for a rate (bandwidth, Mop/s). A ratio that prints as 1.000 is the same: the page
//! does not mark a difference it does not show. This says nothing of noise: with one run a
//! side there is no interval, and the page says so beside the counts.

use bench_core::measure::Better;

use crate::export::ratio_text;

/// How a cell compares with the reference's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Better,
    Worse,
    Same,
}

impl Mark {
    /// The sign shown before the ratio, so the mark does not rest on colour alone.
    pub fn sign(self) -> &'static str {
        match self {
            Mark::Better => "▲",
            Mark::Worse => "▼",
            Mark::Same => "=",
        }
    }

    /// The CSS class (and the word) of the mark.
    pub fn word(self) -> &'static str {
        match self {
            Mark::Better => "better",
            Mark::Worse => "worse",
            Mark::Same => "same",
        }
    }
}

/// The mark of `ratio` (a column's value over the reference's) for a metric where `better`.
pub fn mark(ratio: f64, better: Better) -> Mark {
    if ratio_text(ratio) == ratio_text(1.0) {
        return Mark::Same;
    }
    match (ratio < 1.0, better) {
        (true, Better::Lower) | (false, Better::Higher) => Mark::Better,
        _ => Mark::Worse,
    }
}

/// How many of `ratios` (the missing left out) are better, worse and the same.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub better: usize,
    pub worse: usize,
    pub same: usize,
}

impl Tally {
    pub fn of(ratios: impl Iterator<Item = Option<f64>>, better: Better) -> Tally {
        let mut t = Tally::default();
        for r in ratios.flatten() {
            match mark(r, better) {
                Mark::Better => t.better += 1,
                Mark::Worse => t.worse += 1,
                Mark::Same => t.same += 1,
            }
        }
        t
    }

    pub fn total(&self) -> usize {
        self.better + self.worse + self.same
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_direction_flips_between_times_and_rates() {
        // Half the latency is better; half the bandwidth is worse.
        assert_eq!(mark(0.5, Better::Lower), Mark::Better);
        assert_eq!(mark(0.5, Better::Higher), Mark::Worse);
        assert_eq!(mark(2.0, Better::Lower), Mark::Worse);
        assert_eq!(mark(2.0, Better::Higher), Mark::Better);
    }

    #[test]
    fn a_ratio_that_prints_as_one_is_the_same() {
        assert_eq!(mark(1.0004, Better::Lower), Mark::Same);
        assert_eq!(mark(0.9996, Better::Higher), Mark::Same);
        assert_eq!(mark(1.0006, Better::Lower), Mark::Worse);
        assert_eq!(mark(0.9994, Better::Higher), Mark::Worse);
    }

    #[test]
    fn a_tally_counts_the_present_ratios() {
        let t = Tally::of(
            [Some(0.5), None, Some(2.0), Some(3.0), Some(1.0)].into_iter(),
            Better::Higher,
        );
        assert_eq!(
            t,
            Tally {
                better: 2,
                worse: 1,
                same: 1
            }
        );
        assert_eq!(t.total(), 4);
        assert_eq!(Mark::Better.sign(), "▲");
        assert_ne!(Mark::Better.sign(), Mark::Worse.sign());
    }
}
