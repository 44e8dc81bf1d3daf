//! The LogGP fit of one segment, and of all of them. Each parameter is read off a line fitted
//! to the measurements that show it most directly:
//!
//! - `o_s` (fixed and per byte) from the send pattern, `o_r` from the receive pattern, each
//!   point capped at the stream's steady step: no side's CPU can be busy longer per message
//!   than a stream of them takes, so where a call seems to be, it waited (a rendezvous without
//!   asynchronous progress moves its data inside the receiver's wait) and the cap keeps the
//!   model's stream and ping-pong as measured; a receive is also capped at the ping-pong less
//!   the sender's overhead;
//! - `G` and `g` from the stream's steady step at the sizes where it is slower than both
//!   overheads (the wire is the bottleneck there); where it never is, `G` is what the
//!   ping-pong's slope leaves after the overheads' and `g` the largest that keeps the stream
//!   as measured;
//! - `L` from the ping-pong less both overheads and `s * G`, the mean over the segment's sizes;
//! - `G+` (the NIC's gap per byte between messages beyond `G`) where the stream, with every
//!   value above set, is still slower per message than the model's pace: the ping-pong's
//!   slope holds `G` to one message's way, and a stream of large messages may move fewer bytes
//!   per second than one message does (both sides' copies contending for the host). It is
//!   held to a ping-pong's round trip, by which the NIC must be free for the next message.
//!
//! Intervals are 95 % percentile bootstrap intervals over the rounds: every size's rounds are
//! drawn again with replacement, their medians taken and the whole fit made again with the
//! same switches, [`RESAMPLES`] times. Every parameter is a time or a rate, and the fit keeps
//! each at 0 or above, so its interval is never negative; it is widened to hold the estimate
//! (a cut-back `G` of 0 whose resamples all kept some is "0 (0..x)", never "0 (0.38..0.44)").
//! One round (an emulated fabric, exact) gives no interval: nothing says how it varies.

use bench_core::stats::two_sample::{median, SplitMix64};
use serde::Serialize;

use crate::line::{self, Line};
use crate::model::{LogGp, Model, ACK_BYTES};
use crate::observations::{quantile, Observations, Pattern};
use crate::segments::{ranges, Switch};

/// Confidence of every interval.
pub const CONFIDENCE: f64 = 0.95;

/// Bootstrap replicates per fit: the 2.5th and 97.5th percentiles of 400 values sit 10 values
/// from each end, and a fit takes well under a millisecond.
pub const RESAMPLES: usize = 400;

/// The bootstrap's seed: the same measurements always give the same intervals.
const SEED: u64 = 0x6C6F_6767_7030;

/// The fit's worst ping-pong or stream error above which it says what to do.
pub const WARN_ERROR: f64 = 0.25;

/// A receive longer than the stream's step by more than this share waited for the data: no
/// CPU can be busy longer per message than a stream of them takes.
const WAITED: f64 = 0.10;

/// A stream step above both overheads by more than this share is the wire's.
const WIRE_BOUND: f64 = 0.05;

/// Per-byte costs whose sum passes the ping-pong's slope by more than this share are cut back
/// to it: a message's bytes cannot cost more one way than the ping-pong took.
const SLOPE_ROOM: f64 = 0.05;

/// A parameter's 95 % interval, where the data give one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// The intervals of one segment's parameters (None: not enough sizes, or derived).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Intervals {
    pub latency_ns: Option<Interval>,
    pub send_ns: Option<Interval>,
    pub send_per_byte_ns: Option<Interval>,
    pub recv_ns: Option<Interval>,
    pub recv_per_byte_ns: Option<Interval>,
    pub gap_ns: Option<Interval>,
    pub gap_per_byte_ns: Option<Interval>,
    pub extra_gap_per_byte_ns: Option<Interval>,
}

/// One segment's fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentFit {
    /// Where the segment starts in the card: 0 for the first, else its switch's `before`.
    pub from: u64,
    /// The sizes measured in it.
    pub sizes: Vec<u64>,
    pub params: LogGp,
    pub intervals: Intervals,
    /// How parameters were found where the direct route was closed, for the report.
    pub notes: Vec<String>,
}

/// A measured time beside what the fitted model gives.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Residual {
    pub pattern: Pattern,
    pub size: u64,
    pub measured_ns: f64,
    pub model_ns: f64,
}

