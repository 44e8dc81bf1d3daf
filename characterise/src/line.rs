//! Straight lines fitted by least squares, with the standard errors of their intercept and
//! slope: every LogGP parameter is the intercept or slope of such a line (time against message
//! size over one protocol segment), or arithmetic on several, and its confidence interval comes
//! from these errors.

use bench_core::stats::student_t;
use bench_core::stats::two_sample::median;

/// `y = intercept + slope * x` over a set of points, with what the points say about its
/// precision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    pub intercept: f64,
    pub slope: f64,
    /// Standard errors; None with two points or fewer (an exact line has no residual to judge
    /// it by) or all points at one x (no slope at all).
    pub se_intercept: Option<f64>,
    pub se_slope: Option<f64>,
    pub points: usize,
}

impl Line {
    pub fn at(&self, x: f64) -> f64 {
        self.intercept + self.slope * x
    }

    /// A level line through the mean, for one point or points at a single x.
    fn level(ys: &[f64]) -> Line {
        let n = ys.len();
        let mean = ys.iter().sum::<f64>() / n as f64;
        let se = (n > 1).then(|| {
            let var = ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            (var / n as f64).sqrt()
        });
        Line {
            intercept: mean,
            slope: 0.0,
            se_intercept: se,
            se_slope: None,
            points: n,
        }
    }
}

/// The least-squares line through `points` (x, y); None when there are none. x is a message
/// size in bytes, y a time in nanoseconds: the sums are centred so sizes of megabytes beside
/// times of nanoseconds lose no precision.
pub fn fit(points: &[(f64, f64)]) -> Option<Line> {
    let n = points.len();
    if n == 0 {
        return None;
    }
    let ys: Vec<f64> = points.iter().map(|p| p.1).collect();
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx <= 0.0 {
        return Some(Line::level(&ys));
    }
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let (se_intercept, se_slope) = if n > 2 {
        let sse: f64 = points
            .iter()
            .map(|p| (p.1 - intercept - slope * p.0).powi(2))
            .sum();
        let s2 = sse / (n - 2) as f64;
        let sumx2: f64 = points.iter().map(|p| p.0 * p.0).sum();
        (
            Some((s2 * sumx2 / (n as f64 * sxx)).sqrt()),
            Some((s2 / sxx).sqrt()),
        )
    } else {
        (None, None)
    };
    Some(Line {
        intercept,
        slope,
        se_intercept,
        se_slope,
        points: n,
    })
}

