//! Splitting a curve into segments: dynamic programming over where each segment ends.

use crate::error::{check_points, check_tolerance};
use crate::fit::{Curve, Line};
use crate::{CurveError, Tolerance};

/// After a run of points stops fitting its line, how many more ends are still tried before
/// the run is given up. A least-squares line moves with every point added, so a point just
/// outside the tolerance can come back inside once a few more points on its side tilt the
/// line; that is noise at a segment's edge. A genuine change of protocol keeps pulling the
/// line away, so once this many extra points have not brought the run back, we assume no
/// longer run from the same start would fit either.
const LOOKAHEAD: usize = 3;

/// Two total residuals closer than this are equal: below it the difference is rounding (the
/// exact lines of one- and two-point segments, prefix sums), not a better fit.
const SSE_TIE: f64 = 1e-12;

/// One piece of the curve: consecutive sizes whose times all lie within the tolerance of one
/// line, reported as the latency and bandwidth that line stands for.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Segment {
    /// First size in the segment.
    pub from: u64,
    /// Last size in the segment.
    pub to: u64,
    /// How many measured sizes the line rests on: a one- or two-point segment is an
    /// exact line, not evidence of a protocol.
    pub points: usize,
    /// The line's time at size 0: the fixed cost of a message under this segment's protocol.
    pub latency_us: f64,
    /// Bytes per microsecond (= MB/s) the line's slope stands for; None when the line does
    /// not rise (one point, or a latency-bound stretch where noise tilted it flat or down),
    /// since no bandwidth explains a time that does not grow with size.
    pub bandwidth_mbs: Option<f64>,
    /// Largest `|residual| / t` over the segment's points (points of time 0 excluded), so a
    /// reader can see how close to the tolerance the segment came.
    pub max_rel_error: f64,
    /// Kept because `bandwidth_mbs` cannot express a flat or falling line, and [`Segment::at`]
    /// must still reproduce it.
    #[serde(skip)]
    slope_us_per_byte: f64,
}

impl Segment {
    /// The line's time at `size`; for sizes outside `from..=to` this extrapolates, which is
    /// how a breakpoint compares two segments at the same size.
    pub fn at(&self, size: u64) -> f64 {
        self.latency_us + self.slope_us_per_byte * size as f64
    }

    fn new(curve: &Curve, points: &[(u64, f64)], i: usize, j: usize) -> Segment {
        let line: Line = curve.refit(i, j);
        Segment {
            from: points[i].0,
            to: points[j].0,
            points: j - i + 1,
            latency_us: line.a,
            bandwidth_mbs: (line.c > 0.0).then(|| 1.0 / line.c),
            max_rel_error: curve.max_rel_error(i, j, line),
            slope_us_per_byte: line.c,
        }
    }
}

/// Splits `points` (size in bytes, time in microseconds; sizes strictly increasing) into the
/// fewest consecutive segments whose lines each fit all their own points, breaking ties by the
/// smallest total squared relative residual. Fewest first, because every extra segment is a
/// protocol switch shown to the user; residual second, so that of equally short explanations
/// the one that places the switches where the data says wins.
///
/// When both tie (typically lines that fit exactly), the split whose segments are most
/// unequal in length wins (largest sum of squared lengths): a lone outlier then stays a
/// one-point segment instead of dragging a neighbour into a two-point one. On noisy data the
/// residual decides first, and a two-point segment fits its points exactly, so there the
/// outlier tends to take one neighbour with it: its breakpoints are then one size off.
///
/// Empty input gives no segments. The reported lines are refitted from each segment's own
/// points, so they do not carry the rounding of the prefix sums the search uses.
pub fn segments(points: &[(u64, f64)], tol: Tolerance) -> Result<Vec<Segment>, CurveError> {
    check_tolerance(tol)?;
    check_points(points)?;
    let curve = Curve::new(points, tol);
    let mut ranges = split(&curve);
    settle_boundaries(&curve, &mut ranges);
    Ok(ranges
        .into_iter()
        .map(|(i, j)| Segment::new(&curve, points, i, j))
        .collect())
}

