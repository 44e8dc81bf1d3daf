//! Strong scaling of application kernels: when one kernel (a point keyed by its parameters,
//! not by a message size: `class=A,kernel=cg`) was run at several rank counts, in one run
//! directory or several, its speedup over the smallest count and its parallel efficiency in
//! percent, each with its ideal as a dashed legend entry; and a second chart with, per
//! kernel, its time at each rank count split into computing and communicating as stacked
//! bars. A time metric speeds up as T(n0)/T(n); a rate (Mop/s) as R(n)/R(n0).
//!
//! Speedup goes on a linear axis from zero while the lines stay within a decade (a reader
//! compares 1.6 with 2 more easily on it), else on a log axis: powers of two while nothing
//! falls below a quarter, whose ticks read 0.25, 0.5, 1, 2, 4; below that powers of ten,
//! whose 1-2-5 ticks read 0.02, 0.05, 0.1 where powers of two would print 0.0312.

use std::collections::BTreeMap;

use crate::figure::{Axis, Corner, Figure, Line, Panel, Scale, Stroke, Ticks};
use crate::kinds::bars::{self, Part};
use crate::kinds::kernels::{COMM, COMPUTE};
use crate::kinds::{metric, of_suite, suites};
use crate::label::{self, Curve};
use crate::Chart;

/// Palette entry of the ideal lines: grey, apart from the kernels' colours.
const IDEAL: usize = 9;

/// One rank count of a kernel: its headline and its (compute, comm) seconds if it splits.
#[derive(Debug, Clone, Copy)]
struct AtRanks {
    headline: f64,
    split: Option<(f64, f64)>,
}

/// One kernel on one fabric: what it measured per rank count.
struct Kernel {
    name: String,
    time: bool,
    by_ranks: BTreeMap<usize, AtRanks>,
}

/// The mean compute and communication seconds of a point that splits its time.
fn split_seconds(p: &bench_core::measure::Point) -> Option<(f64, f64)> {
    let parts = p.split_parts();
    let [(cm, compute), (mm, comm)] = parts.as_slice() else {
        return None;
    };
    Some((compute.headline_of(cm), comm.headline_of(mm)))
}

/// The speedup axis for these speedups (the ideal's included).
fn speedup_axis(values: impl Iterator<Item = f64>) -> Axis {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if hi < 10.0 * lo {
        Axis::new("speedup", Scale::Linear, Ticks::Number).starting_at_zero()
    } else if lo >= 0.25 {
        Axis::new("speedup", Scale::Log2, Ticks::Number)
    } else {
        Axis::new("speedup", Scale::Log10, Ticks::Number)
    }
}

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    for suite in suites(curves) {
        let mine = of_suite(curves, suite, |_| true);
        let kernels = kernels_of(&mine);
        if kernels.is_empty() {
            continue;
        }
        out.push(Chart {
            name: format!("scaling-{suite}"),
            figure: Figure::new(
                format!(
                    "{suite}: speedup and efficiency against ranks, {}",
                    label::fabrics(&mine)
                ),
                format!(
                    "{} · speedup over the fewest ranks measured",
                    label::context(&mine)
                ),
                speedup_and_efficiency(&kernels),
            ),
        });
        let splits: Vec<Panel> = kernels.iter().filter_map(split_panel).collect();
        if !splits.is_empty() {
            out.push(Chart {
                name: format!("scaling-split-{suite}"),
                figure: Figure::new(
                    format!(
                        "{suite}: compute and communication time against ranks, {}",
                        label::fabrics(&mine)
                    ),
                    format!(
                        "{} · mean over ranks of each rank's time",
                        label::context(&mine)
                    ),
                    splits,
                ),
            });
        }
    }
    out
}

