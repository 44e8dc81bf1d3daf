//! Runs on a shared machine land on placements of very different speed: on the 2-core VM
//! fabbench is developed on, shared-memory latency at 8 B sits near 0.08 us in some runs and
//! near 0.28 us in others, whole runs at a time. When the two sides hold different shares of
//! such runs, their run values overlap across the modes and no test over all the runs can see a
//! change of 10 %. The placements are told apart by a gap between run values far wider than
//! any change a gate looks for ([`MODE_GAP`]); a change is then judged within the placement both
//! sides have most runs on ([`common`]), like with like.

/// Run values this far apart (a ratio) belong to different placements: 1.5 times is far more
/// than the run-to-run spread within one placement (a few percent here) and than the changes a
/// gate is for; a larger change that opens such a gap between the sides leaves no placement
/// both share, and the runs are compared whole.
pub const MODE_GAP: f64 = 1.5;

/// The fewest runs a side for [`runs`]: with 3 a side, the smallest p-value Mann-Whitney U can
/// give is 0.1, so nothing could be significant at the usual 95 %.
pub const MIN_RUNS: usize = 4;

/// The runs of each side on the placement both sides have most runs on (at least [`MIN_RUNS`]
/// each), when the run values fall into placements; None when they do not, or no placement
/// holds enough runs of both sides.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub baseline: Vec<f64>,
    pub candidate: Vec<f64>,
    /// How many placements the runs fell into.
    pub placements: usize,
}

/// See [`Placement`]; `a` and `b` are each run's value ([`crate::rule::run_value`]), positive.
pub fn common(a: &[f64], b: &[f64]) -> Option<Placement> {
    let mut all: Vec<f64> = a.iter().chain(b).copied().collect();
    all.sort_by(f64::total_cmp);
    // The placements' bounds: every gap of MODE_GAP or more between neighbouring medians.
    let cuts: Vec<f64> = all
        .windows(2)
        .filter(|w| w[1] >= w[0] * MODE_GAP)
        .map(|w| w[1])
        .collect();
    if cuts.is_empty() {
        return None;
    }
    let place = |x: f64| cuts.iter().filter(|&&c| x >= c).count();
    let placements = cuts.len() + 1;
    (0..placements)
        .map(|p| {
            let of = |side: &[f64]| -> Vec<f64> {
                side.iter().copied().filter(|&x| place(x) == p).collect()
            };
            (of(a), of(b))
        })
        .filter(|(x, y)| x.len() >= MIN_RUNS && y.len() >= MIN_RUNS)
        .max_by_key(|(x, y)| x.len().min(y.len()))
        .map(|(baseline, candidate)| Placement {
            baseline,
            candidate,
            placements,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_split_by_a_wide_gap_are_compared_within_the_shared_placement() {
        // Fast runs near 1, slow near 3.5; the baseline mostly fast, the candidate mostly slow.
        let a = [1.0, 1.01, 0.99, 1.0, 1.02, 3.5, 3.4];
        let b = [1.1, 1.11, 1.09, 1.1, 3.6, 3.5, 3.7, 3.55];
        let p = common(&a, &b).unwrap();
        assert_eq!(p.placements, 2);
        // The fast placement has 5 and 4 runs, the slow 2 and 4: the fast one is shared most.
        assert_eq!(p.baseline, [1.0, 1.01, 0.99, 1.0, 1.02]);
        assert_eq!(p.candidate, [1.1, 1.11, 1.09, 1.1]);
    }

    #[test]
    fn no_gap_or_no_shared_placement_leaves_the_runs_whole() {
        // Spread, but no gap of 1.5 times: one placement.
        let a = [1.0, 1.2, 1.4, 1.3];
        let b = [1.1, 1.25, 1.45, 1.35];
        assert_eq!(common(&a, &b), None);
        // A change so large it opens the gap between the sides: nothing shared.
        let slow: Vec<f64> = a.iter().map(|x| x * 3.0).collect();
        assert_eq!(common(&a, &slow), None);
    }
}
