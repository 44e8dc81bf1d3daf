//! Paints a figure's [`layout`](crate::layout) with plotters, as an SVG document or a PNG
//! image. This module and [`crate::text`] are the only ones that know plotters; where
//! everything goes (ranges, ticks, labels, legend) was decided by the layout, so here is only
//! how it looks: one palette, one font, grid lines at the kept ticks, data drawn in pixel
//! coordinates (log axes already placed by [`crate::axis`]).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

use crate::axis;
use crate::error::PlotError;
use crate::figure::{Figure, Stroke};
use crate::font::{self, FAMILY};
use crate::layout::{self, Ink, Layout, PanelLayout, Role, Swatch};

/// Tableau's ten colours: distinguishable, print well, and stay readable for the common
/// colour-vision deficiencies in the first few entries.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0xba, 0xb0, 0xac),
];

/// The colour of palette entry `i` (entries repeat after ten).
pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

pub use crate::figure::INK;

fn rgb(i: usize) -> RGBColor {
    if i == INK {
        RGBColor(0x22, 0x33, 0x44)
    } else {
        colour(i)
    }
}

/// The image size a figure is drawn at, as its layout decides.
pub fn size_of(f: &Figure) -> (u32, u32) {
    layout::layout(f).size()
}

/// The figure as an SVG document.
pub fn svg(f: &Figure) -> Result<String, PlotError> {
    font::register()?;
    let l = layout::layout(f);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, l.size()).into_drawing_area();
        paint(&l, &root)?;
        root.present().map_err(draw_error)?;
    }
    Ok(out)
}

/// The figure as a PNG file's bytes.
pub fn png(f: &Figure) -> Result<Vec<u8>, PlotError> {
    font::register()?;
    let l = layout::layout(f);
    let (w, h) = l.size();
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        paint(&l, &root)?;
        root.present().map_err(draw_error)?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        // Charts are flat colour: the best compression costs milliseconds and halves files
        // people attach to reports and commit beside READMEs.
        enc.set_compression(png::Compression::Best);
        enc.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut writer = enc
            .write_header()
            .map_err(|e| PlotError::Draw(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| PlotError::Draw(e.to_string()))?;
    }
    Ok(bytes)
}

fn draw_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> PlotError {
    PlotError::Draw(e.to_string())
}

type Area<'a, DB> = DrawingArea<DB, plotters::coord::Shift>;

fn pt((x, y): (f64, f64)) -> (i32, i32) {
    (x.round() as i32, y.round() as i32)
}

fn paint<DB: DrawingBackend>(l: &Layout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(draw_error)?;
    for p in &l.panels {
        paint_panel(p, root)?;
    }
    for t in &l.texts {
        if matches!(t.role, Role::Level(_)) {
            // A level's label lies over the data: a pale ground keeps it readable.
            let r = t.rect;
            root.draw(&Rectangle::new(
                [
                    pt((r.x - 2.0, r.y - 1.0)),
                    pt((r.right() + 2.0, r.bottom() + 1.0)),
                ],
                WHITE.mix(0.8).filled(),
            ))
            .map_err(draw_error)?;
        }
        let c = match t.ink {
            Ink::Black => RGBColor(0x1a, 0x1a, 0x1a),
            Ink::Grey => RGBColor(80, 80, 80),
            Ink::Palette(i) => darker(rgb(i)),
        };
        // Centred texts are anchored at their middle, so a viewer whose sans-serif is
        // narrower than the bundled font (an SVG in a browser) still centres them.
        let centred = matches!(t.role, Role::Title | Role::Subtitle | Role::XTitle(_));
        let h = if centred || t.vertical {
            HPos::Center
        } else {
            HPos::Left
        };
        let mut style = TextStyle::from((FAMILY, t.px).into_font())
            .color(&c)
            .pos(Pos::new(h, VPos::Top));
        let at = if t.vertical {
            // Turned a quarter anticlockwise about its anchor: it then runs up the box's
            // left edge, centred on the box's middle.
            style = style.transform(FontTransform::Rotate270);
            (t.rect.x, t.rect.y + t.rect.h / 2.0)
        } else if centred {
            (t.rect.x + t.rect.w / 2.0, t.rect.y)
        } else {
            (t.rect.x, t.rect.y)
        };
        root.draw(&Text::new(t.text.clone(), pt(at), style))
            .map_err(draw_error)?;
    }
    Ok(())
}

/// A palette colour dark enough to read as text on white.
fn darker(c: RGBColor) -> RGBColor {
    let f = |v: u8| (f64::from(v) * 0.72) as u8;
    RGBColor(f(c.0), f(c.1), f(c.2))
}

