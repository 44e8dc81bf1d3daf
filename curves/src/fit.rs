//! Weighted least-squares lines over runs of consecutive points.
//!
//! Times across a sweep span orders of magnitude (a microsecond at 8 bytes, milliseconds at a
//! megabyte), so an unweighted fit would let the largest sizes decide every line. Weighting each
//! point by `1 / max(t, absolute_us)^2` makes the fit minimise relative residuals instead, which
//! is also what the tolerance measures.

use crate::Tolerance;

/// A point with `max(t, absolute_us)` of 0 would get an infinite weight; this floor (a
/// femtosecond) keeps the weight finite while still pinning the line to that point.
const SCALE_FLOOR_US: f64 = 1e-9;

/// How many times larger than a range's own sum a prefix sum may be before the difference of
/// two prefix sums is distrusted: at 1e6 about ten of double's sixteen digits survive.
const MAX_CANCELLATION: f64 = 1e6;

/// `t = a + c * size`, with `a` in microseconds and `c` in microseconds per byte.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Line {
    pub a: f64,
    pub c: f64,
}

impl Line {
    pub(crate) fn at(self, x: f64) -> f64 {
        self.a + self.c * x
    }
}

/// The five weighted sums a line's normal equations need.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    w: f64,
    wx: f64,
    wt: f64,
    wxx: f64,
    wxt: f64,
}

impl Sums {
    fn add(self, w: f64, x: f64, t: f64) -> Sums {
        Sums {
            w: self.w + w,
            wx: self.wx + w * x,
            wt: self.wt + w * t,
            wxx: self.wxx + w * x * x,
            wxt: self.wxt + w * x * t,
        }
    }

    fn minus(self, o: Sums) -> Sums {
        Sums {
            w: self.w - o.w,
            wx: self.wx - o.wx,
            wt: self.wt - o.wt,
            wxx: self.wxx - o.wxx,
            wxt: self.wxt - o.wxt,
        }
    }

    fn components(self) -> [f64; 5] {
        [self.w, self.wx, self.wt, self.wxx, self.wxt]
    }

    /// Solves the normal equations; None when they are too ill-conditioned to trust (the
    /// caller then fits the range directly).
    fn line(self) -> Option<Line> {
        let det = self.w * self.wxx - self.wx * self.wx;
        // Written so that a NaN determinant (sums overflowed) also counts as untrusted.
        let conditioned = det > self.w * self.wxx * 1e-12;
        if !conditioned {
            return None;
        }
        let c = (self.w * self.wxt - self.wx * self.wt) / det;
        Some(Line {
            a: (self.wt - c * self.wx) / self.w,
            c,
        })
    }
}

/// A validated curve prepared for fitting: per-point values plus prefix sums, so any run of
/// consecutive points gets its line in O(1).
pub(crate) struct Curve {
    x: Vec<f64>,
    t: Vec<f64>,
    /// `max(t, absolute_us)`: what a residual is divided by to make it relative.
    scale: Vec<f64>,
    /// How far the line may miss each point: `max(relative * t, absolute_us)`.
    allowed: Vec<f64>,
    /// `prefix[k]` sums points `0..k`.
    prefix: Vec<Sums>,
}

