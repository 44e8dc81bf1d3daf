//! Strong scaling of application kernels: when one kernel (a point keyed by its parameters,
//! not by a message size: `class=A,kernel=cg`) was run at several rank counts, in one run
//! directory or several, its speedup over the smallest count and its parallel efficiency,
//! with the ideal line. A time metric speeds up as T(n0)/T(n); a rate (Mop/s) as R(n)/R(n0).

use std::collections::BTreeMap;

use crate::figure::{Axis, Corner, Figure, Level, Line, Panel, Scale, Stroke, Ticks};
use crate::kinds::{metric, of_suite, suites};
use crate::label::{self, Curve};
use crate::Chart;

/// One kernel on one fabric: headline per rank count.
struct Kernel {
    name: String,
    time: bool,
    by_ranks: BTreeMap<usize, f64>,
}

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    for suite in suites(curves) {
        let mine = of_suite(curves, suite, |_| true);
        let mut kernels: Vec<Kernel> = Vec::new();
        for c in &mine {
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
                k.by_ranks.entry(c.series.ranks).or_insert(p.headline());
            }
        }
        kernels.retain(|k| k.by_ranks.len() >= 2);
        if kernels.is_empty() {
            continue;
        }
        let ranks_axis = || Axis::new("ranks", Scale::Log2, Ticks::Number);
        let mut speedup = Panel::new(
            ranks_axis(),
            Axis::new("speedup", Scale::Log2, Ticks::Number),
        );
        speedup.legend = Corner::UpperLeft;
        let mut efficiency = Panel::new(
            ranks_axis(),
            Axis::new("parallel efficiency", Scale::Linear, Ticks::Number).starting_at_zero(),
        );
        efficiency.legend = Corner::LowerLeft;
        efficiency.levels.push(Level {
            y: 1.0,
            label: "ideal".into(),
        });
        let mut widest: (usize, usize) = (usize::MAX, 0);
        for (i, k) in kernels.iter().enumerate() {
            let (&n0, &v0) = k.by_ranks.iter().next().expect("two or more");
            widest = (
                widest.0.min(n0),
                widest.1.max(*k.by_ranks.keys().last().unwrap()),
            );
            let s: Vec<(f64, f64)> = k
                .by_ranks
                .iter()
                .map(|(&n, &v)| {
                    let s = if k.time { v0 / v } else { v / v0 };
                    (n as f64, s)
                })
                .collect();
            efficiency.lines.push(Line {
                name: k.name.clone(),
                points: s.iter().map(|&(n, sp)| (n, sp / (n / n0 as f64))).collect(),
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
        let (lo, hi) = widest;
        speedup.lines.push(Line {
            name: format!("ideal (speedup = ranks/{lo})"),
            points: vec![(lo as f64, 1.0), (hi as f64, hi as f64 / lo as f64)],
            stroke: Stroke::Dashed,
            colour: 9,
        });
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
                vec![speedup, efficiency],
            ),
        });
    }
    out
}