impl Residual {
    /// (model - measured) / measured.
    pub fn error(&self) -> f64 {
        if self.measured_ns == 0.0 {
            0.0
        } else {
            (self.model_ns - self.measured_ns) / self.measured_ns
        }
    }
}

/// The whole fit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    pub window: u64,
    /// The most rounds measured at a size: the medians fitted are of this many.
    pub rounds: usize,
    pub switches: Vec<Switch>,
    /// Bends of the ping-pong curve no larger than its run-to-run spread there: the host's, not
    /// a protocol's, so no segment starts at them.
    pub within_spread: Vec<Switch>,
    pub segments: Vec<SegmentFit>,
    pub residuals: Vec<Residual>,
}

impl Fit {
    pub fn model(&self) -> Model {
        Model {
            segments: self.segments.iter().map(|s| (s.from, s.params)).collect(),
        }
    }

    /// The worst ping-pong or stream residual when its error passes [`WARN_ERROR`]: the curves
    /// a card is run for. (The send and receive patterns are capped on purpose where a call
    /// waited, so their errors there say nothing of the fit.)
    pub fn too_far(&self) -> Option<&Residual> {
        [Pattern::Pingpong, Pattern::Stream]
            .into_iter()
            .filter_map(|p| self.worst(p, 0))
            .max_by(|a, b| a.error().abs().total_cmp(&b.error().abs()))
            .filter(|r| r.error().abs() > WARN_ERROR)
    }

    /// The largest |error| of a pattern's residuals, from `min_size` up.
    pub fn worst(&self, pattern: Pattern, min_size: u64) -> Option<&Residual> {
        self.residuals
            .iter()
            .filter(|r| r.pattern == pattern && r.size >= min_size)
            .max_by(|a, b| a.error().abs().total_cmp(&b.error().abs()))
    }
}

/// A per-size value further from the median than this many scaled median absolute
/// deviations is one size's accident (a spike the fabric has at one size only), not the
/// segment's latency.
const OUTLIER_MADS: f64 = 3.5;

/// The values without the outlying ones, and how many were left out. Where the spread is nil
/// (exact data) nothing is left out.
fn without_outliers(values: &[f64]) -> (Vec<f64>, usize) {
    if values.len() < 4 {
        return (values.to_vec(), 0);
    }
    let m = median(values);
    let deviations: Vec<f64> = values.iter().map(|v| (v - m).abs()).collect();
    let mad = 1.4826 * median(&deviations);
    let room = (OUTLIER_MADS * mad).max(1e-6 * m.abs() + 1e-9);
    let kept: Vec<f64> = values
        .iter()
        .copied()
        .filter(|v| (v - m).abs() <= room)
        .collect();
    let left = values.len() - kept.len();
    (kept, left)
}

/// A line that does not fall, fitted to the points' relative misses (a segment spans sizes
/// from bytes to megabytes, and every size's time should be met in proportion): a falling fit
/// (noise over a flat stretch) becomes its weighted mean.
fn rising(points: &[(f64, f64)]) -> Option<Line> {
    let l = line::fit_relative(points)?;
    if l.slope >= 0.0 {
        return Some(l);
    }
    let ys: Vec<(f64, f64)> = points.iter().map(|p| (0.0, p.1)).collect();
    line::fit_relative(&ys)
}

/// Everything one segment's sizes need, gathered once.
struct Rows {
    size: Vec<u64>,
    pingpong: Vec<f64>,
    step: Vec<f64>,
    send: Vec<f64>,
    recv: Vec<f64>,
}

fn rows(obs: &Observations, sizes: &[u64], ack_ns: f64) -> Rows {
    let get = |p: Pattern, s: u64| obs.get(p, s).expect("complete sizes only");
    let mut r = Rows {
        size: Vec::new(),
        pingpong: Vec::new(),
        step: Vec::new(),
        send: Vec::new(),
        recv: Vec::new(),
    };
    for &s in sizes {
        let pp = get(Pattern::Pingpong, s);
        let step = Model::steady_step(get(Pattern::Stream, s), pp, ack_ns, obs.window).max(0.0);
        r.size.push(s);
        r.pingpong.push(pp);
        r.step.push(step);
        r.send.push(get(Pattern::Send, s));
        r.recv.push(get(Pattern::Recv, s));
    }
    r
}

