//! Where the protocols switch: `curves` reads the ping-pong curve as straight pieces, and every
//! switch between them bounds a segment. A switch is only known to lie between two measured
//! sizes; refinement measures sizes in between and reads the curve again.
//!
//! On a real fabric a bend in the curve may be the host, not a protocol: a size whose rounds
//! disagree by more than the line's tolerance bends the curve in one sweep and not the next.
//! A protocol's switch shows in every round, whatever mode the host ran that round in (shm on
//! this VM runs whole rounds four times slower or not), so each round is read on its own: how
//! far its ping-pong after the bend departs from what the line before predicts, relative to
//! its own time before the bend. A switch stands only where the median of those departures
//! exceeds their interquartile range over the rounds.

use curves::{Kind, Tolerance};
use serde::Serialize;

use crate::error::CharacteriseError;
use crate::observations::{Observations, Pattern};

/// The most segments a card holds (the `loggp` fabric's slots).
pub const MAX_SEGMENTS: usize = 6;

/// Sizes after a switch at which its effect is read: a slope change shows a size or two after
/// the switch, not at the first size, where the lines may still cross.
const EFFECT_SIZES: usize = 2;

/// A switch between two consecutive measured sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Switch {
    /// The last size measured before it.
    pub after: u64,
    /// The first size measured after it: where the new segment starts.
    pub before: u64,
    /// A jump (a fixed cost appearing: a handshake) or a change of slope (a copy mode).
    pub kind: Kind,
    /// What the switch adds to the ping-pong at `before`, relative to the time there.
    pub step: f64,
    /// How far a round's ping-pong leaves the line before the switch, relative to that round's
    /// own time at `after` (a jump's at the first size after it, a slope change's the most over
    /// the first two); the median over the rounds.
    pub effect: f64,
    /// The interquartile range of those departures over the rounds (0 with one round, as on
    /// an emulated fabric, where every bend is real).
    pub spread: f64,
}

impl Switch {
    /// Whether the switch stands out from the run-to-run spread.
    pub fn significant(&self) -> bool {
        self.effect > self.spread
    }
}

/// Every bend the ping-pong curve shows, significant or not, each with its effect and the
/// spread around it. Only the ping-pong: within a protocol it is a straight line
/// (`o_s + o_r + L + s*G`), while a stream bends wherever its bottleneck moves from one side's
/// CPU to the wire, which is the model's own max of the three and not a switch.
pub fn candidates(obs: &Observations, tol: Tolerance) -> Result<Vec<Switch>, CharacteriseError> {
    let points: Vec<(u64, f64)> = obs
        .series(Pattern::Pingpong)
        .into_iter()
        .map(|(s, ns)| (s, ns / 1e3))
        .collect();
    if points.len() < 2 {
        return Ok(Vec::new());
    }
    let analysis = curves::analyse(&points, tol).map_err(CharacteriseError::Curve)?;
    Ok(analysis
        .breakpoints
        .into_iter()
        .map(|b| {
            let after_it: Vec<(u64, f64)> = points
                .iter()
                .copied()
                .filter(|&(s, _)| s >= b.before && s <= b.right.to)
                .take(EFFECT_SIZES)
                .collect();
            // A jump shows at the first size after it; a slope change a size or two later.
            let read = match b.kind {
                Kind::Jump => &after_it[..after_it.len().min(1)],
                _ => &after_it[..],
            };
            let departures = departures(obs, b.after, read, &|s| b.left.at(s));
            let (effect, spread) = crate::observations::median_and_iqr(departures);
            Switch {
                after: b.after,
                before: b.before,
                kind: b.kind,
                step: b.step_us / b.right.at(b.before).abs().max(f64::MIN_POSITIVE),
                effect,
                spread,
            }
        })
        .collect())
}

/// Each round's departure from the line before a bend: the most, over the sizes after it, of
/// |(the round's time there / its time at `after`) / (the line's ratio of the same) - 1|.
/// Rounds are matched by their order (the k-th round at every size was one sweep); the fewest
/// rounds any of the sizes has are read.
fn departures(
    obs: &Observations,
    after: u64,
    after_it: &[(u64, f64)],
    line: &dyn Fn(u64) -> f64,
) -> Vec<f64> {
    let Some(base) = obs.rounds(Pattern::Pingpong, after) else {
        return Vec::new();
    };
    let at: Vec<(u64, &[f64])> = after_it
        .iter()
        .filter_map(|&(s, _)| obs.rounds(Pattern::Pingpong, s).map(|r| (s, r)))
        .collect();
    let k = at.iter().map(|(_, r)| r.len()).fold(base.len(), usize::min);
    let line_at_after = line(after).max(f64::MIN_POSITIVE);
    (0..k)
        .map(|j| {
            at.iter()
                .map(|&(s, r)| {
                    let expected = line(s) / line_at_after;
                    let measured = r[j] / base[j].max(f64::MIN_POSITIVE);
                    (measured / expected.max(f64::MIN_POSITIVE) - 1.0).abs()
                })
                .fold(0.0, f64::max)
        })
        .collect()
}

