//! Naming the switches between consecutive segments.

use std::fmt;

use crate::segment::{segments, Segment};
use crate::{CurveError, Tolerance};

/// What a switch looks like, which hints at its cause: a jump is a fixed cost appearing at
/// once (a rendezvous handshake), a slope change with no jump is the per-byte cost changing
/// (a copy mode, a cache or page-size limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// No switch between the two lines anywhere in `(after, before]` keeps the time
    /// continuous: it steps by more than the tolerance wherever the switch lies.
    Jump,
    /// The two lines meet (within the tolerance) somewhere in `[after, before]`, so the time
    /// can be continuous at the switch; only the slope changes.
    Slope,
}

impl Kind {
    /// As a person says it: "jump", "slope change".
    pub fn words(self) -> &'static str {
        match self {
            Kind::Jump => "jump",
            Kind::Slope => "slope change",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Jump => "jump",
            Kind::Slope => "slope",
        })
    }
}

/// Where one segment hands over to the next. Only sizes that were measured are known, so the
/// switch is pinned to the interval `(after, before]`, not to one size.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Breakpoint {
    /// Last size of the left segment.
    pub after: u64,
    /// First size of the right segment.
    pub before: u64,
    pub kind: Kind,
    /// `right.at(before) - left.at(before)`: what the switch adds at the first size it
    /// applies to (negative when the new protocol is faster there).
    pub step_us: f64,
    pub left: Segment,
    pub right: Segment,
}

impl Breakpoint {
    /// The step is given at `before` because that is the first size measured on the right's
    /// side, so the right line there is data while the left line is a short extrapolation.
    /// The kind is not read from that one size: only sizes up to `after` and from `before`
    /// were measured, so the switch may lie anywhere between, and where the two lines cross
    /// in there (their difference changes sign, or comes within the tolerance at either end)
    /// the curve can turn without a step. Reading the step at `before` alone called such a
    /// turn a jump whenever the sizes were far apart (a log scale's 8 KiB to 16 KiB).
    fn between(left: &Segment, right: &Segment, tol: Tolerance) -> Breakpoint {
        let (after, before) = (left.to, right.from);
        let on_right = right.at(before);
        let step_us = on_right - left.at(before);
        let on_left = left.at(after);
        let step_after = right.at(after) - on_left;
        let meets = step_us.abs() <= tol.allowed_miss(on_right.abs())
            || step_after.abs() <= tol.allowed_miss(on_left.abs())
            || step_us.signum() != step_after.signum();
        let kind = if meets { Kind::Slope } else { Kind::Jump };
        Breakpoint {
            after,
            before,
            kind,
            step_us,
            left: left.clone(),
            right: right.clone(),
        }
    }
}

/// A curve read as protocols: its segments, the switches between them, and the sizes that sit
/// off the line on their own.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Analysis {
    pub segments: Vec<Segment>,
    pub breakpoints: Vec<Breakpoint>,
    /// Sizes of one- or two-point segments whose neighbours on both sides lie on one line: a
    /// disturbed measurement, or a packet-boundary blip (RapidIO's 256-byte segments make a
    /// notch every 256 bytes), not a change of protocol. The segments are fitted without them.
    pub off_line: Vec<u64>,
    /// Sizes that made a segment of one point at an end of the curve (size 0 on its own, say):
    /// one size fits any line, so it is no evidence of a protocol, and its "segment" would
    /// have no slope to give. Set aside like the blips, so the curve starts or ends with the
    /// switch beside it; more sizes measured there would tell what it is. A one-size segment
    /// between two different lines stays: both its switches are real (Hyperlink's 8 KiB,
    /// between the eager and the DMA lines).
    pub lone: Vec<u64>,
}

/// The most points a run off the line may have and still count as a blip.
const BLIP_POINTS: usize = 2;

/// Segments, breakpoints and blips of the curve. Blips are taken out and the rest is segmented
/// again, until none is left, so a saw-tooth of blips does not read as a hundred protocols;
/// then one-point segments, the same way (a curve of one segment keeps it, however short).
pub fn analyse(points: &[(u64, f64)], tol: Tolerance) -> Result<Analysis, CurveError> {
    let mut kept: Vec<(u64, f64)> = points.to_vec();
    let mut off_line = Vec::new();
    let mut lone = Vec::new();
    let segs = loop {
        let segs = segments(&kept, tol)?;
        let blips = blips(&kept, &segs, tol)?;
        if !blips.is_empty() {
            off_line.extend(&blips);
            kept.retain(|(s, _)| !blips.contains(s));
            continue;
        }
        let last = segs.len().saturating_sub(1);
        let single: Vec<u64> = if segs.len() > 1 {
            segs.iter()
                .enumerate()
                .filter(|(i, s)| s.points == 1 && (*i == 0 || *i == last))
                .map(|(_, s)| s.from)
                .collect()
        } else {
            Vec::new()
        };
        if single.is_empty() {
            break segs;
        }
        lone.extend(&single);
        kept.retain(|(s, _)| !single.contains(s));
    };
    off_line.sort_unstable();
    lone.sort_unstable();
    let breakpoints = segs
        .windows(2)
        .map(|pair| Breakpoint::between(&pair[0], &pair[1], tol))
        .collect();
    Ok(Analysis {
        segments: segs,
        breakpoints,
        off_line,
        lone,
    })
}

/// The sizes of short interior segments whose two neighbours fit one line together.
fn blips(points: &[(u64, f64)], segs: &[Segment], tol: Tolerance) -> Result<Vec<u64>, CurveError> {
    let mut out = Vec::new();
    for w in segs.windows(3) {
        let (left, mid, right) = (&w[0], &w[1], &w[2]);
        if mid.points > BLIP_POINTS {
            continue;
        }
        let around: Vec<(u64, f64)> = points
            .iter()
            .copied()
            .filter(|&(s, _)| {
                (left.from..=left.to).contains(&s) || (right.from..=right.to).contains(&s)
            })
            .collect();
        if segments(&around, tol)?.len() == 1 {
            out.extend(
                points
                    .iter()
                    .map(|&(s, _)| s)
                    .filter(|s| (mid.from..=mid.to).contains(s)),
            );
        }
    }
    Ok(out)
}

/// The switches of the curve: one between each two consecutive segments of [`analyse`].
pub fn breakpoints(points: &[(u64, f64)], tol: Tolerance) -> Result<Vec<Breakpoint>, CurveError> {
    Ok(analyse(points, tol)?.breakpoints)
}
