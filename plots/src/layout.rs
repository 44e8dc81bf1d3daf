//! Where everything of a figure goes, in pixels, decided before anything is drawn: the title
//! and subtitle wrapped to the image's width, panels one per row or two to a row, each
//! panel's axis ranges fitted to its data, its tick labels thinned until they no longer touch,
//! the labels of marks and shaded ranges in a strip above the plot (moved to a free row, or
//! left out when three rows are full, never printed over each other), and the legend below
//! the plot where it cannot hide data. The renderer only paints a [`Layout`]; tests read it to
//! check that no text leaves the image and no two texts overlap.

use crate::axis;
use crate::figure::{Figure, Panel, Stroke, Ticks};
use crate::rules;
use crate::text;

pub const TITLE_PX: f64 = 22.0;
pub const SUBTITLE_PX: f64 = 14.0;
pub const TICK_PX: f64 = 13.0;
pub const AXIS_PX: f64 = 15.0;
pub const LEGEND_PX: f64 = 13.0;
pub const LABEL_PX: f64 = 12.0;

/// One panel gets this width; two or more sit two to a row in the wider one.
const ONE_PANEL_WIDTH: f64 = 900.0;
const GRID_WIDTH: f64 = 1240.0;
const PLOT_HEIGHT_ONE: f64 = 400.0;
const PLOT_HEIGHT_GRID: f64 = 320.0;
/// Rows of mark and span labels above a plot; a label that finds none free is left out.
const LABEL_ROWS: usize = 3;
const LABEL_ROW: f64 = LABEL_PX + 5.0;
/// Space kept between neighbouring labels.
const GAP: f64 = 8.0;

/// A box in pixels, from its top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
    /// True when the boxes come closer than `gap` horizontally while sharing rows of pixels.
    pub fn overlaps(&self, o: &Rect, gap: f64) -> bool {
        self.x < o.right() + gap
            && o.x < self.right() + gap
            && self.y < o.bottom()
            && o.y < self.bottom()
    }
    /// True when the box lies inside a `w` by `h` image.
    pub fn inside(&self, w: f64, h: f64) -> bool {
        self.x >= 0.0 && self.y >= 0.0 && self.right() <= w && self.bottom() <= h
    }
}

/// A text's colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ink {
    Black,
    Grey,
    Palette(usize),
}

/// What a text is; the number is the panel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Title,
    Subtitle,
    XTick(usize),
    YTick(usize),
    XTitle(usize),
    YTitle(usize),
    Legend(usize),
    /// A mark's or a shaded range's label, above the plot.
    Label(usize),
    /// A reference level's label, inside the plot.
    Level(usize),
}

/// A text and the box it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub text: String,
    pub role: Role,
    /// Font size in pixels.
    pub px: f64,
    pub ink: Ink,
    pub rect: Rect,
    /// Written bottom to top (a y axis title); `rect` is the turned box.
    pub vertical: bool,
}

/// A legend entry's sample of what it names, drawn as the data are.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Swatch {
    Line {
        colour: usize,
        dashed: bool,
        marked: bool,
    },
    Marker {
        colour: usize,
    },
    Fill {
        colour: usize,
        opacity: f64,
    },
}

/// A swatch's place: its left end and the middle of its row.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    pub swatch: Swatch,
    pub x: f64,
    pub y: f64,
}

/// An axis's drawn range and the tick positions kept, in drawn (scale) coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Scaled {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PanelLayout {
    /// The panel as drawn (its axes resolved by [`rules::resolve`]).
    pub panel: Panel,
    pub plot: Rect,
    pub x: Scaled,
    pub y: Scaled,
    pub keys: Vec<Key>,
}

impl PanelLayout {
    /// The pixel column of drawn x position `t`.
    pub fn px(&self, t: f64) -> f64 {
        self.plot.x + (t - self.x.lo) / (self.x.hi - self.x.lo) * self.plot.w
    }
    /// The pixel row of drawn y position `t`.
    pub fn py(&self, t: f64) -> f64 {
        self.plot.bottom() - (t - self.y.lo) / (self.y.hi - self.y.lo) * self.plot.h
    }
    /// The pixel position of a data point, if its scales can show it.
    pub fn at(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let (xs, ys) = (self.panel.x.scale, self.panel.y.scale);
        Some((self.px(axis::place(xs, x)?), self.py(axis::place(ys, y)?)))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub width: f64,
    pub height: f64,
    pub texts: Vec<Placed>,
    pub panels: Vec<PanelLayout>,
}

impl Layout {
    /// The image size in whole pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width.ceil() as u32, self.height.ceil() as u32)
    }

