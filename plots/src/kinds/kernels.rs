//! Application kernels of one run (NPB, nbody: points keyed by parameters, not by a message
//! size), one chart per series: each kernel's rate as a bar (NPB's Mop/s, nbody's
//! interactions per second: the suite's first higher-is-better metric, else its headline),
//! and beside it each kernel's time split between computing and communicating, as stacked
//! bars of the share of the timed section. Shares rather than seconds, because one run's
//! kernels take times a hundredfold apart (NPB S: EP 0.8 s, IS 0.01 s), which would leave
//! most bars as slivers; the seconds are in the run's summary.

use bench_core::measure::{Better, Metric, Point};

use crate::figure::{Axis, Corner, Figure, Panel, Scale, Ticks};
use crate::kinds::bars::{self, Part};
use crate::kinds::metric_label;
use crate::label::{self, Curve};
use crate::Chart;

/// Palette entries of the split: compute in the first colour, communication in the second.
pub const COMPUTE: usize = 0;
pub const COMM: usize = 1;

/// The points of a series that are kernels: keyed without a size, measured.
pub(crate) fn kernel_points(points: &[Point]) -> Vec<&Point> {
    points
        .iter()
        .filter(|p| p.key.size.is_none() && !p.samples_ns.is_empty())
        .collect()
}

/// The metric a kernel's bar shows: its first rate (higher is better), else its headline.
pub fn rate_metric(p: &Point) -> &Metric {
    p.metrics
        .iter()
        .find(|m| m.better == Better::Higher)
        .unwrap_or_else(|| p.metric())
}

/// The share of a point's timed section spent computing and communicating, in percent;
/// None for a point that does not split its time.
pub fn split_percent(p: &Point) -> Option<(f64, f64)> {
    let parts = p.split_parts();
    let [(cm, compute), (mm, comm)] = parts.as_slice() else {
        return None;
    };
    let (c, m) = (compute.headline_of(cm), comm.headline_of(mm));
    let total = c + m;
    (total > 0.0 && total.is_finite()).then(|| (100.0 * c / total, 100.0 * m / total))
}

/// What tells the points apart: the parameters whose values differ between them (the value
/// alone when only one differs: "cg"), and the parameters they share, for the subtitle.
pub(crate) fn point_names(points: &[&Point]) -> (Vec<String>, String) {
    let keys: std::collections::BTreeSet<&String> =
        points.iter().flat_map(|p| p.key.params.keys()).collect();
    let (differ, same): (Vec<&String>, Vec<&String>) = keys.into_iter().partition(|k| {
        let first = points[0].key.params.get(*k);
        points.iter().any(|p| p.key.params.get(*k) != first)
    });
    let names = points
        .iter()
        .map(|p| {
            let words: Vec<String> = differ
                .iter()
                .map(|k| {
                    let v = p.key.params.get(*k).map(String::as_str).unwrap_or("-");
                    if differ.len() == 1 {
                        v.to_string()
                    } else {
                        format!("{k}={v}")
                    }
                })
                .collect();
            words.join(" ")
        })
        .collect();
    let shared = same
        .iter()
        .filter_map(|k| Some(format!("{k}={}", points[0].key.params.get(*k)?)))
        .collect::<Vec<_>>()
        .join(" ");
    (names, shared)
}

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    for c in curves {
        let s = c.series;
        let points = kernel_points(&s.points);
        if points.is_empty() {
            continue;
        }
        let (mut names, shared) = point_names(&points);
        if names.iter().all(String::is_empty) {
            // One kernel: its suite names the bar; its parameters go in the subtitle.
            names = vec![s.suite.clone(); points.len()];
        }
        let m = rate_metric(points[0]);
        let x = || Axis::named(if points.len() > 1 { "kernel" } else { "" }, names.clone());
        let mut rate = Panel::new(
            x(),
            Axis::new(metric_label(m), Scale::Linear, Ticks::Number).starting_at_zero(),
        );
        rate.legend = Corner::UpperRight;
        let mut split = Panel::new(
            x(),
            Axis::new(
                "share of the timed section (%)",
                Scale::Linear,
                Ticks::Number,
            )
            .starting_at_zero(),
        );
        split.legend = Corner::UpperRight;
        bars::frame(&mut rate, points.len());
        bars::frame(&mut split, points.len());
        for (i, p) in points.iter().enumerate() {
            let pm = rate_metric(p);
            let v = p.headline_of(pm);
            if v.is_finite() {
                bars::bar(&mut rate, i as f64, 0.0, v, "", COMPUTE);
            }
            if let Some((compute, comm)) = split_percent(p) {
                bars::stack(
                    &mut split,
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
        }
        let mut panels = vec![rate];
        if bars::drawn(&split).next().is_some() {
            panels.push(split);
        }
        let one = [*c];
        let mut subtitle = label::context(&one);
        if !shared.is_empty() {
            subtitle = format!("{shared} · {subtitle}");
        }
        let fabric = label::names(&one).remove(0);
        let what = if panels.len() > 1 {
            format!("{} and compute/communication split", m.name)
        } else {
            m.name.clone()
        };
        out.push(Chart {
            name: format!("kernels-{}-{}-n{}", s.suite, s.fabric, s.ranks),
            figure: Figure::new(
                format!(
                    "{}: {what} per kernel, {fabric}, {} ranks",
                    s.suite, s.ranks
                ),
                subtitle,
                panels,
            ),
        });
    }
    out
}