fn fit_segment(r: &Rows, from: u64) -> SegmentFit {
    let x: Vec<f64> = r.size.iter().map(|&s| s as f64).collect();
    let n = x.len();
    let mut notes = Vec::new();
    let capped = |ys: &[f64]| -> Vec<(f64, f64)> {
        x.iter()
            .zip(ys)
            .zip(&r.step)
            .map(|((&x, &y), &step)| (x, y.min(step.max(f64::MIN_POSITIVE))))
            .collect()
    };
    let send = rising(&capped(&r.send)).expect("a segment has sizes");
    let waited = (0..n)
        .filter(|&i| r.recv[i] > r.step[i] * (1.0 + WAITED))
        .count();
    if waited > 0 {
        notes.push(format!(
            "{waited} of {n} receives took longer than the stream's step per message (they waited for the data phase, as a rendezvous without asynchronous progress does): o_r is capped there at the step and at what the ping-pong leaves after o_s, so o_r may carry part of the transfer or of L"
        ));
    }
    // The ping-pong's slope, robust to a spike at one size (tcp's last eager size here).
    let pp_slope = line::robust_slope(
        &x.iter()
            .copied()
            .zip(r.pingpong.iter().copied())
            .collect::<Vec<_>>(),
    )
    .unwrap_or(0.0);
    let os = (send.intercept.max(0.0), send.slope.max(0.0));
    // A receive is also capped at what the ping-pong leaves after the sender's overhead: the
    // two overheads of one message cannot add up to more than its one-way time.
    let recv_points: Vec<(f64, f64)> = (0..n)
        .map(|i| {
            let room = r.pingpong[i] - (os.0 + os.1 * x[i]);
            (x[i], r.recv[i].min(r.step[i]).min(room).max(0.0))
        })
        .collect();
    let recv = rising(&recv_points).expect("a segment has sizes");
    let or_line = (recv.intercept.max(0.0), recv.slope.max(0.0));
    // Sizes where the stream is slower than both CPUs: there the wire sets its pace.
    let wire: Vec<usize> = (0..n)
        .filter(|&i| {
            let cpu = (os.0 + os.1 * x[i]).max(or_line.0 + or_line.1 * x[i]);
            r.step[i] > cpu * (1.0 + WIRE_BOUND)
        })
        .collect();
    let wire_line = (wire.len() >= 2)
        .then(|| rising(&wire.iter().map(|&i| (x[i], r.step[i])).collect::<Vec<_>>()))
        .flatten();
    let (g_per_byte, gap) = match wire_line {
        Some(l) => {
            let g = l.slope.max(0.0);
            let gaps: Vec<f64> = wire.iter().map(|&i| r.step[i] - g * x[i]).collect();
            let steps: Vec<f64> = wire.iter().map(|&i| r.step[i]).collect();
            (g, line::mean_relative(&gaps, &steps))
        }
        None => {
            notes.push(
                "the stream is as slow as an overhead at (nearly) every size here: G is what the ping-pong's slope leaves after the overheads', g the largest that keeps the stream as measured"
                    .into(),
            );
            let g = (pp_slope - os.1 - or_line.1).max(0.0);
            let gap = (0..n)
                .map(|i| r.step[i] - g * x[i])
                .fold(f64::INFINITY, f64::min);
            (g, gap)
        }
    };
    // The ping-pong is the steadiest of the patterns (a stream of large messages swings with
    // the caches and the placement from run to run): where the per-byte costs read off the
    // others add up to more than its slope, G gives way first, then both overheads alike.
    let (mut os, mut or_line, mut g_per_byte) = (os, or_line, g_per_byte);
    let slope = pp_slope.max(0.0);
    if os.1 + or_line.1 + g_per_byte > slope * (1.0 + SLOPE_ROOM) {
        notes.push(format!(
            "the per-byte costs of the other patterns ({:.4} ns/B) exceed the ping-pong's slope ({slope:.4} ns/B): G, then the overheads' per-byte parts, are cut back to it",
            os.1 + or_line.1 + g_per_byte
        ));
        g_per_byte = (slope - os.1 - or_line.1).max(0.0);
        let overheads = os.1 + or_line.1;
        if overheads > slope {
            let k = slope / overheads;
            os.1 *= k;
            or_line.1 *= k;
        }
    }
    let lats: Vec<f64> = (0..n)
        .map(|i| {
            r.pingpong[i]
                - (os.0 + os.1 * x[i])
                - (or_line.0 + or_line.1 * x[i])
                - g_per_byte * x[i]
        })
        .collect();
    let (kept, outlying) = without_outliers(&lats);
    // Each size's L weighs by its ping-pong's inverse square: L is read where it is a large
    // share of the time (a megabyte's few microseconds of noise would otherwise set it).
    let kept_scales: Vec<f64> = lats
        .iter()
        .zip(&r.pingpong)
        .filter(|(l, _)| kept.contains(l))
        .map(|(_, &pp)| pp)
        .collect();
    if outlying > 0 {
        notes.push(format!(
            "{outlying} of {n} sizes left out of L: their ping-pong is further from the rest's line than {OUTLIER_MADS} median absolute deviations (a spike at those sizes only)"
        ));
    }
    let mut latency = line::mean_relative(&kept, &kept_scales);
    if latency < 0.0 {
        notes.push(format!(
            "the overheads measured exceed the ping-pong by {:.0} ns on average: L is set to 0",
            -latency
        ));
        latency = 0.0;
    }
    // A ping-pong's sender starts its next message a round trip after the last, so the NIC
    // was free again by then: a g larger than that (a stream slower than its ping-pong, G cut
    // back above) would slow the model's ping-pong below the one measured.
    let room = (0..n)
        .map(|i| 2.0 * r.pingpong[i] - g_per_byte * x[i])
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    let mut gap = gap.max(0.0);
    if gap > room {
        notes.push(format!(
            "g ({gap:.0} ns from the stream) is cut to {room:.0} ns: a NIC busy longer than a ping-pong's round trip would slow the ping-pong measured"
        ));
        gap = room;
    }
    let mut params = LogGp {
        latency_ns: latency,
        send_ns: os.0,
        send_per_byte_ns: os.1,
        recv_ns: or_line.0,
        recv_per_byte_ns: or_line.1,
        gap_ns: gap,
        gap_per_byte_ns: g_per_byte,
        extra_gap_per_byte_ns: 0.0,
    };
    params.extra_gap_per_byte_ns = extra_gap(&params, r, &x, &mut notes);
    SegmentFit {
        from,
        sizes: r.size.clone(),
        params,
        intervals: Intervals::default(),
        notes,
    }
}

