//! The test that confirms a change point: Student's two-sample t-test (as Apache Otava uses)
//! between the entries left and right of it, guarded against single wild entries, which break
//! the t-test's assumption of normal noise. Each side's outliers by Iglewicz and Hoaglin's
//! modified z-score are left out, and then the one entry of each side farthest from the other
//! side's median, so a change never rests on one entry. See [`crate::changes`] for why.

use bench_core::stats::student_t;
use bench_core::stats::two_sample::median;

use crate::edivisive::MIN_SEGMENT;

/// The p-value that confirms a change between `left` and `right`: Student's two-sample t-test
/// with each side's outliers left out, and then the entry of each side farthest from the
/// other side's median; 1 when either side has fewer than [`MIN_SEGMENT`] entries.
pub fn p_value(left: &[f64], right: &[f64]) -> f64 {
    if left.len() < MIN_SEGMENT || right.len() < MIN_SEGMENT {
        return 1.0;
    }
    let (left, right) = (without_outliers(left), without_outliers(right));
    // Then the entry of each side farthest from the other side's median: for a genuine step,
    // the one that most favours it; for a lone spike the outlier rule cannot see (a side of
    // two), the spike itself. Medians, so that one wild entry cannot choose what is left out.
    let (lm, rm) = (median(&left), median(&right));
    let l = without_farthest(&left, rm);
    let r = without_farthest(&right, lm);
    student_t::t_test(&l, &r).map_or(1.0, |t| t.p)
}

/// `xs` without its outliers by Iglewicz and Hoaglin's modified z-score, 0.6745 |x - median|
/// / MAD > 3.5 (MAD: the median absolute deviation), for sides of at least three entries
/// with some spread. Normal noise loses about one entry in 2,000 to it; an interrupted run's
/// value, many times the noise away, is always left out.
pub fn without_outliers(xs: &[f64]) -> Vec<f64> {
    let kept = outlier_mask(xs);
    xs.iter()
        .zip(kept)
        .filter(|&(_, k)| k)
        .map(|(&x, _)| x)
        .collect()
}

/// Which entries of `xs` [`without_outliers`] keeps.
pub(crate) fn outlier_mask(xs: &[f64]) -> Vec<bool> {
    if xs.len() < 3 {
        return vec![true; xs.len()];
    }
    let m = median(xs);
    let deviations: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    let mad = median(&deviations);
    if mad == 0.0 {
        return vec![true; xs.len()];
    }
    xs.iter()
        .map(|x| 0.6745 * (x - m).abs() / mad <= 3.5)
        .collect()
}

/// `xs` less an entry farthest from `from`.
fn without_farthest(xs: &[f64], from: f64) -> Vec<f64> {
    let at = (0..xs.len())
        .max_by(|&a, &b| (xs[a] - from).abs().total_cmp(&(xs[b] - from).abs()))
        .unwrap_or(0);
    xs.iter()
        .enumerate()
        .filter(|&(i, _)| i != at)
        .map(|(_, &x)| x)
        .collect()
}

pub(crate) fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}