/// The switches that stand out from the run-to-run spread, at most `MAX_SEGMENTS - 1` (the
/// largest steps kept).
pub fn switches(obs: &Observations, tol: Tolerance) -> Result<Vec<Switch>, CharacteriseError> {
    let mut all: Vec<Switch> = candidates(obs, tol)?
        .into_iter()
        .filter(Switch::significant)
        .collect();
    if all.len() >= MAX_SEGMENTS {
        all.sort_by(|a, b| b.step.abs().total_cmp(&a.step.abs()));
        all.truncate(MAX_SEGMENTS - 1);
    }
    all.sort_by_key(|s| s.before);
    Ok(all)
}

/// Sizes to measure inside each switch's interval: `per_switch` evenly spaced, whole bytes,
/// none already measured.
pub fn refinement(switches: &[Switch], per_switch: u64, measured: &[u64]) -> Vec<u64> {
    let mut out = Vec::new();
    for s in switches {
        let width = s.before - s.after;
        for j in 1..=per_switch {
            let size = s.after + width * j / (per_switch + 1);
            if size > s.after && size < s.before && !measured.contains(&size) {
                out.push(size);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The fewest sizes a segment needs: with two, its lines are exact and say nothing of noise;
/// with one, a slope cannot be read at all.
pub const MIN_SIZES: usize = 3;

/// Drops switches until every segment holds at least [`MIN_SIZES`] of `sizes`: a segment too
/// short to fit is a disturbed measurement or two (a real fabric on a busy host), not a
/// protocol. Of a short segment's two switches, the smaller step goes.
pub fn prune(mut switches: Vec<Switch>, sizes: &[u64]) -> Vec<Switch> {
    loop {
        let groups = ranges(sizes, &switches);
        let Some(k) = groups.iter().position(|g| g.len() < MIN_SIZES) else {
            return switches;
        };
        if switches.is_empty() {
            return switches;
        }
        // Segment k lies between switch k-1 and switch k.
        let drop = match (k.checked_sub(1), (k < switches.len()).then_some(k)) {
            (Some(l), Some(r)) => {
                if switches[l].step.abs() <= switches[r].step.abs() {
                    l
                } else {
                    r
                }
            }
            (Some(l), None) => l,
            (None, Some(r)) => r,
            (None, None) => return switches,
        };
        switches.remove(drop);
    }
}

/// The sizes each segment holds: bounded by the switches, as (first, last) measured sizes.
pub fn ranges(sizes: &[u64], switches: &[Switch]) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> = vec![Vec::new(); switches.len() + 1];
    for &s in sizes {
        let k = switches.partition_point(|w| w.before <= s);
        out[k].push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_protocols() -> Observations {
        let mut obs = Observations::new(64);
        let sizes: Vec<u64> = (0..=22).map(|k| 1u64 << k).collect();
        for &s in &sizes {
            let x = s as f64;
            let (pp, st) = if s <= 32768 {
                (1500.0 + 0.15 * x, 320.0 + 0.08 * x)
            } else {
                (4000.0 + 0.08 * x, 350.0 + 0.08 * x)
            };
            obs.insert(Pattern::Pingpong, s, pp);
            obs.insert(Pattern::Stream, s, st);
        }
        obs
    }

    #[test]
    fn a_rendezvous_switch_is_one_switch_and_refinement_splits_its_interval() {
        let obs = two_protocols();
        let sw = switches(&obs, Tolerance::default()).unwrap();
        assert_eq!(sw.len(), 1, "{sw:?}");
        assert_eq!((sw[0].after, sw[0].before), (32768, 65536));
        // 1500 + 0.15x and 4000 + 0.08x ns meet at 35.7 KB, between the two sizes: the
        // handshake's cost is paid back by the cheaper bytes, with no step in the time.
        assert_eq!(sw[0].kind, Kind::Slope);
        let refine = refinement(&sw, 7, &[32768, 65536]);
        assert_eq!(refine.len(), 7);
        assert_eq!(refine[0], 32768 + 4096);
        let r = ranges(&[1, 32768, 36864, 65536], &sw);
        assert_eq!(r, vec![vec![1, 32768, 36864], vec![65536]]);
    }

    #[test]
    fn segments_too_short_to_fit_lose_their_smaller_switch() {
        let sw = |after: u64, before: u64, step: f64| Switch {
            after,
            before,
            kind: Kind::Jump,
            step,
            effect: 1.0,
            spread: 0.0,
        };
        let sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512];
        // A one-size segment at 64 between two switches: the smaller (at 64) goes, leaving
        // 64 with the sizes after it.
        let kept = prune(vec![sw(32, 64, 0.3), sw(64, 128, 0.1)], &sizes);
        assert_eq!(kept, vec![sw(32, 64, 0.3)]);
        // A last segment of two sizes loses its switch.
        let kept = prune(vec![sw(128, 256, 0.5)], &sizes);
        assert!(kept.is_empty());
        // Long enough segments keep theirs.
        let kept = prune(vec![sw(16, 32, 0.5)], &sizes);
        assert_eq!(kept.len(), 1);
    }
}
