//! The sweep charts: per suite, its headline metric against message size with a line per run
//! and fabric. Times go on log-log axes (OSU's sizes double, latencies span decades);
//! bandwidths on a log-x axis from zero, so equal gaps mean equal MB/s, until their values
//! span more than a decade, where the renderer's rule ([`crate::rules`]) turns the axis log.

use crate::figure::{Axis, Corner, Figure, Line, Panel, Scale, Stroke, Ticks};
use crate::kinds::{is_size_sweep, metric, metric_label, of_suite, suites};
use crate::label::{self, Curve};
use crate::Chart;

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    for suite in suites(curves) {
        let mine = of_suite(curves, suite, is_size_sweep);
        let Some(m) = mine.first().and_then(|c| metric(c.series)) else {
            continue;
        };
        let time = m.is_time();
        let y = if time {
            Axis::new(metric_label(m), Scale::Log10, Ticks::Number)
        } else {
            Axis::new(metric_label(m), Scale::Linear, Ticks::Number).starting_at_zero()
        };
        let mut panel = Panel::new(Axis::sizes(), y);
        panel.legend = Corner::UpperLeft;
        let names = label::names(&mine);
        let mut zero = false;
        for (i, (c, name)) in mine.iter().zip(names).enumerate() {
            zero |= c.series.points.iter().any(|p| p.key.size == Some(0));
            panel.lines.push(Line {
                name,
                points: c
                    .series
                    .points
                    .iter()
                    .filter(|p| !p.samples_ns.is_empty())
                    .map(|p| (p.size() as f64, p.headline()))
                    .collect(),
                stroke: Stroke::SolidMarked,
                colour: i,
            });
        }
        let mut subtitle = label::context(&mine);
        if zero {
            subtitle.push_str(" · size 0 not on the log axis");
        }
        let what = if time { "latency" } else { "bandwidth" };
        out.push(Chart {
            name: format!("{what}-{suite}"),
            figure: Figure::new(
                format!(
                    "{suite}: {} against message size, {}",
                    m.name,
                    label::fabrics(&mine)
                ),
                subtitle,
                vec![panel],
            ),
        });
    }
    out
}
