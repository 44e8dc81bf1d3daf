//! A planned panel put at its heights, once its row's label strip is known: the labels above
//! the plot, the tick labels beside and under it, the axis titles, the legend below, and each
//! reference level's label on its line.

use super::plan::Plan;
use super::{
    Ink, Key, PanelLayout, Placed, Rect, Role, AXIS_PX, LABEL_PX, LABEL_ROW, LEGEND_PX, TICK_PX,
};
use crate::axis;
use crate::text;

/// Where a panel's cell is: its index among the figure's panels, its left edge and top, the
/// height of its row's label strip and of its plot.
pub(super) struct Cell {
    pub index: usize,
    pub x: f64,
    pub top: f64,
    pub strip: f64,
    pub plot_h: f64,
}

/// The panel's layout, its texts pushed onto `texts`, and the cell's height.
pub(super) fn place(p: &Plan, cell: &Cell, texts: &mut Vec<Placed>) -> (PanelLayout, f64) {
    let plot = Rect {
        x: p.plot_x,
        y: cell.top + cell.strip,
        w: p.plot_w,
        h: cell.plot_h,
    };
    let mut pl = PanelLayout {
        panel: p.panel.clone(),
        plot,
        x: p.x.clone(),
        y: p.y.clone(),
        keys: Vec::new(),
    };
    let mut out = Texts {
        index: cell.index,
        texts,
    };
    top_labels(p, &pl, &mut out);
    ticks(p, &pl, &mut out);
    let below = axis_titles(p, &pl, cell.x, &mut out);
    let (keys, bottom) = legend(p, &pl, below, &mut out);
    pl.keys = keys;
    levels(p, &pl, &mut out);
    (pl, bottom + 10.0 - cell.top)
}

/// The texts of one panel as they are placed.
struct Texts<'a> {
    index: usize,
    texts: &'a mut Vec<Placed>,
}

impl Texts<'_> {
    fn push(&mut self, text: &str, role: Role, px: f64, ink: Ink, rect: Rect, vertical: bool) {
        self.texts.push(Placed {
            text: text.to_string(),
            role,
            px,
            ink,
            rect,
            vertical,
        });
    }
}

fn top_labels(p: &Plan, pl: &PanelLayout, out: &mut Texts<'_>) {
    for l in &p.labels {
        let (w, h) = text::size(&l.text, LABEL_PX);
        let y = pl.plot.y - 1.0 - (l.row as f64 + 1.0) * LABEL_ROW;
        let rect = Rect { x: l.x, y, w, h };
        let role = Role::Label(out.index);
        out.push(&l.text, role, LABEL_PX, Ink::Palette(l.colour), rect, false);
    }
}

/// Y tick labels right-aligned left of the plot, centred on their ticks; x tick labels
/// centred under theirs.
fn ticks(p: &Plan, pl: &PanelLayout, out: &mut Texts<'_>) {
    for (&t, l) in p.y.ticks.iter().zip(&p.y_labels) {
        let (w, h) = text::size(l, TICK_PX);
        let rect = Rect {
            x: pl.plot.x - 8.0 - w,
            y: pl.py(t) - h / 2.0,
            w,
            h,
        };
        out.push(l, Role::YTick(out.index), TICK_PX, Ink::Black, rect, false);
    }
    for (&t, l) in p.x.ticks.iter().zip(&p.x_labels) {
        let (w, h) = text::size(l, TICK_PX);
        let rect = Rect {
            x: pl.px(t) - w / 2.0,
            y: pl.plot.bottom() + 7.0,
            w,
            h,
        };
        out.push(l, Role::XTick(out.index), TICK_PX, Ink::Black, rect, false);
    }
}

/// The y axis title turned up the cell's left edge, a line per wrapped line, centred on the
/// plot; the x axis title centred under the tick labels. Returns the height under it.
fn axis_titles(p: &Plan, pl: &PanelLayout, cell_x: f64, out: &mut Texts<'_>) -> f64 {
    let line_h = AXIS_PX * 1.3;
    let plot = pl.plot;
    for (i, l) in p.y_title.iter().enumerate() {
        let (w, _) = text::size(l, AXIS_PX);
        let rect = Rect {
            x: cell_x + 10.0 + i as f64 * line_h,
            y: plot.y + (plot.h - w) / 2.0,
            w: AXIS_PX,
            h: w,
        };
        out.push(l, Role::YTitle(out.index), AXIS_PX, Ink::Black, rect, true);
    }
    let mut y = plot.bottom() + 7.0 + TICK_PX + 10.0;
    for l in &p.x_title {
        let (w, h) = text::size(l, AXIS_PX);
        let rect = Rect {
            x: plot.x + (plot.w - w) / 2.0,
            y,
            w,
            h,
        };
        out.push(l, Role::XTitle(out.index), AXIS_PX, Ink::Black, rect, false);
        y += line_h;
    }
    y
}

/// The legend's samples and texts from height `top`, its columns from the plot's left edge.
/// Returns the samples and the height under the legend.
fn legend(p: &Plan, pl: &PanelLayout, top: f64, out: &mut Texts<'_>) -> (Vec<Key>, f64) {
    let legend = &p.legend;
    if legend.entries.is_empty() {
        return (Vec::new(), top);
    }
    let top = top + 8.0;
    let row_top: Vec<f64> = legend
        .row_h
        .iter()
        .scan(top, |acc, h| {
            let t = *acc;
            *acc += h;
            Some(t)
        })
        .collect();
    let mut keys = Vec::new();
    for e in &legend.entries {
        let x = pl.plot.x + e.col as f64 * legend.col_w;
        let ty = row_top[e.row];
        keys.push(Key {
            swatch: e.swatch,
            x,
            // The middle of the text's x-height, where the eye puts a line's sample.
            y: ty + LEGEND_PX * 0.62,
        });
        for (k, l) in e.lines.iter().enumerate() {
            let (w, h) = text::size(l, LEGEND_PX);
            let rect = Rect {
                x: x + 30.0,
                y: ty + k as f64 * (LEGEND_PX + 5.0),
                w,
                h,
            };
            out.push(
                l,
                Role::Legend(out.index),
                LEGEND_PX,
                Ink::Black,
                rect,
                false,
            );
        }
    }
    (keys, top + legend.row_h.iter().sum::<f64>())
}

/// Each reference level's label above its line at the left, or below it when the line runs
/// along the top of the plot.
fn levels(p: &Plan, pl: &PanelLayout, out: &mut Texts<'_>) {
    let plot = pl.plot;
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
        let rect = Rect {
            x: plot.x + 6.0,
            y: if above >= plot.y { above } else { line + 3.0 },
            w: w.min(plot.w - 12.0),
            h,
        };
        out.push(
            &lv.label,
            Role::Level(out.index),
            LABEL_PX,
            Ink::Grey,
            rect,
            false,
        );
    }
}
