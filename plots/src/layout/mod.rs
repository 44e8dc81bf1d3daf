//! Where everything of a figure goes, in pixels, decided before anything is drawn: the title
//! and subtitle wrapped to the image's width, panels one per row or two to a row, each
//! panel's axis ranges fitted to its data, its tick labels thinned until they no longer touch,
//! the labels of marks and shaded ranges in a strip above the plot (moved to a free row, or
//! left out when three rows are full, never printed over each other), and the legend below
//! the plot where it cannot hide data. The renderer only paints a [`Layout`]; tests read it
//! ([`Layout::problems`]) to check that no text leaves the image and no two texts overlap.
//!
//! A panel is laid out in two steps: [`plan`] decides everything horizontal (ranges, ticks,
//! margins, which row each mark label takes, the legend's columns), then, once every panel of
//! a row is planned and the row's label strip is known, [`place`] puts the texts at their
//! heights.

mod check;
mod place;
mod plan;

use crate::axis;
use crate::figure::{Figure, Panel};
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

    /// The labels of one axis's ticks, in order.
    pub fn tick_labels(&self, role: Role) -> Vec<&str> {
        self.texts
            .iter()
            .filter(|t| t.role == role)
            .map(|t| t.text.as_str())
            .collect()
    }
}

/// Lays a figure out.
pub fn layout(f: &Figure) -> Layout {
    let n = f.panels.len().max(1);
    let cols = if n == 1 { 1 } else { 2 };
    let (width, plot_h) = if cols == 1 {
        (ONE_PANEL_WIDTH, PLOT_HEIGHT_ONE)
    } else {
        (GRID_WIDTH, PLOT_HEIGHT_GRID)
    };
    let cell_w = width / cols as f64;
    let mut texts = Vec::new();
    let mut y = titles(f, width, &mut texts);

    let plans: Vec<plan::Plan> = f
        .panels
        .iter()
        .enumerate()
        .map(|(i, p)| plan::plan(p, (i % cols) as f64 * cell_w, cell_w, plot_h))
        .collect();
    let mut panels = Vec::new();
    for (row, chunk) in plans.chunks(cols).enumerate() {
        // One label strip for the row, as tall as its tallest panel's, so plots side by side
        // line up.
        let rows = chunk.iter().map(|p| p.rows).max().unwrap_or(0);
        let strip = rows as f64 * LABEL_ROW + if rows > 0 { 4.0 } else { 0.0 };
        let mut row_h: f64 = 0.0;
        for (j, p) in chunk.iter().enumerate() {
            let at = place::Cell {
                index: row * cols + j,
                x: j as f64 * cell_w,
                top: y,
                strip,
                plot_h,
            };
            let (pl, h) = place::place(p, &at, &mut texts);
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

/// The title and subtitle, each wrapped to the width and centred; returns where the panels
/// start.
fn titles(f: &Figure, width: f64, texts: &mut Vec<Placed>) -> f64 {
    let mut y = 10.0;
    let parts = [
        (&f.title, TITLE_PX, Role::Title, Ink::Black, 1.3),
        (&f.subtitle, SUBTITLE_PX, Role::Subtitle, Ink::Grey, 1.35),
    ];
    for (words, px, role, ink, spacing) in parts {
        if words.is_empty() {
            continue;
        }
        for line in text::wrap(words, px, width - 40.0) {
            let (w, h) = text::size(&line, px);
            texts.push(Placed {
                rect: Rect {
                    x: ((width - w) / 2.0).max(2.0),
                    y,
                    w,
                    h,
                },
                text: line,
                role,
                px,
                ink,
                vertical: false,
            });
            y += px * spacing;
        }
    }
    y + 8.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Line, Mark, Scale, Stroke, Ticks};

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
