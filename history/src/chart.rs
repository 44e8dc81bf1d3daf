//! Charts of a view: one per suite, fabric and metric, with a line per point (message size)
//! across the entries, labelled by revision (or by date when every entry has the same
//! revision), and each change point marked by a dashed line at the entry where the new level
//! starts: red for regressions, green for improvements, grey where lines moved both ways. The
//! value axis turns logarithmic when the lines span more than a factor of ten (latency from 1
//! byte to 1 MiB). Built as [`plots::Figure`] data; the plots crate draws and writes them.

use std::collections::BTreeMap;

use plots::figure::{Axis, Corner, Line, Mark, Panel, Scale, Stroke, Ticks};
use plots::{Chart, Figure};

use crate::format::percent;
use crate::trend::{Trend, View};

/// Palette entries (plots' Tableau ten) for marks.
const RED: usize = 2;
const GREEN: usize = 3;
const GREY: usize = 9;

/// One chart per suite, fabric and metric in the view, in series order.
pub fn charts(view: &View) -> Vec<Chart> {
    let mut groups: BTreeMap<(&str, &str, &str), Vec<&Trend>> = BTreeMap::new();
    for t in &view.trends {
        let k = &t.series.key;
        groups
            .entry((&k.suite, &k.fabric, &k.metric))
            .or_default()
            .push(t);
    }
    groups
        .into_iter()
        .map(|((suite, fabric, metric), trends)| Chart {
            name: crate::entry::file_safe(&format!("history-{metric}-{suite}-{fabric}")),
            figure: figure(view, suite, fabric, metric, &trends),
        })
        .collect()
}

fn figure(view: &View, suite: &str, fabric: &str, metric: &str, trends: &[&Trend]) -> Figure {
    let revisions: std::collections::BTreeSet<&str> =
        view.entries.iter().map(|e| e.revision.as_str()).collect();
    let by_date = revisions.len() < 2;
    let names: Vec<String> = view
        .entries
        .iter()
        .map(|e| {
            if by_date {
                e.date.get(..10).unwrap_or(&e.date).to_string()
            } else {
                e.short_revision()
            }
        })
        .collect();
    let unit = &trends[0].series.unit;
    let values: Vec<f64> = trends
        .iter()
        .flat_map(|t| t.series.values.iter().map(|v| v.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let (lo, hi) = values.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    let y = if hi > 10.0 * lo {
        Axis::new(format!("{metric} ({unit})"), Scale::Log10, Ticks::Number)
    } else {
        Axis::new(format!("{metric} ({unit})"), Scale::Linear, Ticks::Number)
    };
    let x_label = if by_date {
        "entry (date)"
    } else {
        "entry (revision)"
    };
    let mut panel = Panel::new(Axis::named(x_label, names), y);
    panel.legend = Corner::UpperLeft;

    let ranks: std::collections::BTreeSet<usize> =
        trends.iter().map(|t| t.series.key.ranks).collect();
    let hosts: std::collections::BTreeSet<Option<&String>> =
        trends.iter().map(|t| t.series.key.host.as_ref()).collect();
    // Changes by the entry they start at: (relative change, regression) of every line.
    let mut marks: BTreeMap<usize, Vec<(f64, bool)>> = BTreeMap::new();
    for (i, t) in trends.iter().enumerate() {
        let k = &t.series.key;
        let mut name = Vec::new();
        if hosts.len() > 1 {
            name.push(k.host.clone().unwrap_or_else(|| "exact".into()));
        }
        if ranks.len() > 1 {
            name.push(format!("{} ranks", k.ranks));
        }
        name.push(point_name(t));
        panel.lines.push(Line {
            name: name.join(" "),
            points: t
                .series
                .values
                .iter()
                .map(|v| (v.entry as f64, v.value))
                .collect(),
            stroke: Stroke::SolidMarked,
            colour: i,
        });
        for c in &t.found.changes {
            marks
                .entry(t.entry_of(c.index))
                .or_default()
                .push((c.relative(), t.is_regression(c)));
        }
    }
    for (entry, moves) in marks {
        let regressions = moves.iter().filter(|m| m.1).count();
        let colour = match regressions {
            0 => GREEN,
            n if n == moves.len() => RED,
            _ => GREY,
        };
        let (low, high) = moves
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), m| {
                (l.min(m.0), h.max(m.0))
            });
        let label = if moves.len() == 1 {
            percent(low)
        } else if (high - low).abs() < 5e-4 {
            format!("{} ({} lines)", percent(low), moves.len())
        } else {
            format!(
                "{}..{} ({} lines)",
                percent(low),
                percent(high),
                moves.len()
            )
        };
        panel.marks.push(Mark {
            x: entry as f64,
            label,
            stroke: Stroke::Dashed,
            colour,
        });
    }

    let (first, last) = (&view.entries[0], &view.entries[view.entries.len() - 1]);
    let exact = trends.iter().all(|t| t.series.exact);
    Figure::new(
        format!("{metric} of {suite} on {fabric}, over time"),
        format!(
            "{} entries, {} to {}{}; change points dashed (red: regression, green: improvement)",
            view.entries.len(),
            first.date.get(..10).unwrap_or(&first.date),
            last.date.get(..10).unwrap_or(&last.date),
            if exact { ", exact (virtual time)" } else { "" }
        ),
        vec![panel],
    )
}

/// "size 4K", "class=A kernel=cg"
fn point_name(t: &Trend) -> String {
    let k = &t.series.key;
    let mut parts = Vec::new();
    if let Some(s) = k.size {
        parts.push(format!("size {}", plots::axis::bytes(s as f64)));
    }
    if !k.params.is_empty() {
        parts.push(k.params.replace(';', " "));
    }
    if parts.is_empty() {
        "value".into()
    } else {
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::view_of;

    #[test]
    fn one_chart_per_metric_with_a_line_per_size_and_the_change_marked() {
        let view = view_of(&[30.0, 30.0, 30.0, 36.0, 36.0]);
        let charts = charts(&view);
        assert_eq!(charts.len(), 1);
        assert_eq!(charts[0].name, "history-latency-osu_latency-rapidio");
        let p = &charts[0].figure.panels[0];
        assert_eq!(p.x.names, ["r0", "r1", "r2", "r3", "r4"]);
        let names: Vec<&str> = p.lines.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["size 1", "size 8"]);
        assert_eq!(p.lines[0].points[3], (3.0, 36.0));
        assert_eq!(p.y.scale, Scale::Linear);
        assert_eq!(p.marks.len(), 1, "both lines change at one entry: one mark");
        assert_eq!((p.marks[0].x, p.marks[0].colour), (3.0, RED));
        assert_eq!(p.marks[0].label, "+20.0% (2 lines)");
        let svg = charts[0].svg().unwrap();
        assert!(svg.contains("r3") && svg.contains("+20.0% (2 lines)"));
    }

    #[test]
    fn a_wide_spread_of_values_gets_a_log_axis() {
        let view = view_of(&[1.0, 1.0, 100.0, 100.0]);
        let p = &charts(&view)[0].figure.panels[0];
        assert_eq!(p.y.scale, Scale::Log10);
        assert_eq!(p.marks[0].colour, RED);
    }
}
