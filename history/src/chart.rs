//! Charts of a view: one per suite, fabric and metric, with a line per point (message size)
//! across the entries, labelled by revision (or by date when every entry has the same
//! revision), and each change point marked by a dashed line at the entry where the new level
//! starts: red for regressions, green for improvements, grey where lines moved both ways. The
//! x axis holds only the entries the chart's lines have (a series measured in 3 of 20 entries
//! gets 3 positions, not 20). More than [`ONE_PANEL`] lines (17 message sizes) are drawn as
//! small multiples: panels of at most [`PER_PANEL`] neighbouring sizes each, so a panel's
//! values have like magnitudes and its y axis reads, rather than one panel whose colours
//! repeat. A panel's value axis turns logarithmic when its lines span more than a factor of
//! ten. Built as [`plots::Figure`] data; the plots crate draws and writes them.

use std::collections::{BTreeMap, BTreeSet};

use plots::figure::{Axis, Corner, Line, Mark, Panel, Scale, Stroke, Ticks};
use plots::{Chart, Figure};

use crate::format::percent;
use crate::trend::{Trend, View};

/// Palette entries (plots' Tableau ten) for marks.
const RED: usize = 2;
const GREEN: usize = 3;
const GREY: usize = 9;

/// The most lines one panel holds before the chart splits into small multiples: beyond it
/// the palette's colours start to look alike.
pub const ONE_PANEL: usize = 8;
/// The most lines a panel of a split chart holds.
pub const PER_PANEL: usize = 6;

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

/// The trends in panels: one when they are few, else runs of neighbouring points (by size,
/// then parameters) of at most [`PER_PANEL`], as even as the count allows (17: 6, 6, 5).
fn panels_of<'a>(trends: &[&'a Trend]) -> Vec<Vec<&'a Trend>> {
    if trends.len() <= ONE_PANEL {
        return vec![trends.to_vec()];
    }
    let mut sorted = trends.to_vec();
    sorted.sort_by(|a, b| {
        let (a, b) = (&a.series.key, &b.series.key);
        (a.size, &a.params, a.ranks, &a.host).cmp(&(b.size, &b.params, b.ranks, &b.host))
    });
    let n = sorted.len().div_ceil(PER_PANEL);
    let (base, extra) = (sorted.len() / n, sorted.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut rest = &sorted[..];
    for i in 0..n {
        let (this, next) = rest.split_at(base + usize::from(i < extra));
        out.push(this.to_vec());
        rest = next;
    }
    out
}

fn figure(view: &View, suite: &str, fabric: &str, metric: &str, trends: &[&Trend]) -> Figure {
    // Only the entries these lines have, in view order: position i is entry shown[i].
    let shown: Vec<usize> = trends
        .iter()
        .flat_map(|t| t.series.values.iter().map(|v| v.entry))
        .collect::<BTreeSet<usize>>()
        .into_iter()
        .collect();
    let position = |entry: usize| shown.binary_search(&entry).unwrap_or(0) as f64;
    let revisions: BTreeSet<&str> = shown
        .iter()
        .map(|&e| view.entries[e].revision.as_str())
        .collect();
    let by_date = revisions.len() < 2;
    let names: Vec<String> = shown
        .iter()
        .map(|&e| {
            let e = &view.entries[e];
            if by_date {
                e.date.get(..10).unwrap_or(&e.date).to_string()
            } else {
                e.short_revision()
            }
        })
        .collect();
    let x_label = if by_date {
        "entry (date)"
    } else {
        "entry (revision)"
    };
    let unit = &trends[0].series.unit;
    let ranks: BTreeSet<usize> = trends.iter().map(|t| t.series.key.ranks).collect();
    let hosts: BTreeSet<Option<&String>> =
        trends.iter().map(|t| t.series.key.host.as_ref()).collect();
    let groups = panels_of(trends);
    let split = groups.len() > 1;
    let panels = groups
        .iter()
        .map(|group| {
            let x = if split {
                format!("{x_label} · {}", range_name(group))
            } else {
                x_label.to_string()
            };
            let mut panel = Panel::new(
                Axis::named(x, names.clone()),
                value_axis(format!("{metric} ({unit})"), group),
            );
            panel.legend = Corner::UpperLeft;
            for (i, t) in group.iter().enumerate() {
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
                        .map(|v| (position(v.entry), v.value))
                        .collect(),
                    stroke: Stroke::SolidMarked,
                    colour: i,
                });
            }
            panel.marks = marks(group, &position);
            panel
        })
        .collect();

    let (first, last) = (
        &view.entries[shown[0]],
        &view.entries[shown[shown.len() - 1]],
    );
    let exact = trends.iter().all(|t| t.series.exact);
    let of_view = if shown.len() < view.entries.len() {
        format!(" of the view's {}", view.entries.len())
    } else {
        String::new()
    };
    Figure::new(
        format!("{metric} of {suite} on {fabric}, over time"),
        format!(
            "{} entries{of_view}, {} to {}{}; change points dashed (red: regression, green: improvement)",
            shown.len(),
            first.date.get(..10).unwrap_or(&first.date),
            last.date.get(..10).unwrap_or(&last.date),
            if exact { ", exact (virtual time)" } else { "" }
        ),
        panels,
    )
}

