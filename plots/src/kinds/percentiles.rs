//! Latency percentiles per size, one chart per series: the median as a line and the spread
//! above it as bands (p50-p90, p90-p99, p99-p99.9, p99.9-max), each a clearly darker shade
//! nearer the median, from the exact per-sample values summary.csv holds. A series without
//! spread (an emulated fabric in virtual time gives every sample the same value) draws one
//! line and says so, rather than listing four bands of zero width.

use results::model::Record;

use crate::figure::{Axis, Band, Corner, Figure, Line, Panel, Scale, Stroke, Ticks};
use crate::kinds::{is_size_sweep, metric, metric_label};
use crate::label::{self, Curve};
use crate::Chart;

/// Which two statistics of a record bound a band.
type Edges = fn(&Record) -> (f64, f64);

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let mut out = Vec::new();
    // Named among all curves, so two runs of one fabric stay apart in the titles.
    let names = label::names(curves);
    for (c, name) in curves.iter().zip(names) {
        let s = c.series;
        let Some(m) = metric(s) else { continue };
        if !is_size_sweep(s) || !m.is_time() {
            continue;
        }
        let records: Vec<_> = s
            .records()
            .into_iter()
            .filter(|r| r.metric == m.name)
            .collect();
        let xs = |f: Edges| -> Vec<(f64, f64, f64)> {
            records
                .iter()
                .map(|r| {
                    let (lo, hi) = f(r);
                    (r.size.unwrap_or(0) as f64, lo, hi)
                })
                .collect()
        };
        let mut panel = Panel::new(
            Axis::sizes(),
            Axis::new(metric_label(m), Scale::Log10, Ticks::Number),
        );
        panel.legend = Corner::UpperLeft;
        // Virtual time rounds each message to whole nanoseconds and HdrHistogram stores
        // three significant digits: a spread under 0.1 % of the median is no spread.
        let exact = records
            .iter()
            .all(|r| r.max - r.min <= 1e-3 * r.p50.abs().max(r.max.abs()));
        if exact {
            panel.lines.push(Line {
                name: format!("{} (exact: no spread)", m.name),
                points: records
                    .iter()
                    .map(|r| (r.size.unwrap_or(0) as f64, r.p50))
                    .collect(),
                stroke: Stroke::SolidMarked,
                colour: 0,
            });
            out.push(Chart {
                name: format!("percentiles-{}-{}", s.suite, s.fabric),
                figure: Figure::new(
                    format!("{}: {} percentiles per size, {name}", s.suite, m.name),
                    label::context(&[*c]),
                    vec![panel],
                ),
            });
            continue;
        }
        // Shades a step apart in lightness, so neighbouring bands stay apart on screen and
        // in print.
        let bands: [(&str, Edges, f64); 4] = [
            ("p99.9 to max", |r| (r.p99_9, r.max), 0.12),
            ("p99 to p99.9", |r| (r.p99, r.p99_9), 0.3),
            ("p90 to p99", |r| (r.p90, r.p99), 0.5),
            ("p50 to p90", |r| (r.p50, r.p90), 0.75),
        ];
        for (name, f, opacity) in bands {
            panel.bands.push(Band {
                name: name.into(),
                points: xs(f),
                colour: 0,
                opacity,
            });
        }
        panel.lines.push(Line {
            name: "p50".into(),
            points: records
                .iter()
                .map(|r| (r.size.unwrap_or(0) as f64, r.p50))
                .collect(),
            stroke: Stroke::Solid,
            colour: crate::render::INK,
        });
        panel.lines.push(Line {
            name: "min".into(),
            points: records
                .iter()
                .map(|r| (r.size.unwrap_or(0) as f64, r.min))
                .collect(),
            stroke: Stroke::Dashed,
            colour: 9,
        });
        let one = [*c];
        out.push(Chart {
            name: format!("percentiles-{}-{}", s.suite, s.fabric),
            figure: Figure::new(
                format!("{}: {} percentiles per size, {name}", s.suite, m.name),
                label::context(&one),
                vec![panel],
            ),
        });
    }
    out
}
