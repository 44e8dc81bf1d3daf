//! Two-sample statistics: is B different from A, and by how much? Autotune's A/B of an on/off
//! setting and `fabbench compare` of two runs both ask it. On a real fabric an effect is
//! often a few percent, the same order as the run-to-run noise, so both must decide from
//! the raw per-iteration samples whether a difference is real, and how large it is, without
//! assuming the noise is normal: timing samples are skewed, with a floor set by the hardware
//! and a long right tail of interrupts, preemption and contention, so a few outliers would
//! dominate a mean and break a t-test. The Mann-Whitney U test uses only ranks, so the tail
//! cannot swamp it; the effect size is a ratio of medians, whose uncertainty has no simple
//! closed form for such distributions, hence a percentile bootstrap. Everything here is
//! deterministic for a given seed, so a tuning run and its report can be reproduced.

use std::f64::consts::{FRAC_2_SQRT_PI, SQRT_2};

/// Median (mean of the two middle values for an even count); NaN for an empty slice.
pub fn median(xs: &[f64]) -> f64 {
    median_in_place(&mut xs.to_vec())
}

/// The interquartile mean: the mean of the middle half of `xs` (a quarter of the values cut
/// from each end; all of them below 4 values); NaN for an empty slice. As robust as the median
/// to a tail of outliers, but not stepped: a timer that ticks in 10 ns moves the median of
/// 200 ns samples in steps of 5 %, and the mean of thousands of them by a fraction of that.
pub fn interquartile_mean(xs: &[f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    let cut = n / 4;
    let middle = &v[cut..n - cut];
    middle.iter().sum::<f64>() / middle.len() as f64
}

/// Two-sided p-value of the Mann-Whitney U test of `a` against `b`: normal approximation with
/// the tie correction and a continuity correction (as scipy.stats.mannwhitneyu with
/// method="asymptotic", use_continuity=True). 1.0 when either side is empty or every value is tied.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 1.0;
    }
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
    // A single tie group leaves no variance to standardise by (0/0); no evidence either way.
    if pooled[0].0 == pooled[pooled.len() - 1].0 {
        return 1.0;
    }

    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let n = n1 + n2;
    let mut rank_sum_a = 0.0;
    let mut tie_term = 0.0;
    let mut start = 0;
    while start < pooled.len() {
        let value = pooled[start].0;
        let end = start + pooled[start..].iter().take_while(|p| p.0 == value).count();
        // Tied values share the mean of the ranks start + 1 ..= end.
        let rank = (start + 1 + end) as f64 / 2.0;
        let from_a = pooled[start..end].iter().filter(|p| p.1).count();
        rank_sum_a += rank * from_a as f64;
        let t = (end - start) as f64;
        tie_term += t * t * t - t;
        start = end;
    }

    let u_a = rank_sum_a - n1 * (n1 + 1.0) / 2.0;
    let mean = n1 * n2 / 2.0;
    // Ties shrink the spread of the rank sum; without this term the test is conservative on
    // timers with a coarse resolution, where many samples share a value.
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    // The continuity correction moves U half a step toward the mean, since the discrete
    // statistic is compared with a continuous law; it never crosses the mean (p stays <= 1).
    let z = ((u_a - mean).abs() - 0.5).max(0.0) / variance.sqrt();
    // Two-sided: 2 * P(Z > z) = erfc(z / sqrt 2).
    erfc(z / SQRT_2).min(1.0)
}

/// An estimate and its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