/// Moves each boundary point to the neighbouring segment that predicts it better, fitted
/// without it, while both segments still fit. The fewest-segments split can leave a point on
/// the wrong side: the last eager size paired with the only rendezvous size makes an exact
/// two-point line (a perfect residual) that no protocol stands for, where the eager line of
/// ten sizes predicts that point within a percent. Asking each side to predict the point it
/// was not fitted on settles such ties as a reader would. Each move strictly lowers the moved
/// point's prediction miss, and the passes are bounded, so this ends.
fn settle_boundaries(curve: &Curve, ranges: &mut Vec<(usize, usize)>) {
    for _ in 0..curve.len() {
        let mut moved = false;
        for b in 0..ranges.len().saturating_sub(1) {
            let ((i, k), (_, j)) = (ranges[b], ranges[b + 1]);
            // k is the left segment's last point, k + 1 the right segment's first.
            let left_takes = k + 1 < j
                && curve.prediction_miss(i, k, k + 1) < curve.prediction_miss(k + 2, j, k + 1)
                && curve.fits(i, k + 1)
                && curve.fits(k + 2, j);
            let right_takes = !left_takes
                && k > i
                && curve.prediction_miss(k + 1, j, k) < curve.prediction_miss(i, k - 1, k)
                && curve.fits(k, j)
                && curve.fits(i, k - 1);
            if left_takes {
                ranges[b].1 = k + 1;
                ranges[b + 1].0 = k + 2;
                moved = true;
            } else if right_takes {
                ranges[b].1 = k - 1;
                ranges[b + 1].0 = k;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    ranges.retain(|&(i, j)| i <= j);
}

/// What a split of a prefix of the curve costs, compared lexicographically.
#[derive(Debug, Clone, Copy)]
struct Cost {
    count: usize,
    sse: f64,
    /// Sum of squared segment lengths; larger is better.
    concentration: u64,
}

impl Cost {
    const NOTHING: Cost = Cost {
        count: 0,
        sse: 0.0,
        concentration: 0,
    };

    fn then(self, sse: f64, len: u64) -> Cost {
        Cost {
            count: self.count + 1,
            sse: self.sse + sse,
            concentration: self.concentration + len * len,
        }
    }

    fn better_than(&self, other: &Cost) -> bool {
        if self.count != other.count {
            return self.count < other.count;
        }
        if (self.sse - other.sse).abs() > SSE_TIE {
            return self.sse < other.sse;
        }
        self.concentration > other.concentration
    }
}

/// For point `j`: the cheapest split of points `0..=j` found so far, and where its last
/// segment starts.
type Slot = Option<(Cost, usize)>;

/// The chosen segments as inclusive index ranges, in order.
///
/// Splits are built a segment count at a time (breadth first): at level `k`, `starts` are the
/// points that follow an end first reached with `k` segments. Since fewer segments always win,
/// each level only has to improve ends no earlier level reached, and the first level that can
/// reach the last point is the answer. Every level is non-empty until then: its last start
/// follows the furthest end reached so far, and that start's one-point segment always fits.
fn split(curve: &Curve) -> Vec<(usize, usize)> {
    let n = curve.len();
    if n == 0 {
        return Vec::new();
    }
    let mut best: Vec<Slot> = vec![None; n];
    let mut starts = vec![(0, Cost::NOTHING)];
    while !finish(curve, &starts, &mut best) {
        for &(i, before) in &starts {
            extend(curve, i, before, &mut best);
        }
        let count = starts[0].1.count + 1;
        starts = next_starts(&best, count);
    }
    backtrack(&best)
}

/// Offers, for each start, the segment that runs to the last point; true when one fits.
/// At the level that finishes, no other end matters (any split through an earlier end needs
/// more segments), so checking this one segment per start replaces extending them all. It is
/// checked whatever shorter runs from the same start did: a fit found here is a fit.
fn finish(curve: &Curve, starts: &[(usize, Cost)], best: &mut [Slot]) -> bool {
    let last = curve.len() - 1;
    for &(i, before) in starts {
        if let Some(sse) = curve.check(i, last, curve.fit(i, last)) {
            offer(&mut best[last], before.then(sse, (last - i + 1) as u64), i);
        }
    }
    best[last].is_some()
}

/// Offers every run starting at `i` that fits, growing it until `LOOKAHEAD + 1` checked ends
/// in a row do not fit. Ends already reached with fewer segments are passed over unchecked:
/// no run from this start can improve them, and checking a run costs its length, which on a
/// long segment with a gentle slope change is what would otherwise make the search cubic.
fn extend(curve: &Curve, i: usize, before: Cost, best: &mut [Slot]) {
    let count = before.count + 1;
    let mut misses = 0;
    for (j, slot) in best.iter_mut().enumerate().skip(i) {
        if slot.is_some_and(|(old, _)| old.count < count) {
            continue;
        }
        match curve.check(i, j, curve.fit(i, j)) {
            Some(sse) => {
                misses = 0;
                offer(slot, before.then(sse, (j - i + 1) as u64), i);
            }
            None => {
                misses += 1;
                if misses > LOOKAHEAD {
                    break;
                }
            }
        }
    }
}

fn offer(slot: &mut Slot, cost: Cost, start: usize) {
    if slot.is_none_or(|(old, _)| cost.better_than(&old)) {
        *slot = Some((cost, start));
    }
}

/// The points following ends reached with exactly `count` segments, with those ends' costs.
fn next_starts(best: &[Slot], count: usize) -> Vec<(usize, Cost)> {
    best.iter()
        .enumerate()
        .filter_map(|(end, slot)| match slot {
            Some((cost, _)) if cost.count == count && end + 1 < best.len() => {
                Some((end + 1, *cost))
            }
            _ => None,
        })
        .collect()
}

fn backtrack(best: &[Slot]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut end = best.len();
    while end > 0 {
        let (_, start) = best[end - 1].expect("the last point of a chosen segment has a split");
        ranges.push((start, end - 1));
        end = start;
    }
    ranges.reverse();
    ranges
}
