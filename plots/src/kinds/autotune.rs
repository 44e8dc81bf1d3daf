//! The autotune charts, one per decision, each drawn from the measurements autotune.json
//! keeps:
//! - a threshold: cost per message against size with the protocol forced each way, their
//!   piecewise fits, the bisection's probes, and the chosen and default thresholds and the
//!   near-equal range marked: the crossover the threshold was set at;
//! - a fragment size: each message size's cost against the candidate fragment size,
//!   relative to the best candidate at that size, chosen and near-equal values marked;
//! - an on/off switch: the ratio of median costs per size with its 95 % interval, and 1
//!   (no difference) marked.

use autotune::outcome::{
    Decision, Evidence, Fit, FragmentEvidence, Measurement, SwitchEvidence, ThresholdEvidence,
};
use autotune::Outcome;
use bench_core::size::parse_size;

use crate::figure::{
    Axis, Band, Corner, Figure, Level, Line, Mark, Panel, Scale, Span, Stroke, Ticks,
};
use crate::Chart;

pub fn charts(o: &Outcome) -> Vec<Chart> {
    o.decisions
        .iter()
        .filter_map(|d| {
            let panel = match &d.evidence {
                Evidence::Threshold(t) => threshold(o, d, t),
                Evidence::Fragment(f) => fragment(o, d, f),
                Evidence::Switch(s) => switch(d, s),
                // Nothing was measured: no chart.
                Evidence::NotApplicable { .. } => None,
            }?;
            let emulated = if o.virtual_time {
                " · emulated in virtual time"
            } else {
                ""
            };
            Some(Chart {
                name: format!(
                    "autotune-{}-{}",
                    o.fabric.replace(['/', ' '], "_"),
                    d.param.replace(['/', ' '], "_")
                ),
                figure: Figure::new(
                    format!(
                        "autotune {} on {}: chosen {} (default {})",
                        d.param, o.fabric, d.chosen, d.default
                    ),
                    format!(
                        "objective {} · {} · {}{emulated}",
                        o.objective, d.confidence, o.start_time
                    ),
                    vec![panel],
                ),
            })
        })
        .collect()
}

fn measurement(o: &Outcome, id: usize) -> Option<&Measurement> {
    o.measurements.iter().find(|m| m.id == id)
}

fn cost_line(m: &Measurement, name: String, colour: usize) -> Line {
    Line {
        name,
        points: m
            .points
            .iter()
            .filter(|p| p.cost_us.is_finite())
            .map(|p| (p.size as f64, p.cost_us))
            .collect(),
        stroke: Stroke::SolidMarked,
        colour,
    }
}

/// A piecewise fit as lines over each segment's sizes.
fn fit_lines(fits: &[Fit], colour: usize, name: &str) -> Vec<Line> {
    fits.iter()
        .enumerate()
        .map(|(i, f)| {
            let at = |s: f64| f.latency_us + f.bandwidth_mbs.map_or(0.0, |b| s / b);
            let (a, b) = (f.from.max(1) as f64, f.to.max(1) as f64);
            let points = (0..=16)
                .map(|k| {
                    let x = a * (b / a).powf(k as f64 / 16.0);
                    (x, at(x))
                })
                .collect();
            Line {
                name: if i == 0 {
                    name.to_string()
                } else {
                    String::new()
                },
                points,
                stroke: Stroke::Dashed,
                colour,
            }
        })
        .collect()
}

fn threshold(o: &Outcome, d: &Decision, t: &ThresholdEvidence) -> Option<Panel> {
    let eager = measurement(o, t.eager_sweep)?;
    let rendezvous = measurement(o, t.rendezvous_sweep)?;
    let mut p = Panel::new(
        Axis::sizes(),
        Axis::new(
            format!("cost per message (us), {}", t.workload),
            Scale::Log10,
            Ticks::Number,
        ),
    );
    p.legend = Corner::UpperLeft;
    p.lines.push(cost_line(
        eager,
        format!("eager forced ({})", t.eager_value),
        0,
    ));
    p.lines.push(cost_line(
        rendezvous,
        format!("rendezvous forced ({})", t.rendezvous_value),
        1,
    ));
    p.lines.extend(fit_lines(&t.eager_fit, 0, "piecewise fits"));
    p.lines.extend(fit_lines(&t.rendezvous_fit, 1, ""));
    let probes: Vec<(f64, f64)> = t
        .probes
        .iter()
        .flat_map(|pr| {
            [
                (pr.size as f64, pr.eager_us),
                (pr.size as f64, pr.rendezvous_us),
            ]
        })
        .collect();
    if !probes.is_empty() {
        p.lines.push(Line {
            name: "bisection probes".into(),
            points: probes,
            stroke: Stroke::Markers,
            colour: 4,
        });
    }
    let grid: Vec<f64> = eager.points.iter().map(|pt| pt.size as f64).collect();
    mark_choice(&mut p, d, &grid);
    Some(p)
}