impl Curve {
    pub(crate) fn new(points: &[(u64, f64)], tol: Tolerance) -> Curve {
        let x: Vec<f64> = points.iter().map(|&(s, _)| s as f64).collect();
        let t: Vec<f64> = points.iter().map(|&(_, t)| t).collect();
        let scale: Vec<f64> = t
            .iter()
            .map(|&t| t.max(tol.absolute_us).max(SCALE_FLOOR_US))
            .collect();
        let allowed = t.iter().map(|&t| tol.allowed_miss(t)).collect();
        let mut prefix = Vec::with_capacity(points.len() + 1);
        prefix.push(Sums::default());
        for k in 0..points.len() {
            let last = prefix[k];
            prefix.push(last.add(weight(scale[k]), x[k], t[k]));
        }
        Curve {
            x,
            t,
            scale,
            allowed,
            prefix,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.x.len()
    }

    /// The line of points `i..=j`, from the prefix sums when their difference keeps its digits.
    pub(crate) fn fit(&self, i: usize, j: usize) -> Line {
        self.exact_line(i, j)
            .or_else(|| self.prefix_line(i, j))
            .unwrap_or_else(|| self.direct_line(i, j))
    }

    /// The line of points `i..=j` from their own sums, centred, for the lines that are
    /// reported: it carries none of the prefix sums' cancellation.
    pub(crate) fn refit(&self, i: usize, j: usize) -> Line {
        self.exact_line(i, j)
            .unwrap_or_else(|| self.direct_line(i, j))
    }

    /// One point: flat at its time. Two: the line through both. Written out rather than
    /// solved so that these always fit their own points (up to one rounding for two), which
    /// guarantees the segmentation a solution.
    fn exact_line(&self, i: usize, j: usize) -> Option<Line> {
        match j - i {
            0 => Some(Line {
                a: self.t[i],
                c: 0.0,
            }),
            1 => {
                let c = (self.t[j] - self.t[i]) / (self.x[j] - self.x[i]);
                Some(Line {
                    a: self.t[i] - c * self.x[i],
                    c,
                })
            }
            _ => None,
        }
    }

    fn prefix_line(&self, i: usize, j: usize) -> Option<Line> {
        let total = self.prefix[j + 1];
        let range = total.minus(self.prefix[i]);
        let trusted = range
            .components()
            .iter()
            .zip(total.components())
            .all(|(&part, whole)| part * MAX_CANCELLATION >= whole);
        if trusted {
            range.line()
        } else {
            None
        }
    }

    /// Two passes over the range: weighted means, then centred sums, which stay accurate when
    /// the sizes are large and close together.
    fn direct_line(&self, i: usize, j: usize) -> Line {
        let (mut w_sum, mut wx, mut wt) = (0.0, 0.0, 0.0);
        for k in i..=j {
            let w = weight(self.scale[k]);
            w_sum += w;
            wx += w * self.x[k];
            wt += w * self.t[k];
        }
        let (x_mean, t_mean) = (wx / w_sum, wt / w_sum);
        let (mut sxx, mut sxt) = (0.0, 0.0);
        for k in i..=j {
            let w = weight(self.scale[k]);
            let dx = self.x[k] - x_mean;
            sxx += w * dx * dx;
            sxt += w * dx * (self.t[k] - t_mean);
        }
        let c = if sxx > 0.0 { sxt / sxx } else { 0.0 };
        Line {
            a: t_mean - c * x_mean,
            c,
        }
    }

    /// The weighted squared residual of points `i..=j` against `line`, or None as soon as one
    /// point lies outside its tolerance. The newest point `j` is checked first: when a run
    /// stops fitting it is usually because of the point just added.
    pub(crate) fn check(&self, i: usize, j: usize, line: Line) -> Option<f64> {
        let mut sse = 0.0;
        for k in std::iter::once(j).chain(i..j) {
            let miss = self.t[k] - line.at(self.x[k]);
            if miss.abs() > self.allowed[k] {
                return None;
            }
            let relative = miss / self.scale[k];
            sse += relative * relative;
        }
        Some(sse)
    }

    /// How far the line of points `i..=j` misses point `k` (outside that range), relative to
    /// `k`'s time: how well a segment predicts a point it was fitted without. An empty range
    /// predicts nothing.
    pub(crate) fn prediction_miss(&self, i: usize, j: usize, k: usize) -> f64 {
        if i > j {
            return f64::INFINITY;
        }
        let line = self.refit(i, j);
        (self.t[k] - line.at(self.x[k])).abs() / self.scale[k]
    }

    /// Whether points `i..=j` all lie within tolerance of their own line (an empty range does).
    pub(crate) fn fits(&self, i: usize, j: usize) -> bool {
        i > j || self.check(i, j, self.refit(i, j)).is_some()
    }

    /// The largest `|residual| / t` over points `i..=j`, skipping points of time 0 (nothing is
    /// relative to 0; their absolute tolerance already bounded them).
    pub(crate) fn max_rel_error(&self, i: usize, j: usize, line: Line) -> f64 {
        (i..=j)
            .filter(|&k| self.t[k] > 0.0)
            .map(|k| (self.t[k] - line.at(self.x[k])).abs() / self.t[k])
            .fold(0.0, f64::max)
    }
}

fn weight(scale: f64) -> f64 {
    1.0 / (scale * scale)
}
