//! A panel's horizontal plan, made before its row's heights are known: the axis ranges fitted
//! to the data, the ticks kept and their labels, the margins those labels need, which row of
//! the strip above the plot each mark's or span's label takes, and the legend's columns.

use super::{Scaled, Swatch, AXIS_PX, GAP, LABEL_PX, LABEL_ROWS, LEGEND_PX, TICK_PX};
use crate::axis;
use crate::figure::{Axis, Panel, Stroke, Ticks};
use crate::rules;
use crate::text;

/// A label above the plot: its text, colour, left edge and row (0 next to the plot).
pub(super) struct TopLabel {
    pub text: String,
    pub colour: usize,
    pub x: f64,
    pub row: usize,
}

/// A legend entry: its sample, its text's lines, its column and row.
pub(super) struct Entry {
    pub swatch: Swatch,
    pub lines: Vec<String>,
    pub col: usize,
    pub row: usize,
}

pub(super) struct Legend {
    pub entries: Vec<Entry>,
    pub col_w: f64,
    /// Each row's height: its tallest entry's.
    pub row_h: Vec<f64>,
}

pub(super) struct Plan {
    /// The panel as drawn (its axes resolved by [`rules::resolve`]).
    pub panel: Panel,
    pub x: Scaled,
    pub y: Scaled,
    pub x_labels: Vec<String>,
    pub y_labels: Vec<String>,
    pub y_title: Vec<String>,
    pub x_title: Vec<String>,
    /// Left edge and width of the plot.
    pub plot_x: f64,
    pub plot_w: f64,
    pub labels: Vec<TopLabel>,
    /// Rows of the label strip this panel uses.
    pub rows: usize,
    pub legend: Legend,
}

/// Plans panel `p` in a cell `cell_w` wide from `cell_x`, its plot `plot_h` tall.
pub(super) fn plan(p: &Panel, cell_x: f64, cell_w: f64, plot_h: f64) -> Plan {
    let panel = rules::resolve(p);
    let (x, y) = ranges(&panel);

    // Y tick labels, thinned while their rows would touch; their width and the axis title's
    // lines set the left margin.
    let span = y.hi - y.lo;
    let (y_ticks, y_labels) = thin(&panel.y, y.ticks.clone(), false, |ts, labels| {
        let step = ts
            .windows(2)
            .map(|w| (w[1] - w[0]).abs() / span * plot_h)
            .fold(f64::INFINITY, f64::min);
        labels.len() < 2 || step >= TICK_PX + 4.0
    });
    let y_title = text::wrap(&panel.y.label, AXIS_PX, plot_h);
    let y_label_w = y_labels
        .iter()
        .map(|l| text::size(l, TICK_PX).0)
        .fold(0.0, f64::max);
    let left = 10.0 + y_title.len() as f64 * AXIS_PX * 1.3 + 8.0 + y_label_w + 8.0;

    // X tick labels: the last one's half width sets the right margin, then thinned while
    // neighbours would touch or one would leave the cell.
    let right = axis::labels(&panel.x, &x.ticks)
        .last()
        .map_or(0.0, |l| text::size(l, TICK_PX).0 / 2.0 + 6.0)
        .max(22.0);
    let plot_x = cell_x + left;
    let plot_w = cell_w - left - right;
    let px = |t: f64| plot_x + (t - x.lo) / (x.hi - x.lo) * plot_w;
    let names = panel.x.ticks == Ticks::Names;
    let (x_ticks, x_labels) = thin(&panel.x, x.ticks.clone(), names, |ts, labels| {
        let boxes: Vec<(f64, f64)> = ts
            .iter()
            .zip(labels)
            .map(|(&t, l)| {
                let w = text::size(l, TICK_PX).0;
                (px(t) - w / 2.0, px(t) + w / 2.0)
            })
            .collect();
        boxes.windows(2).all(|w| w[0].1 + GAP <= w[1].0)
            && boxes
                .iter()
                .all(|&(a, b)| a >= cell_x + 2.0 && b <= cell_x + cell_w - 2.0)
    });
    let x_title = text::wrap(&panel.x.label, AXIS_PX, cell_w - 20.0);

    let labels = top_labels(&panel, &px, (plot_x, plot_x + plot_w));
    let rows = labels.iter().map(|l| l.row + 1).max().unwrap_or(0);
    let legend = legend(&panel, cell_x + cell_w - plot_x - 10.0);
    Plan {
        x: Scaled {
            ticks: x_ticks,
            ..x
        },
        y: Scaled {
            ticks: y_ticks,
            ..y
        },
        panel,
        x_labels,
        y_labels,
        y_title,
        x_title,
        plot_x,
        plot_w,
        labels,
        rows,
        legend,
    }
}

/// Both axes' drawn ranges, fitted to everything the panel shows (data, marks, spans,
/// levels), and their ticks before thinning.
fn ranges(panel: &Panel) -> (Scaled, Scaled) {
    let (xs, ys) = (panel.x.scale, panel.y.scale);
    let placed: Vec<(f64, f64)> = panel
        .extent_points()
        .into_iter()
        .filter_map(|(x, y)| Some((axis::place(xs, x)?, axis::place(ys, y)?)))
        .collect();
    let mut xts: Vec<f64> = placed.iter().map(|&(x, _)| x).collect();
    let mut yts: Vec<f64> = placed.iter().map(|&(_, y)| y).collect();
    xts.extend(panel.marks.iter().filter_map(|m| axis::place(xs, m.x)));
    xts.extend(
        panel
            .spans
            .iter()
            .flat_map(|s| [s.from, s.to])
            .filter_map(|v| axis::place(xs, v)),
    );
    yts.extend(panel.levels.iter().filter_map(|l| axis::place(ys, l.y)));
    let scaled = |a: &Axis, ts: &[f64]| {
        let (lo, hi) = axis::range(a, ts);
        Scaled {
            lo,
            hi,
            ticks: axis::ticks_for(a, lo, hi),
        }
    };
    (scaled(&panel.x, &xts), scaled(&panel.y, &yts))
}

