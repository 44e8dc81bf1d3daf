//! mpptest's curve with what fabbench reads in it: each measured size as a point, each
//! fitted segment `t = latency + size/bandwidth` as a line over its sizes, each breakpoint's
//! interval `(after, before]` shaded with its kind and step, and sizes set aside as off-line
//! blips marked apart. Axes follow mpptest's own plot: log-x only with `-logscale`.

use bench_core::measure::Layout;
use curves::Segment;

use crate::figure::{Axis, Corner, Figure, Line, Panel, Scale, Span, Stroke, Ticks};
use crate::label::{self, Curve};
use crate::Chart;

/// Points each fitted segment is drawn through, so a straight line stays straight (or
/// curves correctly) on a log axis.
const SEGMENT_STEPS: usize = 32;

pub fn charts(curves: &[Curve<'_>]) -> Vec<Chart> {
    let names = label::names(curves);
    let mut out = Vec::new();
    for (c, name) in curves.iter().zip(names) {
        let Layout::Mpptest(l) = &c.series.layout else {
            continue;
        };
        let points = results::format::mpptest::curve_points(c.series);
        if points.is_empty() {
            continue;
        }
        let log = l.logscale;
        let units = l.units.trim_matches(|c| c == '(' || c == ')');
        let x = if log {
            Axis::new(format!("size ({units})"), Scale::Log2, Ticks::Bytes)
        } else {
            Axis::new(format!("size ({units})"), Scale::Linear, Ticks::Number).starting_at_zero()
        };
        // mpptest's -logscale asks for log axes, both of them.
        let y = if log {
            Axis::new("time (us)", Scale::Log10, Ticks::Number)
        } else {
            Axis::new("time (us)", Scale::Linear, Ticks::Number).starting_at_zero()
        };
        let mut panel = Panel::new(x, y);
        panel.legend = Corner::UpperLeft;
        let analysis = results::format::mpptest::curve_analysis(c.series).ok();
        let off: Vec<u64> = analysis
            .as_ref()
            .map(|a| a.off_line.clone())
            .unwrap_or_default();
        panel.lines.push(Line {
            name: "measured (fastest test)".into(),
            points: points
                .iter()
                .filter(|(s, _)| !off.contains(s))
                .map(|&(s, t)| (s as f64, t))
                .collect(),
            stroke: Stroke::Markers,
            colour: 0,
        });
        if !off.is_empty() {
            panel.lines.push(Line {
                name: "off the line (blip)".into(),
                points: points
                    .iter()
                    .filter(|(s, _)| off.contains(s))
                    .map(|&(s, t)| (s as f64, t))
                    .collect(),
                stroke: Stroke::Markers,
                colour: 2,
            });
        }
        let mut breakpoints = 0;
        if let Some(a) = &analysis {
            for (i, seg) in a.segments.iter().enumerate() {
                panel.lines.push(Line {
                    name: if i == 0 {
                        "fit: latency + size/bandwidth per segment".into()
                    } else {
                        String::new()
                    },
                    points: segment_line(seg, log),
                    stroke: Stroke::Solid,
                    colour: 1,
                });
            }
            for b in &a.breakpoints {
                breakpoints += 1;
                panel.spans.push(Span {
                    from: b.after as f64,
                    to: b.before as f64,
                    label: results::format::mpptest::switch_words(b),
                    colour: 3,
                });
            }
        }
        let protocol = &l.protocol;
        out.push(Chart {
            name: format!("mpptest-{}", c.series.fabric),
            figure: Figure::new(
                format!("mpptest {protocol}: time against size, {name}"),
                format!(
                    "{} · {} breakpoint{} (5 % tolerance)",
                    label::context(&[*c]),
                    breakpoints,
                    if breakpoints == 1 { "" } else { "s" }
                ),
                vec![panel],
            ),
        });
    }
    out
}

/// The segment's line from its first to its last size.
fn segment_line(s: &Segment, log: bool) -> Vec<(f64, f64)> {
    // On a log axis size 0 has no place: a segment from 0 is drawn from size 1.
    let a = if log {
        (s.from as f64).max(1.0)
    } else {
        s.from as f64
    };
    let b = s.to as f64;
    if s.from == s.to {
        // One size: a short stretch of its line either side of it (a quarter of a doubling
        // on a log axis), so the segment shows as a line, not a point hidden by its marker.
        let (lo, hi) = if log {
            (a * 2f64.powf(-0.25), a * 2f64.powf(0.25))
        } else {
            (a - (a * 0.05).max(0.5), a + (a * 0.05).max(0.5))
        };
        let at = |x: f64| s.at(x.max(0.0).round() as u64);
        return vec![(lo, at(lo)), (hi, at(hi))];
    }
    (0..=SEGMENT_STEPS)
        .map(|k| {
            let f = k as f64 / SEGMENT_STEPS as f64;
            let x = if log {
                a * (b / a).powf(f)
            } else {
                a + (b - a) * f
            };
            (x, s.at(x.round() as u64))
        })
        .collect()
}