/// median(b) / median(a) with a percentile bootstrap interval at `confidence` (0.95: the 2.5th
/// and 97.5th percentiles): `resamples` times, resample each side with replacement and take
/// the ratio of medians. Deterministic for a given seed.
///
/// Percentiles interpolate linearly between order statistics (numpy's default). When either side
/// is empty every field is NaN; with no resamples the estimate stands and low/high are NaN.
pub fn median_ratio_interval(
    a: &[f64],
    b: &[f64],
    resamples: usize,
    seed: u64,
    confidence: f64,
) -> Interval {
    let estimate = median(b) / median(a);
    if a.is_empty() || b.is_empty() || resamples == 0 {
        return Interval {
            estimate,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    let mut rng = SplitMix64(seed);
    // The buffers are reused across resamples: selection reorders them in place, and the
    // next resample overwrites every slot anyway.
    let mut resample_a = vec![0.0; a.len()];
    let mut resample_b = vec![0.0; b.len()];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        resample(a, &mut resample_a, &mut rng);
        resample(b, &mut resample_b, &mut rng);
        ratios.push(median_in_place(&mut resample_b) / median_in_place(&mut resample_a));
    }
    ratios.sort_unstable_by(f64::total_cmp);
    Interval {
        estimate,
        low: percentile_of_sorted(&ratios, (1.0 - confidence) / 2.0),
        high: percentile_of_sorted(&ratios, (1.0 + confidence) / 2.0),
    }
}

/// candidate / baseline as the Hodges-Lehmann estimate, with its distribution-free interval
/// at `confidence` (Moses's): the median of the ratio of every candidate value to every
/// baseline value, and the order statistics of those ratios that Mann-Whitney U's critical
/// value picks (normal approximation with a continuity correction, ties not corrected). It is the estimate and interval that
/// go with the U test, and it stays put when each side is a mixture: when some runs of both
/// sides landed on a slow placement and others on a fast one, the ratio of medians jumps
/// between the modes as their shares shift, while most pairwise ratios still compare like with
/// like. Values must be positive; every field is NaN when either side is empty.
pub fn hodges_lehmann_ratio(a: &[f64], b: &[f64], confidence: f64) -> Interval {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return Interval {
            estimate: f64::NAN,
            low: f64::NAN,
            high: f64::NAN,
        };
    }
    // In logarithms, so a ratio and its inverse are equally far from 1.
    let mut logs: Vec<f64> = a
        .iter()
        .flat_map(|&x| b.iter().map(move |&y| (y / x).ln()))
        .collect();
    logs.sort_unstable_by(f64::total_cmp);
    let pairs = (n * m) as f64;
    let z = normal_quantile((1.0 + confidence) / 2.0);
    // With the continuity correction, as the U test's p-value has it.
    let critical = (pairs / 2.0 - z * (pairs * (n + m + 1) as f64 / 12.0).sqrt() - 0.5).floor();
    let k = critical.max(0.0) as usize;
    Interval {
        estimate: percentile_of_sorted(&logs, 0.5).exp(),
        low: logs[k.min(logs.len() - 1)].exp(),
        high: logs[logs.len() - 1 - k.min(logs.len() - 1)].exp(),
    }
}

/// The standard normal quantile, by bisection on `erfc`: exact to double precision for the
/// confidence levels used here, and a handful of microseconds.
fn normal_quantile(p: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) {
        return f64::NAN;
    }
    // P(Z <= z) = 1 - erfc(z / sqrt 2) / 2, increasing in z.
    let cdf = |z: f64| 1.0 - erfc(z / SQRT_2) / 2.0;
    let (mut lo, mut hi) = (-40.0f64, 40.0f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// Median by selection rather than a full sort: the bootstrap takes thousands of medians.
fn median_in_place(xs: &mut [f64]) -> f64 {
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    let (lower, &mut upper_middle, _) = xs.select_nth_unstable_by(n / 2, f64::total_cmp);
    if !n.is_multiple_of(2) {
        return upper_middle;
    }
    // Selection leaves every smaller value below the pivot, so the other middle value is the
    // largest of those; n >= 2 here, so `lower` is not empty.
    let lower_middle = lower
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper_middle);
    (lower_middle + upper_middle) / 2.0
}

fn percentile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

