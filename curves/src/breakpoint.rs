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
    /// The time steps at the switch by more than the tolerance.
    Jump,
    /// The time is continuous at the switch (within the tolerance); only the slope changes.
    Slope,
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
    /// Compared at `before` because that is the first size measured on the right's side, so
    /// the right line there is data while the left line is a short extrapolation.
    fn between(left: &Segment, right: &Segment, tol: Tolerance) -> Breakpoint {
        let before = right.from;
        let on_right = right.at(before);
        let step_us = on_right - left.at(before);
        let kind = if step_us.abs() > tol.allowed_miss(on_right.abs()) {
            Kind::Jump
        } else {
            Kind::Slope
        };
        Breakpoint {
            after: left.to,
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
}

/// The most points a run off the line may have and still count as a blip.
const BLIP_POINTS: usize = 2;

/// Segments, breakpoints and blips of the curve. Blips are taken out and the rest is segmented
/// again, until none is left, so a saw-tooth of blips does not read as a hundred protocols.
pub fn analyse(points: &[(u64, f64)], tol: Tolerance) -> Result<Analysis, CurveError> {
    let mut kept: Vec<(u64, f64)> = points.to_vec();
    let mut off_line = Vec::new();
    let segs = loop {
        let segs = segments(&kept, tol)?;
        let blips = blips(&kept, &segs, tol)?;
        if blips.is_empty() {
            break segs;
        }
        off_line.extend(&blips);
        kept.retain(|(s, _)| !blips.contains(s));
    };
    off_line.sort_unstable();
    let breakpoints = segs
        .windows(2)
        .map(|pair| Breakpoint::between(&pair[0], &pair[1], tol))
        .collect();
    Ok(Analysis {
        segments: segs,
        breakpoints,
        off_line,
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