/// Linear, or log when the lines' values span more than a factor of ten.
fn value_axis(label: String, trends: &[&Trend]) -> Axis {
    let (lo, hi) = trends
        .iter()
        .flat_map(|t| t.series.values.iter().map(|v| v.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if hi > 10.0 * lo {
        Axis::new(label, Scale::Log10, Ticks::Number)
    } else {
        Axis::new(label, Scale::Linear, Ticks::Number)
    }
}

/// What a panel of a split chart holds: "sizes 1 to 32", else its first and last points.
fn range_name(group: &[&Trend]) -> String {
    let sizes: Vec<u64> = group.iter().filter_map(|t| t.series.key.size).collect();
    if sizes.len() == group.len() {
        let (lo, hi) = (sizes[0], sizes[sizes.len() - 1]);
        let b = |s: u64| plots::axis::bytes(s as f64);
        return if lo == hi {
            format!("size {}", b(lo))
        } else {
            format!("sizes {} to {}", b(lo), b(hi))
        };
    }
    let (a, z) = (point_name(group[0]), point_name(group[group.len() - 1]));
    if a == z {
        a
    } else {
        format!("{a} to {z}")
    }
}

/// A dashed mark at each entry where lines of `trends` change level, coloured by direction
/// and labelled with the move (or its range over the lines that moved there).
fn marks(trends: &[&Trend], position: &dyn Fn(usize) -> f64) -> Vec<Mark> {
    // Changes by the entry they start at: (relative change, regression) of every line.
    let mut at: BTreeMap<usize, Vec<(f64, bool)>> = BTreeMap::new();
    for t in trends {
        for c in &t.found.changes {
            at.entry(t.entry_of(c.index))
                .or_default()
                .push((c.relative(), t.is_regression(c)));
        }
    }
    at.into_iter()
        .map(|(entry, moves)| {
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
            Mark {
                x: position(entry),
                label,
                stroke: Stroke::Dashed,
                colour,
            }
        })
        .collect()
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
    use crate::testing::{latency_run_on, view_of, view_of_runs};

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
    fn the_x_axis_holds_only_the_entries_the_charts_lines_have() {
        // Five rapidio entries, then two hyperlink entries whose second moves up 20 %.
        let mut runs = Vec::new();
        for i in 0..7 {
            let (fabric, us) = if i < 5 {
                ("rapidio", 30.0)
            } else {
                ("hyperlink", if i == 6 { 6.0 } else { 5.0 })
            };
            let start = format!("2026-01-{:02}T00:00:00Z", i + 1);
            runs.push(latency_run_on(
                &format!("run{i}"),
                &start,
                fabric,
                &[1],
                |_| us,
            ));
        }
        let view = view_of_runs(&runs);
        let charts = charts(&view);
        let hl = charts
            .iter()
            .find(|c| c.name == "history-latency-osu_latency-hyperlink")
            .unwrap();
        let p = &hl.figure.panels[0];
        assert_eq!(p.x.names, ["r5", "r6"]);
        assert_eq!(p.lines[0].points, [(0.0, 5.0), (1.0, 6.0)]);
        assert!(hl.figure.subtitle.starts_with("2 entries of the view's 7"));
        // The change is marked at its position, on the last entry: its label is placed
        // leftwards of the mark, inside the image.
        assert_eq!(p.marks[0].x, 1.0);
        let layout = plots::layout::layout(&hl.figure);
        assert!(layout.problems().is_empty(), "{:#?}", layout.problems());
        assert!(layout
            .texts
            .iter()
            .any(|t| t.role == plots::layout::Role::Label(0) && t.text == p.marks[0].label));
        let ra = charts
            .iter()
            .find(|c| c.name == "history-latency-osu_latency-rapidio")
            .unwrap();
        assert_eq!(ra.figure.panels[0].x.names, ["r0", "r1", "r2", "r3", "r4"]);
    }

    #[test]
    fn many_sizes_are_small_multiples_of_neighbouring_sizes() {
        let sizes: Vec<u64> = (0..17).map(|k| 1u64 << k).collect();
        let runs: Vec<_> = (0..3)
            .map(|i| {
                let start = format!("2026-01-{:02}T00:00:00Z", i + 1);
                latency_run_on(&format!("run{i}"), &start, "rapidio", &sizes, |s| {
                    2.0 + s as f64 / 100.0
                })
            })
            .collect();
        let view = view_of_runs(&runs);
        let c = &charts(&view)[0];
        let per: Vec<usize> = c.figure.panels.iter().map(|p| p.lines.len()).collect();
        assert_eq!(per, [6, 6, 5]);
        let p = &c.figure.panels;
        assert_eq!(p[0].lines[0].name, "size 1");
        assert_eq!(p[0].lines[5].name, "size 32");
        assert_eq!(p[1].lines[0].name, "size 64");
        assert_eq!(p[2].lines[4].name, "size 64K");
        assert_eq!(p[2].x.label, "entry (revision) · sizes 4K to 64K");
        // Colours restart in each panel: no two lines of a panel share one.
        assert_eq!(p[1].lines[5].colour, 5);
        // The small sizes' panel is linear (2 to 2.3 us); the large ones' spans decades.
        assert_eq!(p[0].y.scale, Scale::Linear);
        assert_eq!(p[2].y.scale, Scale::Log10);
        // Eight lines or fewer stay in one panel.
        let few = view_of(&[30.0, 31.0]);
        assert_eq!(charts(&few)[0].figure.panels.len(), 1);
        assert!(c.svg().unwrap().contains("sizes 64 to 2K"));
        let layout = plots::layout::layout(&c.figure);
        assert!(layout.problems().is_empty(), "{:#?}", layout.problems());
    }

    #[test]
    fn a_wide_spread_of_values_gets_a_log_axis() {
        let view = view_of(&[1.0, 1.0, 100.0, 100.0]);
        let p = &charts(&view)[0].figure.panels[0];
        assert_eq!(p.y.scale, Scale::Log10);
        assert_eq!(p.marks[0].colour, RED);
    }
}