/// The kernels of one suite's curves measured at two or more rank counts.
fn kernels_of(mine: &[Curve<'_>]) -> Vec<Kernel> {
    let mut kernels: Vec<Kernel> = Vec::new();
    for c in mine {
        let Some(m) = metric(c.series) else { continue };
        for p in c.series.points.iter().filter(|p| p.key.size.is_none()) {
            if p.samples_ns.is_empty() {
                continue;
            }
            let name = if p.key.params.is_empty() {
                c.series.fabric.clone()
            } else {
                format!(
                    "{} {}",
                    c.series.fabric,
                    p.key.params_text().replace(';', " ")
                )
            };
            let k = match kernels.iter_mut().position(|k| k.name == name) {
                Some(i) => &mut kernels[i],
                None => {
                    kernels.push(Kernel {
                        name,
                        time: m.is_time(),
                        by_ranks: BTreeMap::new(),
                    });
                    kernels.last_mut().expect("just pushed")
                }
            };
            // A rank count measured twice keeps its first run.
            k.by_ranks.entry(c.series.ranks).or_insert(AtRanks {
                headline: p.headline(),
                split: split_seconds(p),
            });
        }
    }
    kernels.retain(|k| k.by_ranks.len() >= 2);
    kernels
}

/// Speedup and efficiency, a line per kernel, each panel with its ideal.
fn speedup_and_efficiency(kernels: &[Kernel]) -> Vec<Panel> {
    let ranks_axis = || Axis::new("ranks", Scale::Log2, Ticks::Number);
    let mut speedup = Panel::new(ranks_axis(), ranks_axis());
    speedup.legend = Corner::UpperLeft;
    let mut efficiency = Panel::new(
        ranks_axis(),
        Axis::new("parallel efficiency (%)", Scale::Linear, Ticks::Number).starting_at_zero(),
    );
    efficiency.legend = Corner::LowerLeft;
    let mut widest: (usize, usize) = (usize::MAX, 0);
    for (i, k) in kernels.iter().enumerate() {
        let (&n0, v0) = k.by_ranks.iter().next().expect("two or more");
        let v0 = v0.headline;
        widest = (
            widest.0.min(n0),
            widest
                .1
                .max(*k.by_ranks.keys().last().expect("two or more")),
        );
        let s: Vec<(f64, f64)> = k
            .by_ranks
            .iter()
            .map(|(&n, at)| {
                let v = at.headline;
                let s = if k.time { v0 / v } else { v / v0 };
                (n as f64, s)
            })
            .collect();
        efficiency.lines.push(Line {
            name: k.name.clone(),
            points: s
                .iter()
                .map(|&(n, sp)| (n, 100.0 * sp / (n / n0 as f64)))
                .collect(),
            stroke: Stroke::SolidMarked,
            colour: i,
        });
        speedup.lines.push(Line {
            name: k.name.clone(),
            points: s,
            stroke: Stroke::SolidMarked,
            colour: i,
        });
    }
    let (lo, hi) = (widest.0 as f64, widest.1 as f64);
    speedup.lines.push(Line {
        name: format!("ideal (speedup = ranks/{lo})"),
        points: vec![(lo, 1.0), (hi, hi / lo)],
        stroke: Stroke::Dashed,
        colour: IDEAL,
    });
    speedup.y = speedup_axis(
        speedup
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1)),
    );
    // The ideal as a legend entry rather than a level's label, which would print over the
    // first point: every kernel is at 100 % there.
    efficiency.lines.push(Line {
        name: "ideal (100 %)".into(),
        points: vec![(lo, 100.0), (hi, 100.0)],
        stroke: Stroke::Dashed,
        colour: IDEAL,
    });
    vec![speedup, efficiency]
}

/// One kernel's compute and communication seconds per rank count as stacked bars; None when
/// it measured no split.
fn split_panel(k: &Kernel) -> Option<Panel> {
    let names: Vec<String> = k.by_ranks.keys().map(|n| n.to_string()).collect();
    let mut panel = Panel::new(
        Axis::named(format!("ranks · {}", k.name), names),
        Axis::new("time (s)", Scale::Linear, Ticks::Number).starting_at_zero(),
    );
    panel.legend = Corner::UpperRight;
    bars::frame(&mut panel, k.by_ranks.len());
    for (i, at) in k.by_ranks.values().enumerate() {
        let Some((compute, comm)) = at.split else {
            continue;
        };
        bars::stack(
            &mut panel,
            i as f64,
            &[
                Part {
                    name: "compute",
                    value: compute,
                    colour: COMPUTE,
                },
                Part {
                    name: "communication",
                    value: comm,
                    colour: COMM,
                },
            ],
        );
    }
    let any = bars::drawn(&panel).next().is_some();
    any.then_some(panel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::axis;

    fn tick_labels(values: &[f64]) -> (Scale, Vec<String>) {
        let a = speedup_axis(values.iter().copied());
        let placed: Vec<f64> = values
            .iter()
            .filter_map(|&v| axis::place(a.scale, v))
            .collect();
        let (lo, hi) = axis::range(&a, &placed);
        let labels = axis::labels(&a, &axis::ticks_for(&a, lo, hi));
        (a.scale, labels)
    }

    #[test]
    fn speedup_is_linear_within_a_decade_and_its_log_ticks_read_plainly() {
        assert_eq!(tick_labels(&[1.0, 1.6, 1.9, 4.0]).0, Scale::Linear);
        let (scale, labels) = tick_labels(&[1.0, 0.3, 8.0, 32.0]);
        assert_eq!(scale, Scale::Log2);
        assert_eq!(labels, ["0.25", "0.5", "1", "2", "4", "8", "16", "32"]);
        // Far below a quarter, powers of two would print 0.0312: powers of ten instead.
        let (scale, labels) = tick_labels(&[1.0, 0.03, 8.0]);
        assert_eq!(scale, Scale::Log10);
        assert!(labels.iter().all(|l| l.len() <= 4), "{labels:?}");
        assert!(labels.contains(&"0.1".to_string()), "{labels:?}");
    }
}
