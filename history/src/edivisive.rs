//! E-divisive means (Matteson and James, "A Nonparametric Approach for Multiple Change Point
//! Analysis of Multivariate Data", 2014), which proposes where a series may change: for a
//! stretch `x[s..e)` it finds the split `tau` and end `kappa` that make `x[s..tau)` and
//! `x[tau..kappa)` most unlike by the energy statistic
//!
//! ```text
//! Q(tau, kappa) = n m / (n + m) * ( 2/(n m) sum |X_i - Y_j| - 2/(n(n-1)) sum_{i<k} |X_i - X_k|
//!                                                           - 2/(m(m-1)) sum_{j<l} |Y_j - Y_l| )
//! ```
//!
//! with `n = tau - s`, `m = kappa - tau` (the exponent alpha = 1). Letting `kappa` end before
//! `e` is what lets a short-lived level be seen inside a longer stretch. Each side must hold at
//! least [`MIN_SEGMENT`] entries (ecp's `min.size`), so a single outlying entry is never a
//! side of its own. Every sum is read off a two-dimensional prefix sum of the distances, so
//! one stretch costs O(w^2) for w entries. This module only proposes; [`crate::changes`]
//! decides.

/// The fewest entries each side of a proposed split holds.
pub const MIN_SEGMENT: usize = 2;

/// Pairwise distances of a window, summed over rectangles in O(1).
pub struct Distances {
    /// `sums[a * (w + 1) + b]` = sum of |x_i - x_j| over i < a, j < b.
    sums: Vec<f64>,
    w: usize,
}

impl Distances {
    pub fn of(xs: &[f64]) -> Distances {
        let w = xs.len();
        let stride = w + 1;
        let mut sums = vec![0.0; stride * stride];
        for i in 0..w {
            let mut row = 0.0;
            for j in 0..w {
                row += (xs[i] - xs[j]).abs();
                sums[(i + 1) * stride + j + 1] = sums[i * stride + j + 1] + row;
            }
        }
        Distances { sums, w }
    }

    /// Sum of |x_i - x_j| for i in a..b, j in c..d.
    fn rect(&self, a: usize, b: usize, c: usize, d: usize) -> f64 {
        let s = |i: usize, j: usize| self.sums[i * (self.w + 1) + j];
        s(b, d) - s(a, d) - s(b, c) + s(a, c)
    }

    /// Sum over the unordered pairs inside a..b.
    fn within(&self, a: usize, b: usize) -> f64 {
        self.rect(a, b, a, b) / 2.0
    }

    /// Q for X = a..tau and Y = tau..kappa.
    pub fn q(&self, a: usize, tau: usize, kappa: usize) -> f64 {
        let (n, m) = ((tau - a) as f64, (kappa - tau) as f64);
        let between = 2.0 * self.rect(a, tau, tau, kappa) / (n * m);
        let left = 2.0 * self.within(a, tau) / (n * (n - 1.0));
        let right = 2.0 * self.within(tau, kappa) / (m * (m - 1.0));
        n * m / (n + m) * (between - left - right)
    }

    /// The split of `a..b` with the largest Q over every end, as (tau, Q); None when the
    /// stretch is too short to split.
    pub fn best_split(&self, a: usize, b: usize) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for tau in a + MIN_SEGMENT..=b.saturating_sub(MIN_SEGMENT) {
            for kappa in tau + MIN_SEGMENT..=b {
                let q = self.q(a, tau, kappa);
                if best.is_none_or(|(_, bq)| q > bq) {
                    best = Some((tau, q));
                }
            }
        }
        best
    }
}

/// Splits of `xs` found by E-divisive's hierarchical search, each confirmed by `confirm`
/// (given the stretches left and right of the split, between the neighbouring splits found so
/// far, it says whether to keep it): the best split over every stretch is proposed, and the
/// search stops at the first proposal `confirm` refuses, as Matteson and James stop at the
/// first insignificant one. Ascending indices into `xs`.
pub fn divide(xs: &[f64], confirm: &dyn Fn(&[f64], &[f64]) -> bool) -> Vec<usize> {
    let d = Distances::of(xs);
    let mut cuts: Vec<usize> = Vec::new();
    loop {
        let bounds: Vec<usize> = std::iter::once(0)
            .chain(cuts.iter().copied())
            .chain(std::iter::once(xs.len()))
            .collect();
        let best = bounds
            .windows(2)
            .filter_map(|w| {
                d.best_split(w[0], w[1])
                    .map(|(tau, q)| (w[0], tau, w[1], q))
            })
            .max_by(|x, y| x.3.total_cmp(&y.3));
        let Some((a, tau, b, _)) = best else {
            break;
        };
        if !confirm(&xs[a..tau], &xs[tau..b]) {
            break;
        }
        cuts.push(tau);
        cuts.sort_unstable();
    }
    cuts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q straight from its definition, to hold the prefix sums to.
    fn q_by_definition(xs: &[f64], a: usize, tau: usize, kappa: usize) -> f64 {
        let (x, y) = (&xs[a..tau], &xs[tau..kappa]);
        let (n, m) = (x.len() as f64, y.len() as f64);
        let mut between = 0.0;
        for xi in x {
            for yj in y {
                between += (xi - yj).abs();
            }
        }
        let pairs = |v: &[f64]| {
            let mut s = 0.0;
            for i in 0..v.len() {
                for k in i + 1..v.len() {
                    s += (v[i] - v[k]).abs();
                }
            }
            s
        };
        let e = 2.0 / (n * m) * between
            - 2.0 / (n * (n - 1.0)) * pairs(x)
            - 2.0 / (m * (m - 1.0)) * pairs(y);
        n * m / (n + m) * e
    }

    #[test]
    fn prefix_sums_give_the_energy_statistic() {
        let xs = [1.0, 3.0, 2.0, 8.0, 9.0, 7.5, 8.2, 1.5, 2.5];
        let d = Distances::of(&xs);
        for a in 0..3 {
            for tau in a + 2..7 {
                for kappa in tau + 2..=xs.len() {
                    let (fast, slow) = (d.q(a, tau, kappa), q_by_definition(&xs, a, tau, kappa));
                    assert!(
                        (fast - slow).abs() < 1e-9,
                        "{a} {tau} {kappa}: {fast} {slow}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_best_split_is_the_step_and_may_end_early() {
        // A short raised stretch inside a flat series: the best split starts it, with an end
        // before the series ends.
        let xs = [
            1.0, 1.1, 0.9, 1.0, 5.0, 5.1, 4.9, 5.0, 1.0, 1.1, 0.9, 1.0, 1.05, 0.95,
        ];
        let d = Distances::of(&xs);
        let (tau, _) = d.best_split(0, xs.len()).unwrap();
        assert!(tau == 4 || tau == 8, "tau = {tau}");
        // Confirming everything finds both edges of the raised stretch.
        let cuts = divide(&xs, &|l, r| l.len() >= 2 && r.len() >= 2);
        assert!(cuts.contains(&4) && cuts.contains(&8), "{cuts:?}");
    }

    #[test]
    fn stretches_too_short_to_split_propose_nothing() {
        let d = Distances::of(&[1.0, 2.0, 3.0]);
        assert_eq!(d.best_split(0, 3), None);
        assert_eq!(divide(&[1.0, 5.0, 1.0], &|_, _| true), Vec::<usize>::new());
    }
}