fn fragment(o: &Outcome, d: &Decision, f: &FragmentEvidence) -> Option<Panel> {
    let mut p = Panel::new(
        Axis::new(format!("{} (bytes)", d.param), Scale::Log2, Ticks::Bytes),
        Axis::new(
            format!("cost relative to the best candidate, {}", f.workload),
            Scale::Linear,
            Ticks::Number,
        ),
    );
    p.legend = Corner::UpperRight;
    // Per message size: (candidate value, cost) of every candidate that ran.
    for (i, &size) in f.sizes.iter().enumerate() {
        let mut pts: Vec<(f64, f64)> = f
            .candidates
            .iter()
            .filter_map(|c| {
                let v = parse_size(&c.value).ok()? as f64;
                let m = measurement(o, c.measurement)?;
                let cost = m.points.iter().find(|pt| pt.size == size)?.cost_us;
                cost.is_finite().then_some((v, cost))
            })
            .collect();
        let best = pts.iter().map(|&(_, c)| c).fold(f64::INFINITY, f64::min);
        if pts.is_empty() || !best.is_finite() || best <= 0.0 {
            continue;
        }
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        p.lines.push(Line {
            name: format!("{} messages", bench_core::size::format_size(size)),
            points: pts.into_iter().map(|(v, c)| (v, c / best)).collect(),
            stroke: Stroke::SolidMarked,
            colour: i,
        });
    }
    if p.lines.is_empty() {
        return None;
    }
    p.levels.push(Level {
        y: 1.0,
        label: "best".into(),
    });
    let grid: Vec<f64> = f
        .candidates
        .iter()
        .filter_map(|c| parse_size(&c.value).ok())
        .map(|v| v as f64)
        .collect();
    mark_choice(&mut p, d, &grid);
    Some(p)
}

fn switch(d: &Decision, s: &SwitchEvidence) -> Option<Panel> {
    if s.per_size.is_empty() {
        return None;
    }
    let mut p = Panel::new(
        Axis::sizes(),
        Axis::new(
            format!(
                "cost {}={} / {}={} (median ratio), {}",
                d.param, s.values[1], d.param, s.values[0], s.workload
            ),
            Scale::Linear,
            Ticks::Number,
        ),
    );
    p.legend = Corner::UpperLeft;
    p.bands.push(Band {
        name: "95 % interval".into(),
        points: s
            .per_size
            .iter()
            .map(|v| (v.size as f64, v.low, v.high))
            .collect(),
        colour: 0,
        opacity: 0.25,
    });
    p.lines.push(Line {
        name: "ratio of medians".into(),
        points: s
            .per_size
            .iter()
            .map(|v| (v.size as f64, v.ratio))
            .collect(),
        stroke: Stroke::SolidMarked,
        colour: 0,
    });
    p.levels.push(Level {
        y: 1.0,
        label: format!("no difference (below: {} faster)", s.values[1]),
    });
    Some(p)
}

/// The chosen value, the default and the near-equal values as marks on a size axis. `grid`
/// holds the values the search could have chosen (the candidates, or the sizes measured):
/// each near-equal value is shaded from halfway to its lower neighbour to halfway to its
/// upper one, so a value between two near-equal ones that is not near-equal stays unshaded.
fn mark_choice(p: &mut Panel, d: &Decision, grid: &[f64]) {
    let near: Vec<f64> = d
        .near_equal
        .iter()
        .filter_map(|v| parse_size(v).ok())
        .map(|v| v as f64)
        .collect();
    if near.len() > 1 {
        for (i, (from, to)) in near_spans(&near, grid).into_iter().enumerate() {
            p.spans.push(Span {
                from,
                to,
                label: if i == 0 {
                    "near-equal".into()
                } else {
                    String::new()
                },
                colour: 3,
            });
        }
    }
    if let Ok(v) = parse_size(&d.default) {
        if d.default != d.chosen {
            p.marks.push(Mark {
                x: v as f64,
                label: format!("default {}", d.default),
                stroke: Stroke::Dashed,
                colour: 9,
            });
        }
    }
    if let Ok(v) = parse_size(&d.chosen) {
        p.marks.push(Mark {
            x: v as f64,
            label: format!("chosen {}", d.chosen),
            stroke: Stroke::Solid,
            colour: 2,
        });
    }
}

/// The shaded ranges of the near-equal values on `grid` (geometric midpoints to the
/// neighbours), neighbouring ones merged.
pub fn near_spans(near: &[f64], grid: &[f64]) -> Vec<(f64, f64)> {
    let mut g: Vec<f64> = grid
        .iter()
        .chain(near)
        .copied()
        .filter(|v| *v > 0.0)
        .collect();
    g.sort_by(f64::total_cmp);
    g.dedup();
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &v) in g.iter().enumerate() {
        if !near.contains(&v) {
            continue;
        }
        let lo = if i > 0 { (g[i - 1] * v).sqrt() } else { v };
        let hi = if i + 1 < g.len() {
            (v * g[i + 1]).sqrt()
        } else {
            v
        };
        match out.last_mut() {
            Some(last) if last.1 >= lo => last.1 = hi,
            _ => out.push((lo, hi)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::near_spans;

    #[test]
    fn a_value_between_near_equal_ones_is_not_shaded() {
        let k = 1024.0;
        let grid = [8.0 * k, 16.0 * k, 32.0 * k, 64.0 * k, 128.0 * k];
        let s = near_spans(&[16.0 * k, 64.0 * k], &grid);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[0].1 < 32.0 * k && s[1].0 > 32.0 * k, "{s:?}");
        // Neighbours merge into one range.
        let s = near_spans(&[16.0 * k, 32.0 * k, 64.0 * k], &grid);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].0 < 16.0 * k && s[0].1 > 64.0 * k, "{s:?}");
    }
}