/// One panel, back to front: grid, shaded ranges, bands, levels, lines, marks, axes, then the
/// legend's samples (the texts are painted after every panel).
fn paint_panel<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    grid(p, root)?;
    spans(p, root)?;
    bands(p, root)?;
    levels(p, root)?;
    lines(p, root)?;
    marks(p, root)?;
    axes(p, root)?;
    keys(p, root)
}

/// Grid lines and tick marks at the kept ticks.
fn grid<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let r = p.plot;
    let (left, top, right, bottom) = (r.x, r.y, r.right(), r.bottom());
    let grid = RGBColor(225, 225, 225);
    for &t in &p.x.ticks {
        let x = p.px(t);
        line(root, &[(x, top), (x, bottom)], grid.stroke_width(1))?;
        line(
            root,
            &[(x, bottom), (x, bottom + 5.0)],
            BLACK.stroke_width(1),
        )?;
    }
    for &t in &p.y.ticks {
        let y = p.py(t);
        line(root, &[(left, y), (right, y)], grid.stroke_width(1))?;
        line(root, &[(left - 5.0, y), (left, y)], BLACK.stroke_width(1))?;
    }
    Ok(())
}

/// Shaded x ranges, the plot's full height (at least 2 px wide, so a one-value range shows).
fn spans<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let r = p.plot;
    let (_left, top, _right, bottom) = (r.x, r.y, r.right(), r.bottom());
    let xs = p.panel.x.scale;
    for s in &p.panel.spans {
        let (Some(a), Some(b)) = (axis::place(xs, s.from), axis::place(xs, s.to)) else {
            continue;
        };
        let (a, b) = (p.px(a), p.px(b));
        root.draw(&Rectangle::new(
            [
                pt((a.min(b), top)),
                pt((a.max(b).max(a.min(b) + 2.0), bottom)),
            ],
            rgb(s.colour).mix(0.16).filled(),
        ))
        .map_err(draw_error)?;
    }

    Ok(())
}

/// Filled regions between two curves.
fn bands<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    for b in &p.panel.bands {
        let upper: Vec<(f64, f64)> = b
            .points
            .iter()
            .filter_map(|&(x, _, hi)| p.at(x, hi))
            .collect();
        let mut lower: Vec<(f64, f64)> = b
            .points
            .iter()
            .filter_map(|&(x, lo, _)| p.at(x, lo))
            .collect();
        if upper.len() < 2 || lower.len() != upper.len() {
            continue;
        }
        lower.reverse();
        let outline: Vec<(i32, i32)> = upper.into_iter().chain(lower).map(pt).collect();
        root.draw(&Polygon::new(
            outline,
            rgb(b.colour).mix(b.opacity).filled(),
        ))
        .map_err(draw_error)?;
    }

    Ok(())
}

/// Reference levels, dashed across the plot.
fn levels<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let r = p.plot;
    let (left, _top, right, _bottom) = (r.x, r.y, r.right(), r.bottom());
    let ys = p.panel.y.scale;
    for lv in &p.panel.levels {
        let Some(t) = axis::place(ys, lv.y) else {
            continue;
        };
        let y = p.py(t);
        dashed(
            root,
            &[(left, y), (right, y)],
            RGBColor(90, 90, 90).stroke_width(1),
            6.0,
            4.0,
        )?;
    }

    Ok(())
}

/// The data lines, dashed or marked as their stroke says.
fn lines<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    for l in &p.panel.lines {
        let pts: Vec<(f64, f64)> = l.points.iter().filter_map(|&(x, y)| p.at(x, y)).collect();
        if pts.is_empty() {
            continue;
        }
        let c = rgb(l.colour);
        let style = c.stroke_width(2);
        match l.stroke {
            Stroke::Solid => line(root, &pts, style)?,
            Stroke::Dashed => dashed(root, &pts, style, 8.0, 5.0)?,
            Stroke::SolidMarked | Stroke::DashedMarked => {
                if l.stroke == Stroke::SolidMarked {
                    line(root, &pts, style)?;
                } else {
                    dashed(root, &pts, style, 8.0, 5.0)?;
                }
                for &xy in &pts {
                    root.draw(&Circle::new(pt(xy), 3, c.filled()))
                        .map_err(draw_error)?;
                }
            }
            Stroke::Markers => {
                for &xy in &pts {
                    root.draw(&Circle::new(pt(xy), 4, c.filled()))
                        .map_err(draw_error)?;
                }
            }
        }
    }

    Ok(())
}