/// The line through `points` (x, y > 0) that least-squares their *relative* misses, each point
/// weighted by 1/y^2: over sizes from 1 B to megabytes a plain fit is ruled by the large
/// sizes' nanoseconds, and its intercept, the small sizes' whole time, can miss them twice
/// over. Points at y <= 0 weigh as the smallest positive y does. No standard errors (the fit's
/// intervals come from its bootstrap); None when there are no points.
pub fn fit_relative(points: &[(f64, f64)]) -> Option<Line> {
    if points.is_empty() {
        return None;
    }
    let floor = points
        .iter()
        .map(|p| p.1)
        .filter(|&y| y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let floor = if floor.is_finite() { floor } else { 1.0 };
    let w: Vec<f64> = points
        .iter()
        .map(|p| 1.0 / p.1.max(floor).powi(2))
        .collect();
    let sw: f64 = w.iter().sum();
    let mx = points.iter().zip(&w).map(|(p, w)| w * p.0).sum::<f64>() / sw;
    let my = points.iter().zip(&w).map(|(p, w)| w * p.1).sum::<f64>() / sw;
    let sxx: f64 = points
        .iter()
        .zip(&w)
        .map(|(p, w)| w * (p.0 - mx).powi(2))
        .sum();
    let slope = if sxx > 0.0 {
        points
            .iter()
            .zip(&w)
            .map(|(p, w)| w * (p.0 - mx) * (p.1 - my))
            .sum::<f64>()
            / sxx
    } else {
        0.0
    };
    Some(Line {
        intercept: my - slope * mx,
        slope,
        se_intercept: None,
        se_slope: None,
        points: points.len(),
    })
}

/// The mean of `values` weighted by 1/`scale`^2: the value that misses each in proportion to
/// its scale (a size's whole time) least. Scales at or below 0 weigh as the smallest positive.
pub fn mean_relative(values: &[f64], scales: &[f64]) -> f64 {
    let floor = scales
        .iter()
        .copied()
        .filter(|&y| y > 0.0)
        .fold(f64::INFINITY, f64::min);
    let floor = if floor.is_finite() { floor } else { 1.0 };
    let (mut num, mut den) = (0.0, 0.0);
    for (v, s) in values.iter().zip(scales) {
        let w = 1.0 / s.max(floor).powi(2);
        num += w * v;
        den += w;
    }
    num / den
}

/// The Theil-Sen slope through `points`: the median of the slopes between every pair of
/// distinct x. A spike at one size moves a least-squares slope but not this one; None with
/// fewer than two distinct x.
pub fn robust_slope(points: &[(f64, f64)]) -> Option<f64> {
    let mut slopes = Vec::new();
    for (i, a) in points.iter().enumerate() {
        for b in &points[i + 1..] {
            if b.0 != a.0 {
                slopes.push((b.1 - a.1) / (b.0 - a.0));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    Some(median(&slopes))
}

/// The two-sided `confidence` quantile of Student's t with `df` degrees of freedom (the
/// multiplier of a standard error for that interval), by bisection on the distribution
/// function: a handful of calls per fit, so speed does not matter and bisection cannot fail.
pub fn t_quantile(confidence: f64, df: f64) -> f64 {
    let target = 0.5 + confidence / 2.0;
    let (mut lo, mut hi) = (0.0_f64, 1.0e3_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if student_t::cdf(mid, df) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_points_give_their_line_and_no_spread() {
        let pts: Vec<(f64, f64)> = [0.0, 1024.0, 4096.0, 1_048_576.0]
            .iter()
            .map(|&x| (x, 700.0 + 0.08 * x))
            .collect();
        let l = fit(&pts).unwrap();
        assert!((l.intercept - 700.0).abs() < 1e-6, "{l:?}");
        assert!((l.slope - 0.08).abs() < 1e-12, "{l:?}");
        assert!(l.se_slope.unwrap() < 1e-9);
    }

    #[test]
    fn standard_errors_match_a_hand_computed_case() {
        // x = 0,1,2,3; y = 1,3,2,5: slope 1.1, intercept 1.1, SSE 2.7 so s^2 = 1.35, Sxx = 5,
        // sum of x^2 = 14.
        let l = fit(&[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0), (3.0, 5.0)]).unwrap();
        assert!((l.slope - 1.1).abs() < 1e-12);
        assert!((l.intercept - 1.1).abs() < 1e-12);
        let s2: f64 = 1.35;
        assert!((l.se_slope.unwrap() - (s2 / 5.0).sqrt()).abs() < 1e-12);
        assert!((l.se_intercept.unwrap() - (s2 * 14.0 / 20.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn one_x_is_a_level_line() {
        let l = fit(&[(8.0, 1.0), (8.0, 3.0)]).unwrap();
        assert_eq!((l.intercept, l.slope), (2.0, 0.0));
        assert!(fit(&[]).is_none());
    }

    #[test]
    fn t_quantiles_match_tables() {
        assert!((t_quantile(0.95, 1.0) - 12.706).abs() < 1e-3);
        assert!((t_quantile(0.95, 5.0) - 2.571).abs() < 1e-3);
        assert!((t_quantile(0.95, 1000.0) - 1.962).abs() < 1e-3);
    }

    #[test]
    fn a_relative_fit_keeps_the_small_sizes_intercept() {
        // 100 ns + 0.05 ns/B, with the largest size 20 % high: a plain fit's intercept goes
        // far off (even negative), the relative fit's stays near 100.
        let mut pts: Vec<(f64, f64)> = (0..=22)
            .map(|k| {
                let x = (1u64 << k) as f64;
                (x, 100.0 + 0.05 * x)
            })
            .collect();
        let exact = fit_relative(&pts).unwrap();
        assert!((exact.intercept - 100.0).abs() < 1e-6, "{exact:?}");
        assert!((exact.slope - 0.05).abs() < 1e-12, "{exact:?}");
        pts.last_mut().unwrap().1 *= 1.2;
        let plain = fit(&pts).unwrap();
        let rel = fit_relative(&pts).unwrap();
        assert!((plain.intercept - 100.0).abs() > 1000.0, "{plain:?}");
        assert!((rel.intercept - 100.0).abs() < 5.0, "{rel:?}");
        assert_eq!(mean_relative(&[10.0, 1000.0], &[100.0, 1e6]), {
            let (w1, w2) = (1e-4, 1e-12);
            (w1 * 10.0 + w2 * 1000.0) / (w1 + w2)
        });
    }

    #[test]
    fn the_robust_slope_ignores_one_spike() {
        let mut points: Vec<(f64, f64)> =
            (0..10).map(|i| (i as f64, 5.0 + 2.0 * i as f64)).collect();
        assert_eq!(robust_slope(&points), Some(2.0));
        points[9].1 *= 3.0;
        assert_eq!(robust_slope(&points), Some(2.0));
        assert!(fit(&points).unwrap().slope > 2.5);
        assert_eq!(robust_slope(&[(1.0, 2.0), (1.0, 3.0)]), None);
    }
}