/// The labels of marks (the last given first: autotune's choice before its default) and of
/// shaded ranges, each in the lowest row where it keeps clear of the others; one that finds
/// no row free is left out. A mark's label reads rightwards from it, or leftwards when it
/// would leave the plot (`bounds`: the plot's left and right edges).
fn top_labels(panel: &Panel, px: &dyn Fn(f64) -> f64, bounds: (f64, f64)) -> Vec<TopLabel> {
    let xs = panel.x.scale;
    let mut wanted: Vec<(&str, usize, f64, bool)> = Vec::new();
    for m in panel.marks.iter().rev() {
        if let Some(t) = axis::place(xs, m.x) {
            wanted.push((&m.label, m.colour, px(t), true));
        }
    }
    for s in &panel.spans {
        if let (Some(a), Some(b)) = (axis::place(xs, s.from), axis::place(xs, s.to)) {
            wanted.push((&s.label, s.colour, (px(a) + px(b)) / 2.0, false));
        }
    }
    let (lo, hi) = bounds;
    let mut out = Vec::new();
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); LABEL_ROWS];
    for (words, colour, at, is_mark) in wanted {
        if words.is_empty() {
            continue;
        }
        let w = text::size(words, LABEL_PX).0;
        let left = if !is_mark {
            (at - w / 2.0).clamp(lo, (hi - w).max(lo))
        } else if at + 4.0 + w <= hi {
            at + 4.0
        } else {
            (at - 4.0 - w).max(lo)
        };
        let span = (left, left + w);
        let free = |row: &Vec<(f64, f64)>| {
            row.iter()
                .all(|&(a, b)| span.1 + GAP <= a || b + GAP <= span.0)
        };
        if let Some(row) = taken.iter().position(free) {
            taken[row].push(span);
            out.push(TopLabel {
                text: words.to_string(),
                colour,
                x: left,
                row,
            });
        }
    }
    out
}

/// The legend: bands, then lines, in as many columns as fit in `avail` pixels, each as wide
/// as the widest entry; a name too long for the width wraps.
fn legend(panel: &Panel, avail: f64) -> Legend {
    let mut named: Vec<(Swatch, &str)> = Vec::new();
    for b in panel.bands.iter().filter(|b| !b.name.is_empty()) {
        let swatch = Swatch::Fill {
            colour: b.colour,
            opacity: b.opacity,
        };
        named.push((swatch, &b.name));
    }
    for l in panel.lines.iter().filter(|l| !l.name.is_empty()) {
        let swatch = match l.stroke {
            Stroke::Markers => Swatch::Marker { colour: l.colour },
            s => Swatch::Line {
                colour: l.colour,
                dashed: matches!(s, Stroke::Dashed | Stroke::DashedMarked),
                marked: matches!(s, Stroke::SolidMarked | Stroke::DashedMarked),
            },
        };
        named.push((swatch, &l.name));
    }
    let wrapped: Vec<(Swatch, Vec<String>)> = named
        .into_iter()
        .map(|(s, t)| (s, text::wrap(t, LEGEND_PX, avail - 40.0)))
        .collect();
    let widest = wrapped
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(|l| text::size(l, LEGEND_PX).0))
        .fold(0.0, f64::max);
    let col_w = widest + 30.0 + 22.0;
    let cols = ((avail / col_w).floor() as usize).max(1);
    let entries: Vec<Entry> = wrapped
        .into_iter()
        .enumerate()
        .map(|(i, (swatch, lines))| Entry {
            swatch,
            lines,
            col: i % cols,
            row: i / cols,
        })
        .collect();
    let rows = entries.iter().map(|e| e.row + 1).max().unwrap_or(0);
    let row_h = (0..rows)
        .map(|r| {
            let lines = entries
                .iter()
                .filter(|e| e.row == r)
                .map(|e| e.lines.len())
                .max()
                .unwrap_or(1);
            lines as f64 * (LEGEND_PX + 5.0) + 3.0
        })
        .collect();
    Legend {
        entries,
        col_w,
        row_h,
    }
}

/// The ticks and their labels, every k-th kept for the smallest k that `fits` (counted back
/// from the last tick when `from_end`, so a history's newest entry keeps its label).
fn thin(
    axis: &Axis,
    ticks: Vec<f64>,
    from_end: bool,
    fits: impl Fn(&[f64], &[String]) -> bool,
) -> (Vec<f64>, Vec<String>) {
    let n = ticks.len();
    for k in 1..=n.max(1) {
        let kept: Vec<f64> = ticks
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                if from_end {
                    (n - 1 - i).is_multiple_of(k)
                } else {
                    i.is_multiple_of(k)
                }
            })
            .map(|(_, &t)| t)
            .collect();
        let labels = axis::labels(axis, &kept);
        if fits(&kept, &labels) {
            return (kept, labels);
        }
    }
    let last: Vec<f64> = ticks.last().copied().into_iter().collect();
    let labels = axis::labels(axis, &last);
    (last, labels)
}