/// Vertical marks across the plot.
fn marks<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let r = p.plot;
    let (_left, top, _right, bottom) = (r.x, r.y, r.right(), r.bottom());
    let xs = p.panel.x.scale;
    for m in &p.panel.marks {
        let Some(t) = axis::place(xs, m.x) else {
            continue;
        };
        let x = p.px(t);
        let style = rgb(m.colour).stroke_width(2);
        match m.stroke {
            Stroke::Dashed => dashed(root, &[(x, top), (x, bottom)], style, 6.0, 4.0)?,
            _ => line(root, &[(x, top), (x, bottom)], style)?,
        }
    }

    Ok(())
}

/// The frame's left and bottom edges: the axes.
fn axes<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let r = p.plot;
    let (left, top, right, bottom) = (r.x, r.y, r.right(), r.bottom());
    line(
        root,
        &[(left, top), (left, bottom), (right, bottom)],
        BLACK.stroke_width(1),
    )?;

    Ok(())
}

/// The legend's samples, drawn as their data are.
fn keys<DB: DrawingBackend>(p: &PanelLayout, root: &Area<'_, DB>) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    for k in &p.keys {
        let (x, y) = (k.x, k.y);
        match k.swatch {
            Swatch::Line {
                colour,
                dashed: d,
                marked,
            } => {
                let style = rgb(colour).stroke_width(2);
                if d {
                    dashed(root, &[(x, y), (x + 24.0, y)], style, 6.0, 3.0)?;
                } else {
                    line(root, &[(x, y), (x + 24.0, y)], style)?;
                }
                if marked {
                    root.draw(&Circle::new(pt((x + 12.0, y)), 3, rgb(colour).filled()))
                        .map_err(draw_error)?;
                }
            }
            Swatch::Marker { colour } => {
                root.draw(&Circle::new(pt((x + 12.0, y)), 4, rgb(colour).filled()))
                    .map_err(draw_error)?;
            }
            Swatch::Fill { colour, opacity } => {
                root.draw(&Rectangle::new(
                    [pt((x, y - 6.0)), pt((x + 24.0, y + 6.0))],
                    rgb(colour).mix(opacity).filled(),
                ))
                .map_err(draw_error)?;
            }
        }
    }
    Ok(())
}

fn line<DB: DrawingBackend>(
    root: &Area<'_, DB>,
    pts: &[(f64, f64)],
    style: ShapeStyle,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    let v: Vec<(i32, i32)> = pts.iter().copied().map(pt).collect();
    root.draw(&PathElement::new(v, style)).map_err(draw_error)
}

/// A polyline drawn as dashes `on` pixels long with `off` pixel gaps, continuing across its
/// corners, so a dashed curve reads as dashed at any point density.
fn dashed<DB: DrawingBackend>(
    root: &Area<'_, DB>,
    pts: &[(f64, f64)],
    style: ShapeStyle,
    on: f64,
    off: f64,
) -> Result<(), PlotError>
where
    DB::ErrorType: 'static,
{
    for dash in dashes(pts, on, off) {
        line(root, &dash, style)?;
    }
    Ok(())
}

/// The pieces of a polyline that are ink when it is dashed `on`/`off`.
pub fn dashes(pts: &[(f64, f64)], on: f64, off: f64) -> Vec<Vec<(f64, f64)>> {
    let mut out: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur: Vec<(f64, f64)> = Vec::new();
    // Distance left in the current phase, and whether it is ink.
    let (mut left, mut ink) = (on, true);
    if let Some(&first) = pts.first() {
        cur.push(first);
    }
    for w in pts.windows(2) {
        let (mut a, b) = (w[0], w[1]);
        let mut len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
        while len > left {
            let f = left / len;
            let m = (a.0 + (b.0 - a.0) * f, a.1 + (b.1 - a.1) * f);
            if ink {
                cur.push(m);
                out.push(std::mem::take(&mut cur));
            } else {
                cur = vec![m];
            }
            len -= left;
            a = m;
            ink = !ink;
            left = if ink { on } else { off };
        }
        left -= len;
        if ink {
            cur.push(b);
        }
    }
    if ink && cur.len() > 1 {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dashed_line_is_ink_and_gaps_in_turn() {
        let d = dashes(&[(0.0, 0.0), (30.0, 0.0)], 8.0, 5.0);
        // 0-8 ink, 8-13 gap, 13-21 ink, 21-26 gap, 26-30 ink.
        let spans: Vec<(f64, f64)> = d.iter().map(|p| (p[0].0, p[p.len() - 1].0)).collect();
        assert_eq!(spans, [(0.0, 8.0), (13.0, 21.0), (26.0, 30.0)]);
    }
}