fn resample(from: &[f64], into: &mut [f64], rng: &mut SplitMix64) {
    for slot in into.iter_mut() {
        *slot = from[rng.below(from.len())];
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): tiny, passes BigCrush, and accepts any seed,
/// zero included; a bootstrap needs no more, and the crate takes no dependency for it. Public
/// for the other bootstraps (characterise's over rounds), so each does not grow its own.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n by Lemire's multiply-shift: no division, and the bias (n / 2^64) is far
    /// below anything a bootstrap of a few thousand samples could show.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Complementary error function to near double precision, since std has none. p-values of
/// well-separated samples are tiny, so the tail must be accurate relatively, not absolutely:
/// hence a continued fraction there instead of 1 - erf.
fn erfc(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        // erf(x) = 2/sqrt(pi) e^(-x^2) sum_k (2x^2)^k x / (1 * 3 * ... * (2k + 1)): every term
        // is positive, so nothing cancels; at x < 2 erfc > 0.004 and 1 - erf loses little.
        let x2 = x * x;
        let mut term = x;
        let mut sum = x;
        let mut k = 0.0;
        while term > sum * 1e-17 {
            k += 1.0;
            term *= 2.0 * x2 / (2.0 * k + 1.0);
            sum += term;
        }
        1.0 - FRAC_2_SQRT_PI * (-x2).exp() * sum
    } else {
        // erfc(x) = e^(-x^2)/sqrt(pi) / (x + (1/2)/(x + (2/2)/(x + (3/2)/(x + ...)))), evaluated
        // from the bottom up; 100 levels reach double precision from x = 2 on.
        let mut fraction = x;
        for k in (1..=100).rev() {
            fraction = x + f64::from(k) / 2.0 / fraction;
        }
        FRAC_2_SQRT_PI / 2.0 * (-x * x).exp() / fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(actual: f64, expected: f64, relative: f64) -> bool {
        (actual - expected).abs() <= relative * expected.abs()
    }

    /// Timing-like samples: a floor plus an exponential tail (mean 2), the skew autotune sees.
    fn timings(n: usize, seed: u64) -> Vec<f64> {
        let mut rng = SplitMix64(seed);
        (0..n)
            .map(|_| {
                let uniform = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                10.0 - 2.0 * (1.0 - uniform).ln()
            })
            .collect()
    }

    #[test]
    fn median_of_odd_even_single_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[7.0, 7.0, 1.0, 9.0, 7.0, 1.0]), 7.0);
        assert_eq!(median(&[5.0]), 5.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn the_interquartile_mean_drops_a_quarter_at_each_end_and_is_not_stepped() {
        // 8 values: the two lowest and the two highest go.
        let xs = [100.0, 1.0, 5.0, 3.0, 4.0, 6.0, 2.0, 7.0];
        assert_eq!(interquartile_mean(&xs), 4.5);
        assert_eq!(interquartile_mean(&[2.0, 4.0, 9.0]), 5.0);
        assert!(interquartile_mean(&[]).is_nan());
        // Samples on a 10 ns grid, 40 % at 200 and 60 % at 210: the median is 210 (and jumps
        // to 200 when the share falls below a half); the interquartile mean lies between.
        let grid: Vec<f64> = (0..1000)
            .map(|i| if i % 5 < 2 { 200.0 } else { 210.0 })
            .collect();
        assert_eq!(median(&grid), 210.0);
        let iqm = interquartile_mean(&grid);
        assert!(iqm > 200.0 && iqm < 210.0, "{iqm}");
    }

    #[test]
    fn median_leaves_its_input_alone() {
        let xs = [5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(median(&xs), 3.0);
        assert_eq!(xs, [5.0, 1.0, 4.0, 2.0, 3.0]);
    }

    #[test]
    fn erfc_matches_reference_values() {
        // From Python's math.erfc (C libm), 17 significant digits.
        let reference = [
            (0.1, 0.8875370839817152),
            (0.5, 0.4795001221869535),
            (1.0, 0.15729920705028513),
            (2.0, 0.004677734981047265),
            (3.0, 2.2090496998585438e-05),
            (4.0, 1.541725790028002e-08),
            (6.0, 2.1519736712498916e-17),
            (10.0, 2.088487583762545e-45),
        ];
        for (x, expected) in reference {
            assert!(close(erfc(x), expected, 1e-12), "erfc({x}) = {}", erfc(x));
        }
        assert_eq!(erfc(0.0), 1.0);
        assert!(close(erfc(-1.0), 2.0 - 0.15729920705028513, 1e-14));
    }

    #[test]
    fn mann_whitney_without_ties_matches_scipy() {
        // The example of scipy.stats.mannwhitneyu's docstring (scipy/stats/_mannwhitneyu.py):
        // mannwhitneyu(males, females, method="asymptotic").pvalue == 0.11134688653314041.
        // By hand: ranks of a = 3, 5, 7, 8, 9, R_a = 32, U_a = 32 - 15 = 17, mean 10,
        // variance 5*4*10/12 = 16.667, z = (7 - 0.5)/4.0825 = 1.59217, p = erfc(z/sqrt 2).
        let males = [19.0, 22.0, 16.0, 29.0, 24.0];
        let females = [20.0, 11.0, 17.0, 12.0];
        let p = mann_whitney_p(&males, &females);
        assert!(close(p, 0.11134688653314041, 1e-12), "p = {p}");
    }

    #[test]
    fn mann_whitney_with_ties_matches_the_formula() {
        // No scipy on the machine these were written on; the references follow scipy's
        // formula (ranks averaged over ties, U of the first sample, tie term sum(t^3 - t),
        // |U - mean| reduced by 0.5, p = erfc(z / sqrt 2)), evaluated with Python's math.erfc:
        //
        // a = 1 2 2 3 3 3 4, b = 2 3 4 4 5 5 6 7 (n1 = 7, n2 = 8, n = 15).
        // Tie groups: 2 x3 (ranks 2..4, mean 3), 3 x4 (5..8, 6.5), 4 x3 (9..11, 10), 5 x2.
        // R_a = 1 + 2*3 + 3*6.5 + 10 = 36.5, U_a = 36.5 - 28 = 8.5, mean = 28.
        // Tie term = 24 + 60 + 24 + 6 = 114.
        // variance = 56/12 * (16 - 114/210) = 72.1333; z = (19.5 - 0.5)/8.49313 = 2.2371010.
        // p = 0.02527973688589393 (without the tie correction it would be 0.0278).
        let a = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0];
        let b = [2.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 7.0];
        let p = mann_whitney_p(&a, &b);
        assert!(close(p, 0.02527973688589393, 1e-12), "p = {p}");

        // a = 1 1 1 2 2, b = 1 2 2 2 3 3 (n1 = 5, n2 = 6, n = 11).
        // Tie groups: 1 x4 (ranks 1..4, mean 2.5), 2 x5 (5..9, 7), 3 x2 (10..11, 10.5).
        // R_a = 3*2.5 + 2*7 = 21.5, U_a = 21.5 - 15 = 6.5, mean = 15.
        // Tie term = 60 + 120 + 6 = 186.
        // variance = 30/12 * (12 - 186/110) = 25.7727; z = (8.5 - 0.5)/5.07669 = 1.5758316.
        // p = 0.11506462374468276.
        let a = [1.0, 1.0, 1.0, 2.0, 2.0];
        let b = [1.0, 2.0, 2.0, 2.0, 3.0, 3.0];
        let p = mann_whitney_p(&a, &b);
        assert!(close(p, 0.11506462374468276, 1e-12), "p = {p}");
    }

    #[test]
    fn mann_whitney_is_symmetric() {
        let a = timings(50, 1);
        let b = timings(60, 2);
        assert_eq!(mann_whitney_p(&a, &b), mann_whitney_p(&b, &a));
    }

    #[test]
    fn mann_whitney_of_identical_samples_is_one() {
        let a = timings(100, 3);
        assert_eq!(mann_whitney_p(&a, &a), 1.0);
        assert_eq!(mann_whitney_p(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), 1.0);
    }

    #[test]
    fn mann_whitney_of_fully_separated_samples_is_tiny() {
        // U = 400, mean 200, variance 400*41/12, z = 199.5/36.968 = 5.39649:
        // p = 6.795615128173387e-08 (Python math.erfc).
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = (100..120).map(f64::from).collect();
        let p = mann_whitney_p(&a, &b);
        assert!(p < 1e-6, "p = {p}");
        assert!(close(p, 6.795615128173387e-08, 1e-10), "p = {p}");
    }

    #[test]
    fn mann_whitney_without_evidence_is_one() {
        assert_eq!(mann_whitney_p(&[], &[1.0, 2.0]), 1.0);
        assert_eq!(mann_whitney_p(&[1.0, 2.0], &[]), 1.0);
        assert_eq!(mann_whitney_p(&[], &[]), 1.0);
        assert_eq!(mann_whitney_p(&[4.0, 4.0, 4.0], &[4.0, 4.0]), 1.0);
    }

    #[test]
    fn bootstrap_interval_brackets_the_estimate() {
        let a = timings(300, 4);
        let b = timings(300, 5);
        let interval = median_ratio_interval(&a, &b, 2000, 42, 0.95);
        assert_eq!(interval.estimate, median(&b) / median(&a));
        assert!(
            interval.low < interval.estimate && interval.estimate < interval.high,
            "{interval:?}"
        );
        // Same distribution on both sides: the interval is narrow and covers 1.
        assert!(interval.low < 1.0 && 1.0 < interval.high, "{interval:?}");
        assert!(interval.high - interval.low < 0.1, "{interval:?}");
    }

    #[test]
    fn bootstrap_is_deterministic_for_a_seed() {
        let a = timings(200, 6);
        let b = timings(200, 7);
        let first = median_ratio_interval(&a, &b, 500, 9, 0.95);
        assert_eq!(first, median_ratio_interval(&a, &b, 500, 9, 0.95));
        let other_seed = median_ratio_interval(&a, &b, 500, 10, 0.95);
        assert_eq!(other_seed.estimate, first.estimate);
        assert_ne!((other_seed.low, other_seed.high), (first.low, first.high));
    }

    #[test]
    fn bootstrap_sees_a_ten_percent_gain() {
        let a = timings(500, 8);
        let b: Vec<f64> = a.iter().map(|x| 0.9 * x).collect();
        let interval = median_ratio_interval(&a, &b, 2000, 11, 0.95);
        assert!(close(interval.estimate, 0.9, 1e-12), "{interval:?}");
        assert!(interval.high < 1.0, "{interval:?}");
        assert!(interval.low < 0.9 && 0.9 < interval.high, "{interval:?}");
    }

    #[test]
    fn bootstrap_of_empty_or_no_resamples() {
        let a = timings(10, 12);
        for interval in [
            median_ratio_interval(&[], &a, 100, 1, 0.95),
            median_ratio_interval(&a, &[], 100, 1, 0.95),
        ] {
            assert!(interval.estimate.is_nan(), "{interval:?}");
            assert!(
                interval.low.is_nan() && interval.high.is_nan(),
                "{interval:?}"
            );
        }
        let interval = median_ratio_interval(&a, &a, 0, 1, 0.95);
        assert_eq!(interval.estimate, 1.0);
        assert!(
            interval.low.is_nan() && interval.high.is_nan(),
            "{interval:?}"
        );
    }

    #[test]
    fn normal_quantiles_match_tables() {
        assert!((normal_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-9);
        assert!((normal_quantile(0.95) - 1.644_853_626_951_472_2).abs() < 1e-9);
        assert!(normal_quantile(0.5).abs() < 1e-12);
        assert!(normal_quantile(1.0).is_nan());
    }

    #[test]
    fn hodges_lehmann_of_a_pure_scale_is_exact() {
        let a = timings(40, 5);
        let b: Vec<f64> = a.iter().map(|x| x * 1.1).collect();
        let iv = hodges_lehmann_ratio(&a, &b, 0.95);
        assert!((iv.estimate - 1.1).abs() < 0.05, "{iv:?}");
        assert!(iv.low <= iv.estimate && iv.estimate <= iv.high, "{iv:?}");
        // Moses's interval for 5 against 5 at 95 %: the 3rd smallest and 3rd largest of the
        // 25 ratios (U's critical value is 2).
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [10.0, 20.0, 30.0, 40.0, 50.0];
        let iv = hodges_lehmann_ratio(&a, &b, 0.95);
        let mut ratios: Vec<f64> = a
            .iter()
            .flat_map(|x| b.iter().map(move |y| y / x))
            .collect();
        ratios.sort_by(f64::total_cmp);
        assert!((iv.low - ratios[2]).abs() < 1e-12, "{iv:?} {ratios:?}");
        assert!((iv.high - ratios[22]).abs() < 1e-12, "{iv:?}");
        assert!((iv.estimate - ratios[12]).abs() < 1e-12, "{iv:?}");
    }

    #[test]
    fn hodges_lehmann_holds_still_when_both_sides_mix_two_modes() {
        // 30 runs a side, some on a placement 3.5 times slower; the candidate 10 % slower in
        // both modes, with a different share of slow runs.
        let side = |slow: usize, scale: f64| -> Vec<f64> {
            (0..30)
                .map(|i| {
                    let jitter = 1.0 + 0.02 * ((i * 7) % 5) as f64 / 4.0;
                    let mode = if i < slow { 3.5 } else { 1.0 };
                    160.0 * mode * jitter * scale
                })
                .collect()
        };
        let (a, b) = (side(14, 1.0), side(16, 1.1));
        let iv = hodges_lehmann_ratio(&a, &b, 0.95);
        assert!(iv.low > 1.05 && iv.high < 1.2, "{iv:?}");
        // The ratio of medians, by contrast, lands between the modes.
        let bootstrap = median_ratio_interval(&a, &b, 1000, 1, 0.95);
        assert!(bootstrap.high > 2.0, "{bootstrap:?}");
    }

    #[test]
    fn hodges_lehmann_of_an_empty_side_is_nan() {
        assert!(hodges_lehmann_ratio(&[], &[1.0], 0.95).estimate.is_nan());
        assert!(hodges_lehmann_ratio(&[1.0], &[], 0.95).low.is_nan());
    }
}