/// G+: the gap per byte the stream's steady steps need beyond the model's pace. A per-byte
/// cost shows at the segment's largest sizes, so it is read there only: where the stream at
/// the largest size and at others of the segment's upper half is slower than the model's pace
/// (by more than [`WIRE_BOUND`]), G+ is the least per byte any of them needs (so the model is
/// never slower than a size measured), held so that `g + s*(G + G+)` stays within each size's
/// round trip (2 x its ping-pong), which frees the NIC for a ping-pong's next message.
fn extra_gap(p: &LogGp, r: &Rows, x: &[f64], notes: &mut Vec<String>) -> f64 {
    let n = x.len();
    let slow = |i: usize| x[i] > 0.0 && r.step[i] > p.per_message(r.size[i]) * (1.0 + WIRE_BOUND);
    if n < 2 || !slow(n - 1) {
        return 0.0;
    }
    let upper: Vec<usize> = (n / 2..n).filter(|&i| slow(i)).collect();
    if upper.len() < 2 {
        return 0.0;
    }
    let want = upper
        .iter()
        .map(|&i| (r.step[i] - p.gap_ns) / x[i] - p.gap_per_byte_ns)
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    let room = (0..n)
        .filter(|&i| x[i] > 0.0)
        .map(|i| (2.0 * r.pingpong[i] - p.gap_ns) / x[i] - p.gap_per_byte_ns)
        .fold(f64::INFINITY, f64::min)
        .max(0.0);
    let extra = want.min(room);
    if extra > 0.0 {
        notes.push(format!(
            "the stream is slower than the model's pace at {} of its largest sizes: G+ = {extra:.4} ns/B (G {:.4}) paces the stream{}",
            upper.len(),
            p.gap_per_byte_ns,
            if extra < want {
                format!(" (held from {want:.4} to a ping-pong's round trip)")
            } else {
                String::new()
            }
        ));
    }
    extra
}

/// The acknowledgement's one-way time: measured at its size, else the smallest size's.
fn ack_ns(obs: &Observations, sizes: &[u64]) -> f64 {
    obs.get(Pattern::Pingpong, ACK_BYTES).unwrap_or_else(|| {
        obs.get(Pattern::Pingpong, sizes[0])
            .expect("complete sizes have a ping-pong")
    })
}