    /// What breaks the rules every chart keeps, one sentence each (empty when none does): a
    /// text outside the image, two texts that overlap, an axis whose tick labels repeat, a
    /// linear value axis over data that span more than a decade.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.texts {
            if !t.rect.inside(self.width, self.height) {
                out.push(format!(
                    "{:?} {:?} at {:?} leaves the {}x{} image",
                    t.role, t.text, t.rect, self.width, self.height
                ));
            }
        }
        for (i, a) in self.texts.iter().enumerate() {
            for b in &self.texts[i + 1..] {
                if a.rect.overlaps(&b.rect, 0.0) {
                    out.push(format!(
                        "{:?} {:?} overlaps {:?} {:?}",
                        a.role, a.text, b.role, b.text
                    ));
                }
            }
        }
        for (i, p) in self.panels.iter().enumerate() {
            for role in [Role::XTick(i), Role::YTick(i)] {
                let mut labels = self.tick_labels(role);
                labels.sort_unstable();
                if labels.windows(2).any(|w| w[0] == w[1]) {
                    out.push(format!("{role:?} labels repeat: {labels:?}"));
                }
            }
            if rules::spans_a_decade(&p.panel) {
                out.push(format!(
                    "panel {i}: linear y axis {:?} over values that span more than a decade",
                    p.panel.y.label
                ));
            }
        }
        out
    }

    /// The labels of one axis's ticks, in order.
    pub fn tick_labels(&self, role: Role) -> Vec<&str> {
        self.texts
            .iter()
            .filter(|t| t.role == role)
            .map(|t| t.text.as_str())
            .collect()
    }
}

/// A panel's plan before its row's vertical positions are known.
struct Plan {
    panel: Panel,
    x: Scaled,
    y: Scaled,
    x_labels: Vec<String>,
    y_labels: Vec<String>,
    y_title: Vec<String>,
    x_title: Vec<String>,
    /// Left edge and width of the plot.
    plot_x: f64,
    plot_w: f64,
    /// Top labels: text, colour, left edge, row (0 next to the plot).
    labels: Vec<(String, usize, f64, usize)>,
    rows: usize,
    /// Legend entries: swatch, lines of text, column, row.
    legend: Vec<(Swatch, Vec<String>, usize, usize)>,
    legend_col_w: f64,
    legend_row_h: Vec<f64>,
}

/// Lays a figure out.
pub fn layout(f: &Figure) -> Layout {
    let n = f.panels.len().max(1);
    let cols = if n == 1 { 1 } else { 2 };
    let width = if cols == 1 {
        ONE_PANEL_WIDTH
    } else {
        GRID_WIDTH
    };
    let plot_h = if cols == 1 {
        PLOT_HEIGHT_ONE
    } else {
        PLOT_HEIGHT_GRID
    };
    let cell_w = width / cols as f64;
    let mut texts = Vec::new();

    let mut y = 10.0;
    for line in text::wrap(&f.title, TITLE_PX, width - 40.0) {
        let (w, h) = text::size(&line, TITLE_PX);
        texts.push(Placed {
            rect: Rect {
                x: ((width - w) / 2.0).max(2.0),
                y,
                w,
                h,
            },
            text: line,
            role: Role::Title,
            px: TITLE_PX,
            ink: Ink::Black,
            vertical: false,
        });
        y += TITLE_PX * 1.3;
    }
    if !f.subtitle.is_empty() {
        for line in text::wrap(&f.subtitle, SUBTITLE_PX, width - 40.0) {
            let (w, h) = text::size(&line, SUBTITLE_PX);
            texts.push(Placed {
                rect: Rect {
                    x: ((width - w) / 2.0).max(2.0),
                    y,
                    w,
                    h,
                },
                text: line,
                role: Role::Subtitle,
                px: SUBTITLE_PX,
                ink: Ink::Grey,
                vertical: false,
            });
            y += SUBTITLE_PX * 1.35;
        }
    }
    y += 8.0;

    let plans: Vec<Plan> = f
        .panels
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let cell_x = (i % cols) as f64 * cell_w;
            plan(p, cell_x, cell_w, plot_h)
        })
        .collect();

    let mut panels = Vec::new();
    for (row, chunk) in plans.chunks(cols).enumerate() {
        let strip = chunk.iter().map(|p| p.rows).max().unwrap_or(0) as f64 * LABEL_ROW
            + if chunk.iter().any(|p| p.rows > 0) {
                4.0
            } else {
                0.0
            };
        let mut row_h: f64 = 0.0;
        for (j, p) in chunk.iter().enumerate() {
            let index = row * cols + j;
            let cell_x = j as f64 * cell_w;
            let (pl, h) = place(p, index, cell_x, y, strip, plot_h, &mut texts);
            row_h = row_h.max(h);
            panels.push(pl);
        }
        y += row_h;
    }
    Layout {
        width,
        height: y + 6.0,
        texts,
        panels,
    }
}