/// Every segment's fit over the size groups the switches bound (empty groups skipped).
fn fit_segments(obs: &Observations, groups: &[Vec<u64>], switches: &[Switch]) -> Vec<SegmentFit> {
    let sizes: Vec<u64> = groups.iter().flatten().copied().collect();
    let ack = ack_ns(obs, &sizes);
    let mut segments: Vec<SegmentFit> = Vec::new();
    for (k, group) in groups.iter().enumerate() {
        if group.is_empty() {
            continue;
        }
        let from = if k == 0 { 0 } else { switches[k - 1].before };
        segments.push(fit_segment(&rows(obs, group, ack), from));
    }
    if let Some(first) = segments.first_mut() {
        first.from = 0;
    }
    segments
}

/// The percentile interval of a parameter's replicates, widened to hold the estimate and kept
/// at 0 or above; None where the replicates do not vary (one round, exact data).
fn percentile_interval(estimate: f64, replicates: &mut [f64]) -> Option<Interval> {
    replicates.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let (low, high) = (quantile(replicates, tail), quantile(replicates, 1.0 - tail));
    if high <= low {
        return None;
    }
    Some(Interval {
        low: low.min(estimate).max(0.0),
        high: high.max(estimate),
    })
}

/// Each segment's intervals, bootstrapped over the rounds (see the module's note).
fn bootstrap(
    obs: &Observations,
    groups: &[Vec<u64>],
    switches: &[Switch],
    fits: &mut [SegmentFit],
) {
    if obs.max_rounds() < 2 {
        return;
    }
    let mut rng = SplitMix64(SEED);
    // replicates[segment][parameter]
    let mut replicates: Vec<[Vec<f64>; 8]> = vec![Default::default(); fits.len()];
    for _ in 0..RESAMPLES {
        let again = obs.resample(&mut |n| rng.below(n));
        for (k, seg) in fit_segments(&again, groups, switches).iter().enumerate() {
            for (slot, v) in replicates[k].iter_mut().zip(values(&seg.params)) {
                slot.push(v);
            }
        }
    }
    for (fit, reps) in fits.iter_mut().zip(replicates.iter_mut()) {
        let est = values(&fit.params);
        let mut iv = reps
            .iter_mut()
            .zip(est)
            .map(|(r, e)| percentile_interval(e, r));
        fit.intervals = Intervals {
            latency_ns: iv.next().flatten(),
            send_ns: iv.next().flatten(),
            send_per_byte_ns: iv.next().flatten(),
            recv_ns: iv.next().flatten(),
            recv_per_byte_ns: iv.next().flatten(),
            gap_ns: iv.next().flatten(),
            gap_per_byte_ns: iv.next().flatten(),
            extra_gap_per_byte_ns: iv.next().flatten(),
        };
    }
}

/// A segment's parameters in the order of [`Intervals`]' fields.
fn values(p: &LogGp) -> [f64; 8] {
    [
        p.latency_ns,
        p.send_ns,
        p.send_per_byte_ns,
        p.recv_ns,
        p.recv_per_byte_ns,
        p.gap_ns,
        p.gap_per_byte_ns,
        p.extra_gap_per_byte_ns,
    ]
}

/// Fits every segment the switches bound, bootstraps their intervals over the rounds, then
/// sets the model against every measurement.
pub fn fit(obs: &Observations, switches: &[Switch]) -> Result<Fit, crate::CharacteriseError> {
    let sizes = obs.complete_sizes();
    if sizes.len() < 2 {
        return Err(crate::CharacteriseError::Fit(format!(
            "needs every pattern at two sizes or more; have {}",
            sizes.len()
        )));
    }
    let groups = ranges(&sizes, switches);
    let mut segments = fit_segments(obs, &groups, switches);
    bootstrap(obs, &groups, switches, &mut segments);
    let mut fit = Fit {
        window: obs.window,
        rounds: obs.max_rounds(),
        switches: switches.to_vec(),
        within_spread: Vec::new(),
        segments,
        residuals: Vec::new(),
    };
    let model = fit.model();
    for p in Pattern::ALL {
        for (size, measured) in obs.series(p) {
            let at = model.at(size);
            let model_ns = match p {
                Pattern::Pingpong => model.pingpong(size),
                Pattern::Stream => model.stream(size, obs.window),
                Pattern::Send => at.send(size),
                Pattern::Recv => at.recv(size),
            };
            fit.residuals.push(Residual {
                pattern: p,
                size,
                measured_ns: measured,
                model_ns,
            });
        }
    }
    Ok(fit)
}

#[cfg(test)]
mod tests;