/// Ranges, ticks and horizontal positions of one panel in a cell `cell_w` wide.
fn plan(p: &Panel, cell_x: f64, cell_w: f64, plot_h: f64) -> Plan {
    let panel = rules::resolve(p);
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
    let (x0, x1) = axis::range(&panel.x, &xts);
    let (y0, y1) = axis::range(&panel.y, &yts);
    let x_ticks = axis::ticks_for(&panel.x, x0, x1);
    let y_ticks = axis::ticks_for(&panel.y, y0, y1);

    // Y tick labels, thinned while their rows would touch.
    let (y_ticks, y_labels) = thin(&panel.y, y_ticks, false, |ts, labels| {
        let step = ts
            .windows(2)
            .map(|w| (w[1] - w[0]).abs() / (y1 - y0) * plot_h)
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
    // neighbours would touch.
    let right_of = |labels: &[String]| {
        labels
            .last()
            .map_or(0.0, |l| text::size(l, TICK_PX).0 / 2.0 + 6.0)
            .max(22.0)
    };
    let all_x_labels = axis::labels(&panel.x, &x_ticks);
    let right = right_of(&all_x_labels);
    let plot_x = cell_x + left;
    let plot_w = cell_w - left - right;
    let px = |t: f64| plot_x + (t - x0) / (x1 - x0) * plot_w;
    let names = panel.x.ticks == Ticks::Names;
    let (x_ticks, x_labels) = thin(&panel.x, x_ticks, names, |ts, labels| {
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

    // Labels of marks (the last given first: autotune's choice before its default) and of
    // shaded ranges, each in the lowest free row.
    let mut wanted: Vec<(String, usize, f64, f64, bool)> = Vec::new();
    for m in panel.marks.iter().rev() {
        if let Some(t) = axis::place(xs, m.x) {
            wanted.push((m.label.clone(), m.colour, px(t), 0.0, true));
        }
    }
    for s in &panel.spans {
        if let (Some(a), Some(b)) = (axis::place(xs, s.from), axis::place(xs, s.to)) {
            wanted.push((s.label.clone(), s.colour, (px(a) + px(b)) / 2.0, 0.0, false));
        }
    }
    let mut labels: Vec<(String, usize, f64, usize)> = Vec::new();
    let mut taken: Vec<Vec<(f64, f64)>> = vec![Vec::new(); LABEL_ROWS];
    for (textv, colour, at, _, is_mark) in wanted {
        if textv.is_empty() {
            continue;
        }
        let w = text::size(&textv, LABEL_PX).0;
        let (lo, hi) = (plot_x, plot_x + plot_w);
        let left_edge = if is_mark {
            if at + 4.0 + w <= hi {
                at + 4.0
            } else {
                (at - 4.0 - w).max(lo)
            }
        } else {
            (at - w / 2.0).clamp(lo, (hi - w).max(lo))
        };
        let span = (left_edge, left_edge + w);
        if let Some(row) = taken.iter().position(|r| {
            r.iter()
                .all(|&(a, b)| span.1 + GAP <= a || b + GAP <= span.0)
        }) {
            taken[row].push(span);
            labels.push((textv, colour, left_edge, row));
        }
    }
    let rows = taken.iter().filter(|r| !r.is_empty()).count();

    // The legend: bands, then lines, in columns as wide as the widest entry.
    let mut entries: Vec<(Swatch, String)> = Vec::new();
    for b in panel.bands.iter().filter(|b| !b.name.is_empty()) {
        entries.push((
            Swatch::Fill {
                colour: b.colour,
                opacity: b.opacity,
            },
            b.name.clone(),
        ));
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
        entries.push((swatch, l.name.clone()));
    }
    let avail = cell_x + cell_w - plot_x - 10.0;
    let wrapped: Vec<(Swatch, Vec<String>)> = entries
        .into_iter()
        .map(|(s, t)| (s, text::wrap(&t, LEGEND_PX, avail - 40.0)))
        .collect();
    let widest = wrapped
        .iter()
        .flat_map(|(_, ls)| ls.iter().map(|l| text::size(l, LEGEND_PX).0))
        .fold(0.0, f64::max);
    let legend_col_w = widest + 30.0 + 22.0;
    let legend_cols = ((avail / legend_col_w).floor() as usize).max(1);
    let legend: Vec<(Swatch, Vec<String>, usize, usize)> = wrapped
        .into_iter()
        .enumerate()
        .map(|(i, (s, ls))| (s, ls, i % legend_cols, i / legend_cols))
        .collect();
    let legend_rows = legend.iter().map(|e| e.3 + 1).max().unwrap_or(0);
    let legend_row_h: Vec<f64> = (0..legend_rows)
        .map(|r| {
            legend
                .iter()
                .filter(|e| e.3 == r)
                .map(|e| e.1.len())
                .max()
                .unwrap_or(1) as f64
                * (LEGEND_PX + 5.0)
                + 3.0
        })
        .collect();

    Plan {
        panel,
        x: Scaled {
            lo: x0,
            hi: x1,
            ticks: x_ticks,
        },
        y: Scaled {
            lo: y0,
            hi: y1,
            ticks: y_ticks,
        },
        x_labels,
        y_labels,
        y_title,
        x_title,
        plot_x,
        plot_w,
        labels,
        rows,
        legend,
        legend_col_w,
        legend_row_h,
    }
}

/// The ticks and their labels, every k-th kept for the smallest k that `fits` (counted back
/// from the last tick when `from_end`, so a history's newest entry keeps its label).
fn thin(
    axis: &crate::figure::Axis,
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

/// Vertical positions of a planned panel whose cell starts at `top`; its texts go into
/// `texts`. Returns the panel's layout and the cell's height.
fn place(
    p: &Plan,
    index: usize,
    cell_x: f64,
    top: f64,
    strip: f64,
    plot_h: f64,
    texts: &mut Vec<Placed>,
) -> (PanelLayout, f64) {
    let plot = Rect {
        x: p.plot_x,
        y: top + strip,
        w: p.plot_w,
        h: plot_h,
    };
    let pl = PanelLayout {
        panel: p.panel.clone(),
        plot,
        x: p.x.clone(),
        y: p.y.clone(),
        keys: Vec::new(),
    };
    let mut push = |text: &str, role, px, ink, rect, vertical| {
        texts.push(Placed {
            text: text.to_string(),
            role,
            px,
            ink,
            rect,
            vertical,
        })
    };
    for (textv, colour, x, row) in &p.labels {
        let (w, h) = text::size(textv, LABEL_PX);
        let y = plot.y - 4.0 - (*row as f64 + 1.0) * LABEL_ROW + 3.0;
        push(
            textv,
            Role::Label(index),
            LABEL_PX,
            Ink::Palette(*colour),
            Rect { x: *x, y, w, h },
            false,
        );
    }
    for (&t, l) in p.y.ticks.iter().zip(&p.y_labels) {
        let (w, h) = text::size(l, TICK_PX);
        let y = pl.py(t) - h / 2.0;
        push(
            l,
            Role::YTick(index),
            TICK_PX,
            Ink::Black,
            Rect {
                x: plot.x - 8.0 - w,
                y,
                w,
                h,
            },
            false,
        );
    }
    for (&t, l) in p.x.ticks.iter().zip(&p.x_labels) {
        let (w, h) = text::size(l, TICK_PX);
        push(
            l,
            Role::XTick(index),
            TICK_PX,
            Ink::Black,
            Rect {
                x: pl.px(t) - w / 2.0,
                y: plot.bottom() + 7.0,
                w,
                h,
            },
            false,
        );
    }
    let line_h = AXIS_PX * 1.3;
    for (i, l) in p.y_title.iter().enumerate() {
        let (w, _) = text::size(l, AXIS_PX);
        push(
            l,
            Role::YTitle(index),
            AXIS_PX,
            Ink::Black,
            Rect {
                x: cell_x + 10.0 + i as f64 * line_h,
                y: plot.y + (plot.h - w) / 2.0,
                w: AXIS_PX,
                h: w,
            },
            true,
        );
    }
    let mut y = plot.bottom() + 7.0 + TICK_PX + 10.0;
    for l in &p.x_title {
        let (w, h) = text::size(l, AXIS_PX);
        push(
            l,
            Role::XTitle(index),
            AXIS_PX,
            Ink::Black,
            Rect {
                x: plot.x + (plot.w - w) / 2.0,
                y,
                w,
                h,
            },
            false,
        );
        y += line_h;
    }
    let mut keys = Vec::new();
    if !p.legend.is_empty() {
        y += 8.0;
        let row_top: Vec<f64> = p
            .legend_row_h
            .iter()
            .scan(y, |acc, h| {
                let t = *acc;
                *acc += h;
                Some(t)
            })
            .collect();
        for (swatch, lines, col, row) in &p.legend {
            let x = plot.x + *col as f64 * p.legend_col_w;
            let ty = row_top[*row];
            keys.push(Key {
                swatch: *swatch,
                x,
                // The middle of the text's x-height, where the eye puts a line's sample.
                y: ty + LEGEND_PX * 0.62,
            });
            for (k, l) in lines.iter().enumerate() {
                let (w, h) = text::size(l, LEGEND_PX);
                push(
                    l,
                    Role::Legend(index),
                    LEGEND_PX,
                    Ink::Black,
                    Rect {
                        x: x + 30.0,
                        y: ty + k as f64 * (LEGEND_PX + 5.0),
                        w,
                        h,
                    },
                    false,
                );
            }
        }
        y += p.legend_row_h.iter().sum::<f64>();
    }
    // Reference levels: the label above its line at the left, or below it when the line runs
    // along the top of the plot.
    for lv in &p.panel.levels {
        if lv.label.is_empty() {
            continue;
        }
        let Some(t) = axis::place(p.panel.y.scale, lv.y) else {
            continue;
        };
        let (w, h) = text::size(&lv.label, LABEL_PX);
        let line = pl.py(t);
        let above = line - 3.0 - h;
        let ty = if above >= plot.y { above } else { line + 3.0 };
        push(
            &lv.label,
            Role::Level(index),
            LABEL_PX,
            Ink::Grey,
            Rect {
                x: plot.x + 6.0,
                y: ty,
                w: w.min(plot.w - 12.0),
                h,
            },
            false,
        );
    }
    let pl = PanelLayout { keys, ..pl };
    (pl, y + 10.0 - top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Line, Mark, Scale};

    fn panel_with(x: Axis, n: usize) -> Panel {
        let mut p = Panel::new(x, Axis::new("t (us)", Scale::Linear, Ticks::Number));
        p.lines.push(Line {
            name: "a line".into(),
            points: (0..n).map(|i| (i as f64 + 1.0, 5.0 + i as f64)).collect(),
            stroke: Stroke::SolidMarked,
            colour: 0,
        });
        p
    }

    #[test]
    fn crowded_tick_labels_are_thinned_keeping_the_newest() {
        let names: Vec<String> = (0..40)
            .map(|i| format!("v2026-{:02}-{:02}-a1b2c3", i / 28 + 10, i % 28 + 1))
            .collect();
        let mut p = panel_with(Axis::named("entry (date)", names), 40);
        for l in &mut p.lines {
            l.points = l.points.iter().map(|&(x, y)| (x - 1.0, y)).collect();
        }
        let f = Figure::new("history", "", vec![p]);
        let l = layout(&f);
        assert!(l.problems().is_empty(), "{:#?}", l.problems());
        let ticks = l.tick_labels(Role::XTick(0));
        assert!(ticks.len() < 40 && ticks.len() > 3, "{ticks:?}");
        assert_eq!(
            *ticks.last().unwrap(),
            "v2026-11-12-a1b2c3",
            "the newest entry keeps its label"
        );
    }

    #[test]
    fn labels_of_close_marks_move_to_free_rows_and_never_overprint() {
        let mut p = panel_with(Axis::sizes(), 20);
        for (i, x) in [1000.0, 1100.0, 1200.0, 1300.0, 1400.0]
            .into_iter()
            .enumerate()
        {
            p.marks.push(Mark {
                x,
                label: format!("a long mark label {i}"),
                stroke: Stroke::Dashed,
                colour: 2,
            });
        }
        let f = Figure::new("marks", "", vec![p]);
        let l = layout(&f);
        assert!(l.problems().is_empty(), "{:#?}", l.problems());
        let labels: Vec<&Placed> = l
            .texts
            .iter()
            .filter(|t| t.role == Role::Label(0))
            .collect();
        // Three rows hold three of them; the others are left out, not stacked.
        assert_eq!(labels.len(), LABEL_ROWS, "{labels:?}");
        // The last mark given (autotune's choice) is placed first.
        assert!(labels.iter().any(|t| t.text.ends_with('4')));
    }

    #[test]
    fn a_long_subtitle_wraps_inside_the_image() {
        let sub = (0..12)
            .map(|i| format!("part number {i} of a subtitle"))
            .collect::<Vec<_>>()
            .join(" · ");
        let f = Figure::new("title", sub, vec![panel_with(Axis::sizes(), 8)]);
        let l = layout(&f);
        assert!(l.problems().is_empty(), "{:#?}", l.problems());
        assert!(l.texts.iter().filter(|t| t.role == Role::Subtitle).count() >= 3);
    }
}
